"""The context budget: how much of what a prompt would carry is the answer.

recall@5 rewards whichever pipeline has the longest chunks: five long chunks hold more text than
five short ones. These metrics compare pipelines at the same number of tokens of ranked context
instead, as Chroma's report "Evaluating Chunking Strategies for Retrieval" measures chunkers by
token-level recall, precision and IoU. The production write-up's "four chunks instead of eight"
is a budget claim of the same kind.

The context is the ranked chunk BODIES laid end to end (no context line: it is metadata, not text
a prompt must carry), counted in content tokens with the embedder's tokenizer, and cut at the
budget: the chunk that crosses it is truncated, the ones after it are dropped. The evidence
counts when a chunk of that cut context is still relevant under the run's judge, so a quote the
cut splits does not count.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from course_lib.evaluation.results import QuestionResult, RunResult
from course_lib.records import Chunk
from course_lib.settings import CONTEXT_BUDGET_TOKENS

BUDGET_METRICS = {"recall@budget": "recall", "precision@budget": "precision", "iou@budget": "iou"}


def _content_tokens(counter, text: str) -> int:
    """Tokens of `text` without the special tokens the counter adds to every text."""
    return counter.count(text) - counter.count("")


def _truncate(counter, text: str, n: int) -> str:
    """The prefix of `text` that holds `n` content tokens (word pieces, or words without one)."""
    if hasattr(counter, "truncate"):
        return counter.truncate(text, n + counter.count(""))
    return " ".join(text.split()[:n])


def budget_context(result: QuestionResult, *, budget: int = CONTEXT_BUDGET_TOKENS,
                   counter=None) -> list[Chunk]:
    """The ranked chunks that fit in `budget` content tokens, the last one cut at the budget.

    Bodies are laid end to end in rank order (no context line: that is metadata, not text a
    prompt must carry). A chunk that starts before the budget is used up is kept, truncated to
    what is left; the chunks after it are dropped.
    """
    from course_lib.core.tokens import get_counter

    counter = counter or get_counter()
    kept, left = [], budget
    for chunk in result.chunks:
        if left <= 0:
            break
        n = _content_tokens(counter, chunk.body)
        cut = chunk if n <= left else dataclasses.replace(chunk, body=_truncate(counter, chunk.body, left))
        kept.append(cut)
        left -= n
    return kept


def budget_values(run: RunResult, *, budget: int = CONTEXT_BUDGET_TOKENS, counter=None) -> dict[str,
                  np.ndarray]:
    """Per answerable question: recall, token precision and IoU of the budget's context.

    recall: 1 when a chunk of the context, cut at the budget, is still relevant under the run's
    judge (so evidence cut off by the budget does not count). precision: evidence tokens over
    context tokens (0 when the evidence is not in the context). IoU: evidence tokens over
    context + evidence - evidence found, as Chroma's chunking report measures chunkers. The
    evidence counts once, however many chunks repeat it.
    """
    from course_lib.core.tokens import get_counter
    from course_lib.evaluation.judging import judge_rule

    counter = counter or get_counter()
    rule = judge_rule(run.judge)
    recall, precision, iou = [], [], []
    for result in run.answerable:
        context = budget_context(result, budget=budget, counter=counter)
        found = any(rule(chunk, result.question) for chunk in context)
        size = sum(_content_tokens(counter, c.body) for c in context)
        evidence = _content_tokens(counter, result.question.evidence or "")
        overlap = evidence if found else 0
        recall.append(float(found))
        precision.append(overlap / size if size else 0.0)
        iou.append(overlap / (size + evidence - overlap) if size + evidence else 0.0)
    return {"recall": np.array(recall), "precision": np.array(precision), "iou": np.array(iou)}


def recall_within_budget(run: RunResult, *, budget: int = CONTEXT_BUDGET_TOKENS, counter=None) -> float:
    """Share of answerable questions whose evidence is in the first `budget` tokens of context.

    recall@5 rewards long chunks (five long chunks hold more text than five short ones); this
    compares pipelines at the same amount of text a prompt would carry.
    """
    recall = budget_values(run, budget=budget, counter=counter)["recall"]
    return float(recall.mean()) if recall.size else float("nan")
