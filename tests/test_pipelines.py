"""The pipeline registry: every lesson's pipeline by name, on any folder of HTML."""
import pytest

from course_lib import pipelines
from course_lib.records import Block, Page


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
