"""Unit tests of course_lib.core.retrieve: tokenizers, BM25 and its idf, dense search, fusion, filters."""
from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from course_lib.core.lexical import BM25Retriever, code_aware_tokens, idf_table, simple_tokens
from course_lib.core.retrieve import (
    DenseRetriever,
    Filter,
    HybridRetriever,
    make_filter,
    rank_hits,
    rrf,
    top_k,
    weighted_fusion,
)
from course_lib.infra import models
from course_lib.records import Chunk, Hit


def make_chunks(texts, *, docs=None, kinds=None):
    return [Chunk(id=f"c{i}", doc=(docs[i] if docs else f"page{i}.html"), body=text,
                  kinds=(kinds[i] if kinds else ("text",)))
            for i, text in enumerate(texts)]


# --- tokenizers ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("os.path.join", ["os.path.join", "os", "path", "join"]),
    ("%j", ["%j"]),
    ("%Y %y", ["%Y", "%y"]),
    ("EEXIST", ["eexist"]),
    ("--user", ["--user", "user"]),
    ("__init__", ["__init__", "init"]),
    ("-X", ["-X"]),
    ("PYTHONPATH", ["pythonpath"]),
    ("str.format()", ["str.format", "str", "format"]),
    ("datetime.strptime", ["datetime.strptime", "datetime", "strptime"]),
    ("ThreadPoolExecutor", ["threadpoolexecutor", "thread", "pool", "executor"]),
    ("%(asctime)s", ["%(asctime)s", "asctime"]),
    ("--no-cache-dir", ["--no-cache-dir", "no", "cache", "dir"]),
    ("built-in", ["built", "in"]),
    ("100% of", ["100", "of"]),
    ("Use os.path.join(a, b) -X dev",
     ["use", "os.path.join", "os", "path", "join", "a", "b", "-X", "dev"]),
])
def test_code_aware_tokens(text, expected):
    assert code_aware_tokens(text) == expected


def test_simple_tokens_lose_code():
    assert simple_tokens("os.path.join %Y -X __init__") == [
        "os", "path", "join", "y", "x", "__init__"]


def test_format_codes_keep_their_case_and_options_their_dash():
    assert code_aware_tokens("%M %m") == ["%M", "%m"]
    assert code_aware_tokens("-x -X") == ["-x", "-X"]
    assert simple_tokens("%M %m") == ["m", "m"]


# --- BM25 ------------------------------------------------------------------------------------

CODE_CHUNKS = [
    "Use os.path.join(a, b) to build a path.",
    "Join the path segments: join path to path, join them again with a path separator.",
    "The datetime module supplies classes for manipulating dates and times.",
    "%Y Year with century as a decimal number.",
    "%y Year without century as a zero-padded decimal number.",
]


def test_bm25_ranks_the_exact_identifier_first():
    retriever = BM25Retriever(make_chunks(CODE_CHUNKS))
    hits = retriever.search("os.path.join", k=5)
    assert [h.index for h in hits] == [0, 1]  # the datetime and %Y chunks share no term
    assert hits[0].score > hits[1].score > 0


def test_bm25_tells_format_codes_apart_only_with_the_code_aware_tokenizer():
    chunks = make_chunks(CODE_CHUNKS)
    assert [h.index for h in BM25Retriever(chunks).search("%y")] == [4]
    # Lowercased words make "%y" the letter y, found in both rows; the longer %Y row wins.
    plain = BM25Retriever(chunks, tokenizer=simple_tokens).search("%y")
    assert [h.index for h in plain] == [3, 4]


def test_bm25_scores_equal_rank_bm25_get_scores():
    for idf in ("lucene", "okapi"):
        retriever = BM25Retriever(make_chunks(CODE_CHUNKS), idf=idf)
        for query in ("os.path.join path", "year %Y decimal decimal", "nothing here"):
            expected = retriever.bm25.get_scores(code_aware_tokens(query))
            np.testing.assert_allclose(retriever.scores(query)[0], expected, rtol=1e-12)


def test_bm25_returns_only_matching_chunks_and_no_hits_for_unknown_terms():
    retriever = BM25Retriever(make_chunks(CODE_CHUNKS))
    assert retriever.search("zzz unknown", k=5) == []
    assert len(retriever.search("year", k=1)) == 1


def test_bm25_rejects_bad_arguments():
    with pytest.raises(ValueError):
        BM25Retriever([])
    with pytest.raises(ValueError):
        BM25Retriever(make_chunks(["a"]), idf="bm42")


# A word on 3 of 4 pages ("shared") and one on all of them ("common").
TINY = ["alpha common shared", "beta common shared", "gamma common shared", "common"]


def test_okapi_idf_pitfall_on_a_tiny_collection():
    okapi = BM25Okapi([t.split() for t in TINY])  # rank_bm25 itself, nothing of ours
    assert okapi.idf["shared"] <= 0 and okapi.idf["common"] <= 0
    table = idf_table(BM25Retriever(make_chunks(TINY)), ["shared", "common", "alpha"])
    rows = {r["term"]: r for r in table}
    assert rows["shared"]["docs"] == 3 and rows["shared"]["share"] == 0.75
    assert rows["shared"]["okapi_raw"] == pytest.approx(np.log(1.5 / 3.5))
    assert rows["shared"]["okapi_used"] == pytest.approx(okapi.idf["shared"])
    assert rows["shared"]["okapi_used"] <= 0
    assert rows["shared"]["lucene"] == pytest.approx(np.log(1 + 1.5 / 3.5))
    assert rows["shared"]["lucene"] > 0
    assert rows["alpha"]["okapi_used"] == pytest.approx(okapi.idf["alpha"])
    assert all(r["lucene"] > 0 for r in rows.values())


def test_okapi_ranks_the_chunk_missing_a_query_word_first():
    chunks = make_chunks(TINY)
    okapi = BM25Retriever(chunks, idf="okapi").search("common shared")
    lucene = BM25Retriever(chunks).search("common shared")
    assert okapi[0].index == 3 and all(h.score < 0 for h in okapi)  # "common" alone wins
    assert [h.index for h in lucene] == [0, 1, 2, 3] and all(h.score > 0 for h in lucene)


def test_a_term_on_half_the_pages_is_worth_nothing_to_okapi():
    chunks = make_chunks(["alpha half", "beta half", "gamma", "delta"])
    assert BM25Okapi([c.text.split() for c in chunks]).idf["half"] == 0.0
    assert [h.score for h in BM25Retriever(chunks, idf="okapi").search("half")] == [0.0, 0.0]
    assert BM25Retriever(chunks).search("half")[0].score > 0


# --- ranking helpers -------------------------------------------------------------------------

def test_rank_hits_breaks_ties_by_index():
    hits = [Hit(5, 1.0), Hit(2, 1.0), Hit(9, 2.0), Hit(0, 0.5)]
    assert rank_hits(hits) == [Hit(9, 2.0), Hit(2, 1.0), Hit(5, 1.0), Hit(0, 0.5)]


def test_top_k_keeps_the_lowest_index_among_ties_at_the_cut():
    scores = np.array([1.0, 2.0, 2.0, 3.0, 2.0, 0.0])
    assert top_k(scores, 3) == [Hit(3, 3.0), Hit(1, 2.0), Hit(2, 2.0)]
    assert top_k(scores, 2, mask=np.array([1, 0, 0, 0, 1, 1], bool)) == [Hit(4, 2.0), Hit(0, 1.0)]
    assert top_k(scores, 0) == [] and len(top_k(scores, 99)) == 6


# --- fusion ----------------------------------------------------------------------------------

def test_rrf_hand_computed_with_ties():
    fused = rrf([[1, 2, 3], [2, 1, 4]])
    assert fused == [(1, 1 / 61 + 1 / 62), (2, 1 / 61 + 1 / 62), (3, 1 / 63), (4, 1 / 63)]
    assert rrf([[7, 8]], k=0) == [(7, 1.0), (8, 0.5)]
    assert rrf([]) == []


def test_rrf_three_lists_tie_is_exact_and_broken_by_id():
    # id 1 at ranks (0, 6, 1), id 2 at ranks (6, 1, 0): a running `+=` makes id 2 larger by 1 ulp.
    lists = [[1, 101, 102, 103, 104, 105, 2], [111, 2, 112, 113, 114, 115, 1], [2, 1]]
    naive = {1: 0.0, 2: 0.0}
    for ranking in lists:
        for rank, doc in enumerate(ranking):
            if doc in naive:
                naive[doc] += 1 / (60 + rank + 1)
    assert naive[2] > naive[1]
    fused = rrf(lists)
    assert fused[0][0] == 1 and fused[1][0] == 2 and fused[0][1] == fused[1][1]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 67 + 1 / 62, abs=1e-17)


HITS_A = [Hit(0, 10.0), Hit(1, 5.0), Hit(2, 0.0)]     # scaled: 1, 0.5, 0
HITS_B = [Hit(2, 0.75), Hit(3, 0.5), Hit(0, 0.25)]    # scaled: 1, 0.5, 0


@pytest.mark.parametrize("weights, expected", [
    ((1, 0), [Hit(0, 1.0), Hit(1, 0.5), Hit(2, 0.0), Hit(3, 0.0)]),
    ((0, 1), [Hit(2, 1.0), Hit(3, 0.5), Hit(0, 0.0), Hit(1, 0.0)]),
    ((0.5, 0.5), [Hit(0, 0.5), Hit(2, 0.5), Hit(1, 0.25), Hit(3, 0.25)]),
])
def test_weighted_fusion(weights, expected):
    assert weighted_fusion([HITS_A, HITS_B], weights=weights) == expected


def test_weighted_fusion_raw_scores_and_edge_cases():
    raw = weighted_fusion([HITS_A, HITS_B], weights=(0.5, 0.5), normalize="none")
    assert raw[:2] == [Hit(0, 5.125), Hit(1, 2.5)]  # BM25-sized scores drown the cosines
    assert weighted_fusion([[Hit(4, 3.0)], []], weights=(1, 1)) == [Hit(4, 1.0)]
    with pytest.raises(ValueError):
        weighted_fusion([HITS_A], weights=(1, 1))


class FakeRetriever:
    """Returns fixed hits (best first), after an optional sleep; records the k it was asked for."""

    def __init__(self, name, hits, *, sleep=0.0, n_chunks=6):
        self.name, self.hits, self.sleep = name, hits, sleep
        self.chunks = make_chunks([f"chunk {i}" for i in range(n_chunks)])
        self.asked_k = []

    def search(self, query, *, k=20, where=None, vector=None):
        self.asked_k.append(k)
        time.sleep(self.sleep)
        return [h for h in self.hits if where is None or where(self.chunks[h.index])][:k]


def test_hybrid_rrf_same_result_parallel_or_not():
    lexical = [Hit(3, 9.0), Hit(1, 4.0), Hit(5, 1.0)]
    dense = [Hit(1, 0.9), Hit(0, 0.8), Hit(3, 0.7)]
    results = []
    for parallel in (True, False):
        bm, de = FakeRetriever("bm25", lexical), FakeRetriever("dense", dense)
        hybrid = HybridRetriever([bm, de], parallel=parallel, candidates=50)
        results.append(hybrid.search("q", k=3))
        assert bm.asked_k == [50] and de.asked_k == [50]
        assert set(hybrid.last_timings) == {"bm25", "dense", "fuse", "total"}
    assert results[0] == results[1]
    assert results[0] == [Hit(1, 1 / 62 + 1 / 61), Hit(3, 1 / 61 + 1 / 63), Hit(0, 1 / 62)]


def test_hybrid_weighted_and_where_passed_through():
    lexical = [Hit(3, 9.0), Hit(1, 4.0), Hit(5, 1.0)]
    dense = [Hit(1, 0.9), Hit(0, 0.8), Hit(3, 0.7)]
    hybrid = HybridRetriever([FakeRetriever("bm25", lexical), FakeRetriever("dense", dense)],
                             fusion="weighted", weights=(1, 0), parallel=False)
    assert [h.index for h in hybrid.search("q", k=4)] == [3, 1, 0, 5]
    keep_odd = lambda chunk: int(chunk.id[1:]) % 2 == 1  # noqa: E731
    assert [h.index for h in hybrid.search("q", k=4, where=keep_odd)] == [3, 1, 5]


class MeetingRetriever(FakeRetriever):
    """Waits inside `search` until its partner is searching too: only a parallel hybrid gets past."""

    def __init__(self, name, barrier):
        super().__init__(name, [Hit(0, 1.0)])
        self.barrier = barrier

    def search(self, query, *, k=20, where=None, vector=None):
        self.barrier.wait(timeout=30)  # generous: a busy machine is slow, never wrong
        return super().search(query, k=k, where=where)


def test_hybrid_runs_retrievers_concurrently():
    # Concurrency shown by behaviour, not wall-clock: each retriever blocks until the other is
    # inside its own search, which only happens when both run at the same time.
    barrier = threading.Barrier(2)
    hybrid = HybridRetriever([MeetingRetriever(n, barrier) for n in ("bm25", "dense")], parallel=True)
    assert hybrid.search("q") == [Hit(0, 1 / 61 + 1 / 61)]
    slow = [FakeRetriever(n, [Hit(0, 1.0)], sleep=0.3) for n in ("bm25", "dense")]
    sequential = HybridRetriever(slow, parallel=False)
    sequential.search("q")
    assert sequential.last_timings["total"] >= 0.6  # a lower bound: sleeps cannot finish early


def pool_threads(hybrid: HybridRetriever) -> list[threading.Thread]:
    hybrid.search("q")  # a ThreadPoolExecutor starts its threads on the first submit
    threads = list(hybrid._pool._threads)
    assert threads and all(t.is_alive() for t in threads)
    return threads


def test_hybrid_thread_pool_stops_with_its_owner():
    def make() -> HybridRetriever:
        return HybridRetriever([FakeRetriever(n, [Hit(0, 1.0)]) for n in ("bm25", "dense")], parallel=True)

    closed = make()
    threads = pool_threads(closed)
    closed.close()
    assert not any(t.is_alive() for t in threads)
    assert closed.search("q") == [Hit(0, 1 / 61 + 1 / 61)]  # still answers, one after the other
    with make() as scoped:
        threads = pool_threads(scoped)
    assert not any(t.is_alive() for t in threads)
    dropped = make()
    threads = pool_threads(dropped)
    del dropped
    gc.collect()
    for t in threads:
        t.join(timeout=5)
    assert not any(t.is_alive() for t in threads)


def test_hybrid_runs_retrievers_one_after_the_other_by_default():
    # Lesson 08 measured threads slower than sequential for an in-memory index on a laptop, so
    # they are opt-in: no thread pool unless parallel=True.
    hybrid = HybridRetriever([FakeRetriever("bm25", [Hit(0, 1.0)]), FakeRetriever("dense", [Hit(0, 1.0)])])
    assert hybrid.parallel is False and hybrid._pool is None


def test_hybrid_rejects_inconsistent_setups():
    a = FakeRetriever("a", [])
    with pytest.raises(ValueError):
        HybridRetriever([a, FakeRetriever("b", [], n_chunks=3)])
    with pytest.raises(ValueError, match="weights apply to fusion='weighted'"):
        HybridRetriever([a, a], weights=(1, 1))  # weights belong to fusion="weighted"
    assert HybridRetriever([a, a], parallel=False).names == ["a#0", "a#1"]


# --- dense -----------------------------------------------------------------------------------

def test_dense_retriever_with_precomputed_vectors(monkeypatch):
    vectors = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.6, 0.8, 0]], dtype=np.float32)
    calls = []

    def fake_embed(texts, *, model=None, use_cache=True, progress=True, **_):
        calls.append((list(texts), model, use_cache))
        return np.array([[0.0, 1.0, 0.0]], dtype=np.float32)

    monkeypatch.setattr(models, "embed", fake_embed)
    retriever = DenseRetriever(make_chunks(["a", "b", "c", "d"]), vectors=vectors, model="m")
    hits = retriever.search("which is b?", k=2)
    assert [h.index for h in hits] == [1, 3]
    assert hits[0].score == pytest.approx(1.0) and hits[1].score == pytest.approx(0.8)
    assert calls == [(["which is b?"], "m", True)]
    no_b = retriever.search("which is b?", k=2, where=lambda c: c.body != "b")
    assert [h.index for h in no_b] == [3, 0]
    with pytest.raises(ValueError):
        DenseRetriever(make_chunks(["a"]), vectors=vectors)


def test_dense_retriever_embeds_chunks_through_models_embed(monkeypatch):
    identity = np.eye(3, dtype=np.float32)
    monkeypatch.setattr(models, "embed", lambda texts, **_: identity[:len(texts)])
    retriever = DenseRetriever(make_chunks(["x", "y", "z"]))
    assert retriever.vectors.shape == (3, 3)
    assert retriever.search("q", k=1) == [Hit(0, 1.0)]


# --- filters ---------------------------------------------------------------------------------

FILTER_DOCS = ["library/os.html", "library/os.path.html", "tutorial/intro.html", "library/os.html"]
FILTER_KINDS = [("text",), ("code", "text"), ("code",), ("table",)]


def kept(hits, chunks, where):
    return [hit for hit in hits if where(chunks[hit.index])]


def test_a_filter_keeps_page_prefix_and_any_of_the_kinds():
    chunks = make_chunks(["w"] * 4, docs=FILTER_DOCS, kinds=FILTER_KINDS)
    hits = [Hit(3, 4.0), Hit(2, 3.0), Hit(1, 2.0), Hit(0, 1.0)]
    assert kept(hits, chunks, make_filter(doc="library/os.html")) == [Hit(3, 4.0), Hit(0, 1.0)]
    assert [h.index for h in kept(hits, chunks, make_filter(path_prefix="library/"))] == [3, 1, 0]
    assert [h.index for h in kept(hits, chunks, make_filter(kinds={"code"}))] == [2, 1]
    both = kept(hits, chunks, make_filter(path_prefix="library/", kinds=["code"]))
    assert [h.index for h in both] == [1]
    assert kept(hits, chunks, make_filter()) == hits
    assert kept(hits, chunks, make_filter(kinds=[])) == []  # no kind asked for: nothing passes
    assert make_filter(doc="nope.html")(chunks[0]) is False


def test_a_filter_is_one_hashable_value_whatever_order_its_kinds_come_in():
    one = make_filter(doc="a", kinds=["table", "code", "table"])
    assert one == Filter(doc="a", kinds={"code", "table"}) == Filter(doc="a", kinds=("code", "table"))
    assert one.kinds == ("code", "table") and hash(one) == hash(Filter(doc="a", kinds=["code", "table"]))
    assert len({one, Filter(doc="a", kinds=("table", "code")), Filter(doc="a")}) == 2


def test_where_filters_before_the_top_k_cut():
    texts = ["join join join", "join join", "join", "join and more words here"]
    chunks = make_chunks(texts, docs=FILTER_DOCS, kinds=FILTER_KINDS)
    retriever = BM25Retriever(chunks)
    assert [h.index for h in retriever.search("join", k=2)] == [0, 1]
    only_code = retriever.search("join", k=2, where=make_filter(kinds={"code"}))
    assert [h.index for h in only_code] == [1, 2]  # still two hits: filtered before the cut
    after = kept(retriever.search("join", k=2), chunks, make_filter(kinds={"code"}))
    assert [h.index for h in after] == [1]  # filtering after the cut loses one


def test_case_sensitive_spans_are_format_codes_and_single_dash_options():
    from course_lib.core.lexical import case_sensitive_spans

    text = "Use %Y with -X dev, not --user or built-in"
    assert [text[a:b] for a, b in case_sensitive_spans(text)] == ["%Y", "-X"]
