"""Verdicts on comparisons, rendered from their figures: never typed into a lesson.

Every verdict shows the two values, the difference with the interval its word was decided on,
the wins and losses (the questions only one run answers, or scores higher on), the test and its
p-value (named "Holm p" when corrected over a family, "p ≤ …" at a resampling floor), and ONE word
chosen from those figures alone:

- "gain" / "loss": the test rejects "no difference" (Holm-adjusted p below 0.05); the interval
  printed is the test's own at the comparison's Holm level, and it excludes 0;
- "equivalent": it does not, and two one-sided tests show |difference| < the declared margin,
  corrected over the same Holm family; the interval printed is theirs at their Holm level (90%
  for a comparison judged alone), and it lies inside ±margin;
- "cannot tell": neither; the interval printed contains 0 and reaches past ±margin.

So "no difference" is never read off an interval that contains zero, a reader who applies those
rules to the printed interval reads the printed word, and a change of data cannot leave a stale
claim standing.
"""
from __future__ import annotations

import html
import math
from collections.abc import Sequence

from IPython.display import HTML

from course_lib.evaluation.compare import EQUIVALENCE_BASIS, Comparison, holm_adjust
from course_lib.evaluation.display import DASH, fmt, html_table, signed

GAIN, LOSS, EQUIVALENT, CANNOT_TELL = "gain", "loss", "equivalent", "cannot tell"


def word(c: Comparison) -> str:
    """The one-word verdict of a comparison, from its figures only."""
    if c.significant:
        return GAIN if c.delta > 0 else LOSS
    return EQUIVALENT if c.equivalent else CANNOT_TELL


def _row_kind(c: Comparison) -> str:
    return {GAIN: "cl-gain", LOSS: "cl-loss"}.get(word(c), "cl-none")


def p_text(p: float, *, at_floor: bool = False, holm: bool = False) -> str:
    """A p-value for reading: "p = 0.02", "p < 0.001", never "p = 0".

    `at_floor` marks a permutation p at the smallest value its resampling can give (the true p
    may be smaller): it prints as "p ≤ 0.0002", rounded up so the bound stays true. `holm` marks
    a Holm-adjusted p, printed "Holm p = …", so "p = 1" never hides that it was corrected.
    """
    name = "Holm p" if holm else "p"
    if at_floor:
        return f"{name} ≤ {_round_up(p):.2g}"
    return f"{name} < 0.001" if p < 0.001 else f"{name} = {p:.2g}" if p < 0.995 else f"{name} = 1"


def _round_up(p: float) -> float:
    """p rounded UP to two significant figures, so "≤" stays true after rounding."""
    if p <= 0 or math.isnan(p):
        return p
    scale = 10.0 ** (math.floor(math.log10(p)) - 1)
    return math.ceil(p / scale - 1e-9) * scale


def comparison_p(c: Comparison) -> str:
    """The p-value a comparison reports: Holm-adjusted over its family when it has one."""
    holm = c.p_holm is not None and (c.family or 1) > 1
    text = p_text(c.p, at_floor=c.p_at_floor, holm=holm)
    return f"{text} over {c.family}" if holm else text


def equivalence_p(c: Comparison) -> str:
    """The two one-sided tests' p: Holm-adjusted over the comparison's family when it has one."""
    holm = c.equivalence_p_holm is not None and (c.family or 1) > 1
    p = c.equivalence_p_holm if holm else c.equivalence.p_value
    return f"{p_text(p, holm=True)} over {c.family}" if holm else p_text(p)


def level_text(level: float) -> str:
    """0.9 -> "90%", 0.98333 -> "98.3%": an interval's level for reading."""
    return f"{100 * level:.3g}%"


def interval_text(c: Comparison, *, suffix: str = "") -> str:
    """"+0.070 [+0.010, +0.150] (98.3%)": the difference and the interval its word was decided on."""
    d = c.decision
    return f"{signed(c.delta)} [{signed(d.lo)}, {signed(d.hi)}] ({level_text(d.level)}{suffix})"


def wins_losses(c: Comparison) -> str:
    """"14 wins / 6 losses": questions where B scores above A, and below it."""
    return f"{c.wins} win{'s' * (c.wins != 1)} / {c.losses} loss{'es' * (c.losses != 1)}"


def _small_print(c: Comparison) -> str:
    """What a verdict rests on, for the line under it: level, test and p, margin, questions."""
    margin = f"margin ±{c.equivalence.margin:g}"
    if word(c) == EQUIVALENT:  # its interval is the two one-sided tests', at their Holm level: no floor
        rests_on = f"two one-sided tests within {margin}, {equivalence_p(c)}"
    else:
        rests_on = f"{c.test} {comparison_p(c)}; equivalence {margin}"
    return (f"{level_text(c.decision.level)} interval · {rests_on} · {c.wins} questions up, {c.losses} down, "
            f"of {c.n}")


class Verdict(str):
    """A verdict sentence: a plain string that a notebook displays as Markdown."""

    def _repr_markdown_(self) -> str:
        return str(self)


def verdict(comparison: Comparison, *, what: str | None = None) -> Verdict:
    """One short Markdown sentence stating what a comparison shows, rendered from its figures.

    "**hybrid against dense, recall@5:** 0.817 → 0.887, +0.070 [−0.010, +0.150], 18 vs 8
    questions: cannot tell", then in small print what it rests on: the interval's level, the test
    and its (Holm) p, the margin, the number of questions. The interval is the one the word was
    decided on (`Comparison.decision`). `what` defaults to "B against A".
    """
    c = comparison
    what = what or f"{c.name_b} against {c.name_a}"
    d = c.decision
    return Verdict(f"**{what}, {c.metric}:** {fmt(c.value_a)} → {fmt(c.value_b)}, "
                   f"{signed(c.delta)} [{signed(d.lo)}, {signed(d.hi)}], {c.wins} vs {c.losses} questions: "
                   f"{word(c)}<br><small>{html.escape(_small_print(c))}</small>")


def margin_text(comparisons: Sequence[Comparison]) -> str:
    """"±0.05", or "±0.05 (recall@5), ±0.03 (mrr)" when the metrics' declared margins differ."""
    margins = {c.metric: c.equivalence.margin for c in comparisons}
    if len(set(margins.values())) <= 1:
        return f"±{next(iter(margins.values())):g}" if margins else ""
    return ", ".join(f"±{margin:g} ({metric})" for metric, margin in margins.items())


def family_caption(comparisons: Sequence[Comparison]) -> str:
    """The sentence under a table that names its Holm family, primary or secondary."""
    if not comparisons or comparisons[0].p_holm is None:
        return "p-values not corrected (one comparison)."
    c = comparisons[0]
    kind = f"{c.family_kind} " if c.family_kind else ""
    return (f"One {kind}Holm family: {c.family_name} ({c.family} comparison{'s' * (c.family != 1)}); "
            f"equivalence margin {margin_text(comparisons)}.")


def _span(levels: Sequence[float]) -> str:
    """"95%", "95%–98.3%" or "none": the levels of some rows' intervals, lowest to highest."""
    texts = list(dict.fromkeys(level_text(level) for level in sorted(levels)))
    return texts[0] if len(texts) == 1 else f"{texts[0]}–{texts[-1]}" if texts else "none"


def interval_caption(comparisons: Sequence[Comparison]) -> str:
    """The sentence that says which interval each row prints, and at which level.

    "Interval: for equivalence, the two one-sided tests' at their Holm level (90% here; it lies
    inside ±0.05); otherwise the test's own at the row's Holm level (95%–98.3% here), clear of 0
    exactly for a gain or a loss." Every level it names is one a row prints.
    """
    if not comparisons:
        return ""
    margin = margin_text(comparisons)
    tested = [c.decision.level for c in comparisons if c.decision.basis != EQUIVALENCE_BASIS]
    equivalence = [1 - 2 * c.equivalence_alpha for c in comparisons]
    text = (f"Interval: for equivalence, the two one-sided tests' at their Holm level ({_span(equivalence)} "
            f"here; it lies inside {margin}); otherwise the test's own at the row's Holm level "
            f"({_span(tested)} here), clear of 0 exactly for a gain or a loss.")
    if any(c.decision.widened for c in comparisons):
        text += (f" A \"cannot tell\" interval that would fit inside {margin} is widened to take in the "
                 "equivalence interval too, which reaches past it; the two together cover at least as often "
                 "as either, so the row prints the higher of their levels.")
    return text


def _caption(*families: Sequence[Comparison]) -> str:
    """The italic lines under a table: each family, then which intervals it prints."""
    lines = [family_caption(f) for f in families] + [interval_caption([c for f in families for c in f])]
    return "".join(f"<p><i>{html.escape(line)}</i></p>" for line in lines if line)


def verdict_table(comparisons: Sequence[Comparison], *, holm: bool = True, family: str | None = None,
                  family_kind: str | None = None, what: Sequence[str] | None = None) -> HTML:
    """A lesson's headline table: one row per comparison, its figures and its one-word verdict,
    with the Holm family (primary or secondary, see `holm_adjust`) and the intervals' levels
    named under it. `what` names each row ("RRF against dense")."""
    comparisons = (holm_adjust(comparisons, family=family, family_kind=family_kind) if holm
                   else list(comparisons))
    labels = list(what) if what is not None else [f"{c.name_b} against {c.name_a}" for c in comparisons]
    if len(labels) != len(comparisons):
        raise ValueError(f"{len(labels)} labels for {len(comparisons)} comparisons")
    rows = [(_row_kind(c), [html.escape(label), html.escape(c.metric), f"{fmt(c.value_a)} → {fmt(c.value_b)}",
                            html.escape(interval_text(c)), html.escape(wins_losses(c)),
                            html.escape(f"{c.test}, {comparison_p(c)}"), f"<b>{html.escape(word(c))}</b>"])
            for c, label in zip(comparisons, labels, strict=True)]
    table = html_table(["comparison", "metric", "A → B", "delta [interval the verdict rests on]",
                        "wins / losses", "test", "verdict"], rows)
    return HTML(table.data + _caption(comparisons))


def holm_columns(effects: Sequence[tuple[str, Comparison, Comparison]], *,
                 family_kind: str | None = None) -> list[tuple[str, Comparison, Comparison]]:
    """Lesson 09's effects with the dev column and the test column each corrected as ONE Holm
    family: pass the result to `technique_table` and `forest_plot` so a table split by metric, or
    a plot of one metric, still shows the verdicts of the whole family."""
    dev, test = _columns(effects, family_kind)
    return [(name, d, t) for (name, _, _), d, t in zip(effects, dev, test, strict=True)]


def _columns(effects: Sequence[tuple[str, Comparison, Comparison]],
             family_kind: str | None) -> tuple[list[Comparison], list[Comparison]]:
    """The dev and the test column of lesson 09's effects, each its own Holm family (kept as
    given when already corrected)."""
    columns = []
    for index, name in ((1, "the dev column"), (2, "the test column")):
        column = [effect[index] for effect in effects]
        corrected = column and all(c.p_holm is not None for c in column)
        columns.append(column if corrected else holm_adjust(column, family=name, family_kind=family_kind))
    return columns[0], columns[1]


def technique_table(effects: Sequence[tuple[str, Comparison, Comparison]], *,
                    source_rank: dict[str, str | int] | None = None, family_kind: str | None = None) -> HTML:
    """Lesson 09's table: each technique's effect on dev and on test, with its verdict on each.

    `effects` holds (technique, dev comparison, test comparison), each the pipeline WITH the
    technique (B) against the pipeline without it (A), on the same metric. The dev column is one
    Holm family and the test column another. Dev and test are reported side by side; the same
    sign with different significance is a difference in evidence, not a contradiction.
    """
    dev, test = _columns(effects, family_kind)
    rows = []
    for (name, _, _), d, t in zip(effects, dev, test, strict=True):
        rank = DASH if source_rank is None else str(source_rank.get(name, "not ranked"))
        cells = [html.escape(name), html.escape(t.metric)]
        for c in (d, t):
            cells += [html.escape(interval_text(c)), html.escape(f"{wins_losses(c)}, {comparison_p(c)}"),
                      f"<b>{html.escape(word(c))}</b>"]
        rows.append((_row_kind(t), cells + [html.escape(rank)]))
    table = html_table(["technique", "metric", "dev: delta [interval]", "dev: wins / losses, p", "dev",
                        "test: delta [interval]", "test: wins / losses, p", "test",
                        "rank in the production write-up"], rows)
    return HTML(table.data + _caption(dev, test))


def forest_plot(effects: Sequence[tuple[str, Comparison, Comparison]], *, ax=None,
                family_kind: str | None = None):
    """Every step's difference with the interval its verdict was decided on, dev and test side
    by side, with 0 marked and the ±margin band shaded.

    How to read it: a point whose interval lies wholly inside the shaded band is "equivalent"
    (its 90% interval); one whose interval stays clear of 0 is a gain or a loss (its interval at
    its Holm level, the same family as `technique_table`'s column); any other is "cannot tell".
    """
    import matplotlib.pyplot as plt  # a plot backend only when a plot is asked for

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.6 * len(effects) + 1))
    dev, test = _columns(effects, family_kind) if effects else ([], [])
    rows = list(zip(dev, test, strict=True))
    for row, (d, t) in enumerate(reversed(rows)):
        for offset, c, colour, label in ((0.15, d, "#2563eb", "dev"), (-0.15, t, "#dc2626", "test")):
            lo, hi = c.decision.lo, c.decision.hi
            errors = [[max(0.0, c.delta - lo)], [max(0.0, hi - c.delta)]]
            ax.errorbar(c.delta, row + offset, xerr=errors, fmt="o", color=colour, capsize=3,
                        label=label if row == 0 else None)
    if rows:
        margin = rows[0][1].equivalence.margin
        ax.axvspan(-margin, margin, color="#999", alpha=0.15,
                   label=f"±{margin:g}: equivalent if the whole interval is inside")
    ax.axvline(0, color="#555", linewidth=1)
    ax.set_yticks(range(len(effects)), [name for name, _, _ in reversed(list(effects))])
    metric = effects[0][1].metric if effects else ""
    ax.set(xlabel=f"difference in {metric} (with the technique − without)",
           title="Each step, dev and test: clear of 0 = gain or loss; inside the band = equivalent")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return ax
