"""Splitting ONE block that is too long for the embedder's window, at its natural joints.

The chunking lesson's exception to "never split inside a block": a block that cannot fit even
alone is cut where its structure allows, code at line breaks (preferring blank lines, usually
between functions), tables between rows with the caption repeated, prose between sentences, and
only as a last resort by tokens. Every cut is found in linear work: a piece is looked for in a
window that doubles while the piece fills it, so the rest of a huge block is never re-measured.
`course_lib.core.chunking` packs the pieces into chunks.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from course_lib import settings
from course_lib.core.tokens import Counter, budget_of, get_counter


def embedded_text(context: str, body: str) -> str:
    """The text a chunk embeds: the same rule as `Chunk.text`, so budgets are counted on it."""
    return f"{context}\n\n{body}" if context else body


# --- sentences -------------------------------------------------------------------------------

# A sentence ends at . ! or ? (plus closing quotes/brackets) followed by whitespace; a line break
# always ends one. "os.path" and "3.11.2" have no whitespace after the dot, so never match.
_CLOSERS = "\"'\u201d\u2019)\\]」』）】〉》"
_BREAK = re.compile(rf"[.!?]+[{_CLOSERS}]*\s+|\n\s*|(?P<full>[。！？｡।॥؟۔։።]+[{_CLOSERS}]*\s*)")
# The second kind of end: Chinese and Japanese (。！？), Devanagari (।), Arabic and Urdu (؟ ۔),
# Armenian (։) and Ethiopic (።) end a sentence with their own mark, and CJK puts no space after it.
_ABBREVIATIONS = frozenset({"etc", "vs", "cf", "fig", "figs", "no", "nos", "approx", "incl", "mr", "mrs",
                            "ms", "dr", "st", "al", "ca", "resp"})
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
        if "\n" not in match.group() and match.group("full") is None:
            if text[end].islower():
                continue
            before = text[start : match.start()].split()
            word = before[-1].lstrip("([{\"'\u201c\u2018") if before else ""
            initial = len(word) == 1 and word.isupper()
            if word.lower() in _ABBREVIATIONS or _LETTER_DOTS.fullmatch(word) or initial:
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
    units: list[str], render: Render, fits: Fits, *,
    early_break: Callable[[str, list[str]], bool] | None = None, sep: str = "\n",
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
    prefer_blank: float = settings.PREFER_BLANK,
) -> Split:
    """Split a block's text into pieces whose embedded text (with `context`) fits `budget` tokens.

    A block that fits comes back whole. Code is cut at line breaks, at a blank line once a piece
    is `prefer_blank` of the budget (blank lines usually fall between functions), every piece
    re-fenced with the block's ```lang fence; a table ("caption" line, then one row per line) is
    cut between rows with the caption repeated in every piece; anything else is cut between
    sentences. A line, row or sentence too long on its own is cut by tokens (`Split.hard`).
    """
    counter = counter or get_counter()
    budget = budget if budget is not None else budget_of(counter)

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
