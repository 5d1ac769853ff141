"""Judging retrieval against the golden set: relevance, metrics, budgets, intervals, comparisons.

Every lesson calls the same functions here, so two numbers from two notebooks differ only by the
one variable the lesson changed. Metrics count answerable questions only; unanswerable ones are
used to see whether the top score tells "found something" from "found nothing" (`score_gap`).

One judge for every pipeline: a chunk is relevant when it comes from the gold page and its body
holds the normalised evidence (`is_relevant`). Crediting a chunk by its section id
(`is_relevant_by_section`) is only available to chunkers that record sections, so it tilts every
naive-against-structured comparison; it exists for one sensitivity table (`sensitivity`), and
runs judged by different rules refuse to be compared.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# Plain tqdm: a text bar reads the same in JupyterLab, in a terminal and on GitHub.
from tqdm import tqdm

from course_lib.core.retrieve import Retriever, rank_hits
from course_lib.evaluation.budget import budget_values
from course_lib.evaluation.golden import KINDS, Question
from course_lib.evaluation.judging import EVIDENCE, JUDGES, SECTION, judge_rule
from course_lib.evaluation.stats import mean_interval, wilson_interval
from course_lib.records import Chunk, Hit
from course_lib.settings import CONFIDENCE, CONTEXT_BUDGET, DEPTH, N_RESAMPLES, SEED

MRR_CUT = DEPTH


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


def _mean(values: np.ndarray) -> float:
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
    k: int = DEPTH
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


def _judged(q: Question, ranked: Sequence[Chunk], scores: Sequence[float], judge: str) -> QuestionResult:
    """Judge one ranked, already-cut list of chunks for one question."""
    rule = judge_rule(judge)
    first = next((rank for rank, c in enumerate(ranked, 1) if rule(c, q)), None)
    return QuestionResult(q, tuple(c.id for c in ranked), tuple(float(s) for s in scores), first,
                          ranked[0] if ranked else None, tuple(ranked), judge)


def evaluate_rankings(questions: Sequence[Question], rankings: Sequence[Sequence[Hit]],
                      chunks: Sequence[Chunk], *, name: str, k: int = DEPTH,
                      judge: str = EVIDENCE) -> RunResult:
    """Judge precomputed rankings (one list of Hits per question, indexing into `chunks`).

    Each ranking is re-sorted with `rank_hits` (so ties are broken the same way for every
    retriever) and cut at k before judging.
    """
    if len(rankings) != len(questions):
        raise ValueError(f"{len(rankings)} rankings for {len(questions)} questions")
    judge_rule(judge)
    results = []
    for q, hits in zip(questions, rankings, strict=True):
        hits = rank_hits(hits)[:k]
        for hit in hits:
            if not 0 <= hit.index < len(chunks):
                raise IndexError(f"hit index {hit.index} outside the {len(chunks)} chunks")
        results.append(_judged(q, [chunks[h.index] for h in hits], [h.score for h in hits], judge))
    return RunResult(name=name, results=results, k=k, judge=judge)


def evaluate_retriever(retriever: Retriever, questions: Sequence[Question], *, name: str,
                       k: int = DEPTH, progress: bool = True, judge: str = EVIDENCE) -> RunResult:
    """Run every question through a retriever and judge its top k against the golden set."""
    rankings = [retriever.search(q.question, k=k)
                for q in tqdm(questions, desc=name, disable=not progress)]
    return evaluate_rankings(questions, rankings, retriever.chunks, name=name, k=k, judge=judge)


def rejudge(run: RunResult, judge: str) -> RunResult:
    """The same rankings judged by another rule (no search): for the sensitivity analysis."""
    results = [_judged(r.question, r.chunks, r.scores, judge) for r in run.results]
    return RunResult(name=run.name, results=results, k=run.k, judge=judge)


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


def bootstrap_ci(values: Sequence[float], *, n_resamples: int = N_RESAMPLES,
                 confidence: float = CONFIDENCE, seed: int = SEED) -> tuple[float, float, float]:
    """Return (mean, lo, hi): the mean and its BCa bootstrap interval (`stats.mean_interval`).

    For MRR and other continuous per-question values; for a share of hits use
    `stats.wilson_interval`, which keeps a width at 0 and 1. Fixed random state, so a rerun
    prints the same interval; empty input gives three NaNs.
    """
    x = np.asarray(values, dtype=float)
    lo, hi = mean_interval(x, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return (float(x.mean()) if x.size else math.nan), lo, hi


def _json_float(value: float) -> float | None:
    """NaN is not valid JSON; report an undefined metric as None."""
    return None if math.isnan(value) else float(value)


def _wilson(hits: np.ndarray, confidence: float = CONFIDENCE) -> list[float | None]:
    lo, hi = wilson_interval(int(hits.sum()), int(hits.size), confidence=confidence)
    return [_json_float(lo), _json_float(hi)]


def summary(run: RunResult, *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
            budget: int | None = CONTEXT_BUDGET, counter=None) -> dict:
    """The headline numbers of a run as a JSON-ready dict, with 95% intervals.

    Keys: name, judge, recall@5, recall@20 (Wilson intervals), mrr (BCa bootstrap interval),
    each with a `<key>_ci` [lo, hi] pair; with a `budget` (tokens; None skips it, and the
    tokenizer) also budget, recall@budget (Wilson), precision@budget and iou@budget (means);
    then n_answerable, n_unanswerable and score_gap. Undefined values are None.
    """
    out: dict = {"name": run.name, "judge": run.judge}
    for key in ("recall@5", "recall@20"):
        hits = run.hits_at(int(key.split("@")[1]))
        out[key], out[f"{key}_ci"] = _json_float(_mean(hits)), _wilson(hits)
    mean, lo, hi = bootstrap_ci(run.reciprocal_ranks(), n_resamples=n_resamples, seed=seed)
    out["mrr"], out["mrr_ci"] = _json_float(mean), [_json_float(lo), _json_float(hi)]
    if budget is not None:
        values = budget_values(run, budget=budget, counter=counter)
        out["budget"] = budget
        out["recall@budget"], out["recall@budget_ci"] = (_json_float(_mean(values["recall"])),
                                                         _wilson(values["recall"]))
        out["precision@budget"] = _json_float(_mean(values["precision"]))
        out["iou@budget"] = _json_float(_mean(values["iou"]))
    out["n_answerable"], out["n_unanswerable"] = len(run.answerable), len(run.unanswerable)
    out["score_gap"] = score_gap(run)
    return out


def by_kind(run: RunResult) -> dict[str, dict]:
    """Counts and recall@5 / recall@20 per question kind, each with its Wilson interval.

    Each value holds n, hit@5, hit@20, miss@20 (counts), recall@5, recall@20 and their
    `_ci` pairs (None for the unanswerable kind, which has nothing to find). With four
    questions of a kind the interval is wide: a per-kind claim needs it. Kinds come in the
    golden set's order.
    """
    groups: dict[str, list[QuestionResult]] = {}
    for result in run.results:
        groups.setdefault(result.question.kind, []).append(result)
    order = sorted(groups, key=lambda kind: (KINDS.index(kind) if kind in KINDS else len(KINDS),
                                             kind))
    return {kind: _kind_stats(RunResult(run.name, groups[kind], k=run.k, judge=run.judge))
            for kind in order}


def _kind_stats(group: RunResult) -> dict:
    """The by_kind entry for one kind's sub-run."""
    hits5, hits20 = group.hits_at(5), group.hits_at(20)
    return {"n": len(group.results), "hit@5": int(hits5.sum()), "hit@20": int(hits20.sum()),
            "miss@20": int(hits20.size - hits20.sum()),
            "recall@5": _json_float(_mean(hits5)), "recall@5_ci": _wilson(hits5),
            "recall@20": _json_float(_mean(hits20)), "recall@20_ci": _wilson(hits20)}


# --- sensitivity to the judging rule -----------------------------------------------------------

SENSITIVITY_METRICS = ("recall@5", "recall@20", "mrr")


def sensitivity(runs: Sequence[RunResult] | Mapping[str, Retriever],
                questions: Sequence[Question] | None = None, *, progress: bool = False) -> list[dict]:
    """Each pipeline's recall@5, recall@20 and MRR under the judge and under section credit.

    Pass finished runs (re-judged, no search) or a {name: retriever} mapping with the
    questions. One row per pipeline: {"pipeline", "evidence": {metric: value},
    "section": {...}, "shift": {...}}; the shift is what section credit adds. For lesson 02's
    one-time table only: the two columns are never compared with each other as pipelines.
    """
    if isinstance(runs, Mapping):
        if questions is None:
            raise ValueError("retrievers need the questions to run")
        runs = [evaluate_retriever(r, questions, name=name, progress=progress) for name, r in runs.items()]
    rows = []
    for run in runs:
        judged = {judge: rejudge(run, judge) for judge in JUDGES}
        values = {judge: {"recall@5": r.recall_at(5), "recall@20": r.recall_at(20), "mrr": r.mrr}
                  for judge, r in judged.items()}
        shift = {m: values[SECTION][m] - values[EVIDENCE][m] for m in SENSITIVITY_METRICS}
        rows.append({"pipeline": run.name, "n": len(run.answerable), **values, "shift": shift})
    return rows
