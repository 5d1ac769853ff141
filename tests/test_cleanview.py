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


def test_a_long_run_is_shortened_and_says_by_how_much():
    page = cleanview.kept_removed_html([cleanview.Run(True, ("x" * 50,))], max_chars=10)
    assert "x" * 10 + " … [40 more characters]" in page and "x" * 11 not in page
