"""Notebook output for evaluation results: metric tables, per-question tables and recall curves.

Tables are plain HTML with INLINE styles only: GitHub's notebook viewer strips a <style> block,
so a class-based stylesheet would lose the colours there. Every piece of text from the corpus or
the golden set is escaped, because documentation about HTML is full of things that look like tags.
Verdicts on comparisons are rendered in `verdicts`, from the same table helpers.
"""
from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence

from IPython.display import HTML

from course_lib import settings
from course_lib.evaluation.metrics import HEADLINE_METRICS, summary
from course_lib.evaluation.results import QuestionResult, RunResult

DASH = "—"
MINUS = "−"
_TABLE = "border-collapse:collapse;font-size:0.9em"
_CELL = "padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #ddd"
_ROW_COLOURS = {"cl-hit": "#e3f4e1", "cl-miss": "#fbe3e1", "cl-na": "#eeeeee",
                "cl-gain": "#e3f4e1", "cl-loss": "#fbe3e1", "cl-none": ""}


def html_table(headers: Sequence[str], rows: Iterable[tuple[str, Sequence[str]]]) -> HTML:
    """An HTML table with inline styles; each row is (kind, cells). Cells must already be escaped.

    The kind (e.g. "cl-hit") is kept as a class for tests and colours the row inline.
    """
    head = "".join(f'<th style="{_CELL}">{html.escape(h)}</th>' for h in headers)
    body = []
    for cls, cells in rows:
        colour = _ROW_COLOURS.get(cls, "")
        style = f' style="background:{colour}"' if colour else ""
        body.append(f'<tr class="{cls}"{style}>' + "".join(f'<td style="{_CELL}">{c}</td>' for c in cells)
                    + "</tr>")
    return HTML(f'<table style="{_TABLE}"><thead><tr>{head}</tr></thead>'
                f'<tbody>{"".join(body)}</tbody></table>')


def fmt(value: float | None, digits: int = settings.DISPLAY_DIGITS) -> str:
    """A number rounded for reading, or a dash when it is undefined."""
    return DASH if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _with_ci(value: float | None, lo: float | None, hi: float | None) -> str:
    return f"{fmt(value)} [{fmt(lo)}, {fmt(hi)}]"


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
    return html_table(headers, map(_question_row, results))


def metrics_table(runs: Sequence[RunResult], *, budget: int | None = None, counter=None) -> HTML:
    """One row per run: recall@5, recall@20 (Wilson intervals) and MRR (BCa), with the judge.

    With a `budget` (tokens) three more columns compare pipelines at the same amount of context:
    recall within the budget (Wilson), and the token precision and IoU of that context.
    """
    runs = list(runs)
    keys = list(HEADLINE_METRICS)
    headers = ["run", *(key if key != "mrr" else "MRR" for key in keys)]
    if budget is not None:
        keys.append("recall@budget")
        headers += [f"recall in {budget} tokens", "token precision", "token IoU"]
    rows = []
    for run in runs:
        s = summary(run, budget=budget, counter=counter)
        cells = [html.escape(run.name)] + [_with_ci(s[key], *s[f"{key}_ci"]) for key in keys]
        if budget is not None:
            cells += [fmt(s["precision@budget"]), fmt(s["iou@budget"])]
        rows.append(("", cells + [str(s["n_answerable"]), html.escape(run.judge)]))
    return html_table([*headers, "answerable", "judge"], rows)


def signed(value: float, digits: int = settings.DISPLAY_DIGITS) -> str:
    """+0.070 / −0.010: a signed figure with a true minus sign, for prose."""
    return DASH if math.isnan(value) else f"{value:+.{digits}f}".replace("-", MINUS)


def sensitivity_table(rows: Sequence[Mapping]) -> HTML:
    """Lesson 02's one-time table: each pipeline's metrics under the judge (the whole answer
    unit), and how much the quote alone and section credit would add (from `sensitivity`)."""
    headers = ["pipeline", "n"]
    for metric in HEADLINE_METRICS:
        headers += [f"{metric} (answer unit)", "quote alone adds", "section credit adds"]
    out = []
    for row in rows:
        cells = [html.escape(str(row["pipeline"])), str(row["n"])]
        for metric in HEADLINE_METRICS:
            cells += [fmt(row["evidence"][metric]), html.escape(signed(row["quote_shift"][metric])),
                      html.escape(signed(row["shift"][metric]))]
        out.append(("", cells))
    return html_table(headers, out)


def frame_table(frame, *, digits: int = settings.DISPLAY_DIGITS) -> HTML:
    """A pandas DataFrame or Series as an inline-styled table (index first, floats rounded).

    pandas' own HTML carries a `<style>` block, which GitHub's notebook viewer shows as text.
    """
    frame = frame.to_frame() if hasattr(frame, "to_frame") and not hasattr(frame, "columns") else frame
    index_name = frame.index.name or ""
    headers = [str(index_name)] + [str(column) for column in frame.columns]

    def cell(value) -> str:
        return fmt(value, digits) if isinstance(value, float) else html.escape(str(value))

    rows = [("", [html.escape(str(label))] + [cell(value) for value in values])
            for label, values in zip(frame.index, frame.itertuples(index=False), strict=True)]
    return html_table(headers, rows)


def plot_recall_curve(*runs: RunResult, ax=None, max_k: int = settings.EVAL_DEPTH):
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



def recall_bars(runs: Mapping[str, RunResult], *, k: int = settings.EVAL_CUTOFFS[0], ax=None):
    """Each run's recall@k as a bar with its 95% Wilson interval, in the order given.

    Lesson 10's verdict tables compare each chunker with the course's, question by question; this
    picture shows the levels those comparisons start from, and how wide a single run's interval is
    on a few hundred questions. Overlapping bars do not mean "no difference": only the paired
    tables decide that, because they count the questions on which the two runs disagree.
    """
    import matplotlib.pyplot as plt  # imported here so the tables work without a plot backend

    from course_lib.evaluation.stats import wilson_interval

    if ax is None:
        _, ax = plt.subplots(figsize=(1.3 * len(runs) + 2, 3.5))
    names = list(runs)
    hits = [runs[name].hits_at(k) for name in names]
    values = [float(h.mean()) if len(h) else float("nan") for h in hits]
    bounds = [wilson_interval(int(h.sum()), len(h)) for h in hits]
    errors = [[max(0.0, v - lo) for v, (lo, _) in zip(values, bounds, strict=True)],
              [max(0.0, hi - v) for v, (_, hi) in zip(values, bounds, strict=True)]]
    ax.bar(range(len(names)), values, yerr=errors, capsize=4, color="#60a5fa", edgecolor="#1e3a8a")
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    questions = {len(h) for h in hits}
    ax.set(ylim=(0, 1.02), ylabel=f"recall@{k}",
           title=f"recall@{k} with its 95% interval ({', '.join(map(str, sorted(questions)))} questions)")
    ax.grid(axis="y", alpha=0.3)
    return ax
