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

import numpy as np

# Plain tqdm: a text bar reads the same in JupyterLab, in a terminal and on GitHub.
from tqdm import tqdm

from course_lib.core.retrieve import Retriever, rank_hits
from course_lib.evaluation.budget import budget_values
from course_lib.evaluation.golden import KINDS, Question
from course_lib.evaluation.judging import EVIDENCE, JUDGES, QUOTE, SECTION, judge_rule
from course_lib.evaluation.results import QuestionResult, RunResult, mean_or_nan
from course_lib.evaluation.stats import mean_interval, wilson_interval
from course_lib.records import Chunk, Hit
from course_lib.settings import CONFIDENCE, CONTEXT_BUDGET_TOKENS, EVAL_CUTOFFS, EVAL_DEPTH, N_RESAMPLES, SEED


def _judged(q: Question, ranked: Sequence[Chunk], scores: Sequence[float], judge: str) -> QuestionResult:
    """Judge one ranked, already-cut list of chunks for one question."""
    rule = judge_rule(judge)
    first = next((rank for rank, c in enumerate(ranked, 1) if rule(c, q)), None)
    return QuestionResult(q, tuple(c.id for c in ranked), tuple(float(s) for s in scores), first,
                          ranked[0] if ranked else None, tuple(ranked), judge)


def evaluate_rankings(questions: Sequence[Question], rankings: Sequence[Sequence[Hit]],
                      chunks: Sequence[Chunk], *, name: str, k: int = EVAL_DEPTH,
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
                       k: int = EVAL_DEPTH, progress: bool = True, judge: str = EVIDENCE) -> RunResult:
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
            budget: int | None = CONTEXT_BUDGET_TOKENS, counter=None) -> dict:
    """The headline numbers of a run as a JSON-ready dict, with 95% intervals.

    Keys: name, judge, recall@5, recall@20 (Wilson intervals), mrr (BCa bootstrap interval),
    each with a `<key>_ci` [lo, hi] pair; with a `budget` (tokens; None skips it, and the
    tokenizer) also budget, recall@budget (Wilson), precision@budget and iou@budget (means);
    then n_answerable, n_unanswerable and score_gap. Undefined values are None.
    """
    out: dict = {"name": run.name, "judge": run.judge}
    for cutoff in EVAL_CUTOFFS:
        hits = run.hits_at(cutoff)
        out[f"recall@{cutoff}"], out[f"recall@{cutoff}_ci"] = _json_float(mean_or_nan(hits)), _wilson(hits)
    mean, lo, hi = bootstrap_ci(run.reciprocal_ranks(), n_resamples=n_resamples, seed=seed)
    out["mrr"], out["mrr_ci"] = _json_float(mean), [_json_float(lo), _json_float(hi)]
    if budget is not None:
        values = budget_values(run, budget=budget, counter=counter)
        out["budget"] = budget
        out["recall@budget"], out["recall@budget_ci"] = (_json_float(mean_or_nan(values["recall"])),
                                                         _wilson(values["recall"]))
        out["precision@budget"] = _json_float(mean_or_nan(values["precision"]))
        out["iou@budget"] = _json_float(mean_or_nan(values["iou"]))
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
    """The by_kind entry for one kind's sub-run: counts and recall at each of EVAL_CUTOFFS."""
    stats: dict = {"n": len(group.results)}
    for cutoff in EVAL_CUTOFFS:
        hits = group.hits_at(cutoff)
        stats[f"hit@{cutoff}"] = int(hits.sum())
        stats[f"recall@{cutoff}"] = _json_float(mean_or_nan(hits))
        stats[f"recall@{cutoff}_ci"] = _wilson(hits)
    deepest = EVAL_CUTOFFS[-1]
    stats[f"miss@{deepest}"] = int(group.hits_at(deepest).size) - stats[f"hit@{deepest}"]
    return stats


# --- sensitivity to the judging rule -----------------------------------------------------------

HEADLINE_METRICS = (*(f"recall@{cutoff}" for cutoff in EVAL_CUTOFFS), "mrr")


def sensitivity(runs: Sequence[RunResult] | Mapping[str, Retriever],
                questions: Sequence[Question] | None = None, *, progress: bool = False) -> list[dict]:
    """Each pipeline's recall@5, recall@20 and MRR under the judge (the whole answer unit), under
    the quote alone and under section credit.

    Pass finished runs (re-judged, no search) or a {name: retriever} mapping with the
    questions. One row per pipeline: {"pipeline", "evidence": {metric: value}, "quote": {...},
    "section": {...}, "shift": {...}, "quote_shift": {...}}; `shift` is what section credit adds,
    `quote_shift` what dropping the fragments adds. For lesson 02's one-time table only: the
    columns are never compared with each other as pipelines.
    """
    if isinstance(runs, Mapping):
        if questions is None:
            raise ValueError("retrievers need the questions to run")
        runs = [evaluate_retriever(r, questions, name=name, progress=progress) for name, r in runs.items()]
    rows = []
    for run in runs:
        judged = {judge: rejudge(run, judge) for judge in JUDGES}
        values = {judge: {**{f"recall@{k}": r.recall_at(k) for k in EVAL_CUTOFFS}, "mrr": r.mrr}
                  for judge, r in judged.items()}
        shift, quote_shift = ({m: values[rule][m] - values[EVIDENCE][m] for m in HEADLINE_METRICS}
                              for rule in (SECTION, QUOTE))
        rows.append({"pipeline": run.name, "n": len(run.answerable), **values, "shift": shift,
                     "quote_shift": quote_shift})
    return rows
