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
from typing import NamedTuple

from course_lib import settings
from course_lib.core.splitting import Split, embedded_text, split_block, split_sentences
from course_lib.core.tokens import Counter, count_all, get_counter
from course_lib.infra import models
from course_lib.records import Block, Chunk

HEADING = "heading"


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

class _Part(NamedTuple):
    index: int  # position of the source block in the block list
    piece: int  # which piece of that block (0 when whole)
    pieces: int  # how many pieces the block was cut into
    text: str
    kind: str
    method: str
    hard: bool


def _clean_text(block: Block) -> str:
    # Code keeps the indentation of its first line; other blocks lose stray edge whitespace.
    return block.text.strip("\n") if block.kind == "code" else block.text.strip()


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
    count and any split.
    """
    counter = counter or get_counter(model)
    if budget is None:
        budget = getattr(counter, "limit", None) or models.max_input_tokens(model)
    room = budget - margin
    chunks: list[Chunk] = []
    current: list[_Part] = []
    key: tuple | None = None
    ctx = ""

    def measure(parts: list[_Part]) -> int:
        return counter.count(embedded_text(ctx if count_context else "", "\n\n".join(p.text for p in parts)))

    def emit(parts: list[_Part], carried: int) -> None:
        path, section = key  # type: ignore[misc]
        splits = {p.method for p in parts if p.pieces > 1}
        if any(p.hard for p in parts):
            splits.add("tokens")
        chunks.append(
            Chunk(
                id=f"{doc}#{len(chunks)}",
                doc=doc,
                body="\n\n".join(p.text for p in parts),
                title=title,
                heading_path=path,
                section_id=section,
                kinds=tuple(sorted({p.kind for p in parts})),
                context=ctx,
                meta={
                    "block_indices": tuple(dict.fromkeys(p.index for p in parts)),
                    "parts": tuple((p.index, p.piece, p.pieces) for p in parts),
                    "overlap": carried,
                    "tokens": measure(parts),
                    "split": tuple(sorted(splits)),
                },
            )
        )

    def emit_headings(parts: list[_Part]) -> None:
        """Headings that fit with nothing they name: chunks of their own, packed heading by
        heading, a heading too long alone split like prose."""
        group: list[_Part] = []
        for part in parts:
            if group and measure(group + [part]) > room:
                emit(group, 0)
                group = []
            if measure([part]) > room and split_long:
                cut = split_block(part.text, budget=room, counter=counter,
                                  context=ctx if count_context else "")
                for n, piece in enumerate(cut.pieces):
                    emit([_Part(part.index, n, len(cut.pieces), piece, HEADING, cut.method, cut.hard[n])], 0)
                continue
            group.append(part)
        if group:
            emit(group, 0)

    carried = 0
    pending: list[_Part] = []  # heading lines waiting for the first block they name
    for i, block in enumerate(blocks):
        text = _clean_text(block)
        if block.kind == HEADING or not text:
            # A heading closes the chunk before it and, kept, opens the body of the next one.
            if current and block.kind == HEADING:
                emit(current, carried)
                current, carried = [], 0
            if headings and text and block.kind == HEADING:
                pending.append(_Part(i, 0, 1, text, HEADING, "whole", False))
            continue
        block_key = (tuple(block.heading_path), block.section_id)
        if block_key != key:
            if current:
                emit(current, carried)
            current, carried, key = [], 0, block_key
            ctx = context_line(block.heading_path, title) if context else ""
        split = (
            split_block(text, kind=block.kind, budget=room, counter=counter,
                        context=ctx if count_context else "")
            if split_long
            else Split((text,), "whole", (False,))
        )
        if pending:
            first = _Part(i, 0, len(split.pieces), split.pieces[0], block.kind, split.method, split.hard[0])
            if measure(pending + [first]) > room:  # the headings do not fit with what they name
                emit_headings(pending)
                pending = []
            current, pending = pending, []
        for n, piece in enumerate(split.pieces):
            part = _Part(i, n, len(split.pieces), piece, block.kind, split.method, split.hard[n])
            # The splitter already chose where a block's pieces part: two pieces of one block in
            # one chunk would undo a cut made at a blank line and repeat the code fence.
            only_headings = bool(current) and all(p.kind == HEADING for p in current)
            if current and (n > 0 or measure(current + [part]) > room) and not (only_headings and n == 0):
                emit(current, carried)
                # Overlap whole blocks, as many of the last `overlap_blocks` as fit with the new one
                # (never an earlier piece of the same block, for the same reason).
                carry = [p for p in current[-overlap_blocks:] if p.index != i] if overlap_blocks > 0 else []
                while carry and measure(carry + [part]) > room:
                    carry = carry[1:]
                current, carried = carry, len(carry)
            current.append(part)
    if current:
        emit(current, carried)
    if pending:  # headings that end the page name nothing: they keep a chunk of their own
        key = (tuple(blocks[pending[0].index].heading_path), blocks[pending[0].index].section_id)
        ctx = context_line(key[0], title) if context else ""
        emit_headings(pending)
    return chunks


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
    heading-path line, as the final chunks do. A single sentence or line longer than the budget is
    cut by `split_block`. Ids are f"{doc}#w{n}".
    """
    counter = counter or get_counter(model)
    if budget is None:
        budget = getattr(counter, "limit", None) or models.max_input_tokens(model)
    chunks: list[Chunk] = []
    units: list[tuple[str, Block]] = []
    ctx = ""

    def body_of(items: list[tuple[str, Block]]) -> str:
        parts, previous = [], None
        for unit, block in items:
            sep = "" if previous is None else ("\n" if block is previous and block.kind != "text" else
                                               " " if block is previous else "\n\n")
            parts.append(sep + unit)
            previous = block
        return "".join(parts)

    def fits(items: list[tuple[str, Block]]) -> bool:
        return counter.count(embedded_text(ctx, body_of(items))) <= budget

    def emit() -> None:
        first = units[0][1]
        path = tuple(first.heading_path)
        chunks.append(Chunk(id=f"{doc}#w{len(chunks)}", doc=doc, body=body_of(units), title=title,
                            heading_path=path, section_id=first.section_id, context=ctx,
                            kinds=tuple(sorted({b.kind for _, b in units})),
                            meta={"tokens": counter.count(embedded_text(ctx, body_of(units)))}))
        units.clear()

    key = None
    for block in blocks:
        if within_heading_path and (tuple(block.heading_path), block.section_id) != key:
            if units:
                emit()
            key = (tuple(block.heading_path), block.section_id)
            ctx = context_line(block.heading_path, title) if context else ""
        for unit in _units(block):
            pieces = [unit] if fits([(unit, block)]) else list(
                split_block(unit, budget=budget, counter=counter, context=ctx).pieces)
            for piece in pieces:
                if units and not fits(units + [(piece, block)]):
                    emit()
                units.append((piece, block))
    if units:
        emit()
    return chunks


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
    limit = limit if limit is not None else getattr(counter, "limit", None) or models.max_input_tokens(model)
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
