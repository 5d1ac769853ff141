"""Structure-aware chunking: pack a page's blocks into chunks that fit the embedder's window.

The rule from the production write-up: never split inside a block, never combine blocks from
different heading paths, a heading always starts a new chunk, and fill each chunk up to a token
budget. The budget is counted with the embedder's own tokenizer on the text that is actually
embedded (context line + body, special tokens included), and defaults to the model's real limit,
so no chunk is silently truncated. The one exception to "never split inside a block", from the
chunking lesson: a block that cannot fit even alone is split at its natural joints (code at line
breaks preferring blank lines, tables by rows with the caption repeated, prose at sentences),
and only as a last resort by tokens.
"""
from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from course_lib import settings
from course_lib.core.packing import HEADING, BlockPacker, Key, Part, WindowPacker, parts_of, section_key
from course_lib.core.splitting import split_sentences
from course_lib.core.tokens import Counter, budget_of, count_all, get_counter
from course_lib.records import Block, Chunk


def blocks_to_text(blocks: Iterable[Block], *, headings: bool = True) -> str:
    """The cleaned text of a page: its blocks' texts joined by blank lines, in document order.

    Lesson 03 runs the naive fixed-size chunker over this, so that only the cleaning changes and
    the chunk boundaries stay as naive as before. Headings stay in by default, as they would in
    any text extracted from the page.
    """
    return "\n\n".join(
        b.text.strip() for b in blocks if b.text.strip() and (headings or b.kind != HEADING)
    )


def context_line(heading_path: Sequence[str], title: str = "") -> str:
    """Where a chunk comes from, e.g. "datetime > Format Codes": the heading path, prefixed with
    the page title when the path does not already start with it."""
    path = tuple(heading_path)
    if title and (not path or path[0] != title):
        path = (title, *path)
    return " > ".join(path)


# --- packing blocks into chunks --------------------------------------------------------------

def _clean_text(block: Block) -> str:
    # Code keeps the indentation of its first line; other blocks lose stray edge whitespace.
    return block.text.strip("\n") if block.kind == "code" else block.text.strip()


def _context_of(block: Block, title: str, context: bool) -> str:
    """The context line a chunk of `block`'s section embeds, or none without `context`."""
    return context_line(block.heading_path, title) if context else ""


def chunk_blocks(
    blocks: Sequence[Block],
    *,
    doc: str,
    title: str = "",
    budget: int | None = None,
    overlap_blocks: int = settings.CHUNK_OVERLAP_BLOCKS,
    context: bool = True,
    counter: Counter | None = None,
    model: str | None = None,
    split_long: bool = True,
    margin: int = settings.CHUNK_MARGIN_TOKENS,
    headings: bool = True,
    count_context: bool = True,
) -> list[Chunk]:
    """Pack a page's blocks into chunks of at most `budget - margin` tokens.

    A heading, or any change of heading path or section, ends the current chunk; within a section,
    whole blocks are added while the chunk stays within budget, and the next chunk starts with the
    last `overlap_blocks` blocks of the previous one if they fit. With `headings` a heading's text
    opens the body of the chunk that follows it, so the chunks hold the page's whole text (the
    same text fixed windows cut); without, the heading lives only in the context line. The size is
    counted by `counter` (by default the embedder's tokenizer) on what is embedded: the context line
    and the body, or the body alone when `count_context` is off (lesson 04 adds the context line
    to bodies packed without it, so the bodies stay identical; lesson 05 counts it). `budget`
    defaults to the embedder's real limit. A block too long even alone is split (`split_block`)
    when `split_long`, each piece starting a chunk, or gets a chunk of its own and is truncated by
    the model otherwise (the production write-up's choice). `margin` holds tokens back, e.g. for
    an instruction prefix. Ids are f"{doc}#{n}"; `meta` records the source blocks, pieces, token
    count and any split. The walk's state lives in a `packing.BlockPacker`.
    """
    counter = counter or get_counter(model)
    room = (budget if budget is not None else budget_of(counter, model)) - margin
    packer = BlockPacker(doc=doc, title=title, counter=counter, room=room, count_context=count_context,
                         split_long=split_long, overlap_blocks=overlap_blocks)
    pending: list[Part] = []  # heading lines waiting for the first block they name
    for i, block in enumerate(blocks):
        text = _clean_text(block)
        if block.kind == HEADING:  # closes the chunk before it and, kept, opens the body of the next
            packer.close()
            if headings and text:
                pending.append(Part(i, 0, 1, text, HEADING, "whole", False))
        elif text:
            if section_key(block) != packer.key:
                packer.enter(section_key(block), _context_of(block, title, context))
            packer.add_block(parts_of(i, block.kind, packer.split(text, block.kind)), pending)
            pending = []
    packer.close()
    if pending:  # headings that end the page name nothing: they keep a chunk of their own
        first = blocks[pending[0].index]
        packer.enter(section_key(first), _context_of(first, title, context))
        packer.emit_headings(pending)
    return packer.chunks


# --- fixed windows, for comparison ----------------------------------------------------------

def _units(block: Block) -> list[str]:
    """A block's text as the units a window may cut between: lines of code and tables (and a
    heading as one line), sentences of prose. Joined back they give the block's text."""
    text = _clean_text(block)
    if block.kind in ("code", "table", HEADING):
        return [line for line in text.split("\n")]
    return [sentence.strip() for sentence in split_sentences(text) if sentence.strip()]


def window_chunks(
    blocks: Sequence[Block],
    *,
    doc: str,
    title: str = "",
    budget: int | None = None,
    within_heading_path: bool = False,
    context: bool = False,
    counter: Counter | None = None,
    model: str | None = None,
) -> list[Chunk]:
    """Fixed windows over a page's text (headings kept): the control that structure is measured
    against. Consecutive lines and sentences fill each window up to `budget` tokens, counted like
    `chunk_blocks` counts (context line included when there is one), with no overlap; windows cut
    between blocks and inside them alike, wherever the budget runs out, never mid-sentence and never
    mid-line. `within_heading_path` restarts the windows at every change of heading path or section
    (lesson 09's ablation keeps that rule and removes only block boundaries); `context` embeds the
    heading-path line, as the final chunks do (only with `within_heading_path`, which gives windows
    one path). A single sentence or line longer than the budget is cut by `split_block`. Ids are
    f"{doc}#w{n}"; the walk's state lives in a `packing.WindowPacker`.
    """
    counter = counter or get_counter(model)
    packer = WindowPacker(doc=doc, title=title, counter=counter,
                          budget=budget if budget is not None else budget_of(counter, model))
    key: Key | None = None
    for block in blocks:
        if within_heading_path and section_key(block) != key:
            key = section_key(block)
            packer.enter(_context_of(block, title, context))
        for unit in _units(block):
            packer.add_unit(unit, block)
    packer.close()
    return packer.chunks


# --- after chunking --------------------------------------------------------------------------

def without_context(chunks: Iterable[Chunk]) -> list[Chunk]:
    """The same chunks with no context line: identical bodies, only what is embedded changes.
    Lesson 04's step (b) compares exactly these two lists."""
    return [dataclasses.replace(chunk, context="") for chunk in chunks]


def dedupe(chunks: Iterable[Chunk], *, report: list[tuple[str, str]] | None = None,
           ) -> tuple[list[Chunk], list[Chunk]]:
    """Drop exact duplicates (same embedded text, by `content_hash`) within one page, keeping the
    first of each. Returns (kept, dropped) so a lesson can show what went; ids stay as they were.

    The same text on two pages is kept on both: a page present twice in a corpus (two paths, one
    content) must stay findable under either path, or a golden question citing the second copy
    could never be answered. Such cross-page duplicates are appended to `report` as (chunk id,
    id of its first copy), for a caller that wants to say so.
    """
    seen: set[tuple[str, str]] = set()
    first: dict[str, str] = {}
    kept: list[Chunk] = []
    dropped: list[Chunk] = []
    for chunk in chunks:
        digest = chunk.content_hash
        if (chunk.doc, digest) in seen:
            dropped.append(chunk)
            continue
        seen.add((chunk.doc, digest))
        kept.append(chunk)
        if digest in first and report is not None:
            report.append((chunk.id, first[digest]))
        first.setdefault(digest, chunk.id)
    return kept, dropped


@dataclass(frozen=True)
class ChunkStats:
    """Sizes of a chunk list in tokens against a limit, overall and per block kind.

    `by_kind` maps each kind to {"chunks", "median_tokens", "over_limit", "share_over_limit"}; a
    chunk counts under every kind it contains, and naive chunks (no kinds) under "-".
    """

    count: int
    median_tokens: float
    max_tokens: int
    limit: int
    over_limit: int
    share_over_limit: float
    split_chunks: int
    hard_cut_chunks: int
    by_kind: dict[str, dict[str, float]]


def chunk_report(
    chunks: Sequence[Chunk], counter: Counter | None = None, *, limit: int | None = None,
    model: str | None = None,
) -> ChunkStats:
    """Count every chunk's embedded text and summarise it against the model's limit.

    Works on any chunk list (naive or structured), so lessons compare chunkers with one call.
    """
    counter = counter or get_counter(model)
    limit = limit if limit is not None else budget_of(counter, model)
    sizes = count_all([c.text for c in chunks], counter)

    def summary(ns: list[int]) -> dict[str, float]:
        over = sum(n > limit for n in ns)
        return {
            "chunks": len(ns),
            "median_tokens": float(statistics.median(ns)) if ns else 0.0,
            "over_limit": over,
            "share_over_limit": over / len(ns) if ns else 0.0,
        }

    per_kind: dict[str, list[int]] = {}
    for chunk, n in zip(chunks, sizes, strict=True):
        for kind in chunk.kinds or ("-",):
            per_kind.setdefault(kind, []).append(n)
    total = summary(sizes)
    return ChunkStats(
        count=len(sizes),
        median_tokens=total["median_tokens"],
        max_tokens=max(sizes, default=0),
        limit=limit,
        over_limit=int(total["over_limit"]),
        share_over_limit=total["share_over_limit"],
        split_chunks=sum(bool(c.meta.get("split")) for c in chunks),
        hard_cut_chunks=sum("tokens" in c.meta.get("split", ()) for c in chunks),
        by_kind={k: summary(v) for k, v in sorted(per_kind.items())},
    )
