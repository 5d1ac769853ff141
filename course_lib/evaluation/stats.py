"""The statistics behind every interval and p-value the course prints.

Three tools, each chosen so that a reviewer has nothing to object to:

- `wilson_interval` for one run's recall (a share of questions): unlike the percentile
  bootstrap it never collapses to [1.000, 1.000] when every question is a hit.
- `bca_bootstrap` for a mean of per-question values (MRR, a paired difference): the
  bias-corrected and accelerated bootstrap, with the p-value read off the SAME resamples by
  inverting the interval, so "the interval excludes 0" and "p < 1 - confidence" always agree.
- `holm` to correct the p-values of one lesson's headline table for the number of comparisons.

Everything is deterministic (a fixed random state), so a notebook rerun prints the same figures.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from course_lib.settings import CONFIDENCE, N_RESAMPLES, SEED

_NORMAL = NormalDist()


def _z(p: float) -> float:
    """Standard normal quantile, +-inf at 0 and 1 instead of an error."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def wilson_interval(successes: int, n: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for a proportion successes / n; (nan, nan) when n is 0.

    It stays inside [0, 1] and keeps a real width at 0/n and n/n, where a bootstrap of the
    questions has no spread at all: 16/16 hits is [0.806, 1.000], not [1.000, 1.000].
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes={successes} must lie in 0..n={n}")
    if n == 0:
        return math.nan, math.nan
    z = _z(1 - (1 - confidence) / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At 0/n and n/n one end is exactly 0 or 1; computing it leaves a rounding error.
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return lo, hi


@dataclass(frozen=True)
class BootstrapResult:
    """A mean with its BCa interval and the two-sided p-value of "the true mean is 0"."""

    estimate: float
    lo: float
    hi: float
    p_value: float
    n: int
    n_resamples: int
    confidence: float


def _acceleration(values: np.ndarray) -> float:
    """The jackknife estimate of the BCa acceleration for the mean (0 when undefined)."""
    n = values.size
    if n < 3:
        return 0.0
    jack = (values.sum() - values) / (n - 1)
    dev = jack.mean() - jack
    den = 6.0 * float((dev**2).sum()) ** 1.5
    return float((dev**3).sum() / den) if den > 0 else 0.0


def _bca_level(z0: float, a: float, z: float) -> float:
    """The percentile of the bootstrap distribution that BCa uses for normal quantile z."""
    shifted = z0 + z
    denom = 1 - a * shifted
    if denom <= 0:  # only for huge |a|: the level saturates
        return 1.0 if shifted > 0 else 0.0
    return _NORMAL.cdf(z0 + shifted / denom)


def _quantile(sorted_means: np.ndarray, level: float) -> float:
    """Inverted-CDF quantile: the smallest resampled mean whose ECDF reaches `level`.

    Using the step ECDF (no interpolation) is what makes the interval and the p-value agree
    exactly: the lower end is above 0 exactly when the share of means <= 0 is below `level`.
    """
    b = sorted_means.size
    index = min(b - 1, max(0, math.ceil(level * b) - 1))
    return float(sorted_means[index])


def _alpha_at(share: float, z0: float, a: float, *, upper: bool) -> float:
    """Invert the BCa map: the alpha at which an end of the interval sits exactly on 0.

    `share` is the ECDF of the resampled means at 0. The lower end uses z = z(alpha / 2),
    the upper end z = z(1 - alpha / 2); an alpha beyond 1 means 0 is inside at every level.
    """
    w = _z(share) - z0
    if math.isinf(w):
        return 0.0 if (w < 0) != upper else 1.0
    if 1 + a * w <= 0:  # the level is unreachable on this side
        return 1.0
    z = w / (1 + a * w) - z0
    return min(1.0, 2 * (1 - _NORMAL.cdf(z)) if upper else 2 * _NORMAL.cdf(z))


def bca_bootstrap(values: Sequence[float], *, n_resamples: int = N_RESAMPLES,
                  confidence: float = CONFIDENCE, seed: int = SEED) -> BootstrapResult:
    """Mean of `values` with its BCa bootstrap interval and a p-value from the same resamples.

    For a paired comparison pass the per-question differences B - A. The p-value is the
    smallest alpha at which the (1 - alpha) BCa interval excludes 0, floored at
    1 / (n_resamples + 1) (no resample count can show less): so p < 1 - confidence exactly
    when the interval excludes 0. A sample with no spread (every value equal) has a
    zero-width interval and p = 1 when the value is 0, the floor otherwise.
    """
    x = np.asarray(values, dtype=float)
    if not x.size:
        nan = math.nan
        return BootstrapResult(nan, nan, nan, nan, 0, n_resamples, confidence)
    estimate = float(x.mean())
    floor = 1.0 / (n_resamples + 1)
    if np.ptp(x) == 0:
        return BootstrapResult(estimate, estimate, estimate, 1.0 if estimate == 0 else floor,
                               int(x.size), n_resamples, confidence)
    rng = np.random.default_rng(seed)
    means = np.sort(x[rng.integers(0, x.size, size=(n_resamples, x.size))].mean(axis=1))
    # Mid-rank bias correction, as scipy does: ties with the estimate count half.
    below = np.count_nonzero(means < estimate) + 0.5 * np.count_nonzero(means == estimate)
    # Clipped half a resample from 0 and 1, so the correction stays finite.
    z0 = _z(min(max(below, 0.5), n_resamples - 0.5) / n_resamples)
    a = _acceleration(x)
    alpha = 1 - confidence
    lo = _quantile(means, _bca_level(z0, a, _z(alpha / 2)))
    hi = _quantile(means, _bca_level(z0, a, _z(1 - alpha / 2)))
    # 0 is outside [lo, hi] when the ECDF at 0 is below the lower level (lo > 0) or when the
    # share strictly below 0 reaches the upper level (hi < 0): invert both ends.
    share_le0 = np.count_nonzero(means <= 0) / n_resamples
    share_lt0 = np.count_nonzero(means < 0) / n_resamples
    p_low = _alpha_at(share_le0, z0, a, upper=False)
    p_high = _alpha_at(share_lt0, z0, a, upper=True)
    p = max(floor, min(p_low, p_high))
    return BootstrapResult(estimate, lo, hi, p, int(x.size), n_resamples, confidence)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order (NaN stays NaN and is not counted).

    Sort ascending, multiply the i-th smallest (0-based) by m - i, carry the running maximum so
    adjusted values never decrease, cap at 1. Reject where adjusted p < alpha: the family-wise
    error over the whole table stays below alpha, and it is never more conservative than
    Bonferroni.
    """
    p = np.asarray(p_values, dtype=float)
    valid = np.flatnonzero(~np.isnan(p))
    out = np.full(p.shape, math.nan)
    m = valid.size
    running = 0.0
    for i, index in enumerate(valid[np.argsort(p[valid], kind="stable")]):
        running = max(running, min(1.0, (m - i) * p[index]))
        out[index] = running
    return [float(v) for v in out]
