"""The ONNX shared pass: one forward pass over a question gives the dense vector and the MaxSim
re-ranker's token vectors, and the served ranking is the PyTorch one. No timing is asserted."""
from __future__ import annotations

import numpy as np
import pytest

from course_lib.core.load import load_pages
from course_lib.core.pipeline import structured_chunks
from course_lib.core.rerank import MaxSimReranker
from course_lib.core.retrieve import DenseRetriever
from course_lib.core.serve import SearchService
from course_lib.evaluation.golden import load_golden
from course_lib.infra import models, onnx_encoder
from course_lib.infra.paths import GOLDEN_FILE

pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.model

GOLDEN = 5  # a few golden questions: enough to see a changed ranking, quick on two cores


@pytest.fixture(scope="module")
def questions() -> list[str]:
    return [q.question for q in load_golden(GOLDEN_FILE)][:GOLDEN]


@pytest.fixture(scope="module")
def chunks():
    """The lessons' chunks of a slice of the corpus: real text, few enough to encode in seconds."""
    return structured_chunks(load_pages())[:400]


@pytest.fixture(scope="module")
def reranker() -> MaxSimReranker:
    """A re-ranker that keeps nothing on disk, so every question is encoded or handed in."""
    return MaxSimReranker(persist=False)


def counting(encoder, calls: list[str]):
    """Wrap a SentenceTransformer's `encode` so every text it encodes is recorded."""
    encode = encoder.encode
    return lambda texts, **kw: calls.extend(texts) or encode(texts, **kw)


def test_one_pass_gives_the_dense_vector_and_the_rerankers_token_vectors(questions, reranker):
    encoder = onnx_encoder.load_encoder(encoder="onnx")
    for question in questions:
        both = encoder.encode_query(question)
        alone = encoder.encode([question], normalize_embeddings=True)[0]
        torch_tokens = reranker.encode_tokens([question], dtype=np.float32)[0]
        assert np.array_equal(both.vector, alone)  # the same arithmetic: the dense ranking cannot move
        assert both.tokens.dtype == np.float16 and both.tokens.shape == torch_tokens.shape
        assert np.allclose(both.tokens.astype(np.float32), torch_tokens, atol=2e-3)
        assert both.pieces == len(torch_tokens) + 2  # [CLS] and [SEP] read, not kept


def test_the_shared_pass_serves_the_torch_ranking_and_encodes_nothing_in_the_reranker(
        questions, chunks, reranker, monkeypatch):
    vectors = models.embed([c.text for c in chunks], progress=False)
    torch_service = SearchService(chunks, vectors=vectors, reranker=reranker, cache_results=False)
    shared = SearchService(chunks, vectors=vectors, reranker=reranker, query_encoder="onnx",
                           cache_results=False)
    assert shared.shared_encoder() is not None and torch_service.shared_encoder() is None
    expected = [torch_service.answer(q, k=10).hits for q in questions]  # also fills the chunk tokens
    calls: list[str] = []
    monkeypatch.setattr(reranker.encoder, "encode", counting(reranker.encoder, calls))
    reranker.memory.clear()  # no question's tokens left from the torch pass; chunks encoded again
    served = [shared.answer(q, k=10).hits for q in questions]
    assert [[h.index for h in hits] for hits in served] == [[h.index for h in hits] for hits in expected]
    assert all(np.allclose([h.score for h in a], [h.score for h in b], atol=1e-2)
               for a, b in zip(served, expected, strict=True))
    assert calls and not set(calls) & set(questions)  # chunks were encoded, no question was


def test_two_passes_stay_where_sharing_is_off_or_the_encoder_is_torch(questions, chunks, reranker, monkeypatch):
    vectors = models.embed([c.text for c in chunks], progress=False)
    calls: list[str] = []
    monkeypatch.setattr(reranker.encoder, "encode", counting(reranker.encoder, calls))
    for service in (SearchService(chunks, vectors=vectors, reranker=reranker, query_encoder="onnx",
                                  shared_pass=False, cache_results=False),
                    SearchService(chunks, vectors=vectors, reranker=reranker, cache_results=False)):
        assert service.shared_encoder() is None
        reranker.memory.clear()
        calls.clear()
        service.answer(questions[0], k=5)
        assert questions[0] in calls  # the re-ranker encoded the question itself


def test_a_repeated_question_reuses_the_cached_vector_and_tokens(questions, chunks, reranker):
    vectors = models.embed([c.text for c in chunks], progress=False)
    service = SearchService(chunks, vectors=vectors, reranker=reranker, query_encoder="onnx",
                            cache_results=False)
    first = service.answer(questions[1], k=5)
    vector, tokens = service.encode_query(questions[1])
    assert tokens is not None and service.query_vectors.hits == 1
    assert service.answer(questions[1] + "  ", k=5).hits == first.hits


def test_a_question_past_the_rerankers_limit_is_encoded_by_the_reranker(questions, monkeypatch):
    short = MaxSimReranker(persist=False, max_tokens=4)
    calls: list[str] = []
    monkeypatch.setattr(short.encoder, "encode", counting(short.encoder, calls))  # the shared model
    chunks = structured_chunks(load_pages())[:50]
    service = SearchService(chunks, vectors=models.embed([c.text for c in chunks], progress=False),
                            reranker=short, query_encoder="onnx", cache_results=False)
    assert service.encode_query(questions[0])[1] is None  # cut elsewhere than the encoder cuts it
    service.answer(questions[0], k=3)
    assert any(questions[0].startswith(text) for text in calls)  # cut at its own limit, then encoded


def test_given_tokens_last_the_block_only(questions, reranker):
    tokens = np.ones((2, reranker.width), np.float16)
    with reranker.given_query(questions[2], tokens):
        assert reranker.query_vectors(questions[2]) is tokens
    assert reranker.query_vectors(questions[2]) is not tokens


def test_an_unknown_query_encoder_is_refused_by_the_service(chunks):
    with pytest.raises(ValueError, match="torch.*onnx.*onnx-int8"):
        SearchService(chunks[:5], vectors=np.zeros((5, 384), np.float32), query_encoder="tensorflow")


def test_a_dense_retrievers_query_encoder_is_checked_when_set_too(chunks):
    dense = DenseRetriever(chunks[:5], vectors=np.zeros((5, 384), np.float32))
    dense.query_encoder = "onnx"  # what the CLI's --query-encoder does to a built pipeline
    assert dense.query_encoder == "onnx"
    with pytest.raises(ValueError, match="torch.*onnx.*onnx-int8"):
        dense.query_encoder = "tensorflow"
    assert dense.query_encoder == "onnx"


def test_a_pipeline_is_built_with_its_query_encoder_in_one_keyword(chunks):
    from course_lib.core.pipeline import Pipeline, with_query_encoder
    from course_lib.infra.errors import UsageError

    vectors = np.zeros((5, 384), np.float32)
    hybrid = with_query_encoder(Pipeline.over(chunks[:5], vectors=vectors), "onnx")
    assert hybrid.dense.query_encoder == "onnx"
    assert with_query_encoder(Pipeline.over(chunks[:5], dense=False), "torch").dense is None
    with pytest.raises(UsageError, match="has no dense stage") as err:
        with_query_encoder(Pipeline.over(chunks[:5], dense=False), "onnx")
    assert err.value.exit_code == 2 and "dense pipeline" in err.value.hint
    with pytest.raises(ValueError, match="query_encoder must be one of"):
        with_query_encoder(Pipeline.over(chunks[:5], vectors=vectors), "tensorflow")
