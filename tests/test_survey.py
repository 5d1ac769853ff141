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


def test_the_survey_counts_what_a_soup_finds_on_awkward_markup():
    from course_lib.extras.survey import survey_page

    page = ("<?xml version='1.0' encoding='utf-8'?><html><body><div role='navigation'><ul><li>a</li></ul></div>"
            "<h2>T<a class='x headerlink' href='#t'>¶</a></h2><a class='headerlinks'>no</a>"
            "<table><thead><tr><td>k</td></tr></thead></table><table><tr><td>v</td></tr></table>"
            "<script>var s = '<h1>not a heading</h1>';</script></body></html>")
    counts = survey_page(page)
    assert counts["¶ permalinks"] == 1 and counts['role="navigation"'] == 1 and counts["list items"] == 1
    assert counts["tables"] == 2 and counts["tables with a header row"] == 1
    assert counts["<script>"] == 1 and counts["h1"] == 0 and counts["h2"] == 1
    assert survey_page("") == survey_page("<html></html>") and sum(survey_page("").values()) == 0


def test_the_visible_tree_drops_scripts_but_keeps_the_text_after_them():
    from course_lib.evaluation.golden_checks import html_tree

    root = html_tree("<pre>a = 1<script>x()</script>\nb = 2<!-- note --></pre><style>p{}</style>tail")
    assert "".join(root.find(".//pre").itertext()) == "a = 1\nb = 2"
    assert root.find(".//style") is None and "tail" in "".join(root.itertext())
    assert html_tree("<script>x()</script>", visible_only=False).find(".//script") is not None
