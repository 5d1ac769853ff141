"""Two ranked lists and the list reciprocal rank fusion makes of them, drawn for one question.

Lesson 06 fuses BM25's ranking and dense search's ranking with RRF. A table of ranks says what
happened; this picture shows it: each list's top chunks in a column on either side, the fused list
between them, a line from every chunk to where it lands, and the chunk that holds the answer marked.
A learner sees at once that a chunk both lists rank fairly high can beat a chunk that only one list
ranks first. Drawn with matplotlib, like the pipeline diagram.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from course_lib import settings

_ANSWER, _ANSWER_EDGE = "#c9efc9", "#2e8b3a"
_PLAIN, _PLAIN_EDGE = "#eef1f5", "#9aa5b1"
_WIDTH, _HEIGHT = 0.86, 0.74


@dataclass(frozen=True)
class Link:
    """One chunk of one input list and where the fusion puts it (None: below the picture's depth)."""

    source: str
    rank: int
    item: int
    fused_rank: int | None


def fusion_links(lists: Mapping[str, Sequence[int]], fused: Sequence[int], *,
                 depth: int = settings.ASK_SOURCES) -> list[Link]:
    """Where each list's top `depth` items land in the fused ranking, ranks counted from 1.

    A fused rank below `depth` is None: the picture draws that line to a "further down" mark, so
    the learner sees which of a list's top chunks the fusion let fall out of view.
    """
    fused_rank = {item: rank for rank, item in enumerate(fused[:depth], 1)}
    return [Link(name, rank, item, fused_rank.get(item))
            for name, ranking in lists.items() for rank, item in enumerate(ranking[:depth], 1)]


def _box(ax, x: float, y: float, text: str, *, answer: bool) -> None:
    ax.add_patch(FancyBboxPatch((x - _WIDTH / 2, y - _HEIGHT / 2), _WIDTH, _HEIGHT,
                                boxstyle="round,pad=0.02,rounding_size=0.06",
                                facecolor=_ANSWER if answer else _PLAIN,
                                edgecolor=_ANSWER_EDGE if answer else _PLAIN_EDGE,
                                linewidth=2.2 if answer else 1.0))
    ax.text(x, y, text, ha="center", va="center", fontsize=7.5,
            fontweight="bold" if answer else "normal", color="#222")


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _text(rank: int, item: int, labels: Mapping[int, str] | None, extra: str = "") -> str:
    """A box's text: rank and label, then the chunk id when a label hides it (two headings can read
    alike), then `extra` (a fused box's ranks in both lists)."""
    if labels and item in labels:
        return f"{rank}. {_short(labels[item], 34)}\n" + " · ".join(filter(None, [f"chunk {item}", extra]))
    return f"{rank}. chunk {item}" + (f"\n{extra}" if extra else "")


def fusion_figure(lists: Mapping[str, Sequence[int]], fused: Sequence[int], *,
                  relevant: Collection[int] = (), depth: int = settings.ASK_SOURCES,
                  labels: Mapping[int, str] | None = None,
                  title: str | None = None) -> Figure:
    """Two ranked lists (left, right) and their fused list (middle), top `depth` of each; returns the figure.

    `lists` maps each list's name to its ranked ids (exactly two); `fused` is the fused ranking of
    the same ids. Every fused box names the chunk's rank in both lists ("–" when a list did not
    return it), which is all RRF reads. Chunks in `relevant` are drawn green, their lines too.
    `labels` gives each id a short text (a heading), shown above its id; without one, "chunk <id>".
    """
    if len(lists) != 2:
        raise ValueError(f"draw exactly two lists, not {len(lists)}")
    (left, left_ids), (right, right_ids) = lists.items()
    column = {left: 0.0, "fused": 1.0, right: 2.0}
    figure, ax = plt.subplots(figsize=(11, 0.62 * depth + 1.3))
    for source, ranking in ((left, left_ids), (right, right_ids)):
        for rank, item in enumerate(ranking[:depth], 1):
            _box(ax, column[source], -rank, _text(rank, item, labels), answer=item in relevant)
    position = {source: {item: rank for rank, item in enumerate(ranking, 1)}
                for source, ranking in ((left, left_ids), (right, right_ids))}
    for rank, item in enumerate(fused[:depth], 1):
        ranks = " · ".join(f"{source} {position[source].get(item, '–')}" for source in (left, right))
        _box(ax, column["fused"], -rank, _text(rank, item, labels, ranks), answer=item in relevant)
    for link in fusion_links(lists, fused, depth=depth):
        x0 = column[link.source] + (_WIDTH / 2 if link.source == left else -_WIDTH / 2)
        x1 = column["fused"] + (-_WIDTH / 2 if link.source == left else _WIDTH / 2)
        y1 = -(link.fused_rank or depth + 1)
        answer = link.item in relevant
        ax.plot([x0, x1], [-link.rank, y1], color=_ANSWER_EDGE if answer else "#7b8794",
                lw=2.2 if answer else 0.9, ls="-" if link.fused_rank else ":")
    ax.text(column["fused"], -(depth + 1), f"below fused rank {depth}", ha="center", va="center",
            fontsize=7.5, color="#555", style="italic")
    for source, x in column.items():
        ax.text(x, -0.25, source if source != "fused" else "fused (RRF)", ha="center", va="bottom",
                fontsize=9.5, fontweight="bold")
    ax.set_xlim(-0.5, 2.5)
    ax.set_ylim(-(depth + 1.5), 0.2)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    figure.tight_layout()
    return figure


def show_fusion(lists: Mapping[str, Sequence[int]], fused: Sequence[int], *,
                relevant: Collection[int] = (), depth: int = settings.ASK_SOURCES,
                labels: Mapping[int, str] | None = None,
                title: str | None = None) -> None:
    """Draw `fusion_figure` in a notebook (same arguments), without echoing the figure object."""
    fusion_figure(lists, fused, relevant=relevant, depth=depth, labels=labels, title=title)
    plt.show()
