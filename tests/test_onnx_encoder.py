"""The query encoder on ONNX Runtime: the same vectors as sentence-transformers, exported once."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from course_lib.core.retrieve import DenseRetriever
from course_lib.evaluation.golden import load_golden
from course_lib.infra import models, onnx_encoder
from course_lib.infra.errors import ModelLoadError
from course_lib.infra.paths import GOLDEN_FILE
from course_lib.records import Chunk

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """One export for the module (about 6 s), in a private folder."""
    folder = tmp_path_factory.mktemp("cache") / "onnx"
    onnx_encoder.ensure_onnx(root=folder)
    return folder


@pytest.fixture(scope="module")
def questions() -> list[str]:
    return [q.question for q in load_golden(GOLDEN_FILE)][:20]


@pytest.mark.model
def test_float32_vectors_equal_sentence_transformers(root, questions):
    encoder = onnx_encoder.OnnxEncoder(root=root)
    reference = models.load_embedder().encode(questions, normalize_embeddings=True)
    batched = encoder.encode(questions, normalize_embeddings=True)
    one_by_one = np.concatenate([encoder.encode([q], normalize_embeddings=True) for q in questions])
    for found in (batched, one_by_one):
        assert found.shape == reference.shape and found.dtype == np.float32
        assert (found * reference).sum(axis=1).min() >= 0.99999
    assert encoder.get_embedding_dimension() == reference.shape[1]
    assert encoder.max_seq_length == models.max_input_tokens()


@pytest.mark.model
def test_the_cached_export_is_reused(root):
    path = onnx_encoder.onnx_path(root=root)
    before, stamp = onnx_encoder.exports["count"], path.stat().st_mtime_ns
    onnx_encoder.OnnxEncoder(root=root)
    onnx_encoder.OnnxEncoder(root=root, threads=1)
    assert onnx_encoder.exports["count"] == before
    assert path.stat().st_mtime_ns == stamp


@pytest.mark.model
def test_a_changed_fingerprint_exports_again(root, monkeypatch):
    old = onnx_encoder.onnx_path(root=root)
    before = onnx_encoder.exports["count"]
    monkeypatch.setattr(models, "model_fingerprint", lambda name=None: "changed-weights")
    new = onnx_encoder.onnx_path(root=root)
    assert new != old and not new.exists()
    onnx_encoder.OnnxEncoder(root=root)
    assert new.exists() and onnx_encoder.exports["count"] == before + 1


@pytest.mark.model
def test_int8_is_a_separate_measured_variant(root, questions):
    encoder = onnx_encoder.OnnxEncoder(root=root, quantize="int8")
    assert encoder.path != onnx_encoder.onnx_path(root=root) and "int8" in encoder.path.name
    reference = models.load_embedder().encode(questions, normalize_embeddings=True)
    cosines = (encoder.encode(questions, normalize_embeddings=True) * reference).sum(axis=1)
    assert cosines.min() > 0.8  # close, not equal: the benchmark judges whether it is close enough


@pytest.mark.model
def test_dense_retriever_ranks_alike_with_either_query_encoder(root, monkeypatch, questions):
    monkeypatch.setattr(onnx_encoder, "cache_dir", lambda: root.parent)
    onnx_encoder._load.cache_clear()
    chunks = [Chunk(id=f"c{i}", doc=f"d{i}.html", body=q) for i, q in enumerate(questions)]
    vectors = models.embed([c.text for c in chunks], use_cache=False, progress=False)
    torch_dense = DenseRetriever(chunks, vectors=vectors, cache_queries=False)
    onnx_dense = DenseRetriever(chunks, vectors=vectors, query_encoder="onnx")
    for query in questions[:5]:
        assert [h.index for h in onnx_dense.search(query, k=5)] == [h.index for h in torch_dense.search(query, k=5)]
    onnx_encoder._load.cache_clear()


def test_the_default_encoder_is_torch_and_unknown_names_are_refused():
    assert DenseRetriever.__init__.__kwdefaults__["query_encoder"] == "torch"
    assert onnx_encoder.load_encoder.__kwdefaults__["encoder"] == "torch"
    with pytest.raises(ValueError, match="encoder must be one of"):
        onnx_encoder.load_encoder(encoder="tensorrt")


def test_a_missing_onnxruntime_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` now fails
    with pytest.raises(ModelLoadError, match="pip install onnxruntime"):
        onnx_encoder.OnnxEncoder()


@pytest.mark.model
def test_an_export_that_does_not_match_its_record_is_exported_again(tmp_path, caplog):
    """A crafted or swapped .onnx (here another file's bytes) is never loaded: one warning line
    naming it, and the file exported for the model replaces it."""
    folder = tmp_path / "onnx"
    path = onnx_encoder.ensure_onnx(root=folder)
    good = path.read_bytes()
    path.write_bytes(good[:-16] + b"\0" * 16)  # same size, other weights
    before = onnx_encoder.exports["count"]
    with caplog.at_level("WARNING", logger="course_lib.cache"):
        onnx_encoder.ensure_onnx(root=folder)
    assert onnx_encoder.exports["count"] == before + 1 and path.read_bytes() == good
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and str(path) in lines[0] and "does not match the digest" in lines[0]


@pytest.mark.model
def test_an_export_without_a_record_is_exported_again_silently(tmp_path, caplog):
    folder = tmp_path / "onnx"
    path = onnx_encoder.ensure_onnx(root=folder)
    onnx_encoder.record_path(path).unlink()
    before = onnx_encoder.exports["count"]
    with caplog.at_level("WARNING", logger="course_lib.cache"):
        onnx_encoder.ensure_onnx(root=folder)
    assert onnx_encoder.exports["count"] == before + 1 and onnx_encoder.record_path(path).is_file()
    assert not caplog.records


@pytest.mark.model
def test_a_garbage_onnx_file_is_one_line_naming_it(tmp_path):
    """Garbage whose record was recomputed too (someone who can write the cache and hash): ONNX
    Runtime refuses it, and the learner reads one line, not ONNX Runtime's traceback."""
    folder = tmp_path / "onnx"
    path = onnx_encoder.ensure_onnx(root=folder)
    path.write_bytes(b"not a model at all")
    onnx_encoder.record_export(path, None)
    with pytest.raises(ModelLoadError) as caught:
        onnx_encoder.OnnxEncoder(root=folder)
    message = str(caught.value)
    assert str(path) in message and "not a usable ONNX model" in message and "\n" not in message


class _FakeSession:
    """Stands in for an ONNX Runtime session: records the intra-op threads each run used."""

    runs: list[int | None] = []

    def __init__(self, threads):
        self.threads = threads

    def run(self, names, feeds):
        _FakeSession.runs.append(self.threads)
        return [np.ones((*feeds["input_ids"].shape, 4), np.float32)]


def _fake_encoder(monkeypatch, threads):
    """An OnnxEncoder with a fake tokenizer and sessions: no export, no model."""
    monkeypatch.setattr(onnx_encoder, "_session", lambda path, threads, stamp: _FakeSession(threads))
    monkeypatch.setattr(_FakeSession, "runs", [])
    encoder = object.__new__(onnx_encoder.OnnxEncoder)
    encoder.path, encoder._stamp, encoder.threads, encoder._width = None, 0, threads, None
    encoder.session, encoder.max_seq_length = _FakeSession(threads), 8
    encoder.tokenizer = lambda texts, **_: {n: np.ones((len(texts), 3), np.int64) for n in onnx_encoder.INPUTS}
    encoder._special = np.array([0])
    return encoder


def test_one_question_runs_on_one_thread_and_a_batch_on_every_core(monkeypatch):
    """The library's rule, as `one_text_threads` applies it to PyTorch: ONNX Runtime's default
    intra-op pool (None: one thread per core) only for batches."""
    encoder = _fake_encoder(monkeypatch, None)
    monkeypatch.setattr(onnx_encoder, "load_encoder", lambda *a, **k: encoder)
    assert onnx_encoder.embed_queries(["one question"], encoder="onnx").shape == (1, 4)
    encoder.encode_query("one question")
    onnx_encoder.embed_queries(["two", "questions"], encoder="onnx")
    encoder.encode([f"chunk {i}" for i in range(5)], batch_size=4)  # a batch of 4, then one left over
    assert _FakeSession.runs == [1, 1, None, None, 1]


def test_threads_given_to_the_encoder_decide_every_run(monkeypatch):
    encoder = _fake_encoder(monkeypatch, 3)
    encoder.encode(["one question"])
    encoder.encode(["two", "questions"])
    assert _FakeSession.runs == [3, 3]


@pytest.mark.model
def test_the_real_single_text_session_has_one_intra_op_thread(root):
    encoder = onnx_encoder.OnnxEncoder(root=root)
    assert encoder.session_for(1).get_session_options().intra_op_num_threads == 1
    assert encoder.session_for(2) is encoder.session
    assert encoder.session.get_session_options().intra_op_num_threads == 0  # ONNX Runtime's: every core
    vectors = encoder.encode(["day of the month", "day of the month"], normalize_embeddings=True)
    assert np.allclose(encoder.encode(["day of the month"], normalize_embeddings=True)[0], vectors[0], atol=1e-5)
