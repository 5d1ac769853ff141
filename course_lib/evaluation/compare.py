"""Comparing two runs on the same questions: the difference, its interval, its test, its family.

Pairing by question removes the variation between easy and hard questions, so a real difference
shows up with far fewer questions than two independent intervals would need. The test matches the
metric (see `course_lib.evaluation.stats`): recall@k, a yes/no per question, is judged by the
exact McNemar test on the questions where the runs disagree, and every comparison carries those
wins and losses; MRR and the other continuous metrics by a paired permutation test with a BCa
interval. A table of comparisons is one Holm family (`holm_adjust`), and it says so: primary
when it compares the primary metrics (`settings.PRIMARY_METRICS`), secondary otherwise.

The interval printed beside a verdict word is the one the word was decided on
(`Comparison.decision`): the 90% interval of the two one-sided tests for "equivalent"; for "gain",
"loss" and "cannot tell", the interval the test inverts at the level of the comparison's Holm
step (`course_lib.evaluation.intervals`). `lo` and `hi` stay the plain 95% interval.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from course_lib.evaluation.budget import BUDGET_METRICS, budget_values
from course_lib.evaluation.intervals import (
    holm_step_alphas,
    paired_proportion_test_interval,
    sign_flip_interval,
)
from course_lib.evaluation.judging import EVIDENCE
from course_lib.evaluation.results import RunResult
from course_lib.evaluation.stats import (
    Equivalence,
    holm,
    mcnemar_exact,
    newcombe_interval,
    paired_mean_test,
    paired_proportion_interval,
    paired_proportion_tost,
    tost,
    tost_interval,
)
from course_lib.settings import (
    CONFIDENCE,
    EQUIVALENCE_MARGIN,
    EVAL_CUTOFFS,
    MRR_EQUIVALENCE_MARGIN,
    N_RESAMPLES,
    PRIMARY_METRICS,
    SEED,
)

MCNEMAR, PERMUTATION = "exact McNemar", "paired permutation"
PRIMARY, SECONDARY = "primary", "secondary"
EQUIVALENCE_BASIS, TEST_BASIS = "equivalence", "test"


@dataclass(frozen=True)
class DecisionInterval:
    """The interval a verdict word was decided on, at `level` (0.90 for 90%).

    `basis` is "equivalence" (the 1 - 2*alpha interval of the two one-sided tests: inside
    +-margin means "equivalent") or "test" (the difference test's own interval at the level of
    the comparison's Holm step: excluding 0 means "gain" or "loss"). `widened` marks a "cannot
    tell" interval that lay inside +-margin and was widened to take in the equivalence interval
    too, so that it shows both facts a "cannot tell" rests on: it contains 0 and reaches past the
    margin. A union of two intervals covers the difference at least as often as either does, so
    its `level` is the higher of their two levels.
    """

    lo: float
    hi: float
    level: float
    basis: str
    widened: bool = False


@dataclass(frozen=True)
class Comparison:
    """Run B against run A on one metric: the difference, its interval, its test and p-value.

    `wins` counts the questions where B scores higher than A, `losses` where it scores lower
    (for recall@k: found by B only, by A only); `test` names the test behind `p_value`.
    `equivalence` is the two one-sided tests against `EQUIVALENCE_MARGIN`, the only ground for a
    "no difference" verdict. `p_holm` is set by `holm_adjust`, with `family` the size of the
    family it corrected for, `family_name` what that family is, `family_kind` "primary" or
    "secondary" and `step_alpha` the level of this comparison's Holm step; `p` is the one to read.
    `equivalence_step_alpha` is the level of the two one-sided tests' own Holm step over the
    same family (their p-values corrected as the difference tests' are), and
    `equivalence_p_holm` their Holm-adjusted p: "equivalent" is shown by the 1 - 2 * step
    interval, 90% for a comparison judged alone.
    `p_floor` is the smallest p-value the test can give by resampling (0 for an exact test), and
    `differences` the per-question differences a permutation test's interval is inverted from.
    """

    name_a: str
    name_b: str
    metric: str
    n: int
    value_a: float
    value_b: float
    delta: float
    lo: float
    hi: float
    p_value: float
    wins: int
    losses: int
    test: str
    equivalence: Equivalence
    confidence: float = CONFIDENCE
    judge: str = EVIDENCE
    p_holm: float | None = None
    family: int | None = None
    family_name: str | None = None
    family_kind: str | None = None
    step_alpha: float | None = None
    equivalence_step_alpha: float | None = None
    equivalence_p_holm: float | None = None
    p_floor: float = 0.0
    differences: np.ndarray | None = field(default=None, repr=False, compare=False)
    n_resamples: int = N_RESAMPLES
    seed: int = SEED

    @property
    def p(self) -> float:
        """The p-value to report: Holm-adjusted when the comparison belongs to a family."""
        return self.p_value if self.p_holm is None else self.p_holm

    @property
    def significant(self) -> bool:
        """True when the reported p is below 1 - confidence (0.05 by default)."""
        return self.p < 1 - self.confidence

    @property
    def p_at_floor(self) -> bool:
        """True when the test's p-value is the smallest its resampling can give: "p at most this"."""
        return 0 < self.p_floor and self.p_value <= self.p_floor

    @property
    def equivalence_alpha(self) -> float:
        """The level each one-sided test is judged at: its Holm step's in a family, else alpha."""
        alpha = 1 - self.confidence
        return alpha if self.equivalence_step_alpha is None else self.equivalence_step_alpha

    @cached_property
    def equivalence_interval(self) -> tuple[float, float]:
        """The two one-sided tests' 1 - 2 * `equivalence_alpha` interval (90% judged alone)."""
        alpha, eq = self.equivalence_alpha, self.equivalence
        if alpha == 1 - self.confidence:
            return eq.lo, eq.hi
        if self.test == MCNEMAR:
            return newcombe_interval(*self._paired_table(), confidence=1 - 2 * alpha)
        if self.differences is None:
            return eq.lo, eq.hi
        return tost_interval(self.differences, alpha=alpha)

    @property
    def equivalent(self) -> bool:
        """True when both one-sided tests show |delta| below the margin at their Holm level: their
        1 - 2 * `equivalence_alpha` interval lies inside (-margin, +margin), the same decision read
        off the interval that is printed."""
        lo, hi = self.equivalence_interval
        margin = self.equivalence.margin
        return bool(-margin < lo and hi < margin)

    @cached_property
    def decision(self) -> DecisionInterval:
        """The interval the verdict word was decided on (see `DecisionInterval`).

        "equivalent": the two one-sided tests' interval at their Holm level (90% judged alone),
        inside +-margin. Otherwise the difference test's interval at this comparison's Holm level
        (1 - alpha when it was judged alone), which excludes 0 exactly when Holm finds a gain or a
        loss; a "cannot tell" one inside +-margin takes in the equivalence interval too, at the
        higher of the two levels (see `DecisionInterval`).
        """
        alpha, margin = 1 - self.confidence, self.equivalence.margin
        eq_lo, eq_hi = self.equivalence_interval
        eq_level = 1 - 2 * self.equivalence_alpha
        if not self.significant and self.equivalent:
            return DecisionInterval(eq_lo, eq_hi, eq_level, EQUIVALENCE_BASIS)
        level = alpha if self.step_alpha is None else self.step_alpha
        lo, hi = self._test_interval(level)
        if not self.significant and -margin < lo and hi < margin:
            return DecisionInterval(min(lo, eq_lo), max(hi, eq_hi), max(1 - level, eq_level), TEST_BASIS,
                                    widened=True)
        return DecisionInterval(lo, hi, 1 - level, TEST_BASIS)

    def _paired_table(self) -> tuple[int, int, int, int]:
        """Both runs answer, only B, only A, neither: a recall comparison's paired table."""
        both = min(max(0, round(self.value_a * self.n) - self.losses), self.n - self.wins - self.losses)
        return both, self.wins, self.losses, self.n - both - self.wins - self.losses

    def _test_interval(self, alpha: float) -> tuple[float, float]:
        """The interval the comparison's own test inverts at level alpha, agreeing with `significant`."""
        if self.test == MCNEMAR:
            return paired_proportion_test_interval(*self._paired_table(), alpha=alpha,
                                                   rejected=self.significant)
        if self.differences is None:
            raise ValueError(f"comparison {self.name_b} against {self.name_a} kept no per-question "
                             "differences to invert its permutation test from")
        return sign_flip_interval(self.differences, alpha=alpha, rejected=self.significant,
                                  n_resamples=self.n_resamples, seed=self.seed)


def is_binary(metric: str) -> bool:
    """recall@K and recall@budget are yes/no per question; MRR and the budget ratios are not."""
    return re.fullmatch(r"recall@(\d+|budget)", metric.lower()) is not None


def _metric_values(run: RunResult, metric: str) -> dict[str, float]:
    """Per-answerable-question values of "recall@K", "mrr" or a budget metric, by question id."""
    key = metric.lower()
    match = re.fullmatch(r"recall@(\d+)", key)
    if match:
        values = run.hits_at(int(match.group(1)))
    elif key == "mrr":
        values = run.reciprocal_ranks()
    elif key in BUDGET_METRICS:
        values = budget_values(run)[BUDGET_METRICS[key]]
    else:
        raise ValueError(f"unknown metric '{metric}': use 'recall@K', 'mrr' or one of "
                         f"{', '.join(BUDGET_METRICS)}")
    return {r.question.id: float(v) for r, v in zip(run.answerable, values, strict=True)}


def equivalence_margin(metric: str) -> float:
    """The declared equivalence margin of a metric: MRR's for "mrr", the recall margin for every
    other (recall@k, recall@budget and the budget ratios, all shares); settings says why each."""
    return MRR_EQUIVALENCE_MARGIN if metric.lower() == "mrr" else EQUIVALENCE_MARGIN


def check_same_judge(*runs: RunResult) -> str:
    """The judge the runs share; ValueError when two were judged by different rules."""
    judges = {run.judge for run in runs}
    if len(judges) > 1:
        names = ", ".join(f"'{run.name}' by {run.judge}" for run in runs)
        raise ValueError(f"runs judged by different rules cannot be compared: {names}")
    return judges.pop() if judges else EVIDENCE


def paired_values(run_a: RunResult, run_b: RunResult, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The metric's per-question values of both runs, paired by question id (A's order).

    Raises ValueError when the runs were not made on the same question ids, were judged by
    different rules, or have no answerable question.
    """
    check_same_judge(run_a, run_b)
    ids_a, ids_b = ([r.question.id for r in run.results] for run in (run_a, run_b))
    if sorted(ids_a) != sorted(ids_b) or len(set(ids_a)) != len(ids_a):
        raise ValueError(f"runs '{run_a.name}' and '{run_b.name}' cover different questions")
    values_a, values_b = _metric_values(run_a, metric), _metric_values(run_b, metric)
    a = np.array(list(values_a.values()))
    b = np.array([values_b[qid] for qid in values_a])
    if not a.size:
        raise ValueError("no answerable questions to compare on")
    return a, b


def paired_comparison(run_a: RunResult, run_b: RunResult, *, metric: str = f"recall@{EVAL_CUTOFFS[0]}",
                      margin: float | None = None, n_resamples: int = N_RESAMPLES,
                      confidence: float = CONFIDENCE, seed: int = SEED) -> Comparison:
    """Compare two runs on the same questions: delta = B - A, its interval, its test.

    recall@k: exact McNemar p-value on the discordant questions and Newcombe's paired interval.
    Continuous metrics: paired permutation p-value (sign flips, as scipy defines it) and BCa bootstrap
    interval (scipy). Both also
    get two one-sided tests against `margin` (on Newcombe's interval for recall, t-tests for the
    rest; by default the metric's declared margin, `equivalence_margin`), the only ground for a
    "no difference" claim.
    """
    a, b = paired_values(run_a, run_b, metric)
    return compare_values(a, b, metric=metric, names=(run_a.name, run_b.name), judge=run_a.judge,
                          margin=margin, n_resamples=n_resamples, confidence=confidence, seed=seed)


def compare_values(a: np.ndarray, b: np.ndarray, *, metric: str, names: tuple[str, str] = ("A", "B"),
                   judge: str = EVIDENCE, margin: float | None = None, n_resamples: int = N_RESAMPLES,
                   confidence: float = CONFIDENCE, seed: int = SEED) -> Comparison:
    """`paired_comparison` on two arrays of per-question values already paired by question
    (a simulation, or a metric no run computes): the same tests, intervals and equivalence."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    margin = equivalence_margin(metric) if margin is None else margin
    wins, losses = int(np.sum(b > a)), int(np.sum(b < a))
    alpha, differences, p_floor = 1 - confidence, None, 0.0
    if is_binary(metric):
        lo, hi = paired_proportion_interval(a, b, confidence=confidence)
        p_value, test = mcnemar_exact(wins, losses), MCNEMAR
        equivalence = paired_proportion_tost(a, b, margin=margin, alpha=alpha)
    else:
        differences = b - a
        result = paired_mean_test(differences, confidence=confidence, n_resamples=n_resamples, seed=seed)
        lo, hi, p_value, test = result.lo, result.hi, result.p_value, PERMUTATION
        equivalence = tost(differences, margin=margin, alpha=alpha)
        p_floor = result.p_floor
    return Comparison(names[0], names[1], metric, int(a.size), float(a.mean()), float(b.mean()),
                      float((b - a).mean()), lo, hi, p_value, wins, losses, test, equivalence,
                      confidence, judge, p_floor=p_floor, differences=differences,
                      n_resamples=n_resamples, seed=seed)


def holm_adjust(comparisons: Sequence[Comparison], *, family: str | None = None,
                family_kind: str | None = None) -> list[Comparison]:
    """The comparisons with `p_holm` set: Holm's correction over all of them, as ONE family.

    A lesson's table asks several questions at once; correcting over the whole table keeps the
    chance of any false "significant" in it below 1 - confidence. `family` names the family
    (printed with the table); by default it lists the comparisons' metrics. `family_kind` is
    "primary" or "secondary"; by default primary when every metric is in PRIMARY_METRICS. Each
    comparison also gets `step_alpha`, the level of its Holm step, at which its printed interval
    excludes 0 exactly when Holm rejects; and its two one-sided tests are corrected over the
    same family in the same way (`equivalence_step_alpha`, `equivalence_p_holm`), so that an
    "equivalent" is as guarded against many looks as a "gain". Raises ValueError if the
    comparisons were judged by different rules, or a primary family holds a metric that is not
    primary.
    """
    if len({c.judge for c in comparisons}) > 1:
        raise ValueError("comparisons judged by different rules cannot share a table")
    metrics = list(dict.fromkeys(c.metric for c in comparisons))
    kind = family_kind or _family_kind(metrics)
    if kind not in (PRIMARY, SECONDARY):
        raise ValueError(f"family_kind must be '{PRIMARY}' or '{SECONDARY}', not '{kind}'")
    if kind == PRIMARY and _family_kind(metrics) != PRIMARY:
        raise ValueError(f"a primary family compares only {', '.join(PRIMARY_METRICS)}, "
                         f"not {', '.join(metrics)}")
    name = family or f"the {', '.join(metrics)} comparisons of this table"
    p_values = [c.p_value for c in comparisons]
    alpha = 1 - comparisons[0].confidence if comparisons else 1 - CONFIDENCE
    steps = holm_step_alphas(p_values, alpha=alpha)
    equivalence_p = [c.equivalence.p_value for c in comparisons]
    equivalence_steps = holm_step_alphas(equivalence_p, alpha=alpha)
    return [dataclasses.replace(c, p_holm=p, family=len(comparisons), family_name=name, family_kind=kind,
                                step_alpha=step, equivalence_p_holm=eq_p, equivalence_step_alpha=eq_step)
            for c, p, step, eq_p, eq_step in zip(comparisons, holm(p_values), steps, holm(equivalence_p),
                                                 equivalence_steps, strict=True)]


def _family_kind(metrics: Sequence[str]) -> str:
    """Primary when every metric is one of the primary metrics, secondary otherwise."""
    return PRIMARY if all(m.lower() in PRIMARY_METRICS for m in metrics) else SECONDARY
