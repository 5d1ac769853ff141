"""Boilerplate, by structure (CSS selectors for page furniture) and by frequency across a corpus."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

import soupsieve
from bs4.element import Tag

from course_lib import settings
from course_lib.core.html_parts import collapse
from course_lib.records import Block, text_digest

# Page furniture, removed by structure before any text is read. docutils >= 0.18 writes
# footnotes, "Abstract" topics and sidebars as <aside>: those are content and are kept.
STRUCTURAL_BOILERPLATE = (
    "nav", "header:not(article header, main header, [role=main] header)", "footer",
    "aside:not(.footnote, .footnote-list, .citation, .topic, .sidebar:has(> .sidebar-title))",
    '[role="navigation"]', '[role="banner"]', '[role="contentinfo"]', '[role="search"]',
    "div.sphinxsidebar", "div.related", "div.footer", "div.mobile-nav", "form", "button",
    "div.toctree-wrapper",  # a Sphinx table of contents inside the page: links to other pages
    # Cookie and consent notices. Not a bare [id*=cookie]: that would delete the docs of
    # http.cookies (<section id="cookie-objects">, <dt id="http.cookiejar.CookieJar">).
    ':is(div, aside, dialog, p, span, ul)[class*="cookie-"], :is(div, aside, dialog)[id*="cookie-"]',
    ':is(div, aside, dialog)[class*="consent"], :is(div, aside, dialog)[id*="consent"]',
    ':is(div, aside, dialog)[class*="gdpr"], :is(div, aside, dialog)[id*="gdpr"]',
)
# Decoration attached to content: permalink pilcrows, "[source]" links, copy buttons, line numbers.
DECORATION = (
    "a.headerlink", ".viewcode-link", ".viewcode-back", "span.linenos", "[class*=copybtn]",
    "[class*=copy-btn]", "[class*=copybutton]", "[class*=copy-button]", "[data-clipboard-target]",
)
# Never text, whatever the settings: their strings are code, styling or widgets.
NEVER_CONTENT = ("script", "style", "noscript", "template", "svg", "iframe", "canvas", "object",
                 "embed", "select", "input", "textarea")


# ----------------------------------------------------------------------------- structure

def _split_top(text: str, seps: str) -> list[int]:
    """Positions of the characters in `seps` that sit outside any (...) or [...]."""
    depth, found = 0, []
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in seps:
            found.append(i)
    return found


def required_token(selector: str) -> str | None:
    """A string that any element matching a simple CSS selector must carry in its tag name or
    attributes (None when we cannot tell). Used only to skip elements cheaply: see `_remove`.
    """
    cuts = _split_top(selector, " >+~")
    compound = selector[cuts[-1] + 1:] if cuts else selector  # the rightmost compound
    compound = re.sub(r":[\w-]+\([^()]*(\([^()]*\)[^()]*)*\)", "", compound)  # :not(..), :is(..), :has(..)
    attr = re.search(r"""\[\s*([\w-]+)\s*(?:[~|^$*]?=\s*["']?([^"'\]]+))?""", compound)
    if attr:
        return (attr.group(2) or attr.group(1)).strip().lower()
    named = re.search(r"[.#]([\w-]+)", compound) or re.match(r"([a-zA-Z][\w-]*)", compound)
    return named.group(1).lower() if named else None


@cache
def _compiled(selectors: tuple[str, ...]) -> tuple[soupsieve.SoupSieve, tuple[str, ...] | None]:
    flat = [sel[a + 1:b].strip() for sel in selectors
            for a, b in zip([-1, *_split_top(sel, ",")], [*_split_top(sel, ","), len(sel)], strict=False)]
    tokens = [required_token(sel) for sel in flat]
    return soupsieve.compile(", ".join(flat)), None if None in tokens else tuple(set(tokens))


def _remove(root: Tag, selectors: tuple[str, ...]) -> int:
    """Delete every element under `root` that matches one of the CSS selectors; return the count.

    Same result as `soupsieve.select`, several times faster: testing thirty selectors on each of
    15,000 elements dominated parse time, so an element is tested only when its name or an
    attribute contains a token that every match must carry (`required_token`).
    """
    matcher, tokens = _compiled(selectors)
    doomed = []
    for tag in root.find_all(True):
        if tokens is not None:
            hay = " ".join([tag.name, *(f"{k} {' '.join(v) if isinstance(v, list) else v}"
                                        for k, v in tag.attrs.items())]).lower()
            if not any(t in hay for t in tokens):
                continue
        if matcher.match(tag):
            doomed.append(tag)
    for tag in doomed:
        if not tag.decomposed:  # an ancestor may already have taken it
            tag.decompose()
    return len(doomed)


# ----------------------------------------------------------------------------- frequency

def block_key(text: str) -> str:
    """A short hash of a block's normalised text (case-folded, whitespace collapsed)."""
    return text_digest(collapse(text).casefold())[:16]


def _pages(pages_blocks: Mapping[str, list[Block]] | Iterable[list[Block]]) -> list[list[Block]]:
    return list(pages_blocks.values()) if isinstance(pages_blocks, Mapping) else list(pages_blocks)


def block_frequencies(pages_blocks: Mapping[str, list[Block]] | Iterable[list[Block]]) -> Counter:
    """Count, for each normalised block text (by `block_key`), the number of pages containing it.

    A block repeated within one page counts once: what we look for is text that every page
    carries (a menu, a footer, a notice), not a word a page happens to repeat.
    """
    return Counter(key for blocks in _pages(pages_blocks) for key in {block_key(b.text) for b in blocks})


@dataclass(frozen=True)
class FrequentBlock:
    """One block text removed as boilerplate: how many pages carry it and how often it was dropped."""

    text: str
    kind: str
    pages: int
    share: float
    removed: int


def drop_frequent_blocks(
    pages_blocks: Mapping[str, list[Block]] | Iterable[list[Block]],
    *,
    max_share: float = settings.BOILERPLATE_MAX_PAGE_SHARE,
    min_pages: int = settings.BOILERPLATE_MIN_PAGES,
    keep_kinds: tuple[str, ...] = ("heading",),
) -> tuple[Mapping[str, list[Block]] | list[list[Block]], list[FrequentBlock]]:
    """Drop blocks whose text appears on more than `max_share` of the pages (and on >= `min_pages`).

    Boilerplate that no selector names (a "Was this page helpful?" line, a repeated disclaimer)
    shows itself by appearing on many pages. Kinds in `keep_kinds` are never dropped: with
    `keep_kinds=()` or a tiny `max_share`, repeated headings such as "Examples" or "Notes" go
    too, which is the mistake a lesson shows. Returns the kept blocks in the shape given (dict
    or list) and a report of what was removed, most widespread first.
    """
    pages = _pages(pages_blocks)
    counts = block_frequencies(pages)
    limit = max_share * len(pages)
    removed: dict[str, list] = {}
    kept_pages = []
    for blocks in pages:
        kept = []
        for block in blocks:
            key = block_key(block.text)
            if block.kind not in keep_kinds and counts[key] > limit and counts[key] >= min_pages:
                removed.setdefault(key, [block, 0])[1] += 1
            else:
                kept.append(block)
        kept_pages.append(kept)
    report = sorted(
        (FrequentBlock(b.text, b.kind, counts[k], counts[k] / len(pages), n)
         for k, (b, n) in removed.items()),
        key=lambda r: (-r.pages, r.text),
    )
    if isinstance(pages_blocks, Mapping):
        return dict(zip(pages_blocks.keys(), kept_pages, strict=False)), report
    return kept_pages, report
