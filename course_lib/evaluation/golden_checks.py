"""Checking a golden file against its corpus: every quote is where the file says it is.

A quote that is not on its page would silently turn a correct retrieval into a miss, so
`check_golden` (the one judge `validate-golden` and `evaluate` share) checks each line: valid JSON
and fields, a 4-20 word quote, a page inside the corpus, the section id on that page, and the
quote in that section's VISIBLE text (what a reader of the rendered page sees: scripts and styles
removed) inside ONE block: one paragraph, list item, table cell, definition term, definition,
heading or code block, never across two. A quote inside one block can be kept whole by any
chunker that respects blocks, so the judge measures retrieval rather than formatting. The
question's `fragments` (the rest of its answer unit) must each be on the page too, all within the
quote's block, its table row (`<tr>`: a key cell beside the answering cell) or its definition entry
(a `<dt>` term with its `<dd>` definitions). Each
`also` place is checked the same way on its own page (no section needed).
"""
from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import lxml.etree
import lxml.html
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment

from course_lib.core.html_parts import HEADING_TAGS
from course_lib.core.load import load_corpus
from course_lib.evaluation.golden import Question, _check_question, _numbered_lines, _parse_record, normalize

# The units a quote must stay inside: a text block, a table cell, a definition, a code block.
QUOTE_BLOCKS = frozenset({"p", "li", "td", "th", "dt", "dd", "pre", "caption", "figcaption",
                          "blockquote", *HEADING_TAGS})
_HEADING_LEVEL = {tag: level for level, tag in enumerate(HEADING_TAGS, start=1)}
_INVISIBLE = ("script", "style", "noscript", "template")
# Within one `check_golden`, what a page's walk found, keyed by what was walked: a golden file of
# 50,000 questions over a few pages then walks each section once, not once per question.
_MEMO: contextvars.ContextVar[dict | None] = contextvars.ContextVar("golden_memo", default=None)


@contextmanager
def _memo() -> Iterator[None]:
    """Within the block, `_remember` keeps what it computes (the soups it walks stay alive, so
    the ids of their nodes stay theirs)."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _remember(kind: str, nodes, compute: Callable):
    """`compute()` once per (kind, nodes) within `_memo`, every time outside it."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    key = (kind, tuple(map(id, nodes)))
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def visible_soup(html: str) -> BeautifulSoup:
    """A page as its reader sees it: parsed with lxml, scripts, styles and templates removed."""
    soup = BeautifulSoup(html, "lxml")
    for tag in soup(list(_INVISIBLE)):
        tag.decompose()
    return soup


def html_tree(html: str, *, visible_only: bool = True) -> lxml.html.HtmlElement:
    """The page `visible_soup` reads, as a bare lxml tree: several times quicker to build than a
    soup, for readers that count tags or read whole elements' text over a corpus (lesson 00's
    survey, lesson 10's code blocks and table rows). `visible_only=False` keeps scripts, styles
    and templates (a survey counts them). An empty page is an empty <html>."""
    root = lxml.etree.fromstring(html.encode("utf-8"), lxml.html.HTMLParser(encoding="utf-8"))
    if root is None:
        return lxml.html.Element("html")
    if visible_only:
        for element in list(root.iter(*_INVISIBLE)):
            element.drop_tree()  # its tail (the text after it) stays, as after `decompose`
    return root


def _text_of(node) -> str:
    """Visible text of a tag or a bare string; comments are not visible."""
    if isinstance(node, Tag):
        return node.get_text(" ")
    return "" if isinstance(node, Comment) else str(node)


def _first_ids(soup: BeautifulSoup) -> dict[str, Tag]:
    """Each id of the page and the first element that has it, as `soup.find(id=...)` finds it."""
    found: dict[str, Tag] = {}
    for element in soup.find_all(id=True):
        found.setdefault(element["id"], element)
    return found


def section_nodes(soup: BeautifulSoup, section_id: str) -> list | None:
    """The nodes that make up a section: the element with the id, or for a heading its parent
    <section> if it has one, else the heading and its siblings up to the next heading of the same
    or a higher level (older HTML has flat headings, not nested sections). None when no element
    has the id."""
    ids = _remember("ids", [soup], lambda: _first_ids(soup))
    element = ids.get(section_id)
    if element is None:
        return None
    level = _HEADING_LEVEL.get(element.name)
    if level is None:
        return [element]
    if element.parent is not None and element.parent.name == "section":
        return [element.parent]
    nodes = [element]
    for sibling in element.next_siblings:
        if isinstance(sibling, Tag) and _HEADING_LEVEL.get(sibling.name, 99) <= level:
            break
        nodes.append(sibling)
    return nodes


def section_text(soup: BeautifulSoup, section_id: str) -> str | None:
    """The visible text of the section with this id, or None when no element has it."""
    nodes = section_nodes(soup, section_id)
    return None if nodes is None else " ".join(_text_of(node) for node in nodes)


def block_texts(nodes) -> list[str]:
    """Normalised text of every unit a quote may lie in, within these nodes: each block that
    holds no other block, and for a block holding blocks (a list item with a paragraph and a
    sub-list) the text it holds directly."""
    return _remember("blocks", nodes, lambda: _block_texts(nodes))


def _visible_text(nodes) -> str:
    """The normalised visible text of these nodes together."""
    return _remember("text", nodes, lambda: normalize(" ".join(_text_of(node) for node in nodes)))


def _block_texts(nodes) -> list[str]:
    texts = []
    for node in nodes:
        if not isinstance(node, Tag):
            continue
        blocks = ([node] if node.name in QUOTE_BLOCKS else []) + node.find_all(QUOTE_BLOCKS)
        for block in blocks:
            if block.name == "pre" or not block.find(QUOTE_BLOCKS):
                texts.append(normalize(block.get_text()))
                continue
            own = [child.get_text() if isinstance(child, Tag) else str(child)
                   for child in block.children
                   if isinstance(child, NavigableString) and not isinstance(child, Comment)
                   or isinstance(child, Tag) and child.name not in QUOTE_BLOCKS
                   and not child.find(QUOTE_BLOCKS)]
            texts.append(normalize("".join(own)))
    return texts


def normalize_doc(doc: str, corpus_dir: Path) -> str:
    """A golden `doc` as the page path the pipelines use (relative to the corpus, POSIX), or
    ValueError when it leaves the corpus. "./x.html", "a/../x.html" and an absolute path inside
    the corpus all name "x.html"; "../x.html" or an absolute path elsewhere is refused."""
    root = Path(os.path.abspath(corpus_dir))
    target = Path(os.path.abspath(doc if os.path.isabs(doc) else root / doc))
    if not target.is_relative_to(root) or target == root:
        raise ValueError(f"doc '{doc}' points outside the corpus {corpus_dir}")
    return target.relative_to(root).as_posix()


def quote_problem(quote: str, nodes, where: str) -> str | None:
    """Why a quote is not evidence within these nodes (not in their visible text, or across two
    blocks), or None when it lies inside one block."""
    wanted = normalize(quote)
    if wanted not in _visible_text(nodes):
        return f"evidence not found in {where}"
    if not any(wanted in text for text in block_texts(nodes)):
        return f"evidence spans two blocks in {where} — quote inside one paragraph, item, cell or code block"
    return None


def _entries(node: Tag) -> list[str]:
    """Each table row and each definition entry (a term with its definitions) under a node."""
    rows = [tr.get_text(" ") for tr in ([node] if node.name == "tr" else node.find_all("tr"))]
    terms = [node] if node.name == "dt" else node.find_all("dt")
    for term in terms:
        definitions = []
        for sibling in term.find_next_siblings(["dt", "dd"]):
            if sibling.name == "dt":
                break
            definitions.append(sibling.get_text(" "))
        rows.append(" ".join([term.get_text(" "), *definitions]))
    return rows


def unit_texts(nodes) -> list[str]:
    """Normalised text of every unit an answer may span: each block (`block_texts`), each table
    row (the key cell and the value cell) and each definition entry (the term and its definition)."""
    return _remember("units", nodes, lambda: block_texts(nodes) + [
        normalize(text) for node in nodes if isinstance(node, Tag) for text in _entries(node)])


def fragments_problem(quote: str, fragments, nodes, where: str) -> str | None:
    """Why a quote's fragments do not complete its answer unit within these nodes (a fragment not
    on the page, or not in the quote's block or table row), or None."""
    if not fragments:
        return None
    text = _visible_text(nodes)
    for fragment in fragments:
        if normalize(fragment) not in text:
            return f"fragment {fragment!r} not found in {where}"
    wanted = [normalize(piece) for piece in (quote, *fragments)]
    if not any(all(piece in unit for piece in wanted) for unit in unit_texts(nodes)):
        return (f"fragments are not in the quote's block or table row in {where} — an answer unit "
                f"is one paragraph, item, code block, table row or definition entry")
    return None


def unit_problem(unit, nodes, where: str) -> str | None:
    """Why an answer unit (quote, then fragments) is not evidence within these nodes, or None."""
    quote, *fragments = unit
    return quote_problem(quote, nodes, where) or fragments_problem(quote, fragments, nodes, where)


def inner_section(quote: str, nodes, section_id: str) -> str | None:
    """The id of the innermost `<section>` nested in these nodes whose blocks hold the quote, when it
    is not `section_id` itself: the question then names an outer section, which any chunk of the
    page's outline would match. None when the named section is the innermost."""
    wanted, found = normalize(quote), None
    inners = _remember("sections", nodes, lambda: [inner for node in nodes if isinstance(node, Tag)
                                                    for inner in node.find_all("section", id=True)])
    for inner in inners:
        if inner["id"] != section_id and any(wanted in t for t in block_texts([inner])):
            found = inner["id"]  # find_all walks in document order: the last hit is the innermost
    return found


def in_gold_block(soup: BeautifulSoup, gold_quote: str, quote: str) -> bool:
    """True when `quote` lies inside a block of the page that holds the gold quote: the gold
    answer itself (or a piece of it), not another place that answers."""
    wanted, gold = normalize(quote), normalize(gold_quote)
    return any(gold in text and wanted in text for text in block_texts([soup]))


def _page(doc: str, corpus_dir: Path, soups: dict, pages: dict[str, str]) -> BeautifulSoup | None:
    """The visible soup of a page, parsed once per check (None when the page is not there)."""
    if doc not in soups:
        soups[doc] = visible_soup(pages[doc]) if doc in pages else None
    return soups[doc]


def _check_in_corpus(q: Question, corpus_dir: Path, soups: dict, pages: dict[str, str]) -> list[str]:
    """Problems with where a question says its answer is: page, section id, quote; and each
    `also` place's page and quote."""
    soup = _page(q.doc, corpus_dir, soups, pages)
    if soup is None:
        return [f"doc '{q.doc}' not found under {corpus_dir}"]
    nodes = section_nodes(soup, q.section)
    if nodes is None:
        return [f"no element with id '{q.section}' in {q.doc}"]
    where = f"section '{q.section}' of {q.doc}"
    problem = unit_problem(q.unit, nodes, where)
    inner = None if problem else inner_section(q.evidence, nodes, q.section)
    problems = [problem or (inner and f"evidence lies in the inner section '{inner}' of {where} — name the "
                                      "innermost section")]
    for place in q.also:
        doc = place.doc  # already inside the corpus: _with_corpus_paths checked it
        other = _page(doc, corpus_dir, soups, pages)
        problem = (f"doc '{place.doc}' not found under {corpus_dir}" if other is None else
                   unit_problem(place.unit, [other], doc))
        problems.append(problem and f"also: {problem}")
    return [p for p in problems if p]


@dataclass(frozen=True)
class GoldenCheck:
    """A golden file checked against a corpus: its questions (doc paths normalised), and each
    problem as (line, question id or None, message)."""

    questions: list[Question]
    problems: list[tuple[int, str | None, str]]
    path: Path

    def messages(self) -> list[str]:
        return [f"{self.path.name}:{line}: {message}" for line, _, message in self.problems]


def _with_corpus_paths(q: Question, corpus_dir: Path) -> Question:
    """The question with its doc and `also` docs as corpus-relative POSIX paths (ValueError when
    one leaves the corpus)."""
    doc = normalize_doc(q.doc, corpus_dir)
    try:
        also = tuple(replace(p, doc=normalize_doc(p.doc, corpus_dir)) for p in q.also)
    except ValueError as err:
        raise ValueError(f"also: {err}") from None
    return replace(q, doc=doc, also=also)


def check_golden(path: str | Path, corpus_dir: str | Path, *, pages: dict[str, str] | None = None,
                 split: str | None = None) -> GoldenCheck:
    """Check a golden file against a corpus: the one judge `validate-golden` and `evaluate` share.

    `pages` maps page path to decoded HTML (what the pipelines load); without it, pages are
    read from `corpus_dir` with the same decoder. Questions of other splits are checked too
    but only those of `split` are returned.
    """
    path, corpus_dir = Path(path), Path(corpus_dir)
    if pages is None:
        pages = {page.path: page.html for page in load_corpus(corpus_dir).pages}
    with _memo():
        return _check_lines(path, corpus_dir, pages, split)


def _check_lines(path: Path, corpus_dir: Path, pages: dict[str, str], split: str | None) -> GoldenCheck:
    """`check_golden`'s loop over the lines, each page parsed once and each section walked once."""
    problems, questions, seen, soups = [], [], set(), {}
    for number, line in _numbered_lines(path):
        try:
            q = _parse_record(line)
        except ValueError as err:
            problems.append((number, None, str(err)))
            continue
        found = [f"duplicate id '{q.id}'"] if q.id in seen else []
        seen.add(q.id)
        found += _check_question(q)
        if not found and q.answerable:
            try:
                q = _with_corpus_paths(q, corpus_dir)
            except ValueError as err:
                found = [str(err)]
            else:
                found = _check_in_corpus(q, corpus_dir, soups, pages)
        problems += [(number, q.id, message) for message in found]
        if split is None or q.split in (None, split):
            questions.append(q)
    return GoldenCheck(questions, problems, path)


def validate_golden(path: str | Path, corpus_dir: str | Path) -> list[str]:
    """Check a golden file against the corpus and return one message per problem found
    ("golden.jsonl:17: evidence not found in section 'x' of y.html"); empty when it is valid."""
    return check_golden(path, corpus_dir).messages()
