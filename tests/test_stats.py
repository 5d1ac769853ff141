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
    newcombe_interval,
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


# --- the interval a verdict was decided on ----------------------------------------------------

def test_holm_step_levels_agree_with_holms_decision():
    from course_lib.evaluation.intervals import holm_step_alphas

    rng = np.random.default_rng(11)
    for _ in range(500):
        p = rng.choice([0.0001, 0.004, 0.01, 0.02, 0.03, 0.2, 0.6]) * rng.random(int(rng.integers(1, 9))) * 3
        steps = holm_step_alphas(p)
        assert [pi < step for pi, step in zip(p, steps, strict=True)] == [h < 0.05 for h in holm(p)]
    assert holm_step_alphas([0.01, 0.04, 0.03]) == pytest.approx([0.05 / 3, 0.05 / 2, 0.05 / 2])
    assert holm_step_alphas([0.03, 0.04]) == pytest.approx([0.025, 0.025])  # stops at step 1


def test_the_recall_interval_is_newcombes_at_the_level_unless_the_exact_test_disagrees():
    from course_lib.evaluation.intervals import paired_proportion_test_interval

    lo, hi = newcombe_interval(100, 15, 3, 77, confidence=1 - 0.0125)
    assert mcnemar_exact(15, 3) < 0.0125 and lo > 0
    assert paired_proportion_test_interval(100, 15, 3, 77, alpha=0.0125, rejected=True) == (
        pytest.approx(lo, abs=1e-6), pytest.approx(hi, abs=1e-6))
    # a borderline case where Newcombe's interval and the exact test disagree: the edge moves to 0
    for wins, losses in ((9, 1), (10, 2), (6, 0), (12, 3)):
        rejected = mcnemar_exact(wins, losses) < 0.05
        low, high = paired_proportion_test_interval(120, wins, losses, 60, rejected=rejected)
        assert (low > 0) == rejected and low <= (wins - losses) / 200 <= high


def test_the_mrr_interval_inverts_the_sign_flip_test():
    from course_lib.evaluation.intervals import sign_flip_interval
    from course_lib.evaluation.stats import sign_flip_p_value

    rng = np.random.default_rng(12)
    d = rng.normal(0.03, 0.2, 300)
    p = sign_flip_p_value(d, n_resamples=2000)
    lo, hi = sign_flip_interval(d, rejected=p < 0.05, n_resamples=2000)
    t_lo, t_hi = scipy.stats.ttest_1samp(d, 0).confidence_interval(0.95)
    assert lo == pytest.approx(t_lo, abs=0.004) and hi == pytest.approx(t_hi, abs=0.004)
    assert (lo > 0) == (p < 0.05)
    wider = sign_flip_interval(d, alpha=0.01, rejected=p < 0.01, n_resamples=2000)
    assert wider[0] < lo and hi < wider[1]
    assert sign_flip_interval([0.2, 0.1, -0.05], rejected=False) == (-1.0, 1.0)  # 3 questions bound nothing


def test_the_resampling_floor_of_the_sign_flip_test():
    from course_lib.evaluation.stats import sign_flip_floor, sign_flip_test

    # 999 draws: floor 0.002, within 4 errors of 0.05/64, so drawn again until it is clear of it
    test = sign_flip_test(np.ones(60), n_resamples=999)
    assert test.resamples == 999 * 16 and test.floor == pytest.approx(2 / (999 * 16 + 1))
    assert sign_flip_floor(np.ones(60), n_resamples=999) == test.floor == test.p_value  # at the floor
    assert test.p_value + 4 * test.error < 0.05 / 64
    capped = sign_flip_test(np.ones(60), n_resamples=999, max_resamples=999)
    assert capped.p_value == pytest.approx(0.002) and capped.resamples == 999
    assert sign_flip_floor(np.r_[np.ones(5), np.zeros(100)], n_resamples=999) == 0  # 32 patterns: exact


# --- power at the level the verdict is judged ------------------------------------------------

def test_power_at_the_familys_level():
    from course_lib.evaluation.stats import family_alpha

    assert family_alpha(1) == pytest.approx(0.05) and family_alpha(8) == pytest.approx(0.00625)
    with pytest.raises(ValueError):
        family_alpha(0)
    assert minimum_detectable_difference(190, 0.2, family_size=1) == minimum_detectable_difference(190, 0.2)
    assert mcnemar_power(190, 0.2, 0.08, family_size=1) == mcnemar_power(190, 0.2, 0.08)
    powers = [mcnemar_power(190, 0.2, 0.08, family_size=m) for m in (1, 4, 8, 16)]
    assert powers == sorted(powers, reverse=True) and powers[0] > powers[-1] + 0.1
    mdds = [minimum_detectable_difference(190, 0.2, family_size=m) for m in (1, 8, 16)]
    assert mdds == sorted(mdds) and mdds[2] - mdds[0] > 0.015
    # the same figure as alpha / m by hand: the exact test's power at level 0.05 / 8
    assert mcnemar_power(190, 0.2, 0.08, family_size=8) == pytest.approx(mcnemar_power(190, 0.2, 0.08, alpha=0.05 / 8))


def test_equivalence_power_by_simulation_and_its_shape():
    from course_lib.evaluation.stats import equivalence_power

    rng = np.random.default_rng(13)
    shown = 0
    for _ in range(80):  # the same question asked of `paired_proportion_tost` itself
        kind = rng.choice(4, size=200, p=[0.76, 0.04, 0.04, 0.16])
        shown += paired_proportion_tost(np.isin(kind, (0, 2)), np.isin(kind, (0, 1)), margin=0.05).shown()
    assert equivalence_power(200, 0.08, draws=500) == pytest.approx(shown / 80, abs=0.12)
    assert equivalence_power(2000, 0.08, draws=200) > 0.99 and equivalence_power(30, 0.08, draws=200) == 0
    by_discordance = [equivalence_power(300, share, draws=300) for share in (0.04, 0.1, 0.2)]
    assert by_discordance == sorted(by_discordance, reverse=True)
    with pytest.raises(ValueError):
        equivalence_power(100, 0.5, recall=0.9)


def test_non_inferiority_of_a_comparison_that_can_only_lose():
    from course_lib.evaluation.intervals import paired_non_inferiority
    a = np.array([1] * 150 + [0] * 50)        # eight chunks: 150 of 200 questions
    close = a.copy()
    close[:3] = 0                             # four chunks lose 3: -0.015
    far = a.copy()
    far[:30] = 0                              # ... or 30: -0.15
    near = paired_non_inferiority(a, close, margin=0.05)
    assert near.estimate == pytest.approx(-0.015) and near.lo < near.bound < near.estimate <= near.hi
    assert near.shown and not paired_non_inferiority(a, far, margin=0.05).shown
    assert paired_non_inferiority(a, a).estimate == 0 and paired_non_inferiority(a, a).shown


def test_the_sign_flip_test_is_exact_for_few_changes_and_draws_more_only_near_a_level():
    from scipy import stats as scipy_stats

    from course_lib.evaluation.stats import decision_levels, sign_flip_test

    rng = np.random.default_rng(21)
    few = np.r_[rng.normal(0.2, 0.3, 16), np.zeros(100)]  # 16 changed questions: all 65,536 patterns
    exact = sign_flip_test(few)
    reference = scipy_stats.permutation_test((few[:16],), np.mean, permutation_type="samples",
                                             n_resamples=10**6).pvalue  # scipy enumerates 2^16 too
    assert exact.exact and exact.resamples == 2 ** 16 and exact.p_value == pytest.approx(reference)
    far = sign_flip_test(rng.normal(0.0, 0.3, 150))  # p far from every level: one round
    assert not far.exact and far.resamples == 10_000 and far.p_value > 0.2
    levels = decision_levels()
    assert levels[0] == pytest.approx(0.05) and levels[2] == pytest.approx(0.05 / 3) and levels.size == 64
    # a p that sits near 0.05: drawn until 0.05 and its neighbours lie 4 errors away, or to the cap
    for shift in np.linspace(0.02, 0.06, 9):
        d = np.random.default_rng(5).normal(shift, 0.3, 120)
        test = sign_flip_test(d)
        settled = np.all(np.abs(levels - test.p_value) >= 4 * test.error)
        assert settled or test.resamples == 1_280_000
        if test.resamples > 10_000:
            assert np.any(np.abs(levels - test.p_value) < 4 * 2 * np.sqrt(0.025 / 10_000))


def test_the_drawn_p_agrees_with_scipy_within_its_monte_carlo_error():
    from scipy import stats as scipy_stats

    from course_lib.evaluation.stats import sign_flip_test

    d = np.random.default_rng(6).choice([0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 0.25, -0.2], size=200)
    ours = sign_flip_test(d, n_resamples=200_000, max_resamples=200_000)
    scipy_p = scipy_stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=200_000,
                                           random_state=np.random.default_rng(1)).pvalue
    assert abs(ours.p_value - scipy_p) < 4 * np.sqrt(2) * ours.error  # two estimates, each with its error


def test_tost_interval_is_tosts_at_any_level():
    from course_lib.evaluation.stats import tost_interval

    d = np.random.default_rng(8).normal(0.01, 0.2, 180)
    result = tost(d, margin=0.05)
    assert tost_interval(d) == (pytest.approx(result.lo), pytest.approx(result.hi))
    lo, hi = tost_interval(d, alpha=0.05 / 4)
    assert lo < result.lo and result.hi < hi
    assert tost_interval(np.full(5, 0.1)) == (0.1, 0.1) and all(math.isnan(v) for v in tost_interval([0.2]))
