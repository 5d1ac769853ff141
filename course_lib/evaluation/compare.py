"""Comparing two runs on the same questions: the difference, its interval, its test, its family.

Pairing by question removes the variation between easy and hard questions, so a real difference
shows up with far fewer questions than two independent intervals would need. The test matches the
metric (see `course_lib.evaluation.stats`): recall@k, a yes/no per question, is judged by the
exact McNemar test on the questions where the runs disagree, and every comparison carries those
wins and losses; MRR and the other continuous metrics by a paired permutation test with a BCa
interval. A table of comparisons is one Holm family (`holm_adjust`), and it says so.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from course_lib.evaluation.budget import BUDGET_METRICS, budget_values
from course_lib.evaluation.judging import EVIDENCE
from course_lib.evaluation.results import RunResult
from course_lib.evaluation.stats import (
    Equivalence,
    holm,
    mcnemar_exact,
    paired_mean_test,
    paired_proportion_interval,
    paired_proportion_tost,
    tost,
)
from course_lib.settings import CONFIDENCE, EQUIVALENCE_MARGIN, EVAL_CUTOFFS, N_RESAMPLES, SEED

MCNEMAR, PERMUTATION = "exact McNemar", "paired permutation"


@dataclass(frozen=True)
class Comparison:
    """Run B against run A on one metric: the difference, its interval, its test and p-value.

    `wins` counts the questions where B scores higher than A, `losses` where it scores lower
    (for recall@k: found by B only, by A only); `test` names the test behind `p_value`.
    `equivalence` is the two one-sided tests against `EQUIVALENCE_MARGIN`, the only ground for a
    "no difference" verdict. `p_holm` is set by `holm_adjust`, with `family` the size of the
    family it corrected for and `family_name` what that family is; `p` is the one to read.
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

    @property
    def p(self) -> float:
        """The p-value to report: Holm-adjusted when the comparison belongs to a family."""
        return self.p_value if self.p_holm is None else self.p_holm

    @property
    def significant(self) -> bool:
        """True when the reported p is below 1 - confidence (0.05 by default)."""
        return self.p < 1 - self.confidence

    @property
    def equivalent(self) -> bool:
        """True when both one-sided tests show |delta| below the margin."""
        return self.equivalence.shown(alpha=1 - self.confidence)


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
                      margin: float = EQUIVALENCE_MARGIN, n_resamples: int = N_RESAMPLES,
                      confidence: float = CONFIDENCE, seed: int = SEED) -> Comparison:
    """Compare two runs on the same questions: delta = B - A, its interval, its test.

    recall@k: exact McNemar p-value on the discordant questions and Newcombe's paired interval.
    Continuous metrics: paired permutation p-value (sign flips, as scipy defines it) and BCa bootstrap
    interval (scipy). Both also
    get two one-sided tests against `margin` (on Newcombe's interval for recall, t-tests for the
    rest), the only ground for a "no difference" claim.
    """
    a, b = paired_values(run_a, run_b, metric)
    wins, losses = int(np.sum(b > a)), int(np.sum(b < a))
    alpha = 1 - confidence
    if is_binary(metric):
        lo, hi = paired_proportion_interval(a, b, confidence=confidence)
        p_value, test = mcnemar_exact(wins, losses), MCNEMAR
        equivalence = paired_proportion_tost(a, b, margin=margin, alpha=alpha)
    else:
        result = paired_mean_test(b - a, confidence=confidence, n_resamples=n_resamples, seed=seed)
        lo, hi, p_value, test = result.lo, result.hi, result.p_value, PERMUTATION
        equivalence = tost(b - a, margin=margin, alpha=alpha)
    return Comparison(run_a.name, run_b.name, metric, int(a.size), float(a.mean()), float(b.mean()),
                      float((b - a).mean()), lo, hi, p_value, wins, losses, test, equivalence,
                      confidence, run_a.judge)


def holm_adjust(comparisons: Sequence[Comparison], *, family: str | None = None) -> list[Comparison]:
    """The comparisons with `p_holm` set: Holm's correction over all of them, as ONE family.

    A lesson's table asks several questions at once; correcting over the whole table keeps the
    chance of any false "significant" in it below 1 - confidence. `family` names the family
    (printed with the table); by default it lists the comparisons' metrics. Raises ValueError
    if the comparisons were judged by different rules.
    """
    if len({c.judge for c in comparisons}) > 1:
        raise ValueError("comparisons judged by different rules cannot share a table")
    metrics = ", ".join(dict.fromkeys(c.metric for c in comparisons))
    name = family or f"the {metrics} comparisons of this table"
    adjusted = holm([c.p_value for c in comparisons])
    return [dataclasses.replace(c, p_holm=p, family=len(comparisons), family_name=name)
            for c, p in zip(comparisons, adjusted, strict=True)]
