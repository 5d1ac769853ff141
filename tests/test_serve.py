"""Serving: caches with TTL, query normalisation, filters, stages, and prompt assembly."""
import cachetools
import numpy as np
import pytest

from course_lib.core import answer, serve
from course_lib.core.pipeline import STAGES
from course_lib.core.retrieve import Filter
from course_lib.infra import models
from course_lib.records import Chunk, Hit


def test_normalize_query_ignores_case_spacing_and_final_punctuation():
    assert serve.normalize_query("  What is a   Decorator?? ") == "what is a decorator"
    assert serve.normalize_query("os.path.join") == "os.path.join"


def test_normalize_query_keeps_case_where_it_is_the_meaning():
    # The BM25 tokenizer keeps %Y (year) apart from %y, -X (option) apart from -x: so must the cache key.
    assert serve.normalize_query("What does %Y MEAN?") == "what does %Y mean"
    assert serve.normalize_query("What does %Y mean?") != serve.normalize_query("what does %y mean")
    assert serve.normalize_query("python -X dev") != serve.normalize_query("python -x dev")
    assert serve.normalize_query("PIP install --USER") == "pip install --user"
    assert serve.normalize_query("Straße %(asctime)s") == "strasse %(asctime)s"


def test_a_request_filter_is_one_canonical_filter():
    one = serve.as_filter({"kinds": ["table", "code"], "doc": "a"})
    assert one == serve.as_filter({"doc": "a", "kinds": {"code", "table"}}) == Filter(doc="a", kinds=("code", "table"))
    assert serve.as_filter(one) is one
    assert serve.as_filter(None) is serve.as_filter({}) is serve.as_filter(Filter()) is None
    with pytest.raises(TypeError):
        serve.as_filter({"colour": "red"})


def test_lru_evicts_the_least_recently_used_and_counts():
    cache = serve.LRUCache(2)
    cache["a"] = 1
    cache["b"] = 2
    assert cache.get("a") == 1
    cache["c"] = 3
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert (cache.hits, cache.misses) == (3, 1)
    assert isinstance(cache, cachetools.LRUCache) and cache.maxsize == 2


def test_ttl_cache_expires_entries():
    now = [0.0]
    cache = serve.TTLCache(10, ttl=60, clock=lambda: now[0])
    cache["q"] = "result"
    now[0] = 59
    assert cache.get("q") == "result"
    now[0] = 61
    assert cache.get("q") is None
    assert (cache.hits, cache.misses) == (1, 1)


def test_clearing_a_cache_makes_every_lookup_recompute_and_ttl_cannot_be_assigned():
    cache = serve.TTLCache(10, ttl=60, clock=lambda: 0.0)
    cache["q"] = "result"
    cache.clear()
    assert cache.get("q") is None and (cache.hits, cache.misses) == (0, 1)
    assert cache.ttl == 60
    # Assigning ttl once changed nothing (cachetools fixes it at creation) and a benchmark's
    # "warm" pass was served from the cache; now it is an error.
    with pytest.raises(AttributeError):
        cache.ttl = 0.0


CHUNKS = [
    Chunk("a#0", "a.html", "threads and locks", title="A", heading_path=("A", "Locks"), section_id="locks", kinds=("text",)),
    Chunk("b#0", "b.html", "EEXIST error code", title="B", heading_path=("B",), kinds=("table",)),
    Chunk("c#0", "c.html", "asyncio queues", title="C", heading_path=("C", "Queues"), kinds=("code",)),
]
VECTORS = np.eye(3, dtype=np.float32)


@pytest.fixture
def service(monkeypatch):
    calls = []

    def fake_embed(texts, **kwargs):
        calls.append(list(texts))
        return np.array([[1.0, 0.0, 0.0] if "lock" in t else [0.0, 0.0, 1.0] for t in texts], np.float32)

    monkeypatch.setattr(models, "embed", fake_embed)
    service = serve.SearchService(CHUNKS, vectors=VECTORS, candidates=3)
    service.calls = calls
    return service


def test_search_fuses_both_retrievers_and_times_each_stage(service):
    answer = service.answer("how do locks work", k=3)
    assert answer.hits[0].index == 0 and not answer.cached
    assert set(STAGES) - {"rerank"} | {"total"} == set(answer.timings)  # no re-ranker, no stage


def test_a_reranking_service_times_every_stage(service):
    class Constant:
        name = "constant"

        def score(self, query, chunks, *, batch_size=32):
            return np.zeros(len(chunks))

    service.reranker = Constant()
    assert set(STAGES) | {"total"} == set(service.answer("locks", k=2).timings)


def test_the_service_wraps_a_pipeline_and_ranks_like_it(service):
    pipeline = service.pipeline
    for query in ("how do locks work", "error code", "queues"):
        for k in (1, 2, 3):
            assert service.answer(query, k=k).hits == pipeline.search(query, k=k)
    assert serve.SearchService(pipeline).answer("error code", k=3).hits == pipeline.search("error code", k=3)


@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one_is_an_error(service, k):
    with pytest.raises(ValueError, match="k must be"):
        service.answer("locks", k=k)


def test_ask_llm_is_offline_when_told(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-key")
    monkeypatch.setenv("COURSE_OFFLINE_LLM", "1")
    assert serve.ask_llm("hello") is None


def test_source_url_without_a_base_cites_the_page_path():
    assert serve.source_url(CHUNKS[0], base_url=None) == "a.html#locks"
    assert serve.source_url(CHUNKS[1], base_url="https://example.org/") == "https://example.org/b.html"
    prompt = serve.build_prompt("q", [Hit(0, 1.0)], CHUNKS, base_url=None)
    assert "[1] A > Locks\na.html#locks\n" in prompt and "docs.python.org" not in prompt


def test_the_ttl_cache_evicts_the_least_recently_used():
    cache = serve.TTLCache(2, ttl=60, clock=lambda: 0.0)
    cache["a"] = 1
    cache["b"] = 2
    cache.get("a")
    cache["c"] = 3
    assert (cache.get("b"), cache.get("a"), cache.get("c")) == (None, 1, 3)


def test_a_repeated_query_is_served_from_the_result_cache(service):
    first = service.answer("How do locks work?", k=2)
    again = service.answer("how do locks   work", k=2)
    assert again.cached and again.hits == first.hits
    assert service.calls == [["How do locks work?"]]


def test_case_sensitive_format_codes_are_different_cache_entries(service):
    service.answer("What does %Y mean?", k=2)
    assert not service.answer("what does %y mean", k=2).cached
    assert service.answer("WHAT does %Y mean", k=2).cached


def test_editing_returned_hits_does_not_edit_the_cache(service):
    service.answer("locks", k=3).hits.clear()
    again = service.answer("locks", k=3)
    assert again.cached and len(again.hits) == 3


def test_different_filters_are_different_cache_entries(service):
    service.answer("locks", k=2)
    filtered = service.answer("locks", k=2, filters={"kinds": ["code"]})
    assert not filtered.cached and [h.index for h in filtered.hits] == [2]
    assert service.answer("locks", k=2, filters=Filter(kinds=("code",))).cached  # the same filter
    assert service.answer("locks", k=2, filters={}).cached  # no filter: the first search's entry


def test_expired_results_are_recomputed_but_the_query_vector_is_reused(service):
    now = [0.0]
    service.results = serve.TTLCache(10, ttl=5, clock=lambda: now[0])
    service.answer("locks", k=2)
    now[0] = 10
    assert not service.answer("locks", k=2).cached
    assert service.calls == [["locks"]]  # the query-embedding cache still had it


def test_parallel_and_sequential_give_the_same_ranking(monkeypatch, service):
    threaded = serve.SearchService(CHUNKS, vectors=VECTORS, candidates=3, parallel=True)
    assert threaded.pipeline.parallel and not service.pipeline.parallel  # sequential is the default
    assert threaded.answer("error code", k=3).hits == service.answer("error code", k=3).hits


def test_the_reranker_reorders_the_shortlist(service):
    class ByLength:
        name = "length"

        def score(self, query, chunks, *, batch_size=32):
            return np.array([len(c.body) for c in chunks], float)

    service.reranker = ByLength()
    hits = service.answer("locks", k=3).hits
    assert [h.index for h in hits] == [0, 1, 2] and hits[0].score == len("threads and locks")


def test_prompt_numbers_sources_with_heading_path_and_url():
    prompt = serve.build_prompt("How do locks work?", [Hit(0, 1.0), Hit(2, 0.5), Hit(1, 0.1)], CHUNKS, max_chunks=2)
    assert "[1] A > Locks\nhttps://docs.python.org/3.11/a.html#locks\n\nthreads and locks" in prompt
    assert "[2] C > Queues\nhttps://docs.python.org/3.11/c.html\n\nasyncio queues" in prompt
    assert "EEXIST" not in prompt and prompt.endswith("Question: How do locks work?\nAnswer:")


def test_no_llm_call_without_a_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert serve.ask_llm("prompt") is None


def test_the_service_builds_dense_and_bm25_through_one_constructor_and_passes_the_query_encoder(monkeypatch):
    from course_lib.core.lexical import BM25Retriever
    from course_lib.core.retrieve import DenseRetriever
    from course_lib.infra import onnx_encoder

    asked = []
    monkeypatch.setattr(onnx_encoder, "embed_queries",
                        lambda texts, **kw: asked.append(kw["encoder"]) or np.array([[1.0, 0, 0]], np.float32))
    onnx = serve.SearchService(CHUNKS, vectors=VECTORS, candidates=3, query_encoder="onnx")
    dense, bm25 = onnx.pipeline.retrievers
    assert isinstance(dense, DenseRetriever) and isinstance(bm25, BM25Retriever)
    assert (dense.query_encoder, dense.cache_queries) == ("onnx", False)
    assert onnx.answer("threads", k=1).hits[0].index == 0 and asked == ["onnx"]
    with pytest.raises(ValueError, match="query_encoder must be one of"):
        serve.SearchService(CHUNKS, vectors=VECTORS, query_encoder="tensorrt")


def test_blas_limit_caps_numpys_blas_threads_inside_the_block_only():
    import threadpoolctl

    def blas_threads():
        return {p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"}

    before = blas_threads()
    with serve.blas_limit(1):
        assert blas_threads() <= {1}
    assert blas_threads() == before
    with serve.blas_limit(None):
        assert blas_threads() == before


# -- the answer path: what is missing, a stand-in client, citations checked by rule -------------

class _StandInClient:
    """Has the Anthropic client's `messages.create`; records the call and replies with `text`."""

    def __init__(self, text):
        self.text, self.calls = text, []
        self.messages = self

    def create(self, *, model, max_tokens, messages):
        from types import SimpleNamespace

        self.calls.append({"model": model, "max_tokens": max_tokens, "messages": messages})
        return SimpleNamespace(content=[SimpleNamespace(type="text", text=self.text),
                                        SimpleNamespace(type="tool_use", text="never shown")])


def _no_client_package(monkeypatch, installed):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: (object() if installed else None) if name == "anthropic" else real(name, *a))


def test_llm_missing_names_exactly_what_stops_the_call(monkeypatch):
    monkeypatch.setenv("COURSE_OFFLINE_LLM", "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-key")
    assert serve.llm_missing().startswith("COURSE_OFFLINE_LLM=1 is set")
    monkeypatch.delenv("COURSE_OFFLINE_LLM")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    _no_client_package(monkeypatch, installed=False)
    both = serve.llm_missing()
    assert "ANTHROPIC_API_KEY is not set" in both and "pip install -e '.[llm]'" in both
    _no_client_package(monkeypatch, installed=True)
    assert serve.llm_missing().startswith("ANTHROPIC_API_KEY is not set") and "llm" not in serve.llm_missing()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-key")
    assert serve.llm_missing() is None
    _no_client_package(monkeypatch, installed=False)
    assert serve.llm_missing() == "the package anthropic is not installed (pip install -e '.[llm]')"
    assert serve.ask_llm("prompt") is None  # nothing is called, nothing raises


def test_a_stand_in_client_gets_the_prompt_and_its_text_comes_back(monkeypatch):
    monkeypatch.setenv("COURSE_OFFLINE_LLM", "1")  # a given client is called whatever the switch says
    client = _StandInClient("Locks are in source [1].")
    assert serve.ask_llm("the prompt", client=client, max_tokens=50) == "Locks are in source [1]."
    assert client.calls == [{"model": serve.settings.LLM_MODEL, "max_tokens": 50,
                             "messages": [{"role": "user", "content": "the prompt"}]}]


@pytest.mark.parametrize("reply, ok, cited, unknown, unsupported", [
    ("Use threads and locks [1]. Queues come from asyncio [2].", True, (1, 2), (), ()),
    ("The docs say `threads and locks` [1].", True, (1,), (), ()),
    ("The docs say \u201cTHREADS  and locks\u201d [1, 2].", True, (1, 2), (), ()),  # folded case and spaces
    ("The docs say `threads and queues` [1].", False, (1,), (), ("threads and queues",)),
    ("It is `asyncio queues` [1].", False, (1,), (), ("asyncio queues",)),  # in source 2, cited as 1
    ("See [3] and [1].", False, (1, 3), (3,), ()),
    ("Locks exist.", False, (), (), ()),  # an answer that cites nothing
    ("The sources do not contain the answer.", True, (), (), ()),
])
def test_citations_are_checked_against_the_prompt_sources(reply, ok, cited, unknown, unsupported):
    sources = [CHUNKS[0], CHUNKS[2]]  # numbered [1] and [2] in the prompt
    check = answer.check_citations(reply, sources)
    assert (check.ok, check.cited, check.unknown, check.unsupported) == (ok, cited, unknown, unsupported)
    assert str(check).startswith("citations OK" if ok else "citations NOT OK")


def test_answer_with_sources_checks_against_exactly_the_prompted_chunks(monkeypatch):
    hits = [Hit(0, 1.0), Hit(2, 0.5), Hit(1, 0.1)]
    client = _StandInClient("Use `asyncio queues` [2]. Also [3].")
    reply = answer.answer_with_sources("How?", hits, CHUNKS, max_chunks=2, client=client)
    assert reply.prompt == serve.build_prompt("How?", hits, CHUNKS, max_chunks=2)
    assert reply.check.unknown == (3,) and not reply.check.unsupported  # [3] was not in a 2-source prompt
    assert "citations NOT OK" in str(reply)
    monkeypatch.setenv("COURSE_OFFLINE_LLM", "1")
    offline = answer.answer_with_sources("How?", hits, CHUNKS, max_chunks=2)
    assert offline.text is None and offline.check is None
    assert str(offline).startswith("No LLM call: COURSE_OFFLINE_LLM=1 is set") and "stops at the prompt" in str(offline)
