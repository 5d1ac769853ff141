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
import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import bs4
import lxml.etree
from bs4 import BeautifulSoup

from course_lib import settings
from course_lib.core.boilerplate import (
    DECORATION,
    NEVER_CONTENT,
    STRUCTURAL_BOILERPLATE,
    _remove,
)
from course_lib.core.decode import decode_html
from course_lib.core.html_parts import collapse, repair_raw_pre, text_of
from course_lib.core.walker import walk_blocks
from course_lib.infra.errors import ParseError, ParserFailures
from course_lib.infra.json_cache import cache_path, code_digest, read_json, write_json
from course_lib.infra.safe_text import CONTROLS
from course_lib.infra.vector_cache import warn_once
from course_lib.records import Block, Page, text_digest

log = logging.getLogger("course_lib.parse")
# Tried in order; the first that matches is the page's main content, else the whole <body>.
MAIN_SELECTOR = ('[role="main"]', "main", "article")


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


def parse_blocks(
    html: str | bytes,
    *,
    title: str | None = None,
    main_selector: str | tuple[str, ...] | None = MAIN_SELECTOR,
    parser: str = "lxml",
    drop_boilerplate: bool = True,
    drop_decoration: bool = True,
    definition_paths: bool = True,
) -> list[Block]:
    """Turn one HTML page into its stream of blocks, in document order.

    Reads the main content (the first match of `main_selector`, else <body>), after removing
    `STRUCTURAL_BOILERPLATE` (if `drop_boilerplate`) and `DECORATION` such as the pilcrow
    permalinks (if `drop_decoration`). Layout wrappers (div, section, span around blocks...)
    are walked through; the walk stops at the first block-level element, so no text appears
    twice. The page title (`title`, else the first <h1>, else <title>) is the first element of
    every heading path. Each lesson flips one keyword and measures the effect.
    """
    if isinstance(html, bytes):
        html = decode_html(html)
    html = html.replace("\r\n", "\n").replace("\r", "\n")  # as HTML5 does; html.parser does not
    soup = make_soup(html, parser)
    if re.search(r"<pre\b", html, re.I):
        repair_raw_pre(soup, html)
    selectors = (main_selector,) if isinstance(main_selector, str) else tuple(main_selector or ())
    root = next((m for m in (soup.select_one(s) for s in selectors) if m is not None), None)
    if root is None:
        root = soup.body if soup.body is not None else soup
    _remove(root, NEVER_CONTENT + (DECORATION if drop_decoration else ())
            + (STRUCTURAL_BOILERPLATE if drop_boilerplate else ()))
    if title is None:
        h1 = root.find("h1")
        title_tag = soup.find("title")
        title = collapse(text_of(h1)) if h1 is not None else ""
        title = title or (collapse(title_tag.get_text()) if title_tag is not None else "")
    return _without_controls(walk_blocks(root, title=title, definition_paths=definition_paths))


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
    known = {n for n, p in inspect.signature(parse_blocks).parameters.items() if p.kind is p.KEYWORD_ONLY}
    unknown = sorted(set(options) - known - set(extra))
    if unknown:
        raise TypeError(f"unknown parser option(s) {', '.join(unknown)}; "
                        f"known: {', '.join(sorted(known | set(extra)))}")


def parse_file(path: str | Path, **kwargs) -> list[Block]:
    """Read, decode and parse one HTML file; raise ParseError with a clear reason if it is not HTML.

    Empty, binary (NUL bytes) and tag-less files are refused before parsing; a parser that still
    fails is reported with the file's path. Keyword arguments go to `parse_blocks`.
    """
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
        return parse_blocks(text, **kwargs)
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
    parsed: dict[str, list[Block]] = {}
    skipped: list[tuple[str, str]] = []
    for item in items:
        key = item.path if isinstance(item, Page) else str(item)
        try:
            if isinstance(item, Page):
                _check_html(item.html, key)
                blocks = parse_blocks(item.html, **kwargs)
            else:
                blocks = parse_file(item, **kwargs)
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
               "course_lib.core.boilerplate", "course_lib.core.decode", "course_lib.infra.safe_text",
               "course_lib.records", "course_lib.settings")
_PARSE_CACHE_FORMAT = "parsed-pages-2"  # 2: sealed by the pages' hashes


def parse_pages(pages: Sequence[Page], **options) -> tuple[dict[str, list[Block]], list[tuple[str, str]]]:
    """`parse_corpus` over Page records, kept on disk (`<cache>/parsed/`) between processes.

    Parsing a corpus costs 20-40 s on a laptop and every lesson parses the same pages, so the
    result is stored as JSON keyed by the pages' paths and HTML, the options, the parser
    libraries' versions and the source of every module in `PARSE_STACK`: any change parses again.
    A damaged or unreadable cache file costs one warning line and a fresh parse, never a result;
    a run where the parser failed on a page is not kept. Each entry holds the sha256 of every
    page's text and a seal over those hashes, its own name and every block it stores: an entry
    edited by hand (or by another user of a shared cache) no longer matches its seal and is parsed
    again with one warning line, so the text it holds is never served.
    """
    check_parse_options(options)
    parts = [_PARSE_CACHE_FORMAT, code_digest(PARSE_STACK), bs4.__version__, lxml.etree.__version__,
             repr(sorted(options.items()))]
    parts += [text for page in pages for text in (page.path, page.html)]
    path = cache_path("parsed", "corpus", parts)
    hashes = {page.path: text_digest(page.html) for page in pages}
    stored = _read_parsed(path, hashes)
    if stored is not None:
        return stored
    parsed, skipped = parse_corpus(pages, **options)
    if any(reason.startswith("parser failed") for _, reason in skipped):
        return parsed, skipped  # a failure may be this machine's (memory, recursion): try again next time
    entry = {"pages": hashes, "parsed": {doc: [[b.kind, b.text, list(b.heading_path), b.section_id, b.level]
                                               for b in blocks] for doc, blocks in parsed.items()},
             "skipped": [list(pair) for pair in skipped]}
    write_json(path, {**entry, "seal": _seal(path, entry)})
    return parsed, skipped


def _seal(path: Path, entry: dict) -> str:
    """The sha256 of an entry's name, its pages' hashes and everything it stores."""
    body = json.dumps([path.name, entry.get("pages"), entry.get("parsed"), entry.get("skipped")],
                      sort_keys=True)
    return text_digest(body)


_Parsed = tuple[dict[str, list[Block]], list[tuple[str, str]]]


def _read_parsed(path: Path, hashes: dict[str, str]) -> _Parsed | None:
    """The stored parse, or None when there is none, it does not have the shape written, or it
    does not match its seal or these pages' hashes (one warning line: it is parsed again)."""
    data = read_json(path)
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("pages") != hashes or data.get("seal") != _seal(path, data):
        warn_once(path, "does not match the pages it was parsed from (edited or damaged): parsed again")
        return None
    try:
        parsed = {str(doc): [Block(kind=str(kind), text=str(text), heading_path=tuple(map(str, heading)),
                                   section_id=None if section is None else str(section), level=int(level))
                             for kind, text, heading, section, level in rows]
                  for doc, rows in data["parsed"].items()}
        skipped = [(str(doc), str(reason)) for doc, reason in data["skipped"]]
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        warn_once(path, "holds a parse of the wrong shape: parsed again", err)
        return None
    return parsed, skipped
