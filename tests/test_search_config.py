"""One search configuration: SearchConfig's defaults, one-keyword overrides, validation, and the
same ranking from a Pipeline, a SearchService and a HybridRetriever built from one config.

Small in-memory corpus with given vectors and a fake query embedder: no model is loaded.
"""
import dataclasses

import numpy as np
import pytest

from course_lib import settings
from course_lib.core.lexical import BM25Retriever
from course_lib.core.pipeline import Pipeline
from course_lib.core.retrieve import DenseRetriever, HybridRetriever, SearchConfig, search_config
from course_lib.core.serve import SearchService
from course_lib.infra import models
from course_lib.records import Chunk

BODIES = ["threads and locks in python", "the lock statement and threads", "asyncio queues and tasks",
          "queues of tasks for workers", "locks for asyncio tasks", "python tasks and threads"]
CHUNKS = [Chunk(f"c#{i}", f"c{i}.html", body) for i, body in enumerate(BODIES)]
# Dense ranks differ from BM25's, so fusion, rrf_k and the weights all change the fused order.
VECTORS = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0.6, 0.8], [0, 0, 1], [0.6, 0, 0.8]], np.float32)
QUERIES = ["locks and threads", "asyncio tasks", "queues for workers", "python"]


def fake_embed(texts, *, model=None, **_):
    """A query's vector from its words, the same in every process: no model."""
    return np.array([[float("lock" in t), float("queue" in t), float("task" in t) + 0.1] for t in texts],
                    np.float32)


@pytest.fixture
def embedder(monkeypatch):
    calls: list[tuple[list[str], str | None]] = []

    def recording(texts, *, model=None, **kwargs):
        calls.append((list(texts), model))
        return fake_embed(texts, model=model)

    monkeypatch.setattr(models, "embed", recording)
    return calls


def retrievers() -> list:
    return [DenseRetriever(CHUNKS, vectors=VECTORS), BM25Retriever(CHUNKS)]


class ByLength:
    """A re-ranker preferring long chunks: deterministic, no model; records its batch sizes."""

    name = "length"

    def __init__(self):
        self.batches: list[int] = []

    def score(self, query, chunks, *, batch_size=settings.RERANK_BATCH_SIZE):
        self.batches.append(batch_size)
        return np.array([len(c.body) for c in chunks], float)


# --- defaults and one-knob changes --------------------------------------------------------------

def test_the_defaults_are_the_settings():
    config = SearchConfig()
    assert dataclasses.asdict(config) == {
        "fusion": "rrf", "rrf_k": settings.RRF_K, "weights": None, "candidates": settings.FUSION_CANDIDATES,
        "top_n": settings.RERANK_TOP_N, "batch_size": settings.RERANK_BATCH_SIZE, "parallel": False}
    assert search_config() == config
    assert Pipeline(retrievers()).config == config
    assert SearchService(CHUNKS, vectors=VECTORS).config == config


ONE_KNOB = [("fusion", "weighted"), ("rrf_k", 7), ("candidates", 3), ("top_n", 4), ("batch_size", 2),
            ("parallel", True)]


@pytest.mark.parametrize(("knob", "value"), ONE_KNOB)
def test_one_keyword_changes_exactly_that_knob_in_the_pipeline_and_its_fusion(knob, value):
    pipeline = Pipeline(retrievers(), **{knob: value})
    changed = {name for name, default in dataclasses.asdict(SearchConfig()).items()
               if getattr(pipeline.config, name) != default}
    assert changed == {knob} and getattr(pipeline, knob) == value  # `pipeline.top_n` reads the config
    assert isinstance(pipeline.retrieval, HybridRetriever) and pipeline.retrieval.config == pipeline.config
    assert SearchConfig().replace(**{knob: value}) == pipeline.config
    pipeline.retrieval.close()


def test_keywords_apply_on_top_of_a_config_and_the_config_is_frozen():
    base = SearchConfig(fusion="weighted", weights=(0.25, 0.75), top_n=5)
    pipeline = Pipeline(retrievers(), config=base, rrf_k=9)
    assert pipeline.config == SearchConfig(fusion="weighted", weights=(0.25, 0.75), top_n=5, rrf_k=9)
    assert pipeline.retrieval.fused_weights == [0.25, 0.75]
    assert base.replace(weights=[1, 3]).weights == (1.0, 3.0)  # any sequence in, one hashable tuple kept
    assert base.top_n == 5  # replace made a new config
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.top_n = 10
    assert pipeline.base.config == pipeline.config  # the re-ranker's input pipeline keeps every knob


def test_rrf_k_and_candidates_change_the_fused_ranking_as_rrf_says():
    dense, bm25 = retrievers()
    query = "locks and threads"
    vector = fake_embed([query])[0]
    results = []
    for rrf_k, candidates in ((1, 2), (60, 4)):
        # Each retriever gives its best max(k, candidates); each list adds 1 / (rrf_k + rank + 1).
        lists = [[h.index for h in dense.search(query, k=candidates, vector=vector)],
                 [h.index for h in bm25.search(query, k=candidates)]]
        expected: dict[int, float] = {}
        for ranking in lists:
            for rank, index in enumerate(ranking):
                expected[index] = expected.get(index, 0.0) + 1 / (rrf_k + rank + 1)
        best = sorted(expected.items(), key=lambda item: (-item[1], item[0]))[:2]
        hits = Pipeline([dense, bm25], rrf_k=rrf_k, candidates=candidates).search(query, k=2, vector=vector)
        assert [(h.index, h.score) for h in hits] == [(i, pytest.approx(s)) for i, s in best]
        results.append(hits)
    assert results[0] != results[1]


# --- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("knobs", "message"), [
    ({"fusion": "sum"}, "fusion must be one of ('rrf', 'weighted'), not 'sum'"),
    ({"rrf_k": 0}, "rrf_k must be a whole number >= 1, not 0"),
    ({"candidates": 2.5}, "candidates must be a whole number >= 1, not 2.5"),
    ({"top_n": -1}, "top_n must be a whole number >= 1, not -1"),
    ({"batch_size": True}, "batch_size must be a whole number >= 1, not True"),
    ({"parallel": "yes"}, "parallel must be True or False, not 'yes'"),
    ({"weights": (1, 1)}, "weights apply to fusion='weighted'; RRF fuses ranks only"),
    ({"fusion": "weighted", "weights": (0, 0)}, "weights must be numbers, finite, >= 0 and not all 0"),
    ({"fusion": "weighted", "weights": ("a", 1)}, "weights must be numbers"),
])
def test_an_invalid_knob_raises_naming_it(knobs, message):
    with pytest.raises(ValueError, match=f"^SearchConfig: {message}".replace("(", r"\(").replace(")", r"\)")):
        SearchConfig(**knobs)
    with pytest.raises(ValueError, match="SearchConfig: "):
        Pipeline(retrievers(), **knobs)  # the same check, whichever way the knob comes in


def test_a_misspelt_knob_or_a_wrong_count_of_weights_is_refused():
    with pytest.raises(TypeError, match="unknown search knob 'top_k'; the knobs are fusion, rrf_k"):
        Pipeline(retrievers(), top_k=3)
    with pytest.raises(TypeError, match="unknown search knob 'rrfk'"):
        SearchConfig().replace(rrfk=3)
    with pytest.raises(ValueError, match="SearchConfig: 2 retrievers but 3 weights"):
        Pipeline(retrievers(), fusion="weighted", weights=(1, 1, 1))
    with pytest.raises(TypeError, match="config must be a SearchConfig, not dict"):
        Pipeline(retrievers(), config={"top_n": 3})
    with pytest.raises(ValueError, match="a ready Pipeline carries its own SearchConfig"):
        SearchService(Pipeline(retrievers()), top_n=3)  # would otherwise serve the pipeline's 30 silently


# --- one config, one ranking --------------------------------------------------------------------

CONFIGS = [SearchConfig(), SearchConfig(rrf_k=2, candidates=3),
           SearchConfig(fusion="weighted", weights=(0.8, 0.2)), SearchConfig(top_n=2, batch_size=1)]


@pytest.mark.parametrize("config", CONFIGS, ids=["default", "rrf_k=2", "weighted", "top_n=2"])
def test_service_hybrid_and_pipeline_from_one_config_rank_alike(embedder, config):
    pipeline = Pipeline(retrievers(), reranker=ByLength(), config=config)
    served = SearchService(CHUNKS, vectors=VECTORS, reranker=ByLength(), config=config, cache_results=False)
    assert served.pipeline.config == config
    hybrid = HybridRetriever(retrievers(), config=config)
    base = Pipeline(retrievers(), config=config)
    for query in QUERIES:
        expected = pipeline.search(query, k=4)
        assert served.answer(query, k=4).hits == expected, query
        assert hybrid.search(query, k=4) == base.search(query, k=4), query
    assert set(served.reranker.batches) == set(pipeline.reranker.batches) == {config.batch_size}


def test_top_n_reaches_the_reranker_through_the_service(embedder):
    """The served shortlist is the config's: with top_n=2 only the two best fused hits are re-ranked."""
    short = SearchService(CHUNKS, vectors=VECTORS, reranker=ByLength(), top_n=2, cache_results=False)
    wide = SearchService(CHUNKS, vectors=VECTORS, reranker=ByLength(), cache_results=False)
    fused = Pipeline(retrievers()).search("asyncio tasks", k=2)
    longest_of_two = max(fused, key=lambda h: len(CHUNKS[h.index].body)).index
    longest = max(range(len(CHUNKS)), key=lambda i: len(CHUNKS[i].body))
    assert longest_of_two != longest  # so the two shortlists must give different answers
    assert short.answer("asyncio tasks", k=1).hits[0].index == longest_of_two
    assert wide.answer("asyncio tasks", k=1).hits[0].index == longest  # all six re-ranked


# --- every retriever takes a ready vector -------------------------------------------------------

def test_a_ready_vector_is_used_by_dense_search_and_ignored_by_bm25(embedder):
    dense, bm25 = retrievers()
    vector = fake_embed(["asyncio tasks"])[0]
    assert dense.search("anything at all", k=3, vector=vector) == dense.search("asyncio tasks", k=3)
    assert bm25.search("asyncio tasks", k=3, vector=vector) == bm25.search("asyncio tasks", k=3)
    embedder.clear()
    pipeline = Pipeline([dense, bm25])
    with_vector = pipeline.search("asyncio tasks", k=3, vector=vector)
    assert embedder == []  # the given vector served: the question was not embedded
    assert with_vector == pipeline.search("asyncio tasks", k=3)
    assert embedder == [(["asyncio tasks"], None)]  # ... and embedded exactly once without one


def test_a_dense_retriever_over_another_model_embeds_the_question_itself(embedder):
    first = DenseRetriever(CHUNKS, vectors=VECTORS, model="first")
    other = DenseRetriever(CHUNKS, vectors=VECTORS, model="other")
    hybrid = HybridRetriever([first, BM25Retriever(CHUNKS), other])
    hybrid.search("asyncio tasks", k=2, vector=np.array([1.0, 0.0, 0.0], np.float32))
    assert embedder == [(["asyncio tasks"], "other")]  # the vector was the first model's only


def test_every_knob_reads_through_and_none_can_be_assigned(embedder):
    """`pipeline.<knob>` is the configuration's value for each knob, and assigning one raises rather
    than leaving the pipeline and its configuration disagreeing."""
    from course_lib.core.retrieve import KNOBS

    pipeline = Pipeline([DenseRetriever(CHUNKS, vectors=VECTORS), BM25Retriever(CHUNKS)], rrf_k=7, top_n=4)
    assert {knob: getattr(pipeline, knob) for knob in KNOBS} == dataclasses.asdict(pipeline.config)
    assert (pipeline.rrf_k, pipeline.top_n, pipeline.fusion) == (7, 4, "rrf")
    for knob in KNOBS:
        with pytest.raises(AttributeError):
            setattr(pipeline, knob, getattr(pipeline, knob))
