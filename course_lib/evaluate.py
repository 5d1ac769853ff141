"""Judging retrieval against the golden set: relevance, metrics, confidence intervals, comparisons.

Every lesson calls the same functions here, so two numbers from two notebooks differ only by the
one variable the lesson changed. Metrics count answerable questions only; unanswerable ones are
used to see whether the top score tells "found something" from "found nothing" (`score_gap`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
# Plain tqdm: a text bar reads the same in JupyterLab, in a terminal and on GitHub.
from tqdm import tqdm

from .golden import KINDS, Question, normalize
from .records import Chunk, Hit
from .search import Retriever, rank_hits

MRR_CUT = 20


def is_relevant(chunk: Chunk, q: Question) -> bool:
    """True when the chunk answers the question: same page, and the quote or the section.

    The evidence test works for any chunker (naive chunks have no section id); the section test
    credits a structured chunk of the right section even when the quote was cut across two
    chunks. Nothing is relevant to an unanswerable question.
    """
    if not q.answerable or chunk.doc != q.doc:
        return False
    if q.section is not None and chunk.section_id == q.section:
        return True
    return q.evidence is not None and normalize(q.evidence) in normalize(chunk.body)


@dataclass(frozen=True)
class QuestionResult:
    """How one question fared: the ranked chunk ids and scores, and the rank of the first hit."""

    question: Question
    ranked_ids: tuple[str, ...]
    scores: tuple[float, ...]
    first_hit_rank: int | None
    top_chunk: Chunk | None

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


def _mean(values: np.ndarray) -> float:
    """Mean that is NaN, not a warning, for an empty array (e.g. no answerable questions)."""
    return float(values.mean()) if values.size else math.nan


@dataclass
class RunResult:
    """All question results of one retrieval run; metrics count answerable questions only.

    `k` is the depth the rankings were cut at: asking for recall@k or MRR beyond it raises,
    because a hit ranked below the cut was never seen.
    """

    name: str
    results: list[QuestionResult]
    k: int = 20

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
        return _mean(self.hits_at(k))

    def reciprocal_ranks(self, *, cut: int = MRR_CUT) -> np.ndarray:
        """Reciprocal first-hit rank per answerable question, 0 past `cut`."""
        self._check_depth(cut)
        return np.array([r.reciprocal_rank(cut=cut) for r in self.answerable])

    @property
    def mrr(self) -> float:
        """Mean reciprocal rank of the first hit, cut at 20 (NaN if no answerable question)."""
        return _mean(self.reciprocal_ranks())

    def recall_curve(self, *, max_k: int = 20) -> np.ndarray:
        """recall@k for k = 1..max_k, as an array of length max_k."""
        return np.array([self.recall_at(k) for k in range(1, max_k + 1)])


def _judge(q: Question, hits: list[Hit], chunks: Sequence[Chunk]) -> QuestionResult:
    """Judge one ranked, already-cut list of hits for one question."""
    for hit in hits:
        if not 0 <= hit.index < len(chunks):
            raise IndexError(f"hit index {hit.index} outside the {len(chunks)} chunks")
    ranked = [chunks[hit.index] for hit in hits]
    first = next((rank for rank, c in enumerate(ranked, 1) if is_relevant(c, q)), None)
    return QuestionResult(q, tuple(c.id for c in ranked), tuple(float(h.score) for h in hits),
                          first, ranked[0] if ranked else None)


def evaluate_rankings(questions: Sequence[Question], rankings: Sequence[Sequence[Hit]],
                      chunks: Sequence[Chunk], *, name: str, k: int = 20) -> RunResult:
    """Judge precomputed rankings (one list of Hits per question, indexing into `chunks`).

    Each ranking is re-sorted with `rank_hits` (so ties are broken the same way for every
    retriever) and cut at k before judging.
    """
    if len(rankings) != len(questions):
        raise ValueError(f"{len(rankings)} rankings for {len(questions)} questions")
    results = [_judge(q, rank_hits(hits)[:k], chunks) for q, hits in zip(questions, rankings)]
    return RunResult(name=name, results=results, k=k)


def evaluate_retriever(retriever: Retriever, questions: Sequence[Question], *, name: str,
                       k: int = 20, progress: bool = True) -> RunResult:
    """Run every question through a retriever and judge its top k against the golden set."""
    rankings = [retriever.search(q.question, k=k)
                for q in tqdm(questions, desc=name, disable=not progress)]
    return evaluate_rankings(questions, rankings, retriever.chunks, name=name, k=k)


def score_gap(run: RunResult) -> float | None:
    """Mean top score on answerable minus unanswerable questions; None if a group is empty.

    A small gap means the retriever is as confident when the corpus has no answer as when it
    has one, so no score threshold can say "I don't know".
    """
    tops = [[r.top_score for r in group if r.top_score is not None]
            for group in (run.answerable, run.unanswerable)]
    if not all(tops):
        return None
    return float(np.mean(tops[0]) - np.mean(tops[1]))


def bootstrap_ci(values: Sequence[float], *, n_resamples: int = 2000, confidence: float = 0.95,
                 seed: int = 0) -> tuple[float, float, float]:
    """Return (mean, lo, hi): the mean and its percentile-bootstrap confidence interval.

    With a golden set of a hundred questions one question is a whole point of recall; the
    interval shows which differences are noise. Fixed seed, so a notebook rerun prints the
    same interval. Empty input gives three NaNs.
    """
    values = np.asarray(values, dtype=float)
    if not values.size:
        return math.nan, math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(n_resamples, values.size))].mean(axis=1)
    alpha = 100 * (1 - confidence) / 2
    lo, hi = np.percentile(means, [alpha, 100 - alpha])
    return float(values.mean()), float(lo), float(hi)


@dataclass(frozen=True)
class Comparison:
    """Run B against run A on one metric: the difference, its interval and its p-value."""

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
    confidence: float = 0.95


def _metric_values(run: RunResult, metric: str) -> dict[str, float]:
    """Per-answerable-question values of "recall@K" or "mrr", keyed by question id."""
    match = re.fullmatch(r"recall@(\d+)", metric.lower())
    if match:
        values = run.hits_at(int(match.group(1)))
    elif metric.lower() == "mrr":
        values = run.reciprocal_ranks()
    else:
        raise ValueError(f"unknown metric '{metric}': use 'recall@K' or 'mrr'")
    return {r.question.id: float(v) for r, v in zip(run.answerable, values)}


def _sign_flip_p(diffs: np.ndarray, *, n_resamples: int, seed: int) -> float:
    """Two-sided p-value of a paired randomisation test that flips the sign of each difference.

    Under "A and B are equally good" each per-question difference is as likely negated; the
    p-value is the share of flips whose mean is at least as far from 0 as the observed one,
    counting the observed assignment itself so that p is never exactly 0.
    """
    observed = abs(diffs.mean())
    signs = np.random.default_rng([seed, 1]).choice((-1.0, 1.0), size=(n_resamples, diffs.size))
    flipped = np.abs((signs * diffs).mean(axis=1))
    # The tolerance keeps float rounding from hiding flips exactly as extreme as the observed.
    extreme = np.count_nonzero(flipped >= observed - 1e-12)
    return float((extreme + 1) / (n_resamples + 1))


def paired_comparison(run_a: RunResult, run_b: RunResult, *, metric: str = "recall@5",
                      n_resamples: int = 10000, confidence: float = 0.95,
                      seed: int = 0) -> Comparison:
    """Compare two runs on the same questions: delta = B - A, paired bootstrap CI, p-value.

    Pairing by question removes the variation between easy and hard questions, so a real
    improvement shows up with far fewer questions than two independent intervals would need.
    Raises ValueError when the runs were not made on the same question ids.
    """
    ids_a, ids_b = ([r.question.id for r in run.results] for run in (run_a, run_b))
    if sorted(ids_a) != sorted(ids_b) or len(set(ids_a)) != len(ids_a):
        raise ValueError(f"runs '{run_a.name}' and '{run_b.name}' cover different questions")
    values_a, values_b = _metric_values(run_a, metric), _metric_values(run_b, metric)
    a = np.array(list(values_a.values()))
    b = np.array([values_b[qid] for qid in values_a])
    diffs = b - a
    if not diffs.size:
        raise ValueError("no answerable questions to compare on")
    delta, lo, hi = bootstrap_ci(diffs, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return Comparison(run_a.name, run_b.name, metric, int(diffs.size), float(a.mean()),
                      float(b.mean()), delta, lo, hi,
                      _sign_flip_p(diffs, n_resamples=n_resamples, seed=seed), confidence)


def _json_float(value: float) -> float | None:
    """NaN is not valid JSON; report an undefined metric as None."""
    return None if math.isnan(value) else float(value)


def summary(run: RunResult, *, n_resamples: int = 2000, seed: int = 0) -> dict:
    """The headline numbers of a run as a JSON-ready dict, with 95% bootstrap intervals.

    Keys: name, recall@5, recall@20, mrr (each with a `<key>_ci` [lo, hi] pair), n_answerable,
    n_unanswerable and score_gap. Undefined values (no answerable questions) are None.
    """
    out: dict = {"name": run.name}
    for key, values in (("recall@5", run.hits_at(5)), ("recall@20", run.hits_at(20)),
                        ("mrr", run.reciprocal_ranks())):
        mean, lo, hi = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        out[key], out[f"{key}_ci"] = _json_float(mean), [_json_float(lo), _json_float(hi)]
    out["n_answerable"], out["n_unanswerable"] = len(run.answerable), len(run.unanswerable)
    out["score_gap"] = score_gap(run)
    return out


def by_kind(run: RunResult) -> dict[str, dict]:
    """Counts and recall@5 / recall@20 per question kind, to see which kinds a retriever misses.

    Each value holds n, hit@5, hit@20, miss@20 (counts) and recall@5, recall@20 (None for the
    unanswerable kind, which has nothing to find). Kinds come in the golden set's order.
    """
    groups: dict[str, list[QuestionResult]] = {}
    for result in run.results:
        groups.setdefault(result.question.kind, []).append(result)
    order = sorted(groups, key=lambda kind: (KINDS.index(kind) if kind in KINDS else len(KINDS),
                                             kind))
    return {kind: _kind_stats(RunResult(run.name, groups[kind], k=run.k)) for kind in order}


def _kind_stats(group: RunResult) -> dict:
    """The by_kind entry for one kind's sub-run."""
    hits5, hits20 = group.hits_at(5), group.hits_at(20)
    return {"n": len(group.results), "hit@5": int(hits5.sum()), "hit@20": int(hits20.sum()),
            "miss@20": int(hits20.size - hits20.sum()),
            "recall@5": _json_float(_mean(hits5)), "recall@20": _json_float(_mean(hits20))}
