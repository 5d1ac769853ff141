"""Parse, don't strip: turn an HTML page into a stream of typed blocks in document order.

`parse_blocks` walks the main content of a page with BeautifulSoup and emits `Block` records:
headings (which update the heading path), paragraphs and bare text, tables (one row per line,
see `course_lib.core.html_parts`), code (exact, fenced with its language), list items and definitions.
Boilerplate is removed by structure (`STRUCTURAL_BOILERPLATE`) and, across a corpus, by frequency
(`drop_frequent_blocks`). `parse_file` and `parse_corpus` add decoding and the checks that turn
an empty, binary or stub file into a counted skip instead of a crash.

Definitions, decided here once: a Sphinx object (`<dl class="py function">`) becomes ONE
"definition" block holding its signature (the `<dt>`) and the description that follows it up to
the first code sample, table, list or nested definition; those become blocks of their own, and
every block inside the `<dd>` gets the object's name (`shutil.copy2`, from the `<dt>` id) as a
last heading-path element, so "what does shutil.copy2 do" finds signature and description
together, and a chunker that never mixes heading paths keeps one object per chunk.
`section_id` stays the innermost `<section>` id. `level` is the heading level for headings,
the nesting depth for list items and definitions, 0 otherwise.
"""
from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from html import unescape
from pathlib import Path

import bs4
import lxml.etree
from bs4 import BeautifulSoup

from course_lib import settings
from course_lib.core.boilerplate import (
    DECORATION,
    NEVER_CONTENT,
    REPEATED,
    FurnitureReport,
    Removed,
    _remove,
    remove_furniture,
)
from course_lib.core.decode import decode_html
from course_lib.core.html_parts import LANGUAGE_ALIASES, collapse, repair_raw_pre, text_of
from course_lib.core.main_content import LANDMARKS, MainChoice, choose_main, describe, title_headings
from course_lib.core.walker import walk_blocks
from course_lib.infra.errors import ParseError, ParserFailures
from course_lib.infra.json_cache import cache_path, code_digest, read_json, write_json
from course_lib.infra.safe_text import CONTROLS
from course_lib.infra.vector_cache import warn_once
from course_lib.records import Block, Page, text_digest

log = logging.getLogger("course_lib.parse")
# The landmarks of the main content; `choose_main` takes one only when it holds the text.
MAIN_SELECTOR = LANDMARKS


# ----------------------------------------------------------------------------- public API

# How a parser gives up on a page: bs4's rejection (lxml's ParserError, a codec LookupError or
# UnicodeDecodeError inside), lxml's own errors, a ValueError, or a tree too deep to recurse.
_PARSER_FAILURES = (bs4.ParserRejectedMarkup, lxml.etree.LxmlError, ValueError, LookupError, RecursionError)


def make_soup(html: str, parser: str = "lxml") -> BeautifulSoup:
    """Parse with BeautifulSoup, falling back to html.parser if the chosen parser fails.

    lxml and html.parser build trees 100,000 levels deep without trouble; should a parser
    still break on a pathological page (a RecursionError, an lxml error), the page is read
    again with the pure-Python html.parser rather than lost.
    """
    try:
        return BeautifulSoup(html, parser)
    except _PARSER_FAILURES:  # a bug of ours (TypeError, AttributeError...) is not hidden by a re-parse
        if parser == "html.parser":
            raise
        return BeautifulSoup(html, "html.parser")


@dataclass(frozen=True)
class ParsedPage:
    """One page parsed: its blocks, the element read as its main text and why, and what the
    furniture rules removed (with `explain=True`, every removed element's text)."""

    blocks: list[Block]
    main: MainChoice
    furniture: FurnitureReport


def parse_page(
    html: str | bytes,
    *,
    title: str | None = None,
    main_selector: str | tuple[str, ...] | None = MAIN_SELECTOR,
    choose_by_evidence: bool = True,
    narrow_share: float | None = settings.MAIN_NARROW_SHARE,
    parser: str = "lxml",
    drop_boilerplate: bool = True,
    skip_rules: tuple[str, ...] = (),
    drop_decoration: bool = True,
    definition_paths: bool = True,
    drop_repeats: bool = True,
    explain: bool = False,
) -> ParsedPage:
    """Turn one HTML page into its stream of blocks, in document order, and say how.

    First the furniture rules remove page furniture from the whole `<body>` (if
    `drop_boilerplate`; `skip_rules` names rules to leave out, see `boilerplate.FURNITURE_RULES`),
    with `DECORATION` such as the pilcrow permalinks (if `drop_decoration`). Then the main content
    is chosen among what is left (`main_content.choose_main`: the landmark in `main_selector` that
    holds the text, else the container where the text is concentrated, else the body);
    inside a landmark, the container holding `narrow_share` of its text is read (None: the whole
    landmark); `choose_by_evidence=False` takes the first landmark that matches instead, and
    `main_selector=None` reads the whole body. A paragraph or list item whose exact text the page
    already showed (a menu's mobile copy, a review printed twice) is kept once (`drop_repeats`).
    Layout wrappers are walked through; the walk stops
    at the first block-level element, so no text appears twice. The page title (`title`, else the
    first <h1>, else <title>) is the first element of every heading path.
    """
    if isinstance(html, bytes):
        html = decode_html(html)
    html = html.replace("\r\n", "\n").replace("\r", "\n")  # as HTML5 does; html.parser does not
    soup = make_soup(html, parser)
    if re.search(r"<pre\b", html, re.I):
        repair_raw_pre(soup, html)
    body = soup.body if soup.body is not None else soup
    _remove(body, NEVER_CONTENT + (DECORATION if drop_decoration else ()))
    furniture = (remove_furniture(body, skip_rules=skip_rules, explain=explain) if drop_boilerplate
                 else FurnitureReport(explain=explain))
    main = _main_of(body, main_selector, by_evidence=choose_by_evidence, narrow_share=narrow_share)
    root = main.element
    if title is None:
        # a title beside the main container is still the title; of several <h1>, the one <title> names
        h1 = root.find("h1") or next(iter(title_headings(body)), None)
        title_tag = soup.find("title")
        title = collapse(text_of(h1)) if h1 is not None else ""
        title = title or (collapse(title_tag.get_text()) if title_tag is not None else "")
    blocks = _without_controls(walk_blocks(root, title=title, definition_paths=definition_paths))
    if drop_repeats:
        blocks = _without_repeats(blocks, furniture)
    return ParsedPage(blocks, main, furniture)


_REPEATABLE = ("text", "list_item")  # headings, code, tables and definitions may rightly repeat


def _without_repeats(blocks: list[Block], report: FurnitureReport) -> list[Block]:
    """The blocks without a second copy of a paragraph or list item already shown under the same
    heading path (the same answer under two FAQ questions is two answers, and stays)."""
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    kept = []
    for block in blocks:
        key = (block.kind, block.text, block.heading_path)
        if block.kind in _REPEATABLE and key in seen:
            report.counts[REPEATED] += 1
            if report.explain:
                report.removed.append(Removed(REPEATED, block.kind, block.text))
            continue
        seen.add(key)
        kept.append(block)
    return kept


def _main_of(body, main_selector: str | tuple[str, ...] | None, *, by_evidence: bool,
             narrow_share: float | None) -> MainChoice:
    """The element to read: by evidence, the first landmark that matches, or the whole body."""
    selectors = (main_selector,) if isinstance(main_selector, str) else tuple(main_selector or ())
    if not selectors:
        return MainChoice(body, describe(body), "main_selector=None: the whole body", 1.0)
    if by_evidence:
        return choose_main(body, landmarks=selectors, narrow_share=narrow_share)
    first = next((m for m in (body.select_one(s) for s in selectors) if m is not None), None)
    if first is None:
        return MainChoice(body, describe(body), "no landmark matches: the whole body", 1.0)
    return MainChoice(first, describe(first), "the first landmark that matches", 1.0)


def parse_blocks(html: str | bytes, **options) -> list[Block]:
    """The blocks of one HTML page, in document order: `parse_page(html, **options).blocks`.

    Each lesson flips one keyword of `parse_page` and measures the effect.
    """
    return parse_page(html, **options).blocks


def _without_controls(blocks: list[Block]) -> list[Block]:
    """The blocks with control characters (ESC, BEL, C1) removed from their text and heading
    path: a character reference (`&#27;`) reaches the text even when the page's bytes had none,
    and printed raw it acts on a learner's terminal."""
    def clean(text: str) -> str:
        return CONTROLS.sub("", text)

    return [replace(b, text=clean(b.text), heading_path=tuple(map(clean, b.heading_path)))
            if CONTROLS.search(b.text) or any(CONTROLS.search(h) for h in b.heading_path) else b
            for b in blocks]


def is_stub(blocks: list[Block], *, min_chars: int = settings.STUB_MIN_CHARS) -> bool:
    """True when a page has fewer than `min_chars` characters of text outside its headings."""
    return sum(len(b.text) for b in blocks if b.kind != "heading") < min_chars


def _check_html(text: str, path: str | Path) -> None:
    """Raise ParseError for an empty file or one with no HTML tag in it."""
    if not text.strip():
        raise ParseError(path, "empty file")
    if not re.search(r"<[a-zA-Z!/?]", text):  # "a < b" in plain text is not a tag
        raise ParseError(path, "no HTML tags: not an HTML file")


def check_parse_options(options: Mapping[str, object], *, extra: tuple[str, ...] = (
        "min_chars", "skip_stubs", "max_failure_share")) -> None:
    """Raise TypeError for a keyword that neither `parse_blocks` nor `parse_corpus` takes.

    Checked at the call, before any page is read: passed on, a misspelt option would make
    `parse_blocks` raise on every page, each recorded as a page-level "parser failed".
    """
    known = {n for n, p in inspect.signature(parse_page).parameters.items() if p.kind is p.KEYWORD_ONLY}
    unknown = sorted(set(options) - known - set(extra))
    if unknown:
        raise TypeError(f"unknown parser option(s) {', '.join(unknown)}; "
                        f"known: {', '.join(sorted(known | set(extra)))}")


def parse_file(path: str | Path, **kwargs) -> list[Block]:
    """Read, decode and parse one HTML file; raise ParseError with a clear reason if it is not HTML.

    Empty, binary (NUL bytes) and tag-less files are refused before parsing; a parser that still
    fails is reported with the file's path. Keyword arguments go to `parse_page`.
    """
    return parse_page_file(path, **kwargs).blocks


def parse_page_file(path: str | Path, **kwargs) -> ParsedPage:
    """`parse_file`, returning the whole `ParsedPage`: what `course-lib extract --why` shows."""
    check_parse_options(kwargs, extra=())
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise ParseError(path, f"cannot read: {err.strerror or err}") from err
    if not raw.strip():
        raise ParseError(path, "empty file")
    if b"\x00" in raw[:8192] and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ParseError(path, "binary file (NUL bytes): not an HTML file")
    text = decode_html(raw)
    _check_html(text, path)
    try:
        return parse_page(text, **kwargs)
    except Exception as err:  # noqa: BLE001 - say which file broke the parser, and how
        raise ParseError(path, f"parser failed: {type(err).__name__}: {err}") from err


def parse_corpus(
    items: Iterable[Page | str | Path],
    *,
    min_chars: int = settings.STUB_MIN_CHARS,
    skip_stubs: bool = True,
    max_failure_share: float = settings.PARSER_FAILURE_MAX_SHARE,
    **kwargs,
) -> tuple[dict[str, list[Block]], list[tuple[str, str]]]:
    """Parse many pages (Page records or file paths); one bad file never stops the rest.

    Returns the blocks per page path and the skipped pages as (path, reason): unreadable,
    empty, binary or tag-less files, parser failures, and stubs with fewer than `min_chars`
    characters of text (when `skip_stubs`). Every page given is in exactly one of the two.

    Unknown keywords are a TypeError before any page is read. A run where the parser itself
    raised on more than `max_failure_share` of the pages (and on at least
    `settings.PARSER_FAILURE_MIN_PAGES`) raises ParserFailures: that is a bug, not a result. Raise
    the bar (`max_failure_share=1`) for a site a learner knows to be odd.
    """
    check_parse_options(kwargs, extra=())

    def read(item: Page | str | Path) -> list[Block]:
        if isinstance(item, Page):
            _check_html(item.html, item.path)
            return parse_blocks(item.html, **kwargs)
        return parse_file(item, **kwargs)

    return _parse_items(items, read, min_chars=min_chars, skip_stubs=skip_stubs,
                        max_failure_share=max_failure_share)


def _parse_items(
    items: Iterable[Page | str | Path],
    read: Callable[[Page | str | Path], list[Block]],
    *,
    min_chars: int = settings.STUB_MIN_CHARS,
    skip_stubs: bool = True,
    max_failure_share: float = settings.PARSER_FAILURE_MAX_SHARE,
) -> tuple[dict[str, list[Block]], list[tuple[str, str]]]:
    """`parse_corpus`'s loop, each item's blocks from `read` (a fresh parse, or the parse cache)."""
    parsed: dict[str, list[Block]] = {}
    skipped: list[tuple[str, str]] = []
    for item in items:
        key = item.path if isinstance(item, Page) else str(item)
        try:
            blocks = read(item)
        except ParseError as err:
            skipped.append((key, err.reason))
            log.debug("skipped %s: %s", key, err.reason, exc_info=err.__cause__)
            continue
        except Exception as err:  # noqa: BLE001 - a parser bug on one page must not stop the corpus
            skipped.append((key, f"parser failed: {type(err).__name__}: {err}"))
            log.debug("skipped %s: the parser failed", key, exc_info=err)  # --debug shows where
            continue
        if skip_stubs and is_stub(blocks, min_chars=min_chars):
            chars = sum(len(b.text) for b in blocks if b.kind != "heading")
            skipped.append((key, f"stub: {chars} characters of text (< {min_chars})"))
            continue
        parsed[key] = blocks
    failed = [(path, reason) for path, reason in skipped if reason.startswith("parser failed")]
    total = len(parsed) + len(skipped)
    if len(failed) >= settings.PARSER_FAILURE_MIN_PAGES and len(failed) > max_failure_share * total:
        shown = "; ".join(f"{path}: {reason}" for path, reason in failed[:3])
        raise ParserFailures(f"the parser failed on {len(failed)} of {total} pages (more than "
                             f"{max_failure_share:.0%}), e.g. {shown}. Pass max_failure_share=1 "
                             f"to keep the pages that parse.")
    return parsed, skipped


# Every module whose code decides what a page parses into: an edit to any of them parses again.
PARSE_STACK = ("course_lib.core.parse", "course_lib.core.walker", "course_lib.core.html_parts",
               "course_lib.core.main_content",
               "course_lib.core.boilerplate", "course_lib.core.decode", "course_lib.infra.safe_text",
               "course_lib.records", "course_lib.settings")
_PARSE_CACHE_FORMAT = "parsed-page-3"  # 3: one entry per page, keyed by the sha256 of its HTML
_CORPUS_OPTIONS = ("min_chars", "skip_stubs", "max_failure_share")  # decided per corpus, never cached


def parse_pages(pages: Sequence[Page], **options) -> tuple[dict[str, list[Block]], list[tuple[str, str]]]:
    """`parse_corpus` over Page records, each page's blocks kept on disk (`<cache>/parsed/`).

    Parsing a corpus costs 20-40 s on a laptop and every lesson parses the same pages, so each
    page's blocks are stored as JSON under a name derived from the sha256 of the page's HTML, the
    parse options, the parser libraries' versions and the source of every module in `PARSE_STACK`:
    any change parses that page again, and an entry can only ever be read for the one HTML it
    was parsed from. Before it is served, every word an entry holds must occur in that HTML (see
    `_holds`): an edited entry that puts a word the page lacks into it (a planted link, another
    page's text) misses, with one warning line, and the page is parsed again; one that only cuts
    or rearranges the page's own words is not caught. A damaged entry misses too. Not stored: a
    page the parser failed on, and one whose own parse holds a word the check cannot trace (a word
    the walker joins across a removed element, about 1 web page in 75): it is parsed each time.
    """
    check_parse_options(options)
    page_options = {k: v for k, v in options.items() if k not in _CORPUS_OPTIONS}
    corpus_options = {k: v for k, v in options.items() if k in _CORPUS_OPTIONS}
    key = [_PARSE_CACHE_FORMAT, code_digest(PARSE_STACK), bs4.__version__, lxml.etree.__version__,
           repr(sorted(page_options.items()))]
    return _parse_items(pages, lambda page: _cached_blocks(page, key, page_options), **corpus_options)


def _cached_blocks(page: Page, key: list[str], options: dict) -> list[Block]:
    """One page's blocks: from its cache entry when that entry holds only the page's own words,
    else parsed, and stored when the parse itself holds only words the check can find."""
    _check_html(page.html, page.path)
    digest = text_digest(page.html)
    path = cache_path("parsed", "page", [*key, digest])
    stored = _read_blocks(path, digest)
    if stored is not None and _holds(page.html, _written_words(stored)):
        return stored
    blocks = parse_blocks(page.html, **options)  # a parser failure raises here: nothing is stored
    if stored is not None and stored != blocks:  # a page the check cannot trace is parsed each time, silently
        warn_once(path, "holds text that is not on its page (edited or damaged): parsed again")
    if _holds(page.html, _written_words(blocks)):
        write_json(path, {"page": digest, "blocks": [[b.kind, b.text, list(b.heading_path), b.section_id,
                                                      b.level] for b in blocks]})
    return blocks


def _read_blocks(path: Path, digest: str) -> list[Block] | None:
    """The stored blocks, or None when there are none, they have not the shape written or they
    were parsed from other HTML (one warning line)."""
    data = read_json(path)
    if data is None:
        return None
    try:
        page, rows = data["page"], data["blocks"]
        blocks = [Block(kind=str(kind), text=str(text), heading_path=tuple(map(str, heading)),
                        section_id=None if section is None else str(section), level=int(level))
                  for kind, text, heading, section, level in rows]
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        warn_once(path, "holds a parse of the wrong shape: parsed again", err)
        return None
    if page != digest:
        warn_once(path, "was parsed from another page (edited or damaged): parsed again")
        return None
    return blocks


def _written_words(blocks: list[Block]) -> set[str]:
    """Every word (casefolded) of the blocks' text, heading paths and section ids."""
    return {w for b in blocks for part in (b.text, *b.heading_path, b.section_id or "")
            for w in _WORD.findall(part.casefold())}


_WORD = re.compile(r"\w+")
_ANY_TAG = re.compile(r"<[^>]*>")
# The words the parser writes that a page need not spell so: code_language's names.
_PARSER_WORDS = frozenset(w for name in LANGUAGE_ALIASES.values() for w in _WORD.findall(name))


def _holds(html: str, words: set[str]) -> bool:
    """True when every word (casefolded) is one the parser could take from this HTML: a word of
    its source, with character references resolved or not, or pieces of its text that only tags
    separate, joined (`J<em>n</em>` holds "j", "n" and "jn"; the walker joins a layout's pieces so).
    Cheapest first: most words are spelt in the source as they are written."""
    missing = words - set(_WORD.findall(html.casefold())) - _PARSER_WORDS
    if missing:
        missing -= _resolved_words(html)
    if missing:
        text = _text_with_tags_marked(html)
        missing = {word for word in missing if not _joined(word).search(text)}
    return not missing


def _resolved_words(html: str) -> set[str]:
    """The words of the source with its character references resolved and control characters
    dropped, as the parser's text has them."""
    return set(_WORD.findall(CONTROLS.sub("", unescape(html)).casefold()))


_MARK = "\ufdd0"  # stands for a tag: a noncharacter, in no word and in no page's text


def _text_with_tags_marked(html: str) -> str:
    """The page's text, casefolded, each tag replaced by `_MARK`. Tags go before references are
    resolved: a resolved "&lt;" is text, not a tag."""
    return CONTROLS.sub("", unescape(_ANY_TAG.sub(_MARK, html))).casefold()


def _joined(word: str) -> re.Pattern:
    """`word` as whole pieces of text with only tags between them: a mark may follow any letter."""
    return re.compile(r"(?<!\w)" + f"{_MARK}*".join(map(re.escape, word)) + r"(?!\w)")
