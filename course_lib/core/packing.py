"""What a chunker holds while it walks one page: the chunk being filled and the chunks made so far.

`chunking.chunk_blocks` and `chunking.window_chunks` decide where a page may be cut; the packers
here keep what those decisions need from one block to the next (the open chunk, its heading path
and context line, the chunks already made). Each step is a method that reads and changes one
object, so no helper closes over variables that a loop reassigns.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from course_lib import settings
from course_lib.core.splitting import Split, embedded_text, split_block
from course_lib.core.tokens import Counter
from course_lib.records import Block, Chunk

HEADING = "heading"
Key = tuple[tuple[str, ...], str | None]  # a block's heading path and section id


def section_key(block: Block) -> Key:
    """Where a block belongs, its heading path and section id: no chunk spans two of these."""
    return tuple(block.heading_path), block.section_id


def fitted_context(ctx: str, *, counter: Counter, room: int,
                   share: float = settings.CONTEXT_MAX_SHARE) -> str:
    """`ctx` unchanged while it leaves room for one character of a body; else its longest start,
    cut at a word, within `share` of `room` tokens, ending in "…". Only a heading path that fills
    the window on its own is cut: without the cut the section could not be chunked at all."""
    if not ctx or counter.count(embedded_text(ctx, "x")) <= room:
        return ctx
    limit = int(room * share)
    words = ctx.split(" ")
    lo, hi = 0, len(words) - 1  # the most words whose start, with "…", still fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if counter.count(" ".join(words[:mid]) + " …") <= limit:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]) + " …" if lo else "…"


class Part(NamedTuple):
    """A block, or one piece of a block cut by `split_block`, on its way into a chunk."""

    index: int  # position of the source block in the block list
    piece: int  # which piece of that block (0 when whole)
    pieces: int  # how many pieces the block was cut into
    text: str
    kind: str
    method: str
    hard: bool


def parts_of(index: int, kind: str, split: Split) -> list[Part]:
    """The pieces of block `index`, in order, as parts that remember how the block was cut."""
    return [Part(index, n, len(split.pieces), piece, kind, split.method, split.hard[n])
            for n, piece in enumerate(split.pieces)]


@dataclass
class BlockPacker:
    """Fills chunks of at most `room` tokens with whole blocks or their pieces (`chunk_blocks`'s rule).

    `current` is the open chunk, `carried` how many of its parts overlap the chunk before, `key`
    and `ctx` its heading path and section and its context line; `chunks` what has been emitted.
    Sizes are counted by `counter` on the embedded text (the context line only if `count_context`).
    """

    doc: str
    title: str
    counter: Counter
    room: int
    count_context: bool = True
    split_long: bool = True
    overlap_blocks: int = 0
    chunks: list[Chunk] = field(default_factory=list)
    current: list[Part] = field(default_factory=list)
    carried: int = 0
    key: Key | None = None
    ctx: str = ""

    def measure(self, parts: list[Part]) -> int:
        """Tokens of the text these parts would embed, as one chunk under the current context."""
        body = "\n\n".join(p.text for p in parts)
        return self.counter.count(embedded_text(self.ctx if self.count_context else "", body))

    def split(self, text: str, kind: str = "text") -> Split:
        """A block's text cut into pieces that each fit alone, or kept whole without `split_long`."""
        if not self.split_long:
            return Split((text,), "whole", (False,))
        return split_block(text, kind=kind, budget=self.room, counter=self.counter,
                           context=self.ctx if self.count_context else "")

    def emit(self, parts: list[Part], carried: int) -> None:
        """Append these parts as the next chunk, its meta recording blocks, pieces, size and cuts."""
        path, section = self.key  # type: ignore[misc]  # set by `enter` before any part is added
        splits = {p.method for p in parts if p.pieces > 1}
        if any(p.hard for p in parts):
            splits.add("tokens")
        self.chunks.append(Chunk(
            id=f"{self.doc}#{len(self.chunks)}", doc=self.doc, body="\n\n".join(p.text for p in parts),
            title=self.title, heading_path=path, section_id=section,
            kinds=tuple(sorted({p.kind for p in parts})), context=self.ctx,
            meta={"block_indices": tuple(dict.fromkeys(p.index for p in parts)),
                  "parts": tuple((p.index, p.piece, p.pieces) for p in parts),
                  "overlap": carried, "tokens": self.measure(parts), "split": tuple(sorted(splits))},
        ))

    def close(self) -> None:
        """Emit the open chunk, if any, and start an empty one with nothing carried over."""
        if self.current:
            self.emit(self.current, self.carried)
        self.current, self.carried = [], 0

    def enter(self, key: Key, ctx: str) -> None:
        """Close the open chunk and move to another heading path or section, with its context line
        (cut to its share of the chunk when it is counted: `fitted_context`)."""
        self.close()
        self.key = key
        self.ctx = fitted_context(ctx, counter=self.counter, room=self.room) if self.count_context else ctx

    def add_block(self, parts: list[Part], headings: Sequence[Part] = ()) -> None:
        """Pack a block's parts, opening with the `headings` that name it when they fit together;
        headings that do not fit with it get chunks of their own first."""
        if headings:
            together = self.measure([*headings, *parts[:1]]) <= self.room
            if not together:
                self.emit_headings(headings)
            self.current = list(headings) if together else []
        for part in parts:
            self.add_part(part)

    def add_part(self, part: Part) -> None:
        """Add one part to the open chunk, first emitting it (keeping an overlap) when it is full."""
        if self.starts_chunk(part):
            self.emit(self.current, self.carried)
            self.current = self.overlap(self.current, part)
            self.carried = len(self.current)
        self.current.append(part)

    def starts_chunk(self, part: Part) -> bool:
        """Whether `part` opens a new chunk: it does not fit, or it is a later piece of a cut block
        (the splitter chose that cut, e.g. at a blank line). Headings alone never stay alone."""
        current = self.current
        only_headings = bool(current) and all(p.kind == HEADING for p in current)
        return (bool(current) and (part.piece > 0 or self.measure([*current, part]) > self.room)
                and not (only_headings and part.piece == 0))

    def overlap(self, previous: list[Part], part: Part) -> list[Part]:
        """The last `overlap_blocks` parts of the previous chunk that fit with `part`, dropping the
        oldest first; never an earlier piece of `part`'s own block (that would undo its cut)."""
        if self.overlap_blocks <= 0:
            return []
        carry = [p for p in previous[-self.overlap_blocks:] if p.index != part.index]
        while carry and self.measure([*carry, part]) > self.room:
            carry = carry[1:]
        return carry

    def emit_headings(self, headings: Sequence[Part]) -> None:
        """Headings that fit with nothing they name: chunks of their own, packed heading by heading,
        a heading too long alone split like prose."""
        group: list[Part] = []
        for part in headings:
            if group and self.measure([*group, part]) > self.room:
                self.emit(group, 0)
                group = []
            if self.measure([part]) > self.room and self.split_long:
                for piece in parts_of(part.index, HEADING, self.split(part.text)):
                    self.emit([piece], 0)
                continue
            group.append(part)
        if group:
            self.emit(group, 0)


def window_body(units: Sequence[tuple[str, Block]]) -> str:
    """The text of a window: units of one block joined as they were (a space between sentences of
    prose, a line break between lines), units of different blocks by a blank line."""
    pieces, previous = [], None
    for unit, block in units:
        if previous is None:
            sep = ""
        elif block is previous:
            sep = " " if block.kind == "text" else "\n"
        else:
            sep = "\n\n"
        pieces.append(sep + unit)
        previous = block
    return "".join(pieces)


@dataclass
class WindowPacker:
    """Fills fixed windows of at most `budget` tokens with lines and sentences (`window_chunks`'s rule).

    `units` is the open window, each unit with the block it came from; `ctx` the context line
    embedded with it; `chunks` what has been emitted.
    """

    doc: str
    title: str
    counter: Counter
    budget: int
    chunks: list[Chunk] = field(default_factory=list)
    units: list[tuple[str, Block]] = field(default_factory=list)
    ctx: str = ""

    def tokens(self, units: Sequence[tuple[str, Block]]) -> int:
        """Tokens of the text these units would embed as one window under the current context."""
        return self.counter.count(embedded_text(self.ctx, window_body(units)))

    def add_unit(self, unit: str, block: Block) -> None:
        """Add a line or sentence, cut by `split_block` if it cannot fit alone, opening a new window
        whenever the open one is full."""
        pieces = ([unit] if self.tokens([(unit, block)]) <= self.budget else
                  list(split_block(unit, budget=self.budget, counter=self.counter, context=self.ctx).pieces))
        for piece in pieces:
            if self.units and self.tokens([*self.units, (piece, block)]) > self.budget:
                self.close()
            self.units.append((piece, block))

    def close(self) -> None:
        """Emit the open window, if any, under the heading path of its first unit."""
        if not self.units:
            return
        first = self.units[0][1]
        self.chunks.append(Chunk(
            id=f"{self.doc}#w{len(self.chunks)}", doc=self.doc, body=window_body(self.units),
            title=self.title, heading_path=tuple(first.heading_path), section_id=first.section_id,
            context=self.ctx, kinds=tuple(sorted({b.kind for _, b in self.units})),
            meta={"tokens": self.tokens(self.units)},
        ))
        self.units = []

    def enter(self, ctx: str) -> None:
        """Close the open window and embed `ctx` (cut to its share: `fitted_context`) with the
        windows that follow."""
        self.close()
        self.ctx = fitted_context(ctx, counter=self.counter, room=self.budget)
