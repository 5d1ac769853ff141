"""The pipeline registry: every lesson's pipeline by name, on any folder of HTML."""
import numpy as np
import pytest

from course_lib.core import pipeline as pipelines
from course_lib.core.parse import parse_corpus
from course_lib.core.pipeline import Pipeline
from course_lib.records import Block, Chunk, Page


def test_every_lesson_pipeline_is_registered_in_order():
    assert list(pipelines.PIPELINES) == ["naive", "clean", "structured", "context", "limited", "bm25",
                                         "hybrid", "reranked"]


def test_unknown_pipeline_lists_the_known_ones():
    with pytest.raises(KeyError, match="known: naive, clean"):
        pipelines.build_pipeline("nope", [])


def test_page_title_falls_back_to_the_path_for_a_page_without_title():
    assert pipelines.page_title([Block("text", "x")], "a.html") == "a.html"
    assert pipelines.page_title([Block("text", "x", heading_path=("T", "S"))], "a.html") == "T"


@pytest.mark.model
def test_bm25_pipeline_runs_on_a_users_own_pages_without_titles():
    body = "<p>" + "The frobnicate option sets EEXIST handling. " * 10 + "</p>"
    pages = [Page("a.html", f"<html><body>{body}</body></html>"),
             Page("b.html", "<html><body><h1>B</h1><p>" + "Unrelated text about queues. " * 10 + "</p></body></html>")]
    retriever = pipelines.build_pipeline("bm25", pages)
    best = retriever.chunks[retriever.search("EEXIST frobnicate", k=1)[0].index]
    assert best.doc == "a.html" and best.context.startswith("a.html")


def test_clean_corpus_reports_stubs_and_frequent_blocks():
    page = "<html><body><h1>{t}</h1><p>" + "Real content here. " * 20 + "</p><p>Shared footer line.</p></body></html>"
    pages = [Page(f"p{i}.html", page.format(t=f"P{i}")) for i in range(4)] + [Page("stub.html", "<p>tiny</p>")]
    blocks, skipped, removed = pipelines.clean_corpus(pages, max_share=0.5)
    assert [path for path, _ in skipped] == ["stub.html"] and "stub" in skipped[0][1]
    assert {r.text for r in removed} == {"Shared footer line.", "Real content here. " * 19 + "Real content here."}


def test_clean_corpus_hands_out_copies_the_cache_keeps_its_own():
    page = "<html><body><h1>{t}</h1><p>" + "Real content here. " * 20 + "</p><p>Shared footer line.</p></body></html>"
    pages = [Page(f"copy{i}.html", page.format(t=f"P{i}")) for i in range(4)] + [Page("stub.html", "<p>tiny</p>")]
    blocks, skipped, removed = pipelines.clean_corpus(pages, max_share=0.5)
    expected = ({doc: list(b) for doc, b in blocks.items()}, list(skipped), list(removed))
    blocks["copy0.html"].clear()
    blocks.pop("copy1.html")
    skipped.append(("x.html", "added by the caller"))
    removed.clear()
    assert pipelines.clean_corpus(pages, max_share=0.5) == expected


def test_a_max_share_sweep_parses_once_and_matches_a_fresh_parse(monkeypatch, private_cache):
    page = "<html><body><h1>{t}</h1><p>" + "Body text of page {t}. " * 10 + "</p><p>Footer.</p></body></html>"
    pages = [Page(f"sweep{i}.html", page.format(t=i)) for i in range(5)]
    calls = []
    real_parse = pipelines.parse_pages
    monkeypatch.setattr(pipelines, "parse_pages", lambda *a, **k: calls.append(1) or real_parse(*a, **k))
    swept = {share: pipelines.clean_corpus(pages, max_share=share, min_chars=11) for share in (0.2, 0.5, 1.0)}
    assert len(calls) == 1
    assert {r.text for r in swept[0.5][2]} == {"Footer."} and swept[1.0][2] == []
    fresh, _ = parse_corpus(pages, min_chars=11)
    assert swept[1.0][0] == fresh and all("Footer." not in [b.text for b in blocks]
                                          for blocks in swept[0.5][0].values())


class Fixed:
    """A re-ranker that prefers long chunks: deterministic, no model."""

    name = "fixed"

    def score(self, query, chunks, *, batch_size=32):
        return np.array([len(c.body) for c in chunks], float)


CHUNKS = [Chunk(f"c#{i}", f"c{i}.html", f"alpha {'beta ' * i}gamma{i}") for i in range(8)]


@pytest.mark.model
def test_retriever_over_switches_parts_off(private_cache):
    from course_lib.core.lexical import BM25Retriever
    from course_lib.core.retrieve import DenseRetriever

    chunks = [Chunk("a#0", "a", "alpha beta"), Chunk("b#0", "b", "gamma delta")]
    lexical = pipelines.retriever_over(chunks, dense=False)
    assert isinstance(lexical, Pipeline) and [type(r) for r in lexical.retrievers] == [BM25Retriever]
    reranked = pipelines.retriever_over(chunks, dense=False, reranker=Fixed())
    assert reranked.reranker.name == "fixed" and reranked.base.reranker is None
    with pytest.raises(ValueError, match="dense or bm25"):
        pipelines.retriever_over(chunks, dense=False, bm25=False)
    both = pipelines.retriever_over(chunks)
    assert [type(r) for r in both.retrievers] == [DenseRetriever, BM25Retriever]
    assert both.vectors.shape[0] == 2 and both.base.retrievers[0].vectors is both.vectors


def test_retriever_over_is_pipeline_over_under_the_lessons_name():
    """One constructor for dense + BM25: the lessons' name is the same function, not a second one."""
    assert pipelines.retriever_over == Pipeline.over


@pytest.mark.parametrize("k", [0, -3])
def test_k_below_one_is_a_value_error_for_every_pipeline(k):
    for pipeline in (Pipeline.over(CHUNKS, dense=False), Pipeline.over(CHUNKS, dense=False, reranker=Fixed(), top_n=3),
                     Pipeline.over(CHUNKS, vectors=np.eye(8, dtype=np.float32), bm25=False)):
        with pytest.raises(ValueError, match="k must be"):
            pipeline.search("alpha", k=k, vector=np.eye(8, dtype=np.float32)[0])


def test_a_reranking_pipeline_asked_for_more_than_top_n_reranks_k():
    pipeline = Pipeline.over(CHUNKS, dense=False, reranker=Fixed(), top_n=3)
    hits = pipeline.search("alpha", k=6)
    assert len(hits) == 6  # not silently top_n
    # BM25 ranks short chunks first (0..5); all six are re-ranked (longest first)
    assert [h.index for h in hits] == [5, 4, 3, 2, 1, 0]
    assert [h.index for h in pipeline.search("alpha", k=2)] == [2, 1]  # the top_n = 3 re-ranked
    assert set(pipeline.last_timings) == {"embed query", "bm25", "rerank", "total"}


def test_a_pipeline_matches_the_retrievers_it_is_built_from():
    from course_lib.core.lexical import BM25Retriever
    from course_lib.core.rerank import rerank, shortlist_size
    from course_lib.core.retrieve import DenseRetriever, HybridRetriever

    vectors = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dense, bm25 = DenseRetriever(CHUNKS, vectors=vectors), BM25Retriever(CHUNKS)
    query = vectors[3]
    dense.embed_query = lambda q: query  # no model: the query "is" chunk 3's vector
    hybrid = HybridRetriever([dense, bm25], candidates=4)
    pipeline = Pipeline([dense, bm25], reranker=Fixed(), top_n=5, candidates=4)
    for k in (1, 3, 5, 7):  # up to top_n, and past it
        depth = shortlist_size(k, top_n=5)
        by_hand = rerank(Fixed(), "beta gamma3", hybrid.search("beta gamma3", k=depth), CHUNKS, top_n=depth)
        assert pipeline.search("beta gamma3", k=k) == by_hand[:k]
    assert len(pipeline.search("beta gamma3", k=7)) == 7
    assert set(pipeline.last_timings) == {"embed query", "dense", "bm25", "fuse", "rerank", "total"}


def test_hybrid_retrievers_must_index_the_same_chunks():
    from course_lib.core.lexical import BM25Retriever
    from course_lib.core.retrieve import HybridRetriever

    other = [Chunk(f"x#{i}", "x.html", c.text) for i, c in enumerate(CHUNKS)]
    with pytest.raises(ValueError, match="ids differ"):
        HybridRetriever([BM25Retriever(CHUNKS), BM25Retriever(other)])
    with pytest.raises(ValueError, match="ids differ"):
        Pipeline([BM25Retriever(CHUNKS), BM25Retriever(other)])


def test_the_reranked_pipeline_passes_its_model_to_the_maxsim_reranker(monkeypatch):
    from course_lib.core import rerank

    made = []

    class FakeMaxSim:
        def __init__(self, model=None):
            made.append(model)
            self.name = f"maxsim:{model}"

    monkeypatch.setattr(pipelines, "MaxSimReranker", FakeMaxSim)
    monkeypatch.setattr(pipelines, "load_reranker", lambda: FakeMaxSim())
    assert pipelines.reranker_for("my-model").name == "maxsim:my-model" and made == [None, "my-model"]
    assert rerank.MaxSimReranker is not FakeMaxSim


PAGE = "<html><body><h1>{t}</h1><p>" + "Real content here about {t}. " * 20 + "</p></body></html>"


def test_unknown_options_are_a_type_error_before_any_page_is_parsed(monkeypatch):
    from course_lib.core import parse

    monkeypatch.setattr(parse, "parse_blocks", lambda *a, **k: pytest.fail("a page was parsed"))
    pages = [Page("a.html", PAGE.format(t="A"))]
    with pytest.raises(TypeError, match="typo"):
        pipelines.structured_chunks(pages, typo=1)
    with pytest.raises(TypeError, match="bogus"):
        pipelines.clean_corpus(pages, bogus=True)
    with pytest.raises(TypeError, match="bogus"):
        parse.parse_corpus(pages, bogus=True)


def test_a_run_where_the_parser_fails_on_many_pages_is_an_error_and_is_not_cached(monkeypatch, private_cache):
    from course_lib.core import parse

    pages = [Page(f"p{i}.html", PAGE.format(t=f"P{i}")) for i in range(10)]
    real = parse.parse_blocks
    broken = {"p0.html", "p1.html", "p2.html"}

    def flaky(html, **kwargs):
        if any(f"<h1>P{p[1]}</h1>" in html for p in broken):
            raise RuntimeError("boom")
        return real(html, **kwargs)

    monkeypatch.setattr(parse, "parse_blocks", flaky)
    with pytest.raises(parse.ParserFailures, match="3 of 10 pages"):
        pipelines.clean_corpus(pages, max_share=0.9)
    blocks, skipped, _ = pipelines.clean_corpus(pages, max_share=0.9, max_failure_share=0.5)
    assert len(blocks) == 7 and {p for p, r in skipped if r.startswith("parser failed")} == broken
    monkeypatch.setattr(parse, "parse_blocks", real)
    blocks, skipped, _ = pipelines.clean_corpus(pages, max_share=0.9)  # the failure was not cached
    assert len(blocks) == 10 and skipped == []
    pipelines._parsed_corpus.cache_clear()  # nor kept on disk: the next process parses again
    monkeypatch.setattr(parse, "parse_blocks", flaky)
    assert len(pipelines.clean_corpus(pages, max_share=0.9, max_failure_share=0.5)[0]) == 7


def test_one_or_two_parser_failures_stay_page_level(monkeypatch):
    from course_lib.core import parse

    pages = [Page(f"p{i}.html", PAGE.format(t=f"P{i}")) for i in range(3)]
    real = parse.parse_blocks
    monkeypatch.setattr(parse, "parse_blocks",
                        lambda html, **k: (_ for _ in ()).throw(RuntimeError("x")) if "<h1>P0<" in html else real(html, **k))
    parsed, skipped = parse.parse_corpus(pages)  # 1 of 3 is over 10% but under PARSER_FAILURE_MIN
    assert len(parsed) == 2 and skipped[0][1].startswith("parser failed")


def test_defaults_come_from_settings():
    import inspect

    from course_lib import settings
    from course_lib.core import frequency, parse, serve
    from course_lib.core import retrieve as search
    from course_lib.core.lexical import BM25Retriever

    assert inspect.signature(frequency.drop_frequent_blocks).parameters["max_share"].default == settings.BOILERPLATE_MAX_PAGE_SHARE
    assert inspect.signature(parse.parse_corpus).parameters["min_chars"].default == settings.STUB_MIN_CHARS
    # The search knobs have one home, SearchConfig, read by every searcher built without one.
    built = [Pipeline.over(CHUNKS, dense=False), search.HybridRetriever([BM25Retriever(CHUNKS)] * 2),
             serve.SearchService(CHUNKS, vectors=np.eye(len(CHUNKS), dtype=np.float32))]
    for searcher in built:
        assert (searcher.config.top_n, searcher.config.rrf_k, searcher.config.candidates) == (
            settings.RERANK_TOP_N, settings.RRF_K, settings.FUSION_CANDIDATES)
        # Threads are opt-in everywhere (lesson 08 measured them slower on a laptop's in-memory index).
        assert searcher.config.parallel is False
    assert settings.FINAL_PIPELINE in pipelines.PIPELINES


@pytest.mark.model
def test_served_and_evaluated_pipelines_rank_the_golden_questions_identically():
    """The unit-level form of lesson 08's check: SearchService over a Pipeline ranks exactly as
    evaluate_retriever scores it, for every dev question (on the pages of three of them, for speed)."""
    from course_lib.core.load import load_pages
    from course_lib.core.serve import SearchService
    from course_lib.evaluation.golden import load_golden
    from course_lib.evaluation.metrics import evaluate_rankings, evaluate_retriever
    from course_lib.infra.paths import GOLDEN_FILE

    dev = load_golden(GOLDEN_FILE, split="dev")
    docs = list(dict.fromkeys(q.doc for q in dev if q.doc))[:3]
    pages = [p for p in load_pages() if p.path in docs]
    pipeline = pipelines.retriever_over(pipelines.structured_chunks(pages), reranker=Fixed(), top_n=10)
    evaluated = evaluate_retriever(pipeline, dev, name="evaluated", k=20, progress=False)
    service = SearchService(pipeline)
    answers = [service.answer(q.question, k=20) for q in dev]
    served = evaluate_rankings(dev, [a.hits for a in answers], pipeline.chunks, name="served", k=20)
    assert [r.ranked_ids for r in served.results] == [r.ranked_ids for r in evaluated.results]
    assert served.recall_at(20) == evaluated.recall_at(20) and served.mrr == evaluated.mrr
    # ... and hit for hit, before the evaluation's tie-breaking re-sort
    assert all(a.hits == pipeline.search(q.question, k=20) for q, a in zip(dev[:10], answers, strict=False))
    assert all(service.answer(q.question, k=20).cached for q in dev[:3])
