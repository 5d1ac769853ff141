"""Unit tests of lesson 03's parse stage on messy HTML: where the main text is (`main_content`),
the named furniture rules and the guard that no rule empties a page (`boilerplate`), repeats
within a page, `explain=True`, and `python -m course_lib extract [--why]`.

Every page is small hand-written HTML; each test asserts the exact blocks (or counts) it expects.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from bs4 import BeautifulSoup

from course_lib.core.boilerplate import FURNITURE_RULES, REPEATED, Removed
from course_lib.core.furniture_headings import heading_names_furniture
from course_lib.core.main_content import LANDMARKS, Measure, choose_main, measure
from course_lib.core.parse import ParsedPage, parse_page

# Three paragraphs of prose (40+ characters each, so each counts as a paragraph).
P1 = "The first paragraph of the story is long enough to count as prose for sure."
P2 = "The second paragraph of the story carries on and is also long enough to count."
P3 = "A third paragraph closes the story with yet more words for a reader to read."
STORY = [("heading", "Story"), ("text", P1), ("text", P2)]
STORY3 = [*STORY, ("text", P3)]


def kinds_texts(parsed: ParsedPage) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in parsed.blocks]


def story_page(extra: str = "", *, body_extra: str = "") -> str:
    """A page whose story sits in a plain `div.story` (no landmark), with `extra` inside it."""
    return (f"<html><head><title>Page</title></head><body>{body_extra}<div class='story'><h1>Story</h1>"
            f"<p>{P1}</p><p>{P2}</p>{extra}</div></body></html>")


def links(*words: str) -> str:
    return "<ul>" + "".join(f"<li><a href='/{w.lower()}'>{w}</a></li>" for w in words) + "</ul>"


MENU = ("Home", "News", "Sport", "Weather", "Contact")


# ----------------------------------------------------------------------------- 1. main content by evidence

def test_main_landmark_holding_the_text_wins():
    parsed = parse_page(f"<html><body><div class='top'><p>Top promo text</p></div><main id='content'><h1>Story</h1>"
                        f"<p>{P1}</p><p>{P2}</p></main></body></html>")
    assert parsed.main.label == "main#content"
    assert parsed.main.reason == "the landmark that holds the text"
    assert "landmark" in parsed.main.reason
    assert kinds_texts(parsed) == STORY


COMMENT_PAGE = (f"<html><body><div class='story'><h1>Story</h1><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>"
                "<article class='comment'><p>Great post, thanks!</p></article></body></html>")


def test_a_reader_comment_article_is_not_the_main_text():
    parsed = parse_page(COMMENT_PAGE)
    assert parsed.main.label == "div.story"
    assert parsed.main.reason == "the smallest container that holds most of the text"
    assert kinds_texts(parsed) == STORY3


def test_choose_by_evidence_false_takes_the_first_landmark_even_a_comment():
    parsed = parse_page(COMMENT_PAGE, choose_by_evidence=False)
    assert parsed.main.label == "article.comment"
    assert parsed.main.reason == "the first landmark that matches"
    assert kinds_texts(parsed) == [("text", "Great post, thanks!")]


def test_an_empty_microdata_article_is_not_chosen():
    parsed = parse_page("<html><body><article itemscope itemtype='https://schema.org/NewsArticle'></article>"
                        f"<div class='story'><h1>Story</h1><p>{P1}</p><p>{P2}</p></div></body></html>")
    assert parsed.main.label == "div.story"
    assert kinds_texts(parsed) == STORY


SEARCH_PAGE = ("<html><body><form id='site-search' role='main' action='/search'><label>Search this site for "
               "articles</label><input name='q'><button>Search</button></form>"
               f"<div class='story'><h1>Story</h1><p>{P1}</p><p>{P2}</p></div></body></html>")


def test_a_role_main_search_form_is_not_chosen():
    body = BeautifulSoup(SEARCH_PAGE, "lxml").body
    choice = choose_main(body)
    assert choice.element is body.find("div", class_="story")
    assert choice.label == "div.story"
    # In parse_page the form survives when its rule is off, and still is not read as the main text.
    parsed = parse_page(SEARCH_PAGE, skip_rules=("forms and buttons",))
    assert parsed.main.label == "div.story"
    assert kinds_texts(parsed) == STORY


def test_a_listing_of_article_teasers_is_read_whole():
    teasers = "".join(f"<article><h2>Teaser {i}</h2><p>Sentence number {i} tells the reader what story {i} "
                      f"is about.</p></article>" for i in range(1, 9))
    parsed = parse_page(f"<html><body><h1>Latest</h1>{teasers}</body></html>")
    assert parsed.main.label == "body"
    assert parsed.main.reason == "no element holds most of the text: the whole body"
    expected = [("heading", "Latest")]
    for i in range(1, 9):
        expected += [("heading", f"Teaser {i}"), ("text", f"Sentence number {i} tells the reader what story {i} is about.")]
    assert kinds_texts(parsed) == expected


PROMO = "Subscribe today and get the weekly digest in your inbox."
NO_LANDMARK = (f"<html><body><div id='page'><div class='content'><h1>Story</h1><p>{P1}</p><p>{P2}</p></div>"
               f"<div class='box'><p>{PROMO}</p></div></div></body></html>")


def test_without_a_landmark_the_smallest_container_holding_the_text_is_chosen():
    parsed = parse_page(NO_LANDMARK)
    assert parsed.main.label == "div.content"
    assert parsed.main.reason == "the smallest container that holds most of the text"
    content = len("Story") + len(P1) + len(P2)
    assert parsed.main.share == pytest.approx(content / (content + len(PROMO)))
    assert kinds_texts(parsed) == STORY  # the sibling promo is left out
    assert dict(parsed.furniture.counts) == {}  # ... by the choice, not by a rule


def test_main_selector_none_reads_the_whole_body():
    parsed = parse_page(NO_LANDMARK, main_selector=None)
    assert parsed.main.label == "body"
    assert parsed.main.reason == "main_selector=None: the whole body"
    assert kinds_texts(parsed) == [*STORY, ("text", PROMO)]


# A <main> that holds more than the post: a teaser for another post beside it.
TEASER = "A teaser for another post, with a sentence of text long enough to count as prose."
BUSY_MAIN = ("<html><head><title>Story | Site</title></head><body><main id='m'><h1>Story</h1>"
             f"<div class='entry-content'><p>{P1}</p><p>{P2}</p><p>{P3}</p><p>{P1} {P2}</p></div>"
             f"<div class='more'><p>{TEASER}</p></div></main></body></html>")


def test_inside_a_landmark_the_container_holding_its_text_is_read():
    parsed = parse_page(BUSY_MAIN)
    assert parsed.main.label == "div.entry-content"
    assert parsed.main.reason == "in the landmark main#m, the container with 75% of its text"
    texts = [t for _, t in kinds_texts(parsed)]
    assert texts == [P1, P2, P3, f"{P1} {P2}"]
    assert all(b.heading_path == ("Story",) for b in parsed.blocks)  # the <h1> beside it is still the title


def test_narrow_share_none_reads_the_whole_landmark():
    parsed = parse_page(BUSY_MAIN, narrow_share=None)
    assert parsed.main.label == "main#m"
    assert ("text", TEASER) in kinds_texts(parsed)


@pytest.mark.parametrize(("outside", "why"), [
    ("<pre>pip install story</pre>", "code outside it is content"),
    ("<ul>" + "".join(f"<li><a href='/{i}'>Product number {i} of the listing</a></li>" for i in range(40))
     + "</ul>", "a listing's text is its links"),
])
def test_a_landmark_is_not_narrowed_past_its_code_or_its_links(outside, why):
    html = BUSY_MAIN.replace("<div class='more'>", f"{outside}<div class='more'>")
    assert parse_page(html).main.label == "main#m", why


def test_narrowing_never_picks_a_documentation_section():
    """pandas' tutorials: "Data used for this tutorial" sits above a <section> holding 80% of the text."""
    html = ("<html><body><main id='m'><h1>Tutorial</h1><p>Data used for this tutorial: the Titanic set.</p>"
            f"<section id='s'><h2>Part</h2><p>{P1}</p><p>{P2}</p><p>{P3}</p><p>{P1} {P2}</p></section>"
            "</main></body></html>")
    parsed = parse_page(html)
    assert parsed.main.label == "main#m"
    assert ("text", "Data used for this tutorial: the Titanic set.") in kinds_texts(parsed)


def test_a_title_h1_is_chosen_by_the_documents_title():
    html = ("<html><head><title>Story of the week | Site</title></head><body><header><h1>Site</h1></header>"
            f"<main><div class='body'><p>{P1}</p><p>{P2}</p></div></main><div><h1>Story of the week</h1></div>"
            "</body></html>")
    assert {b.heading_path[0] for b in parse_page(html).blocks} == {"Story of the week"}


def test_landmarks_are_the_documented_marks():
    assert LANDMARKS == ('[role="main"]', "main", "article", '[itemprop="articleBody"]')


# ----------------------------------------------------------------------------- 2. no rule empties a page

def test_aspnet_form_around_the_whole_page_keeps_its_text():
    html = ("<html><body><form id='aspnetForm' method='post' action='./story.aspx'>"
            "<input type='hidden' name='__VIEWSTATE' value='dDwtMTA4'>"
            f"<div class='wrap'><h1>Story</h1><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>"
            "<button type='submit'>Go</button></form></body></html>")
    parsed = parse_page(html)
    assert kinds_texts(parsed) == STORY3
    assert "forms and buttons" in parsed.furniture.held_back


def test_unclosed_header_swallowing_the_page_keeps_its_text():
    raw = (f"<html><body><header><div class='logo'>Site</div><h1>Story</h1><p>{P1}</p><p>{P2}</p><p>{P3}</p>"
           "</body></html>")  # <header> never closed
    header = BeautifulSoup(raw, "lxml").header  # lxml closes it at </body>: it holds the whole page
    assert [p.get_text() for p in header.find_all("p")] == [P1, P2, P3]
    parsed = parse_page(raw)
    assert kinds_texts(parsed) == [("text", "Site"), *STORY3]
    assert "header" in parsed.furniture.held_back


def test_paywall_aside_around_the_article_keeps_its_text():
    html = (f"<html><body><aside class='paywall'><h1>Story</h1><p>{P1}</p><p>{P2}</p><p>{P3}</p></aside>"
            "</body></html>")
    parsed = parse_page(html)
    assert kinds_texts(parsed) == STORY3
    assert "aside" in parsed.furniture.held_back


def test_article_inside_noscript_keeps_its_text():
    html = f"<html><body><noscript><h1>Story</h1><p>{P1}</p><p>{P2}</p><p>{P3}</p></noscript></body></html>"
    parsed = parse_page(html)
    assert kinds_texts(parsed) == STORY3
    assert parsed.furniture.held_back == ["hidden"]
    assert "hidden" not in parsed.furniture.counts


POLICY = " ".join(["Terms of service: the customer agrees to every clause written here."] * 60)


def test_dialogs_holding_most_of_a_page_are_removed_not_held_back():
    """A shop's terms and refund policy in hidden dialogs: 95% of the words, none of the product."""
    html = (f"<html><body><div class='story'><h1>Story</h1><p>{P1}</p><p>{P2}</p></div>"
            f"<div role='dialog'><p>{POLICY}</p></div><dialog><p>{POLICY}</p></dialog></body></html>")
    parsed = parse_page(html)
    assert kinds_texts(parsed) == STORY
    assert parsed.furniture.counts["dialogs"] == 2
    assert parsed.furniture.held_back == []


def test_a_dialog_holding_the_whole_page_is_held_back():
    parsed = parse_page(f"<html><body><div role='dialog'><h1>Story</h1><p>{P1}</p><p>{P2}</p></div></body></html>")
    assert kinds_texts(parsed) == STORY
    assert parsed.furniture.held_back == ["dialogs"]


@pytest.mark.parametrize(("rule", "extra", "body_extra"), [
    ("forms and buttons", "<form action='/subscribe'><label>Your email</label><input name='e'></form>", ""),
    ("header", "", "<header><a href='/'>Site name</a></header>"),
    ("aside", "<aside><p>Related: other stories</p></aside>", ""),
    ("hidden", "<noscript>Please enable JavaScript</noscript>", ""),
])
def test_a_rule_removing_a_small_part_is_applied_and_not_held_back(rule, extra, body_extra):
    parsed = parse_page(story_page(extra, body_extra=body_extra), main_selector=None)
    assert kinds_texts(parsed) == STORY
    assert dict(parsed.furniture.counts) == {rule: 1}
    assert parsed.furniture.held_back == []


# ----------------------------------------------------------------------------- 3. each rule, alone

RULE_CASES = [
    ("navigation", "<nav><a href='/a'>Alpha</a></nav><div role='navigation'>Beta menu</div>",
     [("text", "Alpha"), ("text", "Beta menu")]),
    ("hidden", "<div hidden>Hidden one</div><p aria-hidden='true'>Hidden two</p>",
     [("text", "Hidden one"), ("text", "Hidden two")]),
    ("inline hidden", "<div style='display:none'>Hidden three</div><p style='visibility: hidden'>Hidden four</p>",
     [("text", "Hidden three"), ("text", "Hidden four")]),
    ("dialogs", "<dialog>Sign up now</dialog><div role='dialog'>Modal text</div>",
     [("text", "Sign up now"), ("text", "Modal text")]),
    ("furniture words", "<div class='share-bar'>Share this story</div>", [("text", "Share this story")]),
    ("link-dense", links(*MENU), [("list_item", f"- {w}") for w in MENU]),
    ("cookie notices", "<div class='cc-consentbox'>This site stores small files</div>",
     [("text", "This site stores small files")]),
    ("furniture headings", "<div class='x'><h3>Related posts:</h3><ul><li>Another story here</li></ul></div>",
     [("heading", "Related posts:"), ("list_item", "- Another story here")]),
    ("lone links", "<p><a href='/blog'>All our stories</a></p>", [("text", "All our stories")]),
    ("calls to action", "<div class='box'><h3>Get the guide</h3><p>All our tips in one place.</p>"
     "<a role='button' href='/guide'>Download it</a></div>",
     [("heading", "Get the guide"), ("text", "All our tips in one place."), ("text", "Download it")]),
    ("control labels", "<div class='bar'><span>Reply with quote</span> · <span>Report</span> · "
     "<span>Like (3)</span></div>", [("text", "Reply with quote · Report · Like (3)")]),
    ("disclosures", "<p><em>We may earn a commission from links on this page.</em></p>",
     [("text", "We may earn a commission from links on this page.")]),
]


@pytest.mark.parametrize(("rule", "extra", "blocks"), RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_each_rule_removes_what_it_names_and_counts_it(rule, extra, blocks):
    parsed = parse_page(story_page(extra))
    assert parsed.main.label == "div.story"
    assert kinds_texts(parsed) == STORY
    removed = 2 if rule in ("navigation", "hidden", "inline hidden", "dialogs") else 1
    assert dict(parsed.furniture.counts) == {rule: removed}


@pytest.mark.parametrize(("rule", "extra", "blocks"), RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_each_rule_can_be_switched_off_alone(rule, extra, blocks):
    parsed = parse_page(story_page(extra), skip_rules=(rule,))
    assert kinds_texts(parsed) == [*STORY, *blocks]
    assert dict(parsed.furniture.counts) == {}


def test_skipping_one_rule_leaves_the_others_in_force():
    page = story_page("<nav><a href='/a'>Alpha</a></nav><div class='share-bar'>Share this story</div>")
    parsed = parse_page(page, skip_rules=("navigation",))
    assert kinds_texts(parsed) == [*STORY, ("text", "Alpha")]
    assert dict(parsed.furniture.counts) == {"furniture words": 1}


def test_an_unknown_rule_name_is_a_value_error_naming_it():
    assert "navigation" in FURNITURE_RULES
    with pytest.raises(ValueError, match="navigaton"):
        parse_page(story_page(), skip_rules=("navigaton",))


# ----------------------------------------------------------------------------- 4. words are whole words

def test_furniture_words_are_whole_words():
    page = story_page("<div class='share-bar'>Share on Mastodon</div><div id='sidebar'>Sidebar links</div>"
                      "<div class='shared-content'>Shared content is prose a reader wants to read.</div>"
                      "<div class='menuitem-text'>Menuitem text is prose too.</div>")
    parsed = parse_page(page)
    assert kinds_texts(parsed) == [*STORY, ("text", "Shared content is prose a reader wants to read."),
                                   ("text", "Menuitem text is prose too.")]
    assert dict(parsed.furniture.counts) == {"furniture words": 2}


def test_ids_of_sections_and_terms_are_not_furniture_names():
    html = (f"<html><body><main><section id='cookie-objects'><h2>Cookie Objects</h2><p>{P1}</p></section>"
            "<dl><dt id='term-meta-path-finder'>meta path finder</dt><dd>A finder returned by a search of "
            f"sys.meta_path.</dd></dl><p>{P2}</p><p>{P3}</p></main></body></html>")
    parsed = parse_page(html)
    assert kinds_texts(parsed) == [("heading", "Cookie Objects"), ("text", P1),
                                   ("definition", "meta path finder\nA finder returned by a search of sys.meta_path."),
                                   ("text", P2), ("text", P3)]
    assert dict(parsed.furniture.counts) == {}


def test_a_furniture_named_element_holding_the_h1_is_kept():
    html = (f"<html><body><div class='story'><div class='meta'><h1>The Title</h1></div><p>{P1}</p><p>{P2}</p>"
            "</div></body></html>")
    parsed = parse_page(html)
    assert kinds_texts(parsed) == [("heading", "The Title"), ("text", P1), ("text", P2)]
    assert dict(parsed.furniture.counts) == {}
    # The same element without the title is furniture.
    parsed = parse_page(html.replace("<h1>The Title</h1>", "<span>Posted by A. Writer</span>"))
    assert kinds_texts(parsed) == [("text", P1), ("text", P2)]
    assert dict(parsed.furniture.counts) == {"furniture words": 1}


# ----------------------------------------------------------------------------- 5. link-dense lists

def test_a_list_of_short_links_outside_a_landmark_is_removed():
    parsed = parse_page(story_page(links(*MENU)))
    assert kinds_texts(parsed) == STORY
    assert dict(parsed.furniture.counts) == {"link-dense": 1}


def test_the_same_list_inside_the_main_landmark_is_kept():
    html = f"<html><body><main><h1>Story</h1><p>{P1}</p><p>{P2}</p>{links(*MENU)}</main></body></html>"
    parsed = parse_page(html)
    assert parsed.main.label == "main"
    assert kinds_texts(parsed) == [*STORY, *[("list_item", f"- {w}") for w in MENU]]
    assert dict(parsed.furniture.counts) == {}


# ----------------------------------------------------------------------------- 6. repeats within a page

def test_a_paragraph_repeated_under_the_same_heading_is_kept_once():
    html = f"<html><body><main><h1>T</h1><h2>A</h2><p>{P1}</p><p>{P1}</p><p>{P2}</p></main></body></html>"
    parsed = parse_page(html)
    assert kinds_texts(parsed) == [("heading", "T"), ("heading", "A"), ("text", P1), ("text", P2)]
    assert parsed.furniture.counts[REPEATED] == 1
    kept = parse_page(html, drop_repeats=False)
    assert kinds_texts(kept) == [("heading", "T"), ("heading", "A"), ("text", P1), ("text", P1), ("text", P2)]
    assert REPEATED not in kept.furniture.counts


def test_the_same_paragraph_under_two_headings_is_kept_twice():
    html = f"<html><body><main><h1>T</h1><h2>A</h2><p>{P1}</p><h2>B</h2><p>{P1}</p></main></body></html>"
    parsed = parse_page(html)
    assert kinds_texts(parsed) == [("heading", "T"), ("heading", "A"), ("text", P1), ("heading", "B"), ("text", P1)]
    assert REPEATED not in parsed.furniture.counts


# ----------------------------------------------------------------------------- 7. explain

EXPLAIN_PAGE = (f"<html><body><nav><a href='/'>Home</a> <a href='/blog'>Blog</a></nav><main><h1>T</h1><p>{P1}</p>"
                f"<p>{P1}</p><div class='share-bar'>Share this story</div></main></body></html>")


def test_explain_keeps_what_each_rule_removed():
    parsed = parse_page(EXPLAIN_PAGE, explain=True)
    assert parsed.furniture.removed == [
        Removed("navigation", "nav", "Home Blog"),
        Removed("furniture words", "div.share-bar", "Share this story"),
        Removed(REPEATED, "text", P1),
    ]
    assert dict(parsed.furniture.counts) == {"navigation": 1, "furniture words": 1, REPEATED: 1}


def test_without_explain_removed_is_empty_but_counts_are_filled():
    parsed = parse_page(EXPLAIN_PAGE)
    assert parsed.furniture.removed == []
    assert dict(parsed.furniture.counts) == {"navigation": 1, "furniture words": 1, REPEATED: 1}
    assert kinds_texts(parsed) == [("heading", "T"), ("text", P1)]


# ----------------------------------------------------------------------------- 8. the extract command

CLI_PAGE = ("<html><head><title>Page</title></head><body><nav><a href='/'>Home</a> <a href='/blog'>Blog</a></nav>"
            f"<main><h1>Story</h1><p>{P1}</p><p>{P2}</p></main></body></html>")


def extract(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, "-m", "course_lib", "extract", *map(str, args)], capture_output=True,
                          check=False, text=True, errors="replace", env=env, timeout=120)


def one_error(result: subprocess.CompletedProcess, code: int) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    return lines[0]


def test_extract_prints_the_kept_text(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(CLI_PAGE, encoding="utf-8")
    result = extract(page)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Story\n\n{P1}\n\n{P2}\n"
    assert "Home" not in result.stdout and "Blog" not in result.stdout


def test_extract_why_says_what_was_chosen_and_removed(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(CLI_PAGE, encoding="utf-8")
    result = extract(page, "--why")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:5] == ["Story", "", P1, "", P2]
    why = [line for line in lines if "main content" in line]
    assert why == ["--- why: main content main (the landmark that holds the text; 100% of the page's reading text)"]
    assert "removed by 'navigation' (nav): Home Blog" in lines
    assert lines[-1] == "--- 3 blocks kept; removed: navigation 1"


def test_extract_a_missing_file_is_one_error_line(tmp_path):
    missing = tmp_path / "nope.html"
    line = one_error(extract(missing), 5)
    assert str(missing) in line
    assert line == f"error: {missing}: cannot read: No such file or directory"


def test_extract_an_empty_file_is_one_error_line(tmp_path):
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    line = one_error(extract(empty), 5)
    assert line == f"error: {empty}: empty file"


# ----------------------------------------------------------------------------- 9. measure

def test_measure_counts_text_links_and_paragraphs():
    soup = BeautifulSoup("<div><p>Read the <a href='/m'>manual</a> first, then install the package with pip.</p>"
                         "<p>Short.</p><a name='x'>anchor</a><ul><li><a href='/a'>Alpha</a></li>"
                         "<li><a href='/b'>Beta</a></li></ul></div>", "lxml")
    sizes = measure(soup.div)
    # "Read the" 8 + "manual" 6 (a link) + "first, then install the package with pip." 41
    assert sizes[id(soup.div.p)] == Measure(chars=55, link_chars=6, paragraphs=1, links=1)
    assert sizes[id(soup.div.ul)] == Measure(chars=9, link_chars=9, paragraphs=0, links=2)
    # "Short." is no paragraph (under 40 characters) and an <a> without href is no link.
    div = sizes[id(soup.div)]
    assert div == Measure(chars=76, link_chars=15, paragraphs=1, links=3)
    assert div.content == 61
    assert div.link_density == pytest.approx(15 / 76)
    assert Measure().link_density == 0.0


# ----------------------------------------------------------------------------- 7. headings that name furniture

@pytest.mark.parametrize("heading", ["Related posts", "You may also like", "109 Comments", "Leave a Reply",
                                     "Subscribe to our newsletter", "More from Top Gear", "Share this:",
                                     "Related tools and resources", "Contact us for a quote", "Get in touch",
                                     "Sign in to comment", "Create a free account", "Join our community",
                                     "Customer reviews", "Reviews (12)", "Frequently bought together",
                                     "Customers who bought this item also bought", "Recently viewed products",
                                     "You might like", "Pin this for later!"])
def test_a_furniture_heading_names_furniture(heading):
    assert heading_names_furniture(BeautifulSoup(f"<h2>{heading}</h2>", "lxml").h2)


@pytest.mark.parametrize("heading", ["More on Lists", "Other built-in types", "Comments", "Recommended dependencies",
                                     "Reading and writing files", "2.1.3. Comments", "Related work in this paper",
                                     "Contacts", "Signing in with OAuth", "Log in and log out", "Joining tables",
                                     "Reviewing a pull request", "Similar functions", "You will need"])
def test_documentation_headings_do_not_name_furniture(heading):
    assert not heading_names_furniture(BeautifulSoup(f"<h2>{heading}</h2>", "lxml").h2)


def test_a_furniture_heading_among_siblings_takes_its_section_up_to_the_next_heading():
    page = ("<html><body><main><h1>Story</h1><p>" + P1 + "</p><p>" + P2 + "</p>"
            "<h2>Related posts</h2><ul><li>Another story</li><li>And another</li></ul><p>Teaser text</p>"
            "<h2>Notes</h2><p>" + P3 + "</p></main></body></html>")
    parsed = parse_page(page)
    assert kinds_texts(parsed) == [*STORY, ("heading", "Notes"), ("text", P3)]
    assert dict(parsed.furniture.counts) == {"furniture headings": 3}


def test_a_sidebar_box_headed_popular_posts_goes_and_the_post_beside_it_stays():
    # The box and the post share a column that starts with the box's heading: the column holds the
    # post's prose, so the rule takes the box only.
    page = ("<html><body><header><h1>Story</h1></header><main><div class='column'>"
            "<div class='box'><h3>Popular posts</h3><ul><li><a href='/a'>A post</a></li></ul></div>"
            f"<div class='post'><p>{P1}</p><p>{P2}</p><p>{P3}</p></div></div></main></body></html>")
    parsed = parse_page(page)
    assert [t for _, t in kinds_texts(parsed)] == [P1, P2, P3]
    assert parsed.furniture.counts["furniture headings"] == 1


def test_a_furniture_heading_never_takes_the_main_text():
    # The only heading of the story says "Share": the heading goes, the prose after it stays.
    page = f"<html><body><div class='story'><h2>Share</h2><p>{P1}</p><p>{P2}</p><p>{P3}</p></div></body></html>"
    parsed = parse_page(page)
    assert [t for _, t in kinds_texts(parsed)] == [P1, P2, P3]
    assert dict(parsed.furniture.counts) == {"furniture headings": 1}


# ----------------------------------------------------------------------------- 8. guards

def test_a_hidden_element_holding_the_main_text_is_read():
    # React streams a page into <div hidden id="S:2"> and a script moves it into place.
    page = (f"<html><body><div hidden id='S:2'><h1>Story</h1><p>{P1}</p><p>{P2}</p></div>"
            "<footer>Copyright</footer></body></html>")
    parsed = parse_page(page)
    assert kinds_texts(parsed) == STORY
    assert "hidden" not in parsed.furniture.counts


def test_a_footer_with_prose_and_teaser_articles_is_removed():
    teasers = "".join(f"<article><p>{p}</p></article>" for p in (P1, P2, P3))
    page = (f"<html><body><main><h1>Story</h1><p>{P1}</p><p>{P2}</p><p>{P3}</p><p>{P3} And more.</p>"
            f"</main><footer>{teasers}</footer></body></html>")
    parsed = parse_page(page)
    assert dict(parsed.furniture.counts) == {"footer": 1}
    assert len(parsed.blocks) == 5


def test_a_furniture_word_never_removes_code():
    page = story_page("<div class='card-footer'><pre>pip install pandas</pre></div>")
    assert ("code", "```\npip install pandas\n```") in kinds_texts(parse_page(page))


@pytest.mark.parametrize("html", [
    "<ul><li><p><a href='#lock'>Lock</a></p></li></ul>",  # an item of a list
    "<p><a class='reference internal' href='x.html'>String Methods</a></p>",  # a docutils cross-reference
    "<p><a href='#enum.Enum'><code>Enum</code></a></p>",  # an API name
])
def test_a_lone_link_that_is_an_item_or_a_reference_is_content(html):
    parsed = parse_page(story_page(html))
    assert "lone links" not in parsed.furniture.counts
    assert len(parsed.blocks) == 4


def test_a_call_to_action_takes_the_pitch_left_beside_its_form():
    box = ("<div class='box'><h3>Get the guide</h3><p>All our tips in one place.</p>"
           "<form action='/s'><button>Send</button></form></div>")
    assert kinds_texts(parse_page(story_page(box))) == STORY
    kept = parse_page(story_page(box), skip_rules=("calls to action",))
    assert kinds_texts(kept) == [*STORY, ("heading", "Get the guide"), ("text", "All our tips in one place.")]
    assert dict(kept.furniture.counts) == {"forms and buttons": 1}


def tiles(n: int) -> str:
    return "<div class='grid'>" + "".join(
        f"<div class='tile'><div class='card'><h3>Lamp {i}</h3><p>$1{i}</p>"
        f"<a role='button' href='/cart?{i}'>Add to cart</a></div></div>" for i in range(n)) + "</div>"


def test_tiles_of_a_grid_each_with_a_button_are_not_calls_to_action():
    parsed = parse_page(story_page(tiles(3)))
    assert "calls to action" not in parsed.furniture.counts
    assert [t for k, t in kinds_texts(parsed) if k == "heading"] == ["Story", "Lamp 0", "Lamp 1", "Lamp 2"]


@pytest.mark.parametrize("box", [
    f"<div class='box'><p>{P3}</p><p>{P1}</p><a role='button' href='/g'>Download it</a></div>",  # prose
    "<div class='box'><h3>Get it</h3><p>" + "Long pitch. " * 25 + "</p><form><button>Go</button></form></div>",
])
def test_a_box_with_prose_or_a_long_text_beside_its_button_is_not_a_call_to_action(box):
    assert "calls to action" not in parse_page(story_page(box)).furniture.counts


def test_a_shops_status_lines_are_labels_and_a_sentence_about_stock_is_not():
    box = ("<div class='buy'><p>In stock</p><p>Tax included. Shipping calculated at checkout.</p>"
           "<p>We keep every size in stock all year, and restock each Monday.</p></div>")
    parsed = parse_page(story_page(box))
    assert kinds_texts(parsed) == [*STORY, ("text", "We keep every size in stock all year, and restock each Monday.")]
    assert dict(parsed.furniture.counts) == {"control labels": 2}


def test_a_post_to_post_link_loses_its_label_and_keeps_the_title_it_names():
    nav = "<div class='next'><span>Previous article</span><a href='/x'>How we built the bridge</a></div>"
    parsed = parse_page(story_page(nav))
    assert kinds_texts(parsed) == [*STORY, ("text", "How we built the bridge")]
    assert dict(parsed.furniture.counts) == {"control labels": 1}


@pytest.mark.parametrize("html", [
    "<p>To answer, click <a href='#r'>reply</a> under the post.</p>",  # a label inside a sentence
    "<ul><li><code>print</code></li><li><code>like</code></li></ul>",  # code, not labels
    "<div><span>Reply</span> to this thread and <span>quote</span> the line you mean.</div>",  # words beside
    "<p>Log in to reply, and your answer will show under the question for everyone.</p>",  # over 60 chars
])
def test_labels_in_sentences_code_or_beside_other_words_are_kept(html):
    parsed = parse_page(story_page(html))
    assert "control labels" not in parsed.furniture.counts
    assert len(parsed.blocks) > len(STORY)


@pytest.mark.parametrize("html", [
    "<p>Our lab tests every blender we can buy, then reports which one lasts longest.</p>",
    "<p>Each module can be tested independently of the others, as the next section shows.</p>",
    f"<div class='box'><p>We may earn a commission on links here. {P1} {P2} {P3} {P1} {P2} {P3}</p></div>",
    "<p>Here are twelve crisp recipes for a quick weeknight dinner at home. This post contains affiliate links.</p>",
])
def test_prose_that_is_not_a_short_disclosure_is_kept(html):
    parsed = parse_page(story_page(html))
    assert "disclosures" not in parsed.furniture.counts
    assert len(parsed.blocks) == len(STORY) + 1


def test_a_fast_landmark_scan_agrees_with_css_select():
    page = (f"<html><body><div class='a'><p>{P1}</p></div><section class='content main'><p>{P1}</p>"
            f"<p>{P2}</p><p>{P3}</p></section></body></html>")
    body = BeautifulSoup(page, "lxml").body
    for landmarks in [("section.content",), ("div.a",), ("section.content.main",), (".content > p",)]:
        choice = choose_main(body, landmarks=landmarks, landmark_share=0.0)
        assert choice.element is max(body.select(", ".join(landmarks)), key=lambda t: len(t.get_text()))


# ----------------------------------------------------------------------------- 9. code as a browser shows it

def test_code_written_one_div_per_line_keeps_its_lines():
    pre = ("<pre><code><div class='cm-line'>def f():</div><div class='cm-line'>    return 1</div>"
           "</code></pre>")
    assert texts_of_code(story_page(pre)) == ["```\ndef f():\n    return 1\n```"]


def test_a_copy_button_inside_pre_is_not_code():
    pre = ("<pre><code class='language-rust'><div class='buttons'><button class='clip-button'>Copy</button>"
           "</div>fn main() {\n    println!(\"hi\");\n}</code></pre>")
    assert texts_of_code(story_page(pre)) == ['```rust\nfn main() {\n    println!("hi");\n}\n```']


def texts_of_code(page: str) -> list[str]:
    return [t for k, t in kinds_texts(parse_page(page)) if k == "code"]
