"""Saying "I don't know": a score threshold chosen on dev by a declared rule, judged on test.

Lesson 09 measures a gap between the top retrieval score of answerable and unanswerable
questions. A gap is only useful once it becomes a decision: below a threshold the service
abstains instead of building a prompt from chunks that hold no answer. The threshold is chosen
on the dev split by a rule fixed before any result is read (`choose_threshold`), then judged once
on test (`judge_threshold`): how many unanswerable questions it abstains on, and how many
answerable ones it wrongly turns away, each with its 95% Wilson interval, the interval the course
gives every share of questions.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from course_lib import settings
from course_lib.evaluation.results import RunResult
from course_lib.evaluation.stats import wilson_interval

# The declared rule: wrongly turn away at most this share of the answerable dev questions. Turning
# away a question the corpus answers costs the user an answer; 5% is the price fixed in advance.
MAX_WRONG_ABSTAIN = 0.05


def choose_threshold(answerable_scores: Sequence[float], *,
                     max_wrong_abstain: float = MAX_WRONG_ABSTAIN) -> float:
    """The highest threshold that abstains on at most `max_wrong_abstain` of the answerable scores.

    A question is abstained on when its score is strictly below the threshold. Only answerable
    scores set it: the unanswerable questions are few (a dozen per split), and a threshold tuned
    on them would fit those few; their share abstained on is what the rule is then judged by.
    """
    scores = np.sort(np.asarray(answerable_scores, dtype=float))
    if scores.size == 0 or np.isnan(scores).any():
        raise ValueError("choose_threshold needs at least one answerable score and no NaN")
    if not 0 <= max_wrong_abstain < 1:
        raise ValueError(f"max_wrong_abstain must lie in [0, 1), not {max_wrong_abstain}")
    allowed = math.floor(max_wrong_abstain * scores.size)  # answerable questions it may turn away
    return float(scores[allowed])  # strictly below it: at most `allowed` scores (fewer on ties)


@dataclass(frozen=True)
class Share:
    """k of n questions, with its Wilson interval at `settings.CONFIDENCE`."""

    k: int
    n: int
    lo: float
    hi: float

    @property
    def value(self) -> float:
        return self.k / self.n if self.n else math.nan

    def __str__(self) -> str:
        if not self.n:
            return "0/0 (no question)"
        return f"{self.k}/{self.n} = {self.value:.2f} [{self.lo:.2f}, {self.hi:.2f}]"


def share(k: int, n: int) -> Share:
    """k of n with its 95% Wilson interval (the course's interval for a share of questions)."""
    lo, hi = wilson_interval(k, n, confidence=settings.CONFIDENCE)
    return Share(k, n, lo, hi)


@dataclass(frozen=True)
class AbstainResult:
    """A threshold judged on one split: unanswerable questions abstained on (the more the better)
    and answerable questions wrongly abstained on (the fewer the better)."""

    threshold: float
    unanswerable_abstained: Share
    answerable_abstained: Share

    def __str__(self) -> str:
        return (f"abstain below {self.threshold:.3f}: "
                f"unanswerable abstained on {self.unanswerable_abstained}; "
                f"answerable wrongly abstained on {self.answerable_abstained} "
                f"({settings.CONFIDENCE:.0%} Wilson intervals)")


def judge_threshold(threshold: float, answerable_scores: Sequence[float],
                    unanswerable_scores: Sequence[float]) -> AbstainResult:
    """How a threshold fares on one split's scores (abstain when a score is below it)."""
    below = [int(np.sum(np.asarray(scores, dtype=float) < threshold))
             for scores in (unanswerable_scores, answerable_scores)]
    return AbstainResult(threshold, share(below[0], len(unanswerable_scores)),
                         share(below[1], len(answerable_scores)))


def top_scores(run: RunResult) -> tuple[list[float], list[float]]:
    """(answerable, unanswerable) top scores of a run; a question with an empty ranking scores -inf,
    so it is always abstained on (nothing was found)."""
    def top(results):
        return [r.top_score if r.top_score is not None else -math.inf for r in results]

    return top(run.answerable), top(run.unanswerable)


def abstain_on_test(dev: RunResult, test: RunResult, *,
                    max_wrong_abstain: float = MAX_WRONG_ABSTAIN) -> tuple[AbstainResult, AbstainResult]:
    """Choose the threshold on dev's answerable scores, then judge it on dev and on test (read once).

    Both runs must come from the same retriever: a threshold is only meaningful on the scale of
    the scores it was chosen on (cosine, BM25 and MaxSim scores differ in range).
    """
    if dev.name != test.name:
        raise ValueError(f"a threshold chosen on {dev.name!r} cannot be judged on {test.name!r}: "
                         "use the same retriever on both splits")
    dev_answerable, dev_unanswerable = top_scores(dev)
    threshold = choose_threshold(dev_answerable, max_wrong_abstain=max_wrong_abstain)
    return (judge_threshold(threshold, dev_answerable, dev_unanswerable),
            judge_threshold(threshold, *top_scores(test)))
