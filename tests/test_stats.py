"""The statistics module against scipy.stats and against hand-worked values."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from course_lib.evaluation.stats import bca_bootstrap, holm, wilson_interval


@pytest.mark.parametrize("k, n", [(0, 10), (10, 10), (16, 16), (3, 7), (58, 71), (1, 1), (0, 1)])
@pytest.mark.parametrize("confidence", [0.90, 0.95, 0.99])
def test_wilson_matches_scipy(k, n, confidence):
    ref = scipy.stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    lo, hi = wilson_interval(k, n, confidence=confidence)
    assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_wilson_has_width_at_the_ends_and_stays_in_bounds():
    assert wilson_interval(0, 20)[0] == 0.0 and wilson_interval(0, 20)[1] > 0.1
    assert wilson_interval(20, 20)[1] == 1.0 and wilson_interval(20, 20)[0] < 0.9
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def paired_sample(n: int, state: int) -> np.ndarray:
    """Per-question differences of a metric in [0, 1], like a paired MRR comparison."""
    rng = np.random.default_rng(state)
    a, b = rng.random(n) ** 2, rng.random(n) ** 1.5
    return b - a


@pytest.mark.parametrize("state", [0, 1, 2])
def test_bca_matches_scipy_on_paired_differences(state):
    diffs = paired_sample(60, state)
    ours = bca_bootstrap(diffs, n_resamples=40_000, seed=state)
    ref = scipy.stats.bootstrap((diffs,), np.mean, method="BCa", n_resamples=40_000,
                                random_state=state).confidence_interval
    # Two independent sets of resamples: the ends agree to Monte Carlo error (~0.005 here).
    width = ref.high - ref.low
    assert ours.lo == pytest.approx(ref.low, abs=0.03 * width)
    assert ours.hi == pytest.approx(ref.high, abs=0.03 * width)
    assert ours.estimate == pytest.approx(diffs.mean())


def test_bca_matches_scipy_on_hits():
    hits = np.array([1.0] * 9 + [0.0] * 31 + [-1.0] * 2)  # a recall@5 paired difference
    ours = bca_bootstrap(hits, n_resamples=40_000)
    ref = scipy.stats.bootstrap((hits,), np.mean, method="BCa", n_resamples=40_000,
                                random_state=0).confidence_interval
    assert (ours.lo, ours.hi) == pytest.approx((ref.low, ref.high), abs=0.02)


@pytest.mark.parametrize("state", range(6))
def test_p_value_and_interval_never_disagree(state):
    rng = np.random.default_rng(state)
    diffs = rng.choice([-1.0, 0.0, 0.0, 1.0, 1.0], size=int(rng.integers(8, 60))) * rng.random()
    for confidence in (0.8, 0.9, 0.95, 0.99):
        r = bca_bootstrap(diffs, n_resamples=3000, confidence=confidence, seed=state)
        assert (r.lo > 0 or r.hi < 0) == (r.p_value < 1 - confidence)


def test_p_value_is_the_alpha_where_the_interval_touches_zero():
    diffs = paired_sample(50, 7) + 0.08
    p = bca_bootstrap(diffs, n_resamples=5000).p_value
    assert 0.001 < p < 0.5
    just_wider = bca_bootstrap(diffs, n_resamples=5000, confidence=1 - p * 0.98)
    just_narrower = bca_bootstrap(diffs, n_resamples=5000, confidence=1 - p * 1.02)
    assert just_wider.lo <= 0 < just_narrower.lo


def test_bca_degenerate_and_empty_samples():
    zero = bca_bootstrap([0.0] * 10)
    assert (zero.estimate, zero.lo, zero.hi, zero.p_value) == (0.0, 0.0, 0.0, 1.0)
    ones = bca_bootstrap([1.0] * 10, n_resamples=999)
    assert (ones.lo, ones.hi, ones.p_value) == (1.0, 1.0, 1 / 1000)
    assert math.isnan(bca_bootstrap([]).estimate)


def test_bca_is_deterministic_under_its_random_state():
    diffs = paired_sample(30, 3)
    assert bca_bootstrap(diffs, seed=4) == bca_bootstrap(diffs, seed=4)
    assert bca_bootstrap(diffs, seed=4).lo != bca_bootstrap(diffs, seed=5).lo


def holm_reference(p: list[float]) -> list[float]:
    """Holm's step-down adjustment written out as statsmodels defines it."""
    m, order = len(p), sorted(range(len(p)), key=lambda i: p[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        adjusted[i] = min(1.0, running)
    return adjusted


def test_holm_by_hand():
    # sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, max(0.06, 0.04 * 1) = 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5] and holm([]) == []
    assert holm([0.4, 0.6]) == [0.8, 0.8]  # 0.6 * 1 < 0.8: the running maximum holds
    assert holm([0.6, 0.7]) == [1.0, 1.0]


@pytest.mark.parametrize("state", range(5))
def test_holm_matches_the_reference_formula(state):
    p = list(np.random.default_rng(state).random(7) ** 3)
    assert holm(p) == pytest.approx(holm_reference(p))


def test_holm_skips_nan():
    adjusted = holm([0.01, math.nan, 0.02])
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.02)
    assert math.isnan(adjusted[1])
