"""The judge: one rule for every pipeline, and the normalisation it shares with the golden set.

A retrieved chunk is relevant when it comes from the gold page and its body holds the normalised
evidence (`is_relevant`). Crediting a chunk by its section id (`is_relevant_by_section`) is only
available to chunkers that record sections, so it tilts every naive-against-structured
comparison; it exists for one sensitivity table, and runs judged by different rules refuse to be
compared.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from course_lib.evaluation.golden import Question, normalize
from course_lib.records import Chunk

EVIDENCE, SECTION = "evidence", "section"


def is_relevant(chunk: Chunk, q: Question) -> bool:
    """The judge: the chunk is from the gold page and its BODY holds the normalised evidence.

    The body, not the embedded text: a context line ("datetime > Format Codes") helps a
    retriever find the chunk but is not an answer. Works the same for every chunker, since any
    chunk has a page and a body. Nothing is relevant to an unanswerable question.
    """
    if not q.answerable or chunk.doc != q.doc or q.evidence is None:
        return False
    return normalize(q.evidence) in normalize(chunk.body)


def is_relevant_by_section(chunk: Chunk, q: Question) -> bool:
    """Sensitivity rule only: the judge above, OR the chunk's section id is the gold section.

    Only chunkers that record sections can score by the second clause, whatever text the chunk
    holds, so never use it to compare pipelines: `sensitivity` reports how much it moves each.
    """
    if q.answerable and chunk.doc == q.doc and q.section is not None and chunk.section_id == q.section:
        return True
    return is_relevant(chunk, q)


JUDGES: dict[str, Callable[[Chunk, Question], bool]] = {
    EVIDENCE: is_relevant, SECTION: is_relevant_by_section}


def judge_rule(judge: str) -> Callable[[Chunk, Question], bool]:
    """The relevance function registered under `judge` ("evidence" or "section")."""
    if judge not in JUDGES:
        raise ValueError(f"unknown judge {judge!r}; known: {', '.join(JUDGES)}")
    return JUDGES[judge]


def unreachable(questions: Sequence[Question], chunks: Sequence[Chunk]) -> list[Question]:
    """The answerable questions that NO chunk can answer under the judge (evidence cut apart).

    No retriever can find these, so a golden set is only fair to a chunking when this is empty.
    """
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc, []).append(chunk)
    return [q for q in questions if q.answerable
            and not any(is_relevant(c, q) for c in by_doc.get(q.doc, []))]
