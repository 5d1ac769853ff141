"""The statistics behind every interval, p-value and power figure the course prints.

Each test matches the shape of the data it is given:

- recall@k is a yes/no per question. One run's recall gets a Wilson interval
  (`wilson_interval`); two runs on the same questions are compared with the exact McNemar test on
  the questions where they disagree (`mcnemar_exact`: a binomial test of wins against losses),
  and their difference gets Newcombe's interval for paired proportions (`paired_proportion_interval`),
  built from the two Wilson intervals. A bootstrap of one or two discordant questions would claim
  a precision the data does not have.
- MRR and other continuous per-question values are compared with a paired permutation test (signs
  of the per-question differences flipped at random) and a BCa bootstrap interval for the mean
  difference, both from scipy, resampled in blocks so memory does not grow with the resamples.
- "No loss" or "parity" is an equivalence claim: two one-sided tests against a declared margin
  (`tost`), never "the interval contains zero".
- `holm` corrects the p-values of one table (one family) for the number of comparisons in it.
- `minimum_detectable_difference` says, before any pipeline runs, which paired difference in
  recall a split of n questions can detect with 80% power, at the level its Holm family judges it
  (`family_alpha`); `equivalence_power` how likely an "equivalent" verdict is when nothing changed.

The tests and intervals come from scipy; Holm's step-down and Newcombe's combination are a few
lines of arithmetic written out here. Everything is deterministic (fixed random states).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from course_lib import settings
from course_lib.settings import CONFIDENCE, N_RESAMPLES, RESAMPLE_BLOCK, SEED


def wilson_interval(successes: int, n: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for a proportion successes / n; (nan, nan) when n is 0.

    It stays inside [0, 1] and keeps a real width at 0/n and n/n, where a bootstrap of the
    questions has no spread at all: 16/16 hits is [0.806, 1.000], not [1.000, 1.000].
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes={successes} must lie in 0..n={n}")
    if n == 0:
        return math.nan, math.nan
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def mcnemar_exact(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value: are `wins` and `losses` (the questions only one of two
    runs answers) a fair coin's split? 1.0 when the runs never disagree."""
    if wins < 0 or losses < 0:
        raise ValueError("wins and losses are counts")
    if wins + losses == 0:
        return 1.0
    return float(stats.binomtest(wins, wins + losses, 0.5).pvalue)


def paired_proportion_interval(a: np.ndarray, b: np.ndarray, *,
                               confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Newcombe's square-and-add interval for mean(b) - mean(a) of paired 0/1 values.

    It combines the Wilson intervals of the two proportions with their correlation, estimated
    with the continuity correction Fagerland, Lydersen and Laake recommend ("Statistical Analysis
    of Contingency Tables", 2017, chapter 8), so it stays inside [-1, 1] and keeps an honest
    width when few questions differ.
    """
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    both, wins, losses = int(np.sum(a & b)), int(np.sum(b & ~a)), int(np.sum(a & ~b))
    return newcombe_interval(both, wins, losses, a.size - both - wins - losses, confidence=confidence)


def newcombe_interval(both: int, wins: int, losses: int, neither: int, *,
                      confidence: float = CONFIDENCE) -> tuple[float, float]:
    """`paired_proportion_interval` from the four counts of the paired table (both runs answer,
    only B, only A, neither), so a power calculation can ask it of tables it never sees as runs."""
    n = both + wins + losses + neither
    if n == 0:
        return math.nan, math.nan
    p_b, p_a = (both + wins) / n, (both + losses) / n
    lo_b, hi_b = wilson_interval(both + wins, n, confidence=confidence)
    lo_a, hi_a = wilson_interval(both + losses, n, confidence=confidence)
    margins = (both + wins) * (losses + neither) * (both + losses) * (wins + neither)
    agreement = both * neither - wins * losses
    if not margins or 0 <= agreement <= n / 2:
        phi = 0.0
    else:
        phi = (agreement - n / 2 if agreement > 0 else agreement) / math.sqrt(margins)
    below = math.sqrt(max(0.0, (p_b - lo_b) ** 2 - 2 * phi * (p_b - lo_b) * (hi_a - p_a) + (hi_a - p_a) ** 2))
    above = math.sqrt(max(0.0, (hi_b - p_b) ** 2 - 2 * phi * (hi_b - p_b) * (p_a - lo_a) + (p_a - lo_a) ** 2))
    return max(-1.0, p_b - p_a - below), min(1.0, p_b - p_a + above)


@dataclass(frozen=True)
class MeanTest:
    """A mean of per-question values (or of paired differences) with its interval and p-value.

    `p_floor` is the smallest p-value the permutation test could give with the sign patterns it
    drew (0 when it enumerated them all): a p at the floor means "p at most this"."""

    estimate: float
    lo: float
    hi: float
    p_value: float
    n: int
    p_floor: float = 0.0


def mean_interval(values: Sequence[float], *, confidence: float = CONFIDENCE, n_resamples: int = N_RESAMPLES,
                  seed: int = SEED) -> tuple[float, float]:
    """The BCa bootstrap interval of a mean (scipy), resampled in blocks of RESAMPLE_BLOCK.

    A sample with no spread has a zero-width interval at its value; an empty one gives NaNs.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if np.ptp(x) == 0:
        return float(x[0]), float(x[0])
    result = stats.bootstrap((x,), np.mean, confidence_level=confidence, n_resamples=n_resamples,
                             method="BCa", batch=_batch(x.size), random_state=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _batch(n: int) -> int:
    """Resamples per block: about RESAMPLE_BLOCK values in memory at once, whatever n is."""
    return max(1, RESAMPLE_BLOCK // max(n, 1))


def paired_mean_test(differences: Sequence[float], *, confidence: float = CONFIDENCE,
                     n_resamples: int = N_RESAMPLES, seed: int = SEED) -> MeanTest:
    """Mean of paired differences B - A: BCa interval, and the p-value of a paired permutation
    test (each question's difference keeps or flips its sign at random under "no difference"),
    drawn until no Holm level lies within its Monte Carlo error (`sign_flip_test`)."""
    d = np.asarray(differences, dtype=float)
    if d.size == 0:
        return MeanTest(math.nan, math.nan, math.nan, math.nan, 0)
    lo, hi = mean_interval(d, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if not np.any(d):
        return MeanTest(float(d.mean()), lo, hi, 1.0, int(d.size))
    test = sign_flip_test(d, n_resamples=n_resamples, seed=seed, alpha=1 - confidence)
    return MeanTest(float(d.mean()), lo, hi, test.p_value, int(d.size), test.floor)


@dataclass(frozen=True)
class SignFlip:
    """A sign-flip test's answer: the two-sided p-value, how many sign patterns it rests on, and
    whether those were every pattern (`exact`: p is the exact permutation p-value) or random ones
    (then `error` is p's Monte Carlo standard error and `floor` the smallest p they can give)."""

    p_value: float
    resamples: int
    exact: bool
    error: float
    floor: float


def decision_levels(alpha: float = 1 - CONFIDENCE, *, largest_family: int = settings.SIGN_FLIP_FAMILY_MAX
                    ) -> np.ndarray:
    """Every level a Holm family can judge a p-value at: alpha / j for j = 1 .. largest_family.

    Holm's step i (0-based) of m compares p with alpha / (m - i), and a comparison after the step
    where Holm stops is judged at that step's level; so whatever the family, "p below its level"
    is "p below alpha / j" for one whole j."""
    return alpha / np.arange(1, largest_family + 1)


def sign_flip_test(differences: np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
                   alpha: float = 1 - CONFIDENCE, max_resamples: int = settings.SIGN_FLIP_MAX_RESAMPLES,
                   z: float = settings.SIGN_FLIP_Z) -> SignFlip:
    """The paired sign-flip test of a mean difference, with a p-value no seed can move across a
    decision level.

    Only the questions that differ are flipped (a zero flips to itself). Up to
    `settings.SIGN_FLIP_EXACT_MAX` of them, every sign pattern is counted: the exact p-value.
    Beyond, `n_resamples` random patterns are drawn, and while a level some Holm family could
    judge this p at (`decision_levels`) lies within `z` Monte Carlo standard errors of it, as
    many again are drawn (the counts add up) until `max_resamples`. A p far from every level stops
    at the first round; one near a level is drawn until its side of the level is settled, so a
    verdict changes with the seed only when p lies within z standard errors of `max_resamples`
    draws of a level (about 0.0008 at 0.05, 0.0002 at 0.004).
    """
    changed = np.asarray(differences, dtype=float)
    changed = changed[changed != 0]
    m = changed.size
    if m == 0:
        return SignFlip(1.0, 1, True, 0.0, 0.0)
    if m <= settings.SIGN_FLIP_EXACT_MAX:
        return SignFlip(sign_flip_p(changed, _all_patterns(m)), 2 ** m, True, 0.0, 0.0)
    observed = total = float(changed.sum())
    tolerance = 1e-12 * max(1.0, float(np.abs(changed).sum()))  # equal sums added in another order
    rng, less, greater, drawn, rows = np.random.default_rng(seed), 0, 0, 0, n_resamples
    levels = decision_levels(alpha)
    while True:
        for start in range(0, rows, _batch(m // 8 + 1)):
            null = _null_sums(changed, total, rng, min(_batch(m // 8 + 1), rows - start))
            less += int(np.sum(null <= observed + tolerance))
            greater += int(np.sum(null >= observed - tolerance))
        drawn += rows
        tail = (min(less, greater) + 1) / (drawn + 1)  # scipy's rule: the observed pattern counts once more
        p, error = min(1.0, 2 * tail), 2 * math.sqrt(tail * (1 - tail) / drawn)
        if drawn >= max_resamples or not np.any(np.abs(levels - p) < z * error):
            return SignFlip(p, drawn, False, error, 2 / (drawn + 1))
        rows = min(drawn, max_resamples - drawn)


def _null_sums(values: np.ndarray, total: float, rng: np.random.Generator, rows: int) -> np.ndarray:
    """`rows` sums of the values under random signs, eight questions per random byte."""
    return total - 2.0 * _bit_sums(values, rng.integers(0, 256, size=(rows, (values.size + 7) // 8),
                                                        dtype=np.uint8))


def _bit_sums(values: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """b @ values for each row of random bits b, packed eight to a byte in `draws`.

    With s = 1 - 2b, a sign pattern's sum is sum(values) - 2 * (b @ values). The values are taken
    eight at a time, and the 256 sums of each group are tabled once, so one byte of a draw picks
    its group's part: a lookup per eight questions instead of eight products, and no sign matrix."""
    width = draws.shape[1]
    padded = np.zeros(8 * width)
    padded[:values.size] = values
    tables = padded.reshape(width, 8) @ np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).T
    partial = np.zeros(draws.shape[0])
    for group in range(width):
        partial += tables[group][draws[:, group]]
    return partial


def sign_flip_p_value(differences: np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
                      alpha: float = 1 - CONFIDENCE) -> float:
    """Two-sided p-value of the paired permutation test of a mean difference, as scipy's
    `permutation_test(permutation_type="samples")` defines it: each question keeps or flips its
    difference's sign at random. Exact for a few changed questions, else drawn until its side of
    every Holm level is settled (`sign_flip_test`); fast and flat in memory however many tie."""
    return sign_flip_test(differences, n_resamples=n_resamples, seed=seed, alpha=alpha).p_value


@dataclass(frozen=True)
class SignDraws:
    """The sign patterns of a sign-flip test on m values: every pattern (`exact`, a matrix of
    signs), or n_resamples random ones as bits packed eight to a byte, in blocks. Drawn once, they
    can test many shifted samples with the same patterns
    (`course_lib.evaluation.intervals.sign_flip_interval`)."""

    blocks: tuple[np.ndarray, ...]
    exact: bool


def _all_patterns(m: int) -> SignDraws:
    """Every one of the 2^m sign patterns of m values."""
    return SignDraws((1 - 2 * ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1),), True)


def sign_draws(m: int, *, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> SignDraws:
    """All 2^m sign patterns when they fit in n_resamples, else n_resamples random ones (seeded)."""
    if 2 ** m <= n_resamples:
        return _all_patterns(m)
    rng, blocks, width = np.random.default_rng(seed), [], (m + 7) // 8
    for start in range(0, n_resamples, _batch(width)):
        rows = min(_batch(width), n_resamples - start)
        blocks.append(rng.integers(0, 256, size=(rows, width), dtype=np.uint8))
    return SignDraws(tuple(blocks), False)


def sign_flip_p(values: np.ndarray, draws: SignDraws) -> float:
    """The two-sided sign-flip p-value of sum(values) under the given sign patterns. A random
    draw counts the observed pattern once more (scipy's rule), so its smallest p-value is
    2 / (n_resamples + 1): see `sign_flip_floor`."""
    values = np.asarray(values, dtype=float)
    observed = values.sum()
    if draws.exact:
        null = np.concatenate([block @ values for block in draws.blocks])
    else:
        null = observed - 2.0 * np.concatenate([_bit_sums(values, block) for block in draws.blocks])
    adjustment = 0 if draws.exact else 1
    tolerance = 1e-12 * max(1.0, abs(observed))  # equal sums computed in another order still count
    less = (np.sum(null <= observed + tolerance) + adjustment) / (null.size + adjustment)
    greater = (np.sum(null >= observed - tolerance) + adjustment) / (null.size + adjustment)
    return float(min(1.0, 2 * min(less, greater)))


def sign_flip_floor(differences: np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> float:
    """The smallest p-value `sign_flip_p_value` can give these differences by resampling:
    2 / (resamples + 1) for the number of random sign patterns it drew, 0 when it enumerates them
    all (then its p-value is exact). A p-value at this floor means "p at most this", and prints
    as `p ≤ …`."""
    return sign_flip_test(differences, n_resamples=n_resamples, seed=seed).floor


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests of |mean difference| < margin: p is the larger one-sided p-value, and
    (lo, hi) the matching 1 - 2*alpha interval (90% for alpha 0.05)."""

    estimate: float
    lo: float
    hi: float
    p_value: float
    margin: float
    n: int

    def shown(self, *, alpha: float = 1 - CONFIDENCE) -> bool:
        """True when the difference is shown to lie within +-margin (both one-sided tests reject)."""
        return self.p_value < alpha


def tost(differences: Sequence[float], *, margin: float, alpha: float = 1 - CONFIDENCE) -> Equivalence:
    """Two one-sided t-tests (scipy) that the mean paired difference lies within +-margin.

    With a hundred or more questions the t-approximation holds for 0/1 differences too. A sample
    with no spread is equivalent exactly when its value lies inside the margin.
    """
    if margin <= 0:
        raise ValueError("the equivalence margin must be positive")
    d = np.asarray(differences, dtype=float)
    if d.size < 2:
        return Equivalence(math.nan, math.nan, math.nan, math.nan, margin, int(d.size))
    mean = float(d.mean())
    if np.ptp(d) == 0:
        p = 0.0 if abs(mean) < margin else 1.0
        return Equivalence(mean, mean, mean, p, margin, int(d.size))
    p_low = stats.ttest_1samp(d, -margin, alternative="greater").pvalue
    p_high = stats.ttest_1samp(d, margin, alternative="less").pvalue
    half = stats.t.ppf(1 - alpha, d.size - 1) * stats.sem(d)
    return Equivalence(mean, float(mean - half), float(mean + half), float(max(p_low, p_high)), margin,
                       int(d.size))


def tost_interval(differences: Sequence[float], *, alpha: float = 1 - CONFIDENCE) -> tuple[float, float]:
    """The t-interval at 1 - 2*alpha of a mean paired difference: `tost`'s interval, at any level
    (a Holm step's, when the two one-sided tests are corrected over a family)."""
    d = np.asarray(differences, dtype=float)
    if d.size < 2:
        return math.nan, math.nan
    if np.ptp(d) == 0:
        return float(d.mean()), float(d.mean())
    half = stats.t.ppf(1 - alpha, d.size - 1) * stats.sem(d)
    return float(d.mean() - half), float(d.mean() + half)


def paired_proportion_tost(a: np.ndarray, b: np.ndarray, *, margin: float,
                           alpha: float = 1 - CONFIDENCE) -> Equivalence:
    """Equivalence of two paired yes/no runs within +-margin: Newcombe's 1 - 2*alpha interval
    must lie inside (-margin, margin) (the interval form of two one-sided tests). The p-value is
    the smallest alpha at which it does, found by bisection; 1 when even a zero-width interval
    would not fit."""
    if margin <= 0:
        raise ValueError("the equivalence margin must be positive")
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    estimate = float(b.mean() - a.mean()) if a.size else math.nan

    def inside(level_alpha: float) -> bool:
        lo, hi = paired_proportion_interval(a, b, confidence=1 - 2 * level_alpha)
        return -margin < lo and hi < margin

    lo, hi = paired_proportion_interval(a, b, confidence=1 - 2 * alpha)
    if a.size == 0 or not inside(0.4999):
        return Equivalence(estimate, lo, hi, 1.0 if a.size else math.nan, margin, int(a.size))
    low, high = 1e-9, 0.4999
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (low, mid) if inside(mid) else (mid, high)
    return Equivalence(estimate, lo, hi, high, margin, int(a.size))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order (NaN stays NaN and is not counted).

    Sort ascending, multiply the i-th smallest (0-based) by m - i, carry the running maximum so
    adjusted values never decrease, cap at 1. Reject where adjusted p < alpha: the family-wise
    error over the whole family stays below alpha, and it is never more conservative than
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


def _rejection_regions(n: int, discordance: float, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (m, wins) at which the two-sided exact McNemar test rejects at level alpha, for m
    discordant questions among n, with the probability of m: three flat arrays."""
    ms, ks, weights = [], [], []
    for m, weight in enumerate(stats.binom.pmf(np.arange(n + 1), n, discordance)):
        if m == 0 or weight < 1e-12:
            continue
        wins = np.arange(m + 1)
        tail = np.minimum(stats.binom.cdf(wins, m, 0.5), stats.binom.sf(wins - 1, m, 0.5))
        p_two_sided = np.minimum(1.0, 2 * tail)
        rejected = wins[p_two_sided <= alpha]
        ms.append(np.full(rejected.size, m))
        ks.append(rejected)
        weights.append(np.full(rejected.size, weight))
    if not ms:
        return np.array([], int), np.array([], int), np.array([])
    return np.concatenate(ms), np.concatenate(ks), np.concatenate(weights)


def family_alpha(family_size: int, *, alpha: float = 1 - CONFIDENCE) -> float:
    """The level one comparison of a Holm family of `family_size` is sure to be judged at:
    alpha / family_size. Holm's first step (the smallest p-value) uses exactly this level and
    later steps a larger one, so power computed here is the conservative figure for every
    comparison of the family (and the exact one under Bonferroni)."""
    if family_size < 1:
        raise ValueError("a family holds at least one comparison")
    return alpha / family_size


def mcnemar_power(n: int, discordance: float, difference: float, *, alpha: float = 1 - CONFIDENCE,
                  family_size: int = settings.FAMILY_SIZE, regions: tuple | None = None) -> float:
    """Power of the two-sided exact McNemar test on n paired questions, when a share
    `discordance` of them is answered by exactly one run and B's recall exceeds A's by `difference`,
    judged at `family_alpha(family_size)` (alpha itself for a comparison judged alone).

    Sums over the number of discordant questions (binomial in n) and, given it, over B's wins
    (binomial with p = (discordance + difference) / (2 * discordance)).
    """
    if not 0 < discordance <= 1 or not 0 <= difference <= discordance:
        return math.nan
    p_win = (discordance + difference) / (2 * discordance)
    level = family_alpha(family_size, alpha=alpha)
    ms, ks, weights = regions if regions is not None else _rejection_regions(n, discordance, level)
    return float(np.sum(weights * stats.binom.pmf(ks, ms, p_win)))


def minimum_detectable_difference(n: int, discordance: float, *, power: float = settings.POWER,
                                  alpha: float = 1 - CONFIDENCE,
                                  family_size: int = settings.FAMILY_SIZE) -> float:
    """The smallest paired difference in recall that the exact McNemar test detects with the
    given power on n questions, at a given share of discordant questions, judged at the family's
    level `family_alpha(family_size)`: a table of 8 comparisons needs a larger difference than one
    comparison alone. NaN when even `discordance` itself (every disagreement a win) is not detectable."""
    regions = _rejection_regions(n, discordance, family_alpha(family_size, alpha=alpha))
    if mcnemar_power(n, discordance, discordance, regions=regions) < power:
        return math.nan
    lo, hi = 0.0, discordance
    for _ in range(30):  # bisection to well below the third decimal a lesson prints
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if mcnemar_power(n, discordance, mid, regions=regions) >= power else (mid, hi)
    return hi


def equivalence_power(n: int, discordance: float, *, margin: float = settings.EQUIVALENCE_MARGIN,
                      recall: float = settings.POWER_RECALL, alpha: float = 1 - CONFIDENCE,
                      draws: int = settings.POWER_DRAWS, seed: int = SEED) -> float:
    """Probability that `paired_proportion_tost` shows equivalence within +-margin on n paired
    questions when the two runs truly do equally well (recall `recall` each, a share
    `discordance` answered by one run only, half each way): the power of an "equivalent" verdict.

    Estimated from `draws` seeded paired tables (its standard error is at most 0.5 / sqrt(draws));
    each distinct table's 1 - 2*alpha Newcombe interval is computed once.
    """
    half = discordance / 2
    cells = [recall - half, half, half, 1 - recall - half]  # both, only B, only A, neither
    if min(cells) < 0:
        raise ValueError("discordance / 2 must fit under both recall and 1 - recall")
    tables, counts = np.unique(np.random.default_rng(seed).multinomial(n, cells, size=draws), axis=0,
                               return_counts=True)
    shown = 0
    for table, count in zip(tables, counts, strict=True):
        lo, hi = newcombe_interval(*map(int, table), confidence=1 - 2 * alpha)
        shown += count * (-margin < lo and hi < margin)
    return float(shown / draws)
