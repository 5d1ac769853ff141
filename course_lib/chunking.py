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

import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from . import models
from .records import Block, Chunk
from .tokens import Counter, count_all, get_counter

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


def embedded_text(context: str, body: str) -> str:
    """The text a chunk embeds: the same rule as `Chunk.text`, so budgets are counted on it."""
    return f"{context}\n\n{body}" if context else body


# --- sentences -------------------------------------------------------------------------------

# A sentence ends at . ! or ? (plus closing quotes/brackets) followed by whitespace; a line break
# always ends one. "os.path" and "3.11.2" have no whitespace after the dot, so never match.
_BREAK = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+|\n\s*")
_ABBREVIATIONS = frozenset(
    {"etc", "vs", "cf", "fig", "figs", "no", "nos", "approx", "incl", "mr", "mrs", "ms", "dr", "st", "al", "ca", "resp"}
)
_LETTER_DOTS = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")  # e.g, i.e, U.S (the final dot is matched)


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; the pieces concatenate back to `text` exactly.

    A regex, not a language model: good enough for documentation, and predictable. It does not
    split after abbreviations ("e.g.", "i.e.", "etc."), initials, or before a lower-case word,
    and never inside "os.path" or "3.11.2".
    """
    pieces, start = [], 0
    for match in _BREAK.finditer(text):
        end = match.end()
        if end >= len(text):
            break
        if "\n" not in match.group():
            if text[end].islower():
                continue
            before = text[start : match.start()].split()
            word = before[-1].lstrip("([{\"'\u201c\u2018") if before else ""
            if word.lower() in _ABBREVIATIONS or _LETTER_DOTS.fullmatch(word) or (len(word) == 1 and word.isupper()):
                continue
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return [p for p in pieces if p]


# --- splitting one over-long block -----------------------------------------------------------

@dataclass(frozen=True)
class Split:
    """A block cut into pieces that each fit the budget: how (`method`), and which pieces hold a
    unit (a line, row or sentence) that was itself too long and had to be cut by tokens."""

    pieces: tuple[str, ...]
    method: str  # "whole", "lines", "rows" or "sentences"
    hard: tuple[bool, ...]

    @property
    def hard_cuts(self) -> int:
        """How many pieces needed the last-resort cut by tokens."""
        return sum(self.hard)


_FENCE = re.compile(r"\A(`{3,})([^\n`]*)\n(.*)\n\1[ \t]*\Z", re.DOTALL)
_WORD_START = re.compile(r"(?<=\s)\S")

Render = Callable[[list[str]], str]
Fits = Callable[[str], bool]


_LEADING_SPACE = re.compile(r"\s*")


_WINDOW = 4096  # characters a piece is first looked for in; doubled while the piece fills it


def _fitting_end(text: str, start: int, stop: int, render: Render, fits: Fits) -> tuple[int, bool]:
    """The longest piece `text[start:end]` with `end <= stop` that fits, cut at a word start if
    the first word fits, inside it otherwise; and whether the piece may go on past `stop`
    (every candidate up to the window's end fitted). `stop == len(text)` is itself a candidate."""
    first = _LEADING_SPACE.match(text, start, stop).end()  # leading indentation alone is no piece
    at_end = stop == len(text)
    cands: Sequence[int] = [m.start() for m in _WORD_START.finditer(text, first, stop) if m.start() > first]
    if at_end:
        cands = [*cands, stop]

    def fits_to(end: int) -> bool:
        return fits(render([text[start:end]]))

    open_ended = not at_end  # a later word start, past the window, might fit too
    if not cands or not fits_to(cands[0]):
        word_end = cands[0] if cands else stop
        open_ended = open_ended and not cands  # inside a word that ends in the window: no further
        cands = range(first + 1, word_end + (0 if cands else 1))
        if not cands or not fits_to(cands[0]):
            raise ValueError(
                "The token budget cannot hold even one character of this block with its context "
                "line; raise the budget or shorten the heading path."
            )
    lo, step = 0, 1
    while step < len(cands) and fits_to(cands[step]):
        lo, step = step, step * 2
    hi = min(step, len(cands)) - 1  # the first probe that failed, or the last candidate
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits_to(cands[mid]):
            lo = mid
        else:
            hi = mid - 1
    return cands[lo], open_ended and lo == len(cands) - 1


def _longest_fitting_prefix(text: str, render: Render, fits: Fits, start: int = 0) -> int:
    """The end of the longest piece `text[start:end]` that fits when rendered: at a word start if
    the first word fits, inside the first word otherwise; `len(text)` when all the rest fits.

    Looks in a window after `start` that doubles while the piece fills it, and gallops, then
    bisects, inside it: the cost grows with the piece, never with the rest of the text."""
    if _LEADING_SPACE.match(text, start).end() == len(text):
        return len(text)
    window = _WINDOW
    while True:
        stop = min(len(text), start + window)
        if _LEADING_SPACE.match(text, start, stop).end() == stop < len(text):
            window *= 2  # only indentation so far: look further
            continue
        end, more = _fitting_end(text, start, stop, render, fits)
        if not more:
            return end
        window *= 2


def _sentence_cut(text: str, start: int, cut: int, render: Render, fits: Fits) -> int:
    """Move a cut back to the last sentence end before it (a long table cell is usually several
    sentences), unless that would leave less than half of the piece. Looks only at the piece
    (and the character after it, which decides whether a sentence ends there)."""
    ends, at = [], start
    for sentence in split_sentences(text[start : cut + 1])[:-1]:
        at += len(sentence)
        ends.append(at)
    best = max((e for e in ends if start + (cut - start) / 2 <= e <= cut), default=cut)
    return best if best == cut or fits(render([text[start:best]])) else cut


def _hard_cut(unit: str, render: Render, fits: Fits) -> list[str]:
    """Cut one unit that is too long even alone into consecutive parts that each fit.

    Works with offsets into `unit` and never measures the whole remainder, so a 5 MB paragraph
    without punctuation costs time in proportion to its length, not its square."""
    parts, pos = [], 0
    while _LEADING_SPACE.match(unit, pos).end() < len(unit):
        end = _longest_fitting_prefix(unit, render, fits, pos)
        if end == len(unit):
            parts.append(unit[pos:])
            break
        cut = _sentence_cut(unit, pos, end, render, fits)
        parts.append(unit[pos:cut].rstrip())
        pos = cut
    return parts


def _merge_blank(units: list[str], sep: str) -> list[str]:
    """Join each run of blank units into one (rendering is unchanged), so a run of a million empty
    lines is one unit, not a million re-renders of a growing piece."""
    merged: list[str] = []
    for unit in units:
        if merged and not unit.strip() and not merged[-1].strip():
            merged[-1] = f"{merged[-1]}{sep}{unit}"
        else:
            merged.append(unit)
    return merged


def _pack_units(
    units: list[str], render: Render, fits: Fits, *, early_break: Callable[[str, list[str]], bool] | None = None,
    sep: str = "\n",
) -> tuple[list[str], list[bool]]:
    """Greedily group consecutive units into pieces that fit; `early_break` may end a piece
    sooner (at a blank line in code). `sep` is what `render` puts between units. Returns the
    pieces and which of them were hard cut."""
    pieces: list[str] = []
    hard: list[bool] = []
    current: list[str] = []
    current_hard = False

    def flush() -> None:
        if any(u.strip() for u in current):  # a piece of blank lines only is no piece
            pieces.append(render(current))
            hard.append(current_hard)

    for unit in _merge_blank(units, sep):
        if current:
            grown = current + [unit]
            if fits(render(grown)) and not (early_break and early_break(unit, current)):
                current = grown
                continue
            flush()
        if fits(render([unit])):
            current, current_hard = [unit], False
            continue
        parts = _hard_cut(unit, render, fits)
        for part in parts[:-1]:
            pieces.append(render([part]))
            hard.append(True)
        current, current_hard = parts[-1:], True
    flush()
    return pieces, hard


def split_block(
    text: str,
    *,
    kind: str = "text",
    budget: int | None = None,
    counter: Counter | None = None,
    context: str = "",
    prefer_blank: float = 0.6,
) -> Split:
    """Split a block's text into pieces whose embedded text (with `context`) fits `budget` tokens.

    A block that fits comes back whole. Code is cut at line breaks, at a blank line once a piece
    is `prefer_blank` of the budget (blank lines usually fall between functions), every piece
    re-fenced with the block's ```lang fence; a table ("caption" line, then one row per line) is
    cut between rows with the caption repeated in every piece; anything else is cut between
    sentences. A line, row or sentence too long on its own is cut by tokens (`Split.hard`).
    """
    counter = counter or get_counter()
    budget = budget if budget is not None else counter.limit  # type: ignore[attr-defined]

    def measure(body: str) -> int:
        return counter.count(embedded_text(context, body))

    def fits(body: str) -> bool:
        return measure(body) <= budget

    if fits(text):
        return Split((text,), "whole", (False,))
    plain: Render = lambda units: "\n".join(units).strip("\n")  # noqa: E731
    if kind == "code":
        fence = _FENCE.match(text)
        if fence and fits(f"{fence[1]}{fence[2]}\nx\n{fence[1]}"):
            opener, closer, inner = f"{fence[1]}{fence[2]}", fence[1], fence[3]
            render: Render = lambda units: f"{opener}\n{plain(units)}\n{closer}"  # noqa: E731
        else:  # unfenced, or the fence alone overflows the budget: cut the text as plain lines
            render, inner = plain, text

        def at_blank(unit: str, current: list[str]) -> bool:
            return not unit.strip() and measure(render(current)) > prefer_blank * budget

        pieces, hard = _pack_units(inner.split("\n"), render, fits, early_break=at_blank)
        return Split(tuple(pieces), "lines", tuple(hard))
    lines = text.split("\n")
    if kind == "table" and len(lines) > 1:
        caption = lines[0]
        if fits(f"{caption}\nx"):  # else the caption alone overflows: cut as plain lines
            pieces, hard = _pack_units(lines[1:], lambda rows: plain([caption, *rows]), fits)
            return Split(tuple(pieces), "rows", tuple(hard))
        pieces, hard = _pack_units(lines, plain, fits)
        return Split(tuple(pieces), "lines", tuple(hard))
    pieces, hard = _pack_units(split_sentences(text), lambda units: "".join(units).strip(), fits, sep="")
    return Split(tuple(pieces), "sentences", tuple(hard))


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
    overlap_blocks: int = 0,
    context: bool = True,
    counter: Counter | None = None,
    model: str | None = None,
    split_long: bool = True,
    margin: int = 0,
) -> list[Chunk]:
    """Pack a page's blocks into chunks of at most `budget - margin` tokens of embedded text.

    A heading, or any change of heading path or section, ends the current chunk; within a section,
    whole blocks are added while the chunk (context line + body, counted by `counter`, by default
    the embedder's tokenizer) stays within budget, and the next chunk starts with the last
    `overlap_blocks` blocks of the previous one if they fit. `budget` defaults to the embedder's
    real limit. A block too long even alone is split (`split_block`) when `split_long`, each piece
    starting a chunk, or gets a chunk of its own and is truncated by the model otherwise (the production
    write-up's choice). `margin`
    holds tokens back, e.g. for an instruction prefix or a tokenizer other than the embedder's.
    Ids are f"{doc}#{n}"; `meta` records the source blocks, pieces, token count and any split.
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
        return counter.count(embedded_text(ctx, "\n\n".join(p.text for p in parts)))

    def emit(parts: list[_Part], carried: int) -> None:
        path, section = key  # type: ignore[misc]
        splits = {p.method for p in parts if p.pieces > 1} | ({"tokens"} if any(p.hard for p in parts) else set())
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

    carried = 0
    for i, block in enumerate(blocks):
        text = _clean_text(block)
        if block.kind == HEADING or not text:
            # A heading names what follows (it is in the context line), so it only closes the chunk.
            if current and block.kind == HEADING:
                emit(current, carried)
                current, carried = [], 0
            continue
        block_key = (tuple(block.heading_path), block.section_id)
        if block_key != key:
            if current:
                emit(current, carried)
            current, carried, key = [], 0, block_key
            ctx = context_line(block.heading_path, title) if context else ""
        split = (
            split_block(text, kind=block.kind, budget=room, counter=counter, context=ctx)
            if split_long
            else Split((text,), "whole", (False,))
        )
        for n, piece in enumerate(split.pieces):
            part = _Part(i, n, len(split.pieces), piece, block.kind, split.method, split.hard[n])
            # The splitter already chose where a block's pieces part: two pieces of one block in
            # one chunk would undo a cut made at a blank line and repeat the code fence.
            if current and (n > 0 or measure(current + [part]) > room):
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
    return chunks


# --- after chunking --------------------------------------------------------------------------

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
    chunks: Sequence[Chunk], counter: Counter | None = None, *, limit: int | None = None, model: str | None = None
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
    for chunk, n in zip(chunks, sizes):
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
