"""The course's pipeline as one picture, with the stage a lesson changes highlighted.

Every lesson opens with `show_pipeline("chunk")` (or whichever stages it works on), so a learner
always sees where the lesson sits between the HTML pages and the answer, and the golden set that
judges every stage. Drawn with matplotlib: one helper, no image file per lesson.
"""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch


@dataclass(frozen=True)
class Stage:
    """One box of the diagram: its key (what a lesson names), its label and the lesson that builds it."""

    key: str
    label: str
    lessons: str


# In pipeline order; the label's second line names the lesson(s) that work on the stage.
STAGES: tuple[Stage, ...] = (
    Stage("corpus", "HTML\npages", "00"),
    Stage("parse", "parse to\nblocks", "03"),
    Stage("clean", "remove\nboilerplate", "03"),
    Stage("chunk", "chunk by\nstructure", "04"),
    Stage("limit", "fit the\ntoken limit", "05"),
    Stage("search", "BM25 +\ndense", "06"),
    Stage("fuse", "fuse\n(RRF)", "06"),
    Stage("rerank", "re-rank\nshortlist", "07"),
    Stage("serve", "serve\nfast", "08, 11"),
)
# Below the row: what judges every stage.
JUDGE = Stage("judge", "golden set + judge: recall@5, MRR, paired tests", "02")
STAGE_KEYS = tuple(s.key for s in STAGES) + (JUDGE.key,)

_ON, _OFF = "#fdd9a0", "#eef1f5"
_EDGE_ON, _EDGE_OFF = "#c46a00", "#9aa5b1"


def _check(highlight: tuple[str, ...]) -> None:
    unknown = [key for key in highlight if key not in STAGE_KEYS]
    if unknown:
        raise ValueError(f"unknown pipeline stage(s) {unknown}; the stages are {list(STAGE_KEYS)}")


def _box(ax, x: float, y: float, width: float, height: float, text: str, *, on: bool, size: float) -> None:
    ax.add_patch(FancyBboxPatch((x, y), width, height, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=_ON if on else _OFF, edgecolor=_EDGE_ON if on else _EDGE_OFF,
                                linewidth=2.2 if on else 1.0))
    ax.text(x + width / 2, y + height / 2, text, ha="center", va="center", fontsize=size,
            fontweight="bold" if on else "normal", color="#222" if on else "#555")


def pipeline_figure(*highlight: str, title: str | None = None) -> Figure:
    """The pipeline as a row of boxes, the stages named in `highlight` coloured; returns the figure.

    Stage keys: corpus, parse, clean, chunk, limit, search, fuse, rerank, serve, judge. An unknown
    key raises ValueError naming the known ones, so a typo cannot silently highlight nothing.
    """
    _check(highlight)
    width, height, gap = 1.0, 0.62, 0.28
    figure, ax = plt.subplots(figsize=(11, 2.0))
    for i, stage in enumerate(STAGES):
        x = i * (width + gap)
        _box(ax, x, 0.55, width, height, stage.label, on=stage.key in highlight, size=8.5)
        ax.text(x + width / 2, 0.55 + height + 0.1, f"lesson {stage.lessons}", ha="center", fontsize=7,
                color="#777")
        if i:
            ax.add_patch(FancyArrowPatch((x - gap, 0.55 + height / 2), (x, 0.55 + height / 2),
                                         arrowstyle="-|>", mutation_scale=10, color=_EDGE_OFF))
    total = len(STAGES) * (width + gap) - gap
    _box(ax, 0, 0.0, total, 0.36, f"{JUDGE.label}  (lesson {JUDGE.lessons}; the whole course: lesson 09)",
         on=JUDGE.key in highlight, size=8.5)
    ax.set_xlim(-0.05, total + 0.05)
    ax.set_ylim(-0.05, 1.4)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    figure.tight_layout()
    return figure


def show_pipeline(*highlight: str, title: str | None = None) -> None:
    """Draw the pipeline in a notebook with this lesson's stages highlighted (see `pipeline_figure`)."""
    pipeline_figure(*highlight, title=title)
    plt.show()
