"""Kept and removed text side by side: runs in reading order, escaped text, inline styles only."""
import pytest

from course_lib.core.parse import parse_blocks
from course_lib.extras import cleanview
from course_lib.records import Block

PAGE = """<html><body><div class="sphinxsidebar"><h3>Navigation</h3><ul><li>index</li></ul></div>
<div role="main"><h1>Queues</h1><p>A queue passes <code>&lt;items&gt;</code> between threads.</p>
<p>Call put() to add one.</p></div><footer><p>© Copyright</p></footer></body></html>"""


def blocks(*texts: str) -> list[Block]:
    return [Block(kind="text", text=t) for t in texts]


def test_runs_follow_reading_order_and_merge_neighbours():
    runs = cleanview.kept_and_removed(blocks("nav", "menu", "a", "b", "footer"), blocks("a", "b"))
    assert [(r.kept, r.texts) for r in runs] == [(False, ("nav", "menu")), (True, ("a", "b")), (False, ("footer",))]


def test_a_repeated_text_is_kept_once_in_order():
    runs = cleanview.kept_and_removed(blocks("Examples", "x", "Examples"), blocks("x", "Examples"))
    assert [r.kept for r in runs] == [False, True]


def test_kept_blocks_missing_from_the_whole_parse_are_an_error():
    with pytest.raises(ValueError):
        cleanview.kept_and_removed(blocks("a", "b"), blocks("b", "a"))


def test_on_a_real_parse_the_sidebar_and_footer_are_removed_and_the_content_kept():
    whole = parse_blocks(PAGE, main_selector=None, drop_boilerplate=False)
    runs = cleanview.kept_and_removed(whole, parse_blocks(PAGE))
    kept = " ".join(t for r in runs if r.kept for t in r.texts)
    removed = " ".join(t for r in runs if not r.kept for t in r.texts)
    assert "Call put()" in kept and "Navigation" in removed and "Copyright" in removed
    assert "Navigation" not in kept


def test_html_escapes_page_text_and_uses_inline_styles_only():
    runs = [cleanview.Run(False, ("<script>alert(1)</script>",)), cleanview.Run(True, ("a < b & c",))]
    page = cleanview.kept_removed_html(runs)
    assert "<script>" not in page and "&lt;script&gt;" in page and "a &lt; b &amp; c" in page
    assert "<style" not in page and "class=" not in page
    assert page.count("<tr>") == 3 and "(9 characters)" in page and "(25 characters)" in page


def test_a_long_run_keeps_its_start_and_end_and_says_how_much_is_left_out():
    page = cleanview.kept_removed_html([cleanview.Run(True, ("a" * 25 + "z" * 25,))], max_chars=10)
    assert "aaaaa\n… [40 characters] …\nzzzzz" in page and "a" * 6 not in page


def _result(q, chunks, scores, first):
    from course_lib.evaluation.results import QuestionResult
    return QuestionResult(q, tuple(c.id for c in chunks), tuple(scores), first, chunks[0], tuple(chunks))


def test_a_lost_question_says_where_its_answer_went():
    from course_lib.core.tokens import WordCounter
    from course_lib.evaluation.golden import Question
    from course_lib.evaluation.results import RunResult
    from course_lib.records import Chunk

    q = Question(id="q1", question="How do queues pass items?", doc="queue.html", section=None,
                 evidence="A queue passes items between threads", kind="paraphrase")
    answer = Chunk(id="a", doc="queue.html", body="intro. A queue passes items between threads.")
    other = Chunk(id="o", doc="x.html", body="<nav> menu")
    before = RunResult("before", [_result(q, [answer, other], [0.9, 0.5], 1)], k=2)
    after = RunResult("after", [_result(q, [other, answer], [0.8, 0.7], 2)], k=2)
    [lost] = cleanview.lost_questions(before, after, [other, answer], counter=WordCounter(limit=256, special=0), k=1)
    assert (lost.before_rank, lost.after_rank, lost.holders, lost.answer_ends_at) == (1, 2, 1, 7)
    assert "0.700 (rank 2)" in lost.why and "0.900 (rank 1)" in lost.why
    assert "&lt;nav&gt;" in cleanview.lost_table([lost]).data
    cut = cleanview.Lost("q", 1, 0.9, None, None, "", 0.8, 0, None, 256)
    assert "falls through" in cut.why
    gone = cleanview.Lost("q", 1, 0.9, None, None, "", 0.8, 1, 12, 256, depth=20)
    assert "not among the 20 ranked" in gone.why and "token 12 of 256" in gone.why
    assert not cleanview.lost_questions(before, before, [answer], counter=WordCounter(limit=256, special=0), k=1)
