"""The four verdict words in one picture: an interval against 0 and the ±margin band.

Every verdict of the course is one of four words, and each is read off one interval (the one the
word was decided on, `Comparison.decision`): clear of 0 above is a gain, clear of 0 below a loss,
wholly inside ±margin equivalent, anything else (it holds 0 and reaches past the margin) cannot
tell. Drawing one interval per word beside the band shows that rule at a glance, which a table
of figures does not.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from course_lib import settings
from course_lib.evaluation.compare import Comparison
from course_lib.evaluation.verdicts import CANNOT_TELL, EQUIVALENT, GAIN, LOSS
from course_lib.settings import EQUIVALENCE_MARGIN

WORD_COLOURS = {GAIN: "#15803d", LOSS: "#b91c1c", EQUIVALENT: "#2563eb", CANNOT_TELL: "#6b7280"}


@dataclass(frozen=True)
class Example:
    """One interval to draw: its label, point estimate and the interval's two ends."""

    label: str
    estimate: float
    lo: float
    hi: float


def word_of_interval(lo: float, hi: float, *, margin: float = EQUIVALENCE_MARGIN) -> str:
    """The verdict word an interval reads as: gain above 0, loss below 0, equivalent inside
    ±margin, cannot tell otherwise (the reading rule `scripts/check_claims.py` applies)."""
    if lo > 0:
        return GAIN
    if hi < 0:
        return LOSS
    if -margin < lo and hi < margin:
        return EQUIVALENT
    return CANNOT_TELL


def example_of(comparison: Comparison, *, label: str) -> Example:
    """The interval a comparison's word was decided on, ready to draw."""
    decision = comparison.decision
    return Example(label, comparison.delta, decision.lo, decision.hi)


def four_words_picture(examples: Sequence[Example], *, margin: float = EQUIVALENCE_MARGIN,
                       metric: str = settings.PRIMARY_METRICS[0], ax=None):
    """Draw each example's interval against 0 and the shaded ±margin band, coloured and labelled
    by the word it reads as; returns the matplotlib axes."""
    import matplotlib.pyplot as plt  # a plot backend only when a plot is asked for

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.55 * len(examples) + 1.4))
    ax.axvspan(-margin, margin, color="#999", alpha=0.18, label=f"±{margin:g}: the equivalence margin")
    ax.axvline(0, color="#333", linewidth=1)
    for row, example in enumerate(reversed(list(examples))):
        word = word_of_interval(example.lo, example.hi, margin=margin)
        errors = [[max(0.0, example.estimate - example.lo)], [max(0.0, example.hi - example.estimate)]]
        ax.errorbar(example.estimate, row, xerr=errors, fmt="o", capsize=4, color=WORD_COLOURS[word])
        ax.annotate(word, (example.hi, row), xytext=(6, 0), textcoords="offset points", va="center",
                    color=WORD_COLOURS[word], fontweight="bold")
    ax.set_yticks(range(len(examples)), [e.label for e in reversed(list(examples))])
    ax.set_ylim(-0.7, len(examples) - 0.3)
    ax.set(xlabel=f"difference in {metric} (B − A)",
           title="Clear of 0: gain or loss · inside the band: equivalent · else: cannot tell")
    ax.margins(x=0.25)
    ax.legend(loc="lower right", fontsize="small")
    return ax
