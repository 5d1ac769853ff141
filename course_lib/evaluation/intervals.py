"""Intervals that agree with the decision beside them: the interval a verdict word was decided on.

A verdict of "gain" is decided by a test (exact McNemar for recall, sign flips for MRR) after
Holm's correction over the table; a plain 95% interval beside it can exclude 0 where Holm did not
reject, or contain 0 where the test did. The intervals here are the tests turned inside out: the
differences the test would NOT reject at the level Holm judged the comparison at. So "the interval
excludes 0" is the same statement as "the test rejected no difference", by construction:

- `holm_step_alphas`: the level of each comparison's Holm step, alpha / (m - step). Holm is
  step-down: it stops at the first comparison it cannot reject, and every later one is judged at
  that stopping step's level. At these levels, p < level exactly where Holm rejects.
- `paired_proportion_test_interval`: Newcombe's interval for a paired difference in recall at
  that level, its edge at 0 moved onto the exact McNemar test's decision in the rare borderline
  case where the two disagree.
- `sign_flip_interval`: the shifts of the per-question differences that the paired sign-flip
  test does not reject, with the same sign patterns at every shift.

`inverted_interval` finds the edges by bisection and places 0 on the side the decision says, so
neither a floating-point tie nor two methods that differ at the edge can make the printed
interval contradict the word. These intervals are each read for ONE decision; they are not
simultaneous intervals for the whole family. `paired_non_inferiority` is the one-sided question
for a comparison that can only go one way (lesson 08's four prompted chunks against eight).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from course_lib.evaluation.stats import newcombe_interval, paired_proportion_interval, sign_draws, sign_flip_p
from course_lib.settings import CONFIDENCE, EQUIVALENCE_MARGIN, N_RESAMPLES, SEED

BISECTION_STEPS = 22  # edges to within 5e-7 on a range of 2: far below the three decimals printed


def holm_step_alphas(p_values: Sequence[float], *, alpha: float = 1 - CONFIDENCE) -> list[float]:
    """The level each comparison of one Holm family is judged at, in the input order.

    Sorted by p, the i-th (0-based) of m is judged at alpha / (m - i) while Holm keeps rejecting;
    from the first it cannot reject on, every comparison gets that step's level. Then p < level
    exactly when `stats.holm`'s adjusted p is below alpha. NaN p-values get alpha / m.
    """
    p = np.asarray(p_values, dtype=float)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    out = np.full(p.shape, alpha / max(m, 1))
    stopped = None
    for i, index in enumerate(valid[np.argsort(p[valid], kind="stable")]):
        if stopped is None and min(1.0, (m - i) * p[index]) >= alpha:
            stopped = i
        out[index] = alpha / (m - (i if stopped is None else stopped))
    return [float(v) for v in out]


def inverted_interval(accepts: Callable[[float], bool], *, estimate: float, rejected: bool,
                      bounds: tuple[float, float], null: float) -> tuple[float, float]:
    """The values a test accepts around `estimate`, as an interval, agreeing with a decision.

    Each edge is found by bisection between a point taken as rejected and one taken as accepted.
    `null` is taken as rejected when the decision `rejected` is True (the interval then excludes
    it) and as accepted otherwise (the interval contains it), so the interval and the decision
    cannot disagree. `bounds` are the widest values possible; an edge stays there when the test
    accepts even those (too few questions to bound the difference).
    """
    low, high = bounds
    if rejected and estimate > null:
        lower, upper = (null, estimate, False), (high, estimate, True)
    elif rejected:
        lower, upper = (low, estimate, True), (null, estimate, False)
    else:
        lower, upper = (low, min(null, estimate), True), (high, max(null, estimate), True)
    return _edge(accepts, *lower), _edge(accepts, *upper)


def _edge(accepts: Callable[[float], bool], outside: float, inside: float, ask_outside: bool) -> float:
    """The boundary between `outside` (rejected) and `inside` (accepted): the last accepted point."""
    if ask_outside and accepts(outside):
        return outside
    for _ in range(BISECTION_STEPS):
        middle = (outside + inside) / 2
        outside, inside = (outside, middle) if accepts(middle) else (middle, inside)
    return inside


def paired_proportion_test_interval(both: int, wins: int, losses: int, neither: int, *,
                                   alpha: float = 1 - CONFIDENCE, rejected: bool) -> tuple[float, float]:
    """Newcombe's interval of a paired difference in recall at level 1 - alpha, agreeing with
    the exact McNemar test's decision `rejected` (Holm's, for a comparison in a family).

    Newcombe's interval and the exact test almost always agree on 0; in a borderline case where
    they do not, the edge nearest 0 is moved to 0 (just past it for a gain or a loss, onto it
    for "cannot tell"), so the printed interval says what the test decided. Newcombe's rather
    than the exact test's own conditional interval, because that one is capped by the share of
    questions the runs happened to disagree on and would look narrower than the evidence is.
    """
    lo, hi = newcombe_interval(both, wins, losses, neither, confidence=1 - alpha)
    n = both + wins + losses + neither
    if n == 0:
        return lo, hi
    return inverted_interval(lambda difference: lo <= difference <= hi, estimate=(wins - losses) / n,
                             rejected=rejected, bounds=(-1.0, 1.0), null=0.0)


def sign_flip_interval(differences: Sequence[float], *, alpha: float = 1 - CONFIDENCE, rejected: bool,
                       n_resamples: int = N_RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    """Interval of a mean paired difference that agrees with the paired sign-flip test.

    A shift s is accepted when the sign-flip test of (differences - s) has p >= alpha; the same
    seeded sign patterns serve every shift, so the edges do not jitter. For a metric in [0, 1]
    (MRR, the budget ratios) the widest interval is [-1, 1]: a test that cannot reject even
    there (a handful of questions differ) leaves the interval that wide.
    """
    d = np.asarray(differences, dtype=float)
    if d.size == 0:
        return math.nan, math.nan
    draws = sign_draws(d.size, n_resamples=n_resamples, seed=seed)

    def accepts(shift: float) -> bool:
        return sign_flip_p(d - shift, draws) >= alpha

    bounds = (min(-1.0, float(d.min())), max(1.0, float(d.max())))
    return inverted_interval(accepts, estimate=float(d.mean()), rejected=rejected, bounds=bounds, null=0.0)


@dataclass(frozen=True)
class NonInferiority:
    """B is no worse than A by more than `margin`: the one-sided test that suits a comparison
    whose wins are impossible by construction (four prompted chunks can only lose against eight),
    where a two-sided test of "no difference" asks a question with one answer.

    `estimate` is B - A with its two-sided `lo`, `hi` interval at `confidence`; `bound` is the
    one-sided lower bound at the same alpha (the lower edge of the 1 - 2*alpha interval), and
    non-inferiority is shown when it lies above -margin (`shown`)."""

    estimate: float
    lo: float
    hi: float
    bound: float
    margin: float
    confidence: float

    @property
    def shown(self) -> bool:
        return self.bound > -self.margin


def paired_non_inferiority(a: np.ndarray, b: np.ndarray, *, margin: float = EQUIVALENCE_MARGIN,
                           confidence: float = CONFIDENCE) -> NonInferiority:
    """Non-inferiority of paired yes/no run B against A within `margin`, on Newcombe's interval:
    the estimate with its `confidence` interval, and the one-sided lower bound at 1 - confidence."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    lo, hi = paired_proportion_interval(a, b, confidence=confidence)
    bound, _ = paired_proportion_interval(a, b, confidence=1 - 2 * (1 - confidence))
    return NonInferiority(float(b.mean() - a.mean()), lo, hi, bound, margin, confidence)
