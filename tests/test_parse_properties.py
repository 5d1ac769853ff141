"""Property tests of the block parser: random HTML never crashes it, loses text or doubles it,
page furniture around and inside the main content goes, and code comes back exactly as written.

Documents are random nestings of div, section, p, span, b, code, a, h1-h6, ul/ol/li, dl/dt/dd,
tables (with random colspan/rowspan) and pre, valid or not (a <div> inside a <p>, a table inside
a heading). Every text fragment is a unique token, so "it is in the output exactly once" is a
precise check.
"""
from __future__ import annotations

import html
import itertools
import os
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_lib.core.parse import parse_blocks
from course_lib.records import Block

KINDS = {"heading", "text", "table", "code", "list_item", "definition"}
# 100 examples keep the suite fast; PARSE_PROPERTY_EXAMPLES=5000 for a long bug hunt.
SETTINGS = settings(max_examples=int(os.environ.get("PARSE_PROPERTY_EXAMPLES", "100")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
FENCE = re.compile(r"^(`{3,})([\w+-]*)\n(.*)\n\1$", re.S)

CONTAINERS = ["div", "section", "p", "span", "b", "code", "a", "blockquote", "h1", "h2", "h3", "h4",
              "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "table", "td"]

# A tree is ("text",), ("pre", code) or (tag, [children]); tokens are assigned when rendering.
leaf = st.one_of(st.just(("text",)), st.builds(lambda c: ("pre", c), st.text("ab <&>\n\t", max_size=12)))
trees = st.recursive(
    leaf,
    lambda children: st.one_of(
        st.builds(lambda tag, kids: (tag, kids), st.sampled_from(CONTAINERS), st.lists(children, max_size=4)),
        st.builds(lambda head, rows: ("grid", head, rows), st.booleans(),
                  st.lists(st.lists(st.tuples(children, st.integers(1, 3), st.integers(1, 3)),
                                    min_size=1, max_size=3), min_size=1, max_size=3)),
    ),
    max_leaves=25,
)


def render(tree, tokens: list[tuple[str, bool]], counter: itertools.count, repeatable: bool = False) -> str:
    """HTML for a tree; every text leaf gets a fresh token, recorded in `tokens` with a flag
    saying whether the parser may legitimately repeat it (header cells label every row of
    their table; a heading is also the context line of the tables under it)."""
    kind = tree[0]
    if kind in ("text", "pre"):
        token = f"tok{next(counter)}x"
        tokens.append((token, repeatable))
        return f" {token} " if kind == "text" else f"<pre>{token}{html.escape(tree[1])}</pre>"
    if kind == "grid":
        _, head, rows = tree
        out = "<table>"
        if head:
            out += "<thead><tr>" + "".join(
                f"<th>{render(('text',), tokens, counter, True)}</th>" for _ in rows[0]) + "</tr></thead>"
        for row in rows:  # a cell spanning rows is repeated on each: that is the point of a grid
            out += "<tr>" + "".join(
                f'<td colspan="{across}" rowspan="{down}">{render(cell, tokens, counter, repeatable or down > 1)}</td>'
                for cell, across, down in row) + "</tr>"
        return out + "</table>"
    heading = repeatable or kind in ("h1", "h2", "h3", "h4", "h5", "h6")
    inner = "".join(render(child, tokens, counter, heading) for child in tree[1])
    return f"<{kind}>{inner}</{kind}>"


def document(tree) -> tuple[str, list[tuple[str, bool]]]:
    tokens: list[tuple[str, bool]] = []
    body = render(tree, tokens, itertools.count())
    return f"<html><head><title>Random page</title></head><body>{body}</body></html>", tokens


def stream_text(blocks: list[Block]) -> str:
    return "\n".join(b.text for b in blocks)


@SETTINGS
@given(trees, st.sampled_from(["lxml", "html.parser"]))
def test_random_html_never_crashes_and_yields_valid_blocks(tree, parser):
    page, _ = document(tree)
    blocks = parse_blocks(page, parser=parser)
    for block in blocks:
        assert block.kind in KINDS
        assert block.text.strip() == block.text and block.text
        assert block.heading_path  # the page title at least
        assert block.level >= 0


@SETTINGS
@given(trees, st.sampled_from(["lxml", "html.parser"]))
def test_no_text_is_lost_or_emitted_twice(tree, parser):
    # The walker's own property, on the whole body: choosing the main content by evidence leaves
    # out what lies outside it on purpose (tests/test_main_content.py), and repeats are dropped.
    page, tokens = document(tree)
    text = stream_text(parse_blocks(page, parser=parser, main_selector=None, drop_repeats=False))
    for token, repeatable in tokens:  # "tok1x" is never part of "tok11x": count is exact
        assert text.count(token) >= 1, (token, page)
        assert repeatable or text.count(token) == 1, (token, page)


FURNITURE = ["<nav>{}</nav>", "<footer>{}</footer>", '<div class="sphinxsidebar">{}</div>',
             '<div role="navigation">{}</div>', '<div class="cookie-banner">{}</div>', "<aside>{}</aside>",
             "<header>{}</header>", "<form><label>{}</label></form>", "<script>var x = '{}';</script>"]


@SETTINGS
@given(trees, st.lists(st.tuples(st.sampled_from(FURNITURE), st.booleans()), max_size=6))
def test_boilerplate_goes_and_content_stays(tree, furniture):
    content, tokens = document(tree)
    body = content[content.index("<body>") + 6:content.index("</body>")]
    noise, outside, inside = [], [], []
    for i, (template, in_main) in enumerate(furniture):
        noise.append(f"noise{i}z")
        in_main = in_main and "<header>" not in template  # a <header> inside <main> holds the title
        (inside if in_main else outside).append(template.format(noise[-1]))
    # The main text outweighs the furniture, as on a real page: a page that is nearly all
    # furniture keeps it (no rule empties a page; tests/test_main_content.py)
    prose = "<p>" + "A paragraph of the page's own prose, long enough to outweigh its furniture. " * 4 + "</p>"
    page = (f"<body>{''.join(outside)}<main>{''.join(inside)}<div>{body}</div>{prose}</main>"
            f"{''.join(outside)}</body>")
    text = stream_text(parse_blocks(page, drop_repeats=False))
    assert all(token in text for token, _ in tokens)
    assert not any(n in text for n in noise), page


code_text = st.text(
    st.characters(whitelist_categories=("L", "N", "P", "S", "Zs"), whitelist_characters="\t\n<>&\"'`"),
    min_size=1, max_size=200,
).map(lambda s: s.strip("\n")).filter(lambda s: s.split("\n")[0].strip() and s.split("\n")[-1].strip())


def highlighted(code: str, cuts: list[int]) -> str:
    """Mimic Pygments: the code cut at arbitrary points into escaped <span> pieces."""
    points = sorted({c % (len(code) + 1) for c in cuts} | {0, len(code)})
    return "".join(f'<span class="n">{html.escape(code[a:b])}</span>' for a, b in zip(points, points[1:], strict=False))


@SETTINGS
@given(code_text, st.lists(st.integers(0, 400), max_size=12), st.sampled_from(["python3", "pycon", "none"]),
       st.sampled_from(["lxml", "html.parser", "html5lib"]))
def test_code_round_trips_exactly(code, cuts, lang, parser):
    page = (f'<div role="main"><p>before</p><div class="highlight-{lang} notranslate"><div class="highlight">'
            f"<pre><span></span>{highlighted(code, cuts)}\n</pre></div></div><p>after</p></div>")
    blocks = parse_blocks(page, parser=parser)
    assert [b.kind for b in blocks] == ["text", "code", "text"]
    match = FENCE.match(blocks[1].text)
    assert match is not None
    assert match.group(2) == {"python3": "python", "pycon": "pycon", "none": ""}[lang]
    assert match.group(3) == code
