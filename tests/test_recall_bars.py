"""Lesson 10's bar chart: one bar per chunker, its recall@k, and its Wilson interval as the error bar."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.evaluation.display import recall_bars  # noqa: E402
from course_lib.evaluation.stats import wilson_interval  # noqa: E402


class Hits:
    """A stand-in for a RunResult: only `hits_at` is read by the plot."""

    def __init__(self, hits: list[float]):
        self.hits = np.array(hits)

    def hits_at(self, k: int) -> np.ndarray:
        return self.hits


def test_one_bar_per_run_in_the_given_order_with_its_wilson_interval():
    runs = {"course": Hits([1, 1, 1, 0]), "peer": Hits([1, 0, 0, 0])}
    ax = recall_bars(runs, k=5)
    bars = ax.patches
    assert [round(b.get_height(), 3) for b in bars] == [0.75, 0.25]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["course", "peer"]
    assert ax.get_ylabel() == "recall@5" and "4 questions" in ax.get_title()
    (caps_low, caps_high), = [c[1] for c in ax.containers if hasattr(c, "lines") and c.lines[1]]
    lo, hi = wilson_interval(3, 4)
    assert caps_low.get_ydata()[0] == pytest.approx(lo) and caps_high.get_ydata()[0] == pytest.approx(hi)


def test_an_interval_never_reaches_below_zero_or_above_one():
    ax = recall_bars({"all": Hits([1, 1]), "none": Hits([0, 0])}, k=5)
    _, (low, high), _ = next(c for c in ax.containers if hasattr(c, "lines")).lines
    assert min(low.get_ydata()) >= 0 and max(high.get_ydata()) <= 1
