"""The pipeline registry: every lesson's pipeline by name, on any folder of HTML."""
import pytest

from course_lib import pipelines
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


def test_retriever_over_switches_parts_off(private_cache):
    from course_lib.rerank import RerankingRetriever
    from course_lib.search import BM25Retriever, HybridRetriever

    chunks = [Chunk("a#0", "a", "alpha beta"), Chunk("b#0", "b", "gamma delta")]
    assert isinstance(pipelines.retriever_over(chunks, dense=False), BM25Retriever)

    class Fixed:
        name = "fixed"

        def score(self, query, chunks, *, batch_size=32):
            return [len(c.body) for c in chunks]

    reranked = pipelines.retriever_over(chunks, dense=False, reranker=Fixed())
    assert isinstance(reranked, RerankingRetriever) and isinstance(reranked.base, BM25Retriever)
    with pytest.raises(ValueError, match="dense or bm25"):
        pipelines.retriever_over(chunks, dense=False, bm25=False)
    both = pipelines.retriever_over(chunks)
    assert isinstance(both, HybridRetriever) and [type(r).__name__ for r in both.retrievers] == [
        "DenseRetriever", "BM25Retriever"]
