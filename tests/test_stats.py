"""Tests of the statistics: each checked by hand, against scipy, or against a simulation."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from course_lib.evaluation.stats import (
    holm,
    mcnemar_exact,
    mcnemar_power,
    mean_interval,
    minimum_detectable_difference,
    paired_mean_test,
    paired_proportion_interval,
    paired_proportion_tost,
    tost,
    wilson_interval,
)


@pytest.mark.parametrize("k, n, confidence", [(0, 10, 0.95), (7, 10, 0.95), (10, 10, 0.9), (33, 71, 0.99)])
def test_wilson_by_the_formula(k, n, confidence):
    z = scipy.stats.norm.ppf(1 - (1 - confidence) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    lo, hi = wilson_interval(k, n, confidence=confidence)
    assert lo == pytest.approx(max(0.0, centre - half), abs=1e-9)
    assert hi == pytest.approx(min(1.0, centre + half), abs=1e-9)


def test_wilson_has_width_at_the_ends_and_rejects_impossible_counts():
    assert wilson_interval(16, 16)[0] == pytest.approx(0.806, abs=1e-3)
    assert wilson_interval(0, 16)[1] == pytest.approx(0.194, abs=1e-3)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def test_mcnemar_exact_is_the_sign_test_on_discordant_pairs():
    # The case: four losses, no win. The exact two-sided p is 2 * 0.5**4 = 0.125,
    # where a paired bootstrap reported p = 0.014.
    assert mcnemar_exact(0, 4) == pytest.approx(0.125)
    assert mcnemar_exact(4, 0) == pytest.approx(0.125)
    assert mcnemar_exact(1, 0) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(14, 6) == pytest.approx(scipy.stats.binomtest(14, 20).pvalue)
    assert mcnemar_exact(20, 3) < 0.001


def test_newcombe_interval_by_the_square_and_add_formula():
    # Cavo et al. (2012), Fagerland et al.'s example: 59 both, 6 only B, 16 only A, 80 neither.
    a = np.array([1] * 59 + [0] * 6 + [1] * 16 + [0] * 80, bool)
    b = np.array([1] * 59 + [1] * 6 + [0] * 16 + [0] * 80, bool)
    n, p_b, p_a = 161, 65 / 161, 75 / 161
    (l_b, u_b), (l_a, u_a) = wilson_interval(65, n), wilson_interval(75, n)
    psi = (59 * 80 - 6 * 16 - n / 2) / math.sqrt(65 * 96 * 75 * 86)
    lower = p_b - p_a - math.sqrt((p_b - l_b) ** 2 - 2 * psi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2)
    upper = p_b - p_a + math.sqrt((u_b - p_b) ** 2 - 2 * psi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2)
    assert paired_proportion_interval(a, b) == (pytest.approx(lower), pytest.approx(upper))
    assert lower < -10 / 161 < upper and upper < 0.01


def test_newcombe_interval_covers_the_true_difference_about_95_percent_of_the_time():
    rng = np.random.default_rng(4)
    cells = [0.55, 0.15, 0.08, 0.22]  # both, B only, A only, neither: true difference 0.07
    covered = 0
    for _ in range(2000):
        kind = rng.choice(4, size=190, p=cells)
        a, b = np.isin(kind, (0, 2)), np.isin(kind, (0, 1))
        lo, hi = paired_proportion_interval(a, b)
        covered += lo <= 0.07 <= hi
    assert 0.93 <= covered / 2000 <= 0.985


def test_newcombe_interval_is_honest_with_one_discordant_question():
    a = np.zeros(46, bool)
    b = a.copy()
    b[0] = True
    lo, hi = paired_proportion_interval(a, b)
    assert lo < 0 < hi and hi - lo > 0.05  # a bootstrap gave [+0.000, +0.070] here
    same_lo, same_hi = paired_proportion_interval(a, a)
    assert same_lo < 0 < same_hi  # no disagreement still leaves uncertainty about the difference


def test_mean_interval_is_scipys_bca_and_handles_degenerate_samples():
    x = np.random.default_rng(5).exponential(size=60)
    expected = scipy.stats.bootstrap((x,), np.mean, method="BCa", n_resamples=2000,
                                     random_state=np.random.default_rng(0)).confidence_interval
    assert mean_interval(x, n_resamples=2000, seed=0) == (pytest.approx(expected.low),
                                                           pytest.approx(expected.high))
    assert mean_interval([0.25, 0.25]) == (0.25, 0.25)
    assert all(math.isnan(v) for v in mean_interval([]))


def test_paired_mean_test_detects_a_shift_and_not_noise():
    rng = np.random.default_rng(1)
    shifted = paired_mean_test(rng.normal(0.2, 0.5, 150), n_resamples=2000)
    noise = paired_mean_test(rng.normal(0.0, 0.5, 150), n_resamples=2000)
    assert shifted.p_value < 0.01 and shifted.lo > 0
    assert noise.p_value > 0.05
    assert paired_mean_test([0.0, 0.0, 0.0]).p_value == 1.0


def test_paired_permutation_p_matches_the_exact_sign_flip_distribution():
    d = np.array([0.5, 0.2, -0.1, 0.3, 0.4, 0.1])
    signs = np.array(np.meshgrid(*[[-1, 1]] * d.size)).reshape(d.size, -1).T
    means = (signs * d).mean(axis=1)
    exact = np.mean(np.abs(means) >= abs(d.mean()) - 1e-12)
    # 64 sign patterns: scipy enumerates them all instead of sampling.
    assert paired_mean_test(d).p_value == pytest.approx(exact)


def test_tost_shows_equivalence_only_with_enough_questions():
    rng = np.random.default_rng(2)
    many = rng.choice([-1, 0, 0, 0, 0, 0, 0, 1], size=400)
    few = many[:20]
    assert tost(many, margin=0.1).shown()
    assert not tost(few, margin=0.1).shown()  # the same mix, too few questions to show anything
    assert not tost(np.full(50, 0.2), margin=0.1).shown() and tost(np.zeros(50), margin=0.1).shown()
    big = tost(many, margin=0.1)
    assert big.lo < big.estimate < big.hi and -0.1 < big.lo and big.hi < 0.1
    with pytest.raises(ValueError):
        tost(many, margin=0)


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    adjusted = holm([0.02, float("nan"), 0.04])
    assert adjusted[0] == pytest.approx(0.04) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)


def test_mcnemar_power_agrees_with_a_simulation():
    n, discordance, difference = 120, 0.2, 0.1
    rng = np.random.default_rng(3)
    p_win = (discordance + difference) / (2 * discordance)
    rejected = 0
    for _ in range(3000):
        m = rng.binomial(n, discordance)
        wins = rng.binomial(m, p_win)
        rejected += mcnemar_exact(wins, m - wins) <= 0.05
    assert mcnemar_power(n, discordance, difference) == pytest.approx(rejected / 3000, abs=0.03)
    assert mcnemar_power(n, discordance, 0.0) <= 0.05  # the exact test keeps its level


def test_minimum_detectable_difference_shrinks_with_more_questions():
    small = minimum_detectable_difference(46, 0.2)
    large = minimum_detectable_difference(190, 0.2)
    assert large < small
    assert mcnemar_power(190, 0.2, large) == pytest.approx(0.8, abs=0.01)
    assert math.isnan(minimum_detectable_difference(5, 0.1))  # 5 questions can detect nothing


def test_paired_proportion_tost_needs_enough_questions_and_a_small_difference():
    rng = np.random.default_rng(6)
    a = rng.random(400) < 0.7
    b = a.copy()
    flip = rng.choice(400, size=12, replace=False)  # 12 of 400 questions disagree, 6 each way
    b[flip[:6]] = ~b[flip[:6]]
    b[flip[6:]] = ~b[flip[6:]]
    shown = paired_proportion_tost(a, b, margin=0.05)
    assert shown.shown() and shown.lo > -0.05 and shown.hi < 0.05
    assert not paired_proportion_tost(a[:20], b[:20], margin=0.05).shown()  # too few questions
    identical = paired_proportion_tost(a[:5], a[:5], margin=0.05)
    assert not identical.shown()  # five identical answers do not show a 0.05 margin
    far = paired_proportion_tost(np.zeros(300, bool), np.r_[np.ones(60, bool), np.zeros(240, bool)],
                                 margin=0.05)
    assert far.p_value == 1.0 and not far.shown()
    # the p-value is where the 1 - 2p interval touches the margin
    lo, hi = paired_proportion_interval(a, b, confidence=1 - 2 * shown.p_value)
    assert max(-lo, hi) == pytest.approx(0.05, abs=1e-4)


def test_sign_flip_p_value_agrees_with_scipy_and_ignores_ties():
    from scipy import stats as scipy_stats

    from course_lib.evaluation.stats import sign_flip_p_value

    rng = np.random.default_rng(3)
    d = rng.choice([0.0, 0.0, 0.0, 0.5, -0.5, 1.0, -0.33, 0.25], size=60)
    scipy_p = scipy_stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=10_000,
                                           random_state=np.random.default_rng(1)).pvalue
    ours = sign_flip_p_value(d)
    assert abs(ours - scipy_p) < 0.02  # two Monte Carlo estimates of one p-value (SE about 0.005)
    assert sign_flip_p_value(np.concatenate([d, np.zeros(5000)])) == ours  # a tie flips to itself
