"""See what boilerplate removal keeps and what it removes, side by side, on one page.

`kept_and_removed(whole, kept)` lines up two parses of the same page: `whole`, the blocks of the
whole body with nothing removed, and `kept`, the blocks the cleaning kept. It walks `whole` in
reading order and marks each block kept or removed (a kept block is the next one of `kept` with
the same text), merging neighbours with the same mark into runs. `show_kept_removed(whole, kept)`
renders those runs as a two-column HTML table: kept text on the left, removed text on the right,
one row per run, so the reader sees where on the page the furniture sat (sidebar first,
navigation, then content, footer last). The page's text is escaped, and the HTML uses inline
styles only, so it renders the same in JupyterLab and in GitHub's notebook viewer.

`lost_questions(before, after, chunks)` explains the questions a change loses: those `before`
finds in its top k and `after` does not. For each it says where `before` ranked its answer, what
`after` ranked first, and why, from the chunks themselves: no chunk of `after` holds the whole
answer (a cut falls through it), or the chunk that holds it ends past the model's window, or it is
whole and inside the window but ranked below k (the cut moved, and the text around the answer
with it).
"""
from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from IPython.display import HTML

from course_lib import settings
from course_lib.evaluation.golden import normalize
from course_lib.evaluation.judging import answer_places, is_relevant
from course_lib.evaluation.results import RunResult
from course_lib.records import Block, Chunk

KEPT_SHADE, REMOVED_SHADE = "#dcfce7", "#fee2e2"  # green and red backgrounds, with a column title each
_CELL = ("font-family:monospace;font-size:12px;line-height:1.4;white-space:pre-wrap;word-break:break-word;"
         "vertical-align:top;padding:4px 8px;border-bottom:1px solid #ddd;width:50%;text-align:left")


@dataclass(frozen=True)
class Run:
    """Neighbouring blocks of a page that the cleaning treated alike: all kept or all removed."""

    kept: bool
    texts: tuple[str, ...]


def kept_and_removed(whole: Sequence[Block], kept: Sequence[Block]) -> list[Run]:
    """The blocks of `whole` in reading order, grouped into runs marked kept or removed.

    A block counts as kept when its text is the next text of `kept` (cleaning deletes blocks and
    never reorders them, so `kept` is a subsequence of `whole`). Raises ValueError when some kept
    block is not found in order: the two parses are then not of the same page.
    """
    runs: list[Run] = []
    position = 0
    for block in whole:
        is_kept = position < len(kept) and block.text == kept[position].text
        position += is_kept
        if runs and runs[-1].kept == is_kept:
            runs[-1] = Run(is_kept, runs[-1].texts + (block.text,))
        else:
            runs.append(Run(is_kept, (block.text,)))
    if position != len(kept):
        raise ValueError(f"{len(kept) - position} kept blocks are not in the whole parse, in order")
    return runs


def _shown(texts: Sequence[str], *, max_chars: int) -> str:
    """The escaped text of a run, shortened to its first and last `max_chars // 2` characters (a run's
    end matters as much as its start: the footer closes the page) with a note of what was left out."""
    text = "\n".join(texts)
    if len(text) > max_chars:
        half = max_chars // 2
        text = f"{text[:half].rstrip()}\n… [{len(text) - 2 * half:,} characters] …\n{text[-half:].lstrip()}"
    return html.escape(text)


def kept_removed_html(runs: Sequence[Run], *, max_chars: int = settings.KEPT_REMOVED_MAX_CHARS,
                      titles: tuple[str, str] = ("kept", "removed")) -> str:
    """A two-column table of `runs`: kept text on the left, removed text on the right, one row per
    run in reading order, each run shortened to `max_chars`. Column titles carry character totals."""
    totals = [sum(len(t) for r in runs if r.kept is side for t in r.texts) for side in (True, False)]
    head = "".join(f'<th style="{_CELL};background:{shade}">{html.escape(title)} ({total:,} characters)</th>'
                   for title, total, shade in zip(titles, totals, (KEPT_SHADE, REMOVED_SHADE), strict=True))
    rows = []
    for run in runs:
        cell = f'<td style="{_CELL};background:{KEPT_SHADE if run.kept else REMOVED_SHADE}">' \
               f"{_shown(run.texts, max_chars=max_chars)}</td>"
        empty = f'<td style="{_CELL}"></td>'
        rows.append(f"<tr>{cell}{empty}</tr>" if run.kept else f"<tr>{empty}{cell}</tr>")
    return (f'<table style="border-collapse:collapse;width:100%"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def show_kept_removed(whole: Sequence[Block], kept: Sequence[Block], *,
                      max_chars: int = settings.KEPT_REMOVED_MAX_CHARS,
                      titles: tuple[str, str] = ("kept", "removed")) -> HTML:
    """Display what cleaning kept of one page beside what it removed (see `kept_removed_html`)."""
    return HTML(kept_removed_html(kept_and_removed(whole, kept), max_chars=max_chars, titles=titles))


@dataclass(frozen=True)
class Lost:
    """One question a change lost from the top k, and what the chunks say about why."""

    question: str
    before_rank: int
    before_score: float  # the score `before` gave the chunk that answered
    after_rank: int | None  # None: no answering chunk in the ranked depth
    after_score: float | None  # the score `after` gave its answering chunk, when ranked
    after_top: str  # the first line of what `after` ranked first
    top_score: float  # the score of that first chunk
    holders: int  # chunks of `after` that hold the whole answer
    answer_ends_at: int | None  # tokens of the holder's embedded text up to the end of the answer
    window: int  # tokens the model reads
    depth: int = 20  # how many chunks each ranking holds

    @property
    def why(self) -> str:
        """The reason, in words, rendered from the figures above."""
        if not self.holders:
            return "no cleaned chunk holds the whole answer: a fixed cut falls through it"
        if self.answer_ends_at is not None and self.answer_ends_at > self.window:
            return (f"the answer ends at token {self.answer_ends_at} of its chunk, past the "
                    f"{self.window} tokens the model reads")
        ends = "" if self.answer_ends_at is None else (
            f", ending at token {self.answer_ends_at} of {self.window}")
        now = (f"is not among the {self.depth} ranked" if self.after_rank is None
               else f"scores {self.after_score:.3f} (rank {self.after_rank})")
        return (f"whole, inside the window{ends}, yet its chunk {now}, against {self.before_score:.3f} "
                f"(rank {self.before_rank}) before: the new cut embeds it with other text")


def _tokens_to_answer(chunk: Chunk, quotes: Sequence[str], counter) -> int | None:
    """Tokens of the chunk's embedded text up to the end of the first of `quotes` it holds."""
    text = chunk.text
    target = next((normalize(q) for q in quotes if normalize(q) in normalize(text)), None)
    if target is None:
        return None
    low, high = 0, len(text)  # the shortest prefix that holds the quote
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if target in normalize(text[:middle]) else (middle + 1, high)
    return counter.count(text[:low])


def lost_questions(before: RunResult, after: RunResult, chunks: Sequence[Chunk], *, counter,
                   k: int = settings.EVAL_CUTOFFS[0], kind: str | None = None) -> list[Lost]:
    """The questions (of `kind`, or all) that `before` finds in its top k and `after` does not,
    each with the chunks' reason; `chunks` are every chunk `after` searched."""
    lost = []
    for b, a in zip(before.results, after.results, strict=True):
        q = b.question
        if (kind and q.kind != kind) or not b.hit_at(k) or a.hit_at(k):
            continue
        holders = [c for c in chunks if is_relevant(c, q)]
        # The holder `after` ranked highest, else any: its answer's position is the one that counts.
        holder = a.chunks[a.first_hit_rank - 1] if a.first_hit_rank else (holders[0] if holders else None)
        quotes = [quote for _, quote in answer_places(q)]
        ends = _tokens_to_answer(holder, quotes, counter) if holder else None
        top = f"{a.chunks[0].doc}: {' '.join(a.chunks[0].body.split())[:100]}" if a.chunks else ""
        lost.append(Lost(
            q.question, b.first_hit_rank, b.scores[b.first_hit_rank - 1], a.first_hit_rank,
            a.scores[a.first_hit_rank - 1] if a.first_hit_rank else None,
            top, a.scores[0] if a.scores else float("nan"), len(holders), ends, counter.limit, after.k))
    return lost


def lost_table(lost: Sequence[Lost], *, names: tuple[str, str] = ("before", "after")) -> HTML:
    """A table of lost questions: the question, both ranks, what `after` ranked first, and why."""
    head = ["question", f"{names[0]} rank", f"{names[1]} rank", f"{names[1]} ranked first", "why"]
    rows = [[item.question, str(item.before_rank), "—" if item.after_rank is None else str(item.after_rank),
             f"{item.after_top} (score {item.top_score:.3f})", item.why] for item in lost]
    cell = "padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #ddd"
    body = "".join("<tr>" + "".join(f'<td style="{cell}">{html.escape(v)}</td>' for v in row) + "</tr>"
                   for row in rows)
    heads = "".join(f'<th style="{cell}">{html.escape(h)}</th>' for h in head)
    return HTML(f'<table style="border-collapse:collapse;font-size:0.9em"><thead><tr>{heads}</tr></thead>'
                f"<tbody>{body}</tbody></table>")
