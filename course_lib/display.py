"""Notebook output for evaluation results: per-question tables, metric tables, recall curves.

Tables are plain HTML with a small inline stylesheet (so they render in JupyterLab, in nbviewer
and in a saved notebook alike); every piece of text from the corpus or the golden set is escaped,
because documentation about HTML is full of things that look like tags.
"""
from __future__ import annotations

import html
import math
from typing import Iterable, Sequence

from IPython.display import HTML

from .evaluate import Comparison, QuestionResult, RunResult, summary

DASH = "—"
_STYLE = """<style>
.cl-table {border-collapse: collapse; font-size: 0.9em}
.cl-table th, .cl-table td {padding: 2px 8px; text-align: left; vertical-align: top}
.cl-table tr.cl-hit td {background: #e3f4e1}
.cl-table tr.cl-miss td {background: #fbe3e1}
.cl-table tr.cl-na td {background: #eeeeee}
</style>"""


def _table(headers: Sequence[str], rows: Iterable[tuple[str, Sequence[str]]]) -> HTML:
    """An HTML table; each row is (css class, cells). Cells must already be escaped."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(f'<tr class="{cls}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
                   for cls, cells in rows)
    return HTML(f'{_STYLE}<table class="cl-table"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")


def _fmt(value: float | None, digits: int = 3) -> str:
    """A number rounded for reading, or a dash when it is undefined."""
    return DASH if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _with_ci(value: float | None, lo: float | None, hi: float | None) -> str:
    return f"{_fmt(value)} [{_fmt(lo)}, {_fmt(hi)}]"


def _question_row(result: QuestionResult) -> tuple[str, list[str]]:
    """One per-question row: green for a hit in the top 5, red for a miss, grey if unanswerable."""
    q, top = result.question, result.top_chunk
    cls = "cl-na" if not q.answerable else "cl-hit" if result.hit_at(5) else "cl-miss"
    rank = DASH if result.first_hit_rank is None else str(result.first_hit_rank)
    path = " > ".join(top.heading_path) if top is not None and top.heading_path else DASH
    cells = [q.id, q.question, q.kind, rank, top.doc if top is not None else DASH, path]
    return cls, [html.escape(cell) for cell in cells]


def per_question_table(run: RunResult, *, limit: int | None = None) -> HTML:
    """One row per question: its kind, first-hit rank and where the top hit came from.

    Rows are green when a relevant chunk is in the top 5, red when not, grey for unanswerable
    questions; reading the red rows is how a learner finds out what a pipeline gets wrong.
    """
    results = run.results if limit is None else run.results[:limit]
    headers = ("id", "question", "kind", "first hit", "top page", "top heading path")
    return _table(headers, map(_question_row, results))


def metrics_table(runs: Sequence[RunResult]) -> HTML:
    """One row per run: recall@5, recall@20 and MRR, each with its 95% bootstrap interval."""
    rows = []
    for run in runs:
        s = summary(run)
        cells = [html.escape(run.name)] + [_with_ci(s[key], *s[f"{key}_ci"])
                                           for key in ("recall@5", "recall@20", "mrr")]
        rows.append(("", cells + [str(s["n_answerable"])]))
    return _table(("run", "recall@5", "recall@20", "MRR", "answerable"), rows)


def compare_table(comparisons: Sequence[Comparison]) -> HTML:
    """One row per comparison: both values, the delta B - A with its interval, and the p-value."""
    rows = [("", [html.escape(c.name_a), html.escape(c.name_b), html.escape(c.metric),
                  _fmt(c.value_a), _fmt(c.value_b), f"{c.delta:+.3f}",
                  f"[{c.lo:+.3f}, {c.hi:+.3f}]", f"{c.p_value:.4f}", str(c.n)])
            for c in comparisons]
    return _table(("A", "B", "metric", "A value", "B value", "delta (B - A)", "CI",
                   "p-value", "n"), rows)


def plot_recall_curve(*runs: RunResult, ax=None, max_k: int = 20):
    """Plot recall@k for k = 1..max_k, one line per run, and return the Axes.

    The curve shows what a single number hides: a re-ranker lifts the left end, a better
    chunker or a hybrid retriever lifts the whole curve.
    """
    import matplotlib.pyplot as plt  # imported here so the tables work without a plot backend

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for run in runs:
        depth = min(max_k, run.k)
        ax.plot(range(1, depth + 1), run.recall_curve(max_k=depth), marker=".", label=run.name)
    ax.set(xlabel="k", ylabel="recall@k", ylim=(0, 1.02), xlim=(1, max_k),
           title="Recall at k (answerable questions)")
    ax.grid(alpha=0.3)
    if runs:
        ax.legend()
    return ax
