"""Comparing two runs on the same questions: the difference, its interval, its test, its family.

Pairing by question removes the variation between easy and hard questions, so a real difference
shows up with far fewer questions than two independent intervals would need.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from course_lib.evaluation.budget import BUDGET_METRICS, budget_values
from course_lib.evaluation.judging import EVIDENCE
from course_lib.evaluation.metrics import RunResult
from course_lib.evaluation.stats import bca_bootstrap, holm
from course_lib.settings import CONFIDENCE, N_RESAMPLES, SEED


@dataclass(frozen=True)
class Comparison:
    """Run B against run A on one metric: the difference, its interval and its p-value.

    `lo`, `hi` and `p_value` come from the same BCa resamples, so p < 1 - confidence exactly
    when the interval excludes 0. `p_holm` is set by `holm_adjust`, with `family` the number
    of comparisons it corrected for; `p` is the one to read.
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
    confidence: float = CONFIDENCE
    judge: str = EVIDENCE
    p_holm: float | None = None
    family: int | None = None

    @property
    def p(self) -> float:
        """The p-value to report: Holm-adjusted when the comparison belongs to a table."""
        return self.p_value if self.p_holm is None else self.p_holm

    @property
    def significant(self) -> bool:
        """True when the reported p is below 1 - confidence (0.05 by default)."""
        return self.p < 1 - self.confidence


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


def paired_comparison(run_a: RunResult, run_b: RunResult, *, metric: str = "recall@5",
                      n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE,
                      seed: int = SEED) -> Comparison:
    """Compare two runs on the same questions: delta = B - A, paired BCa interval and p-value.

    Pairing by question removes the variation between easy and hard questions, so a real
    improvement shows up with far fewer questions than two independent intervals would need.
    Raises ValueError when the runs were not made on the same question ids or were judged by
    different rules.
    """
    judge = check_same_judge(run_a, run_b)
    ids_a, ids_b = ([r.question.id for r in run.results] for run in (run_a, run_b))
    if sorted(ids_a) != sorted(ids_b) or len(set(ids_a)) != len(ids_a):
        raise ValueError(f"runs '{run_a.name}' and '{run_b.name}' cover different questions")
    values_a, values_b = _metric_values(run_a, metric), _metric_values(run_b, metric)
    a = np.array(list(values_a.values()))
    b = np.array([values_b[qid] for qid in values_a])
    if not a.size:
        raise ValueError("no answerable questions to compare on")
    boot = bca_bootstrap(b - a, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return Comparison(run_a.name, run_b.name, metric, boot.n, float(a.mean()), float(b.mean()),
                      boot.estimate, boot.lo, boot.hi, boot.p_value, confidence, judge)


def holm_adjust(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The comparisons with `p_holm` set: Holm's correction over the table, per metric.

    A lesson's headline table asks several questions at once; correcting within each metric
    keeps the chance of any false "significant" in that column below 1 - confidence. Raises
    ValueError if the comparisons were judged by different rules.
    """
    if len({c.judge for c in comparisons}) > 1:
        raise ValueError("comparisons judged by different rules cannot share a table")
    out = list(comparisons)
    for metric in dict.fromkeys(c.metric for c in comparisons):
        positions = [i for i, c in enumerate(comparisons) if c.metric == metric]
        adjusted = holm([comparisons[i].p_value for i in positions])
        for i, p in zip(positions, adjusted, strict=True):
            out[i] = dataclasses.replace(comparisons[i], p_holm=p, family=len(positions))
    return out
