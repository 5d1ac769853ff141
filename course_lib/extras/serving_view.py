"""Why a shorter prompt loses questions: the ranks its cut falls between, and what sits above.

A prompt of `keep` chunks loses, against one of `depth` chunks, exactly the questions whose first
relevant chunk is ranked between keep + 1 and depth. Lesson 08 uses these helpers to show those
questions and the chunks that outranked their evidence, so the four-against-eight verdict is
explained, not only asserted.
"""
from __future__ import annotations

from collections.abc import Sequence

from course_lib import settings
from course_lib.evaluation.results import QuestionResult, RunResult
from course_lib.records import Chunk


def cut_losses(run: RunResult, *, keep: int, depth: int) -> list[QuestionResult]:
    """The answerable questions a `keep`-chunk prompt loses against a `depth`-chunk one.

    Those are the questions whose first relevant chunk sits at ranks keep + 1 .. depth: every
    other question has its evidence in both prompts or in neither.
    """
    if not 0 <= keep <= depth:
        raise ValueError(f"keep={keep} must lie between 0 and depth={depth}")
    return [r for r in run.answerable if r.first_hit_rank is not None and keep < r.first_hit_rank <= depth]


def same_page_above(result: QuestionResult, *, keep: int) -> int:
    """How many of the first `keep` chunks come from the page of the first relevant chunk.

    Counts the near neighbours (sibling sections, the same class's other methods) that share the
    evidence's words and push it down; 0 when the question has no relevant chunk.
    """
    if result.first_hit_rank is None:
        return 0
    page = result.chunks[result.first_hit_rank - 1].doc
    return sum(c.doc == page for c in result.chunks[:keep])


def section(chunk: Chunk, *, width: int = settings.SECTION_LABEL_CHARS) -> str:
    """A chunk's page and deepest heading, short enough for a table cell."""
    heading = chunk.heading_path[-1] if len(chunk.heading_path) > 1 else "(page top)"
    return f"{chunk.doc.split('/')[-1]} › {heading}"[:width]


def losses_table(results: Sequence[QuestionResult], *, keep: int) -> str:
    """A Markdown table of lost questions: the question, its evidence's rank and section, and the
    sections of the `keep` chunks that were ranked above it."""
    rows = ["| question | evidence at rank | evidence's section | the chunks above it |", "|---|---|---|---|"]
    for r in results:
        above = "<br>".join(section(c) for c in r.chunks[:keep])
        rows.append(f"| {r.question.id}: {r.question.question} | {r.first_hit_rank} | "
                    f"{section(r.chunks[r.first_hit_rank - 1])} | {above} |")
    return "\n".join(rows)
