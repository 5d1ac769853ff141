"""See what boilerplate removal keeps and what it removes, side by side, on one page.

`kept_and_removed(whole, kept)` lines up two parses of the same page: `whole`, the blocks of the
whole body with nothing removed, and `kept`, the blocks the cleaning kept. It walks `whole` in
reading order and marks each block kept or removed (a kept block is the next one of `kept` with
the same text), merging neighbours with the same mark into runs. `show_kept_removed(whole, kept)`
renders those runs as a two-column HTML table: kept text on the left, removed text on the right,
one row per run, so the reader sees where on the page the furniture sat (sidebar first,
navigation, then content, footer last). The page's text is escaped, and the HTML uses inline
styles only, so it renders the same in JupyterLab and in GitHub's notebook viewer.
"""
from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from IPython.display import HTML

from course_lib.records import Block

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
    """The escaped text of a run, shortened to `max_chars` with a note of what was left out."""
    text = "\n".join(texts)
    if len(text) > max_chars:
        text = f"{text[:max_chars].rstrip()} … [{len(text) - max_chars:,} more characters]"
    return html.escape(text)


def kept_removed_html(runs: Sequence[Run], *, max_chars: int = 400,
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


def show_kept_removed(whole: Sequence[Block], kept: Sequence[Block], *, max_chars: int = 400,
                      titles: tuple[str, str] = ("kept", "removed")) -> HTML:
    """Display what cleaning kept of one page beside what it removed (see `kept_removed_html`)."""
    return HTML(kept_removed_html(kept_and_removed(whole, kept), max_chars=max_chars, titles=titles))
