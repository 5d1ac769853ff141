"""Verdicts on comparisons, rendered from their figures: never typed into a lesson.

Every verdict shows the two values, the difference with its interval, the wins and losses (the
questions only one run answers, or scores higher on), the test and its p-value with the Holm
family it was corrected in, and ONE word chosen from those figures alone:

- "gain" / "loss": the test rejects "no difference" (Holm-adjusted p below 0.05);
- "equivalent": it does not, and two one-sided tests show |difference| < the declared margin;
- "cannot tell": neither; the questions cannot resolve a difference of this size.

So "no difference" is never read off an interval that contains zero, and a change of data cannot
leave a stale claim standing.
"""
from __future__ import annotations

import html
from collections.abc import Sequence

from IPython.display import HTML

from course_lib.evaluation.compare import Comparison, holm_adjust
from course_lib.evaluation.display import DASH, fmt, html_table, signed

GAIN, LOSS, EQUIVALENT, CANNOT_TELL = "gain", "loss", "equivalent", "cannot tell"


def word(c: Comparison) -> str:
    """The one-word verdict of a comparison, from its figures only."""
    if c.significant:
        return GAIN if c.delta > 0 else LOSS
    return EQUIVALENT if c.equivalent else CANNOT_TELL


def _row_kind(c: Comparison) -> str:
    return {GAIN: "cl-gain", LOSS: "cl-loss"}.get(word(c), "cl-none")


def p_text(p: float) -> str:
    """A p-value for reading: three significant figures' worth, never "p = 0"."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}" if p < 0.995 else "p = 1"


def wins_losses(c: Comparison) -> str:
    """"14 wins / 6 losses": questions where B scores above A, and below it."""
    return f"{c.wins} win{'s' * (c.wins != 1)} / {c.losses} loss{'es' * (c.losses != 1)}"


def _word_phrase(c: Comparison) -> str:
    """The verdict word with what it rests on, for a sentence."""
    margin = f"±{c.equivalence.margin:g}"
    tost_p = p_text(c.equivalence.p_value)
    return {GAIN: "a gain", LOSS: "a loss",
            EQUIVALENT: f"equivalent: shown within {margin} (two one-sided tests, {tost_p})",
            CANNOT_TELL: f"cannot tell: neither a difference nor equivalence within {margin} is shown",
            }[word(c)]


def _family(c: Comparison) -> str:
    if c.p_holm is None:
        return ""
    return f", Holm over {c.family}" if c.family and c.family > 1 else ""


class Verdict(str):
    """A verdict sentence: a plain string that a notebook displays as Markdown."""

    def _repr_markdown_(self) -> str:
        return str(self)


def verdict(comparison: Comparison, *, what: str | None = None) -> Verdict:
    """One Markdown sentence stating what a comparison shows, rendered from its figures.

    "**hybrid against dense, recall@5:** 0.817 → 0.887, +0.070 [−0.010, +0.150],
    18 wins / 8 losses, exact McNemar p = 0.08: cannot tell: …, on 194 questions."
    `what` defaults to "B against A".
    """
    c = comparison
    what = what or f"{c.name_b} against {c.name_a}"
    return Verdict(f"**{what}, {c.metric}:** {fmt(c.value_a)} → {fmt(c.value_b)}, {signed(c.delta)} "
                   f"[{signed(c.lo)}, {signed(c.hi)}], {wins_losses(c)}, {c.test} {p_text(c.p)}{_family(c)}: "
                   f"{_word_phrase(c)}, on {c.n} questions.")


def family_caption(comparisons: Sequence[Comparison]) -> str:
    """The sentence under a table that names its Holm family."""
    if not comparisons or comparisons[0].p_holm is None:
        return "p-values not corrected (one comparison)."
    c = comparisons[0]
    return (f"One Holm family: {c.family_name} ({c.family} comparison{'s' * (c.family != 1)}); "
            f"equivalence margin ±{c.equivalence.margin:g}.")


def verdict_table(comparisons: Sequence[Comparison], *, holm: bool = True, family: str | None = None,
                  what: Sequence[str] | None = None) -> HTML:
    """A lesson's headline table: one row per comparison, its figures and its one-word verdict,
    with the Holm family named under it. `what` names each row ("RRF against dense")."""
    comparisons = holm_adjust(comparisons, family=family) if holm else list(comparisons)
    labels = list(what) if what is not None else [f"{c.name_b} against {c.name_a}" for c in comparisons]
    if len(labels) != len(comparisons):
        raise ValueError(f"{len(labels)} labels for {len(comparisons)} comparisons")
    rows = [(_row_kind(c), [html.escape(label), html.escape(c.metric), f"{fmt(c.value_a)} → {fmt(c.value_b)}",
                            html.escape(f"{signed(c.delta)} [{signed(c.lo)}, {signed(c.hi)}]"),
                            html.escape(wins_losses(c)), html.escape(f"{c.test}, {p_text(c.p)}"),
                            f"<b>{html.escape(word(c))}</b>"])
            for c, label in zip(comparisons, labels, strict=True)]
    table = html_table(["comparison", "metric", "A → B", "delta [interval]", "wins / losses",
                        "test" + (" (Holm)" if holm else ""), "verdict"], rows)
    return HTML(table.data + f"<p><i>{html.escape(family_caption(comparisons))}</i></p>")


def technique_table(effects: Sequence[tuple[str, Comparison, Comparison]], *,
                    source_rank: dict[str, str | int] | None = None) -> HTML:
    """Lesson 09's table: each technique's effect on dev and on test, with its verdict on each.

    `effects` holds (technique, dev comparison, test comparison), each the pipeline WITH the
    technique (B) against the pipeline without it (A), on the same metric. The dev column is one
    Holm family and the test column another. Dev and test are reported side by side; the same
    sign with different significance is a difference in evidence, not a contradiction.
    """
    names = [name for name, _, _ in effects]
    dev = holm_adjust([d for _, d, _ in effects], family="the dev column")
    test = holm_adjust([t for _, _, t in effects], family="the test column")
    rows = []
    for name, d, t in zip(names, dev, test, strict=True):
        rank = DASH if source_rank is None else str(source_rank.get(name, "not ranked"))
        cells = [html.escape(name), html.escape(t.metric)]
        for c in (d, t):
            cells += [html.escape(f"{signed(c.delta)} [{signed(c.lo)}, {signed(c.hi)}]"),
                      html.escape(f"{wins_losses(c)}, {p_text(c.p)}"), f"<b>{html.escape(word(c))}</b>"]
        rows.append((_row_kind(t), cells + [html.escape(rank)]))
    table = html_table(["technique", "metric", "dev: delta", "dev: wins / losses, p", "dev",
                        "test: delta", "test: wins / losses, p", "test", "rank in the production write-up"],
                       rows)
    caption = f"{family_caption(dev)} {family_caption(test)}"
    return HTML(table.data + f"<p><i>{html.escape(caption)}</i></p>")


def forest_plot(effects: Sequence[tuple[str, Comparison, Comparison]], *, ax=None):
    """Every step's difference with its interval, dev and test side by side, zero marked.

    One row per technique; the dev estimate is drawn just above the test one, each with its
    interval, so a learner sees at a glance which steps the questions resolve.
    """
    import matplotlib.pyplot as plt  # a plot backend only when a plot is asked for

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.6 * len(effects) + 1))
    for row, (_, d, t) in enumerate(reversed(list(effects))):
        for offset, c, colour, label in ((0.15, d, "#2563eb", "dev"), (-0.15, t, "#dc2626", "test")):
            ax.errorbar(c.delta, row + offset, xerr=[[c.delta - c.lo], [c.hi - c.delta]], fmt="o",
                        color=colour, capsize=3, label=label if row == 0 else None)
    ax.axvline(0, color="#555", linewidth=1)
    ax.set_yticks(range(len(effects)), [name for name, _, _ in reversed(list(effects))])
    metric = effects[0][1].metric if effects else ""
    ax.set(xlabel=f"difference in {metric} (with the technique − without)", title="Each step, dev and test")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right")
    return ax
