"""What a retrieval run produced, question by question, and the metrics read off it.

A `QuestionResult` keeps the ranked chunks of one question and the rank of its first relevant
chunk; a `RunResult` holds a run's results and computes recall@k and MRR over the answerable
questions. `metrics` makes them (judging rankings against the golden set), `budget` and `compare`
read them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from course_lib.evaluation.golden import Question
from course_lib.evaluation.judging import EVIDENCE
from course_lib.records import Chunk
from course_lib.settings import EVAL_DEPTH

MRR_CUT = EVAL_DEPTH


@dataclass(frozen=True)
class QuestionResult:
    """How one question fared: the ranked chunks and scores, and the rank of the first hit.

    `chunks` keeps the ranked chunks themselves, so a run can be re-judged by another rule
    (`rejudge`) and measured at a token budget without searching again.
    """

    question: Question
    ranked_ids: tuple[str, ...]
    scores: tuple[float, ...]
    first_hit_rank: int | None
    top_chunk: Chunk | None
    chunks: tuple[Chunk, ...] = ()
    judge: str = EVIDENCE

    @property
    def top_score(self) -> float | None:
        """The best score returned, or None when the ranking was empty."""
        return self.scores[0] if self.scores else None

    def hit_at(self, k: int) -> bool:
        """True when a relevant chunk is among the first k."""
        return self.first_hit_rank is not None and self.first_hit_rank <= k

    def reciprocal_rank(self, *, cut: int = MRR_CUT) -> float:
        """1 / rank of the first hit, or 0 when there is none within `cut`."""
        return 1.0 / self.first_hit_rank if self.hit_at(cut) else 0.0


def mean_or_nan(values: np.ndarray) -> float:
    """Mean that is NaN, not a warning, for an empty array (e.g. no answerable questions)."""
    return float(values.mean()) if values.size else math.nan


@dataclass
class RunResult:
    """All question results of one retrieval run; metrics count answerable questions only.

    `k` is the depth the rankings were cut at: asking for recall@k or MRR beyond it raises,
    because a hit ranked below the cut was never seen. `judge` names the relevance rule
    ("evidence" unless a sensitivity analysis asked for "section").
    """

    name: str
    results: list[QuestionResult]
    k: int = EVAL_DEPTH
    judge: str = EVIDENCE

    @property
    def answerable(self) -> list[QuestionResult]:
        return [r for r in self.results if r.question.answerable]

    @property
    def unanswerable(self) -> list[QuestionResult]:
        return [r for r in self.results if not r.question.answerable]

    @property
    def first_hit_ranks(self) -> list[int | None]:
        """First-hit rank per answerable question, in question order."""
        return [r.first_hit_rank for r in self.answerable]

    def _check_depth(self, k: int) -> None:
        if not 1 <= k <= self.k:
            raise ValueError(f"k={k} is outside 1..{self.k}, the depth run '{self.name}' kept")

    def hits_at(self, k: int) -> np.ndarray:
        """1.0/0.0 per answerable question: was a relevant chunk in the top k."""
        self._check_depth(k)
        return np.array([float(r.hit_at(k)) for r in self.answerable])

    def recall_at(self, k: int) -> float:
        """Share of answerable questions with a relevant chunk in the top k (NaN if none)."""
        return mean_or_nan(self.hits_at(k))

    def reciprocal_ranks(self, *, cut: int = MRR_CUT) -> np.ndarray:
        """Reciprocal first-hit rank per answerable question, 0 past `cut`."""
        self._check_depth(cut)
        return np.array([r.reciprocal_rank(cut=cut) for r in self.answerable])

    @property
    def mrr(self) -> float:
        """Mean reciprocal rank of the first hit, cut at 20 (NaN if no answerable question)."""
        return mean_or_nan(self.reciprocal_ranks())

    def recall_curve(self, *, max_k: int = EVAL_DEPTH) -> np.ndarray:
        """recall@k for k = 1..max_k, as an array of length max_k."""
        return np.array([self.recall_at(k) for k in range(1, max_k + 1)])
