"""Boilerplate by frequency: what repeats across a site's pages is not about any one of them.

A "Was this page helpful?" line, a repeated disclaimer, a menu no furniture rule names: each shows
itself by appearing on many pages of the same site. `drop_frequent_blocks` removes the blocks whose
text appears on more than a share of the pages (lesson 03 measures which share), never headings,
and reports what it removed. The furniture rules of `boilerplate` run first, on each page alone.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from course_lib import settings
from course_lib.core.html_parts import collapse
from course_lib.records import Block, text_digest


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
