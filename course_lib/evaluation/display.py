"""Notebook output for evaluation results: tables, recall curves and verdicts rendered from figures.

Tables are plain HTML with INLINE styles only: GitHub's notebook viewer strips a <style> block,
so a class-based stylesheet would lose the colours there. Every piece of text from the corpus or
the golden set is escaped, because documentation about HTML is full of things that look like tags.

Verdicts ("a significant gain", "no significant difference") are never typed into a lesson: they
are rendered here from a Comparison's figures, so a change of data cannot leave a stale claim.
"""
from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence

from IPython.display import HTML

from course_lib.evaluation.compare import Comparison, holm_adjust
from course_lib.evaluation.metrics import QuestionResult, RunResult, summary

DASH = "—"
MINUS = "−"
_TABLE = "border-collapse:collapse;font-size:0.9em"
_CELL = "padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #ddd"
_ROW_COLOURS = {"cl-hit": "#e3f4e1", "cl-miss": "#fbe3e1", "cl-na": "#eeeeee",
                "cl-gain": "#e3f4e1", "cl-loss": "#fbe3e1", "cl-none": ""}


def _table(headers: Sequence[str], rows: Iterable[tuple[str, Sequence[str]]]) -> HTML:
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


def metrics_table(runs: Sequence[RunResult], *, budget: int | None = None, counter=None) -> HTML:
    """One row per run: recall@5, recall@20 (Wilson intervals) and MRR (BCa), with the judge.

    With a `budget` (tokens) three more columns compare pipelines at the same amount of context:
    recall within the budget (Wilson), and the token precision and IoU of that context.
    """
    runs = list(runs)
    keys = ["recall@5", "recall@20", "mrr"]
    headers = ["run", "recall@5", "recall@20", "MRR"]
    if budget is not None:
        keys.append("recall@budget")
        headers += [f"recall in {budget} tokens", "token precision", "token IoU"]
    rows = []
    for run in runs:
        s = summary(run, budget=budget, counter=counter)
        cells = [html.escape(run.name)] + [_with_ci(s[key], *s[f"{key}_ci"]) for key in keys]
        if budget is not None:
            cells += [_fmt(s["precision@budget"]), _fmt(s["iou@budget"])]
        rows.append(("", cells + [str(s["n_answerable"]), html.escape(run.judge)]))
    return _table([*headers, "answerable", "judge"], rows)


def _signed(value: float, digits: int = 3) -> str:
    """+0.070 / −0.010: a signed figure with a true minus sign, for prose."""
    return DASH if math.isnan(value) else f"{value:+.{digits}f}".replace("-", MINUS)


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}" if p < 0.995 else "p = 1"


def compare_table(comparisons: Sequence[Comparison], *, holm: bool = False) -> HTML:
    """One row per comparison: both values, the delta B - A with its interval, and the p-value.

    With `holm=True` the p-values are Holm-adjusted over the table (per metric) and a column
    shows the adjusted value beside the raw one.
    """
    comparisons = holm_adjust(comparisons) if holm else list(comparisons)
    rows = []
    for c in comparisons:
        cells = [html.escape(c.name_a), html.escape(c.name_b), html.escape(c.metric),
                 _fmt(c.value_a), _fmt(c.value_b), f"{c.delta:+.3f}", f"[{c.lo:+.3f}, {c.hi:+.3f}]",
                 f"{c.p_value:.4f}"]
        if holm:
            cells.append(f"{c.p:.4f}")
        rows.append((_kind(c), cells + [str(c.n)]))
    headers = ["A", "B", "metric", "A value", "B value", "delta (B - A)", "CI", "p-value"]
    return _table(headers + (["p (Holm)"] if holm else []) + ["n"], rows)


def _kind(c: Comparison) -> str:
    """The row colour of a comparison: gain, loss or none, from its reported p and its sign."""
    if not c.significant:
        return "cl-none"
    return "cl-gain" if c.delta > 0 else "cl-loss"


def _comparisons(n: int) -> str:
    return "1 comparison" if n == 1 else f"{n} comparisons"


def conclusion(c: Comparison) -> str:
    """The verdict words for a comparison, chosen from its figures only."""
    if c.lo == c.hi == c.delta == 0:
        return "no difference at all: the two runs score every question the same"
    if c.significant:
        return "a significant gain" if c.delta > 0 else "a significant loss"
    if c.p_holm is not None and (c.lo > 0 or c.hi < 0):
        return (f"no significant difference once corrected for {_comparisons(c.family)} "
                "(the uncorrected interval excludes 0)")
    return "no significant difference: within noise"


class Verdict(str):
    """A verdict sentence: a plain string that a notebook displays as Markdown."""

    def _repr_markdown_(self) -> str:
        return str(self)


def verdict(comparison: Comparison, *, what: str | None = None) -> Verdict:
    """One Markdown sentence stating what a comparison shows, rendered from its figures.

    "**RRF against dense, recall@5:** 0.887 vs 0.817, +0.070 [−0.010, +0.150], p = 0.17
    (Holm, 6 comparisons): no significant difference: within noise, on these 71 questions."
    The first value is B's, the second A's; `what` defaults to "B against A".
    """
    c = comparison
    what = what or f"{c.name_b} against {c.name_a}"
    adjusted = f" (Holm, {_comparisons(c.family)})" if c.p_holm is not None else ""
    level = f"{round(100 * c.confidence)}% interval"
    return Verdict(f"**{what}, {c.metric}:** {_fmt(c.value_b)} vs {_fmt(c.value_a)}, "
                   f"{_signed(c.delta)} [{_signed(c.lo)}, {_signed(c.hi)}] ({level}), "
                   f"{_p_text(c.p)}{adjusted}: {conclusion(c)}, on these {c.n} questions.")


def verdict_table(comparisons: Sequence[Comparison], *, holm: bool = True,
                  what: Sequence[str] | None = None) -> HTML:
    """A lesson's headline table: one row per comparison and its rendered verdict sentence.

    Holm's correction runs over the table, per metric (turn it off only for a single
    comparison). `what` names each row ("RRF against dense"), in the comparisons' order.
    """
    comparisons = holm_adjust(comparisons) if holm else list(comparisons)
    labels = list(what) if what is not None else [None] * len(comparisons)
    if len(labels) != len(comparisons):
        raise ValueError(f"{len(labels)} labels for {len(comparisons)} comparisons")
    rows = [(_kind(c), [html.escape(label or f"{c.name_b} against {c.name_a}"), html.escape(c.metric),
                        f"{_fmt(c.value_a)} → {_fmt(c.value_b)}", html.escape(_signed(c.delta)),
                        html.escape(f"[{_signed(c.lo)}, {_signed(c.hi)}]"), html.escape(_p_text(c.p)),
                        _markdown_bold(verdict(c, what=label))])
            for c, label in zip(comparisons, labels, strict=True)]
    p_head = "p (Holm)" if holm else "p"
    return _table(["comparison", "metric", "A → B", "delta", "interval", p_head, "verdict"], rows)


def _markdown_bold(text: str) -> str:
    """Escape a verdict for HTML and turn its **bold** lead into <b>."""
    escaped = html.escape(text)
    if escaped.startswith("**") and "**" in escaped[2:]:
        lead, rest = escaped[2:].split("**", 1)
        return f"<b>{lead}</b>{rest}"
    return escaped


def _direction(c: Comparison) -> str:
    return "none" if not c.significant else "gain" if c.delta > 0 else "loss"


_EFFECT_WORDS = {"gain": "helps", "loss": "hurts", "none": "no significant effect"}


def technique_table(effects: Sequence[tuple[str, Comparison, Comparison]], *,
                    source_rank: Mapping[str, str | int] | None = None, holm: bool = True) -> HTML:
    """Lesson 09's verdict table: each technique's effect on dev and on test, in plain words.

    `effects` holds (technique, dev comparison, test comparison), each comparison being the
    pipeline WITH the technique (B) against the pipeline without it (A), on the same metric.
    Holm runs over the dev column and over the test column separately. `source_rank` gives the
    technique's place in the production write-up's own ranking ("1", "not ranked"). Dev and
    test agree when they reach the same verdict (gain, loss or no significant effect).
    """
    names = [name for name, _, _ in effects]
    dev = [d for _, d, _ in effects]
    test = [t for _, _, t in effects]
    if holm:
        dev, test = holm_adjust(dev), holm_adjust(test)
    rows = []
    for name, d, t in zip(names, dev, test, strict=True):
        agree = _direction(d) == _direction(t)
        words = (f"{_EFFECT_WORDS[_direction(t)]} on test, as on dev" if agree else
                 f"{_EFFECT_WORDS[_direction(d)]} on dev, but {_EFFECT_WORDS[_direction(t)]} on test")
        rank = DASH if source_rank is None else str(source_rank.get(name, "not ranked"))
        cells = [html.escape(name), html.escape(t.metric), html.escape(_effect(d)), html.escape(_effect(t)),
                 "agree" if agree else "disagree", html.escape(rank),
                 html.escape(f"{name}: {words} ({_p_text(t.p)} on test)")]
        rows.append((f"cl-{_direction(t)}", cells))
    p_note = " (Holm)" if holm else ""
    return _table(["technique", "metric", f"effect on dev{p_note}", f"effect on test{p_note}",
                   "dev vs test", "rank in the production write-up", "in plain words"], rows)


def _effect(c: Comparison) -> str:
    return f"{_signed(c.delta)} [{_signed(c.lo)}, {_signed(c.hi)}], {_p_text(c.p)}"


def sensitivity_table(rows: Sequence[Mapping]) -> HTML:
    """Lesson 02's one-time table: each pipeline's metrics under the judge and under section
    credit, and how much the section rule adds (from `evaluate.sensitivity`)."""
    headers = ["pipeline", "n"]
    for metric in ("recall@5", "recall@20", "mrr"):
        headers += [f"{metric} (evidence)", f"{metric} (section credit)", "shift"]
    out = []
    for row in rows:
        cells = [html.escape(str(row["pipeline"])), str(row["n"])]
        for metric in ("recall@5", "recall@20", "mrr"):
            cells += [_fmt(row["evidence"][metric]), _fmt(row["section"][metric]),
                      html.escape(_signed(row["shift"][metric]))]
        out.append(("", cells))
    return _table(headers, out)


def frame_table(frame, *, digits: int = 3) -> HTML:
    """A pandas DataFrame or Series as an inline-styled table (index first, floats rounded).

    pandas' own HTML carries a `<style>` block, which GitHub's notebook viewer shows as text.
    """
    frame = frame.to_frame() if hasattr(frame, "to_frame") and not hasattr(frame, "columns") else frame
    index_name = frame.index.name or ""
    headers = [str(index_name)] + [str(column) for column in frame.columns]

    def cell(value) -> str:
        return _fmt(value, digits) if isinstance(value, float) else html.escape(str(value))

    rows = [("", [html.escape(str(label))] + [cell(value) for value in values])
            for label, values in zip(frame.index, frame.itertuples(index=False), strict=True)]
    return _table(headers, rows)


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
