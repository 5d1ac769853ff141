"""Lesson 08's explanation of why four prompted chunks lose questions that eight keep."""
import pytest

from course_lib.evaluation.golden import Question
from course_lib.evaluation.results import QuestionResult, RunResult
from course_lib.extras.serving_view import cut_losses, losses_table, same_page_above, section
from course_lib.records import Chunk


def chunk(n: int, doc: str = "library/a.html") -> Chunk:
    return Chunk(id=f"{doc}#{n}", doc=doc, body=f"body {n}", heading_path=("A", f"part {n}"))


def result(qid: str, first: int | None, docs: list[str], *, answerable: bool = True) -> QuestionResult:
    question = Question(qid, f"question {qid}?", "library/a.html" if answerable else None, None,
                        "quote" if answerable else None, "paraphrase")
    ranked = tuple(chunk(n, doc) for n, doc in enumerate(docs, 1))
    return QuestionResult(question, tuple(c.id for c in ranked), (1.0,) * len(ranked), first, ranked[0], ranked)


PAGES = ["library/a.html", "library/b.html", "library/a.html", "library/c.html", "library/a.html",
         "library/b.html", "library/a.html", "library/a.html"]
RUN = RunResult("served", [result("q1", 1, PAGES), result("q2", 5, PAGES), result("q3", 8, PAGES),
                           result("q4", 9, PAGES + PAGES[:1]), result("q5", None, PAGES),
                           result("q6", 6, PAGES, answerable=False)])


def test_four_chunks_lose_exactly_the_questions_with_evidence_at_ranks_five_to_eight():
    assert [r.question.id for r in cut_losses(RUN, keep=4, depth=8)] == ["q2", "q3"]
    assert cut_losses(RUN, keep=8, depth=8) == []  # the same prompt loses nothing
    with pytest.raises(ValueError):
        cut_losses(RUN, keep=9, depth=8)


def test_same_page_neighbours_above_the_evidence_are_counted():
    assert same_page_above(RUN.results[1], keep=4) == 2  # ranks 1 and 3 are on a.html, as the evidence
    assert same_page_above(RUN.results[4], keep=4) == 0  # no evidence, no page to compare


def test_the_table_names_each_lost_question_its_rank_and_the_sections_above():
    table = losses_table(cut_losses(RUN, keep=4, depth=8), keep=4)
    lines = table.splitlines()
    assert len(lines) == 4 and lines[2].startswith("| q2: question q2? | 5 | a.html › part 5 |")
    assert lines[2].count("<br>") == 3
    assert section(chunk(1), width=8) == "a.html ›"
