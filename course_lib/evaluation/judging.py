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


def answer_places(q: Question) -> list[tuple[str, str]]:
    """Every (page, quote) that answers the question: the gold one first, then its `also` places."""
    if not q.answerable or q.evidence is None:
        return []
    return [(q.doc, q.evidence)] + [(place.doc, place.evidence) for place in q.also]


def is_relevant(chunk: Chunk, q: Question) -> bool:
    """The judge: the chunk comes from a page that answers the question and its BODY holds that
    page's normalised quote (the gold place, or one of the pooled `also` places).

    The body, not the embedded text: a context line ("datetime > Format Codes") helps a
    retriever find the chunk but is not an answer. Works the same for every chunker, since any
    chunk has a page and a body. Nothing is relevant to an unanswerable question.
    """
    places = [quote for doc, quote in answer_places(q) if doc == chunk.doc]
    if not places:
        return False
    body = normalize(chunk.body)
    return any(normalize(quote) in body for quote in places)


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
    """The answerable questions that NO chunk can answer under the judge (every quote cut apart).

    No retriever can find these with this chunking: a fact about the chunker, which lessons
    report per chunking and split. It never decides which questions are in the golden set.
    """
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc, []).append(chunk)
    return [q for q in questions if q.answerable
            and not any(is_relevant(c, q) for doc, _ in answer_places(q) for c in by_doc.get(doc, []))]
