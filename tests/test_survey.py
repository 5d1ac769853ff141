"""Lesson 00's survey of shapes, with and without its progress bar."""
from course_lib.extras.survey import repeated_texts, survey
from course_lib.records import Page

PAGES = [
    Page("a.html", "<html><body><nav><a href='/'>Home</a></nav><h1>A</h1><table><tr><th>k</th></tr>"
                   "<tr><td>v</td></tr></table><pre><span>x</span> = 1</pre><div><div><div>d</div></div></div></body></html>"),
    Page("b.html", "<html><body><nav><a href='/'>Home</a></nav><h1>B</h1><div><div><p>text</p></div></div>"
                   "</body></html>"),
]


def test_the_survey_counts_the_same_with_a_progress_bar(capsys):
    plain, shown = survey(PAGES), survey(PAGES, progress=True)
    assert plain == shown
    assert plain["tables"] == 1 and plain["pre blocks"] == 1 and plain["<nav>"] == 2
    assert plain["deepest div nesting"] == 2  # the maximum over pages, not a sum
    assert "survey" in capsys.readouterr().err  # outside a notebook the bar is a line of text


def test_text_on_every_page_is_found_as_repeated():
    assert ("Home", 2) in repeated_texts(PAGES, min_share=1.0)
