"""The judge: one rule for every pipeline, and the normalisation it shares with the golden set.

A retrieved chunk is relevant when it comes from a page that answers the question and its body
holds that page's whole normalised ANSWER UNIT: the quote and every fragment a reader also needs
(a table row's key cell, the other lines of the code), in one chunk (`is_relevant`). Markup is
folded on both sides (`golden.normalize`), so a library's Markdown is not a miss.

Two other rules exist for one sensitivity table each, never for a headline: the quote alone
(`is_relevant_by_quote`, the course's earlier rule, which credits a row's description without the
name the question asks for) and section credit (`is_relevant_by_section`, available only to
chunkers that record sections, so it tilts every naive-against-structured comparison). Runs judged
by different rules refuse to be compared.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from course_lib.evaluation.golden import Question, normalize
from course_lib.records import Chunk

EVIDENCE, QUOTE, SECTION = "evidence", "quote", "section"


def answer_places(q: Question) -> list[tuple[str, str]]:
    """Every (page, quote) that answers the question: the gold one first, then its `also` places."""
    return [(doc, unit[0]) for doc, unit in answer_units(q)]


def answer_units(q: Question) -> list[tuple[str, tuple[str, ...]]]:
    """Every (page, answer unit) that answers the question, the gold place first: each unit is
    the quote followed by the fragments that must sit in the same chunk."""
    if not q.answerable or q.evidence is None:
        return []
    return [(q.doc, q.unit)] + [(place.doc, place.unit) for place in q.also]


def holds_unit(body: str, unit: Sequence[str]) -> bool:
    """True when a normalised chunk body holds every piece of an answer unit."""
    return all(normalize(piece) in body for piece in unit)


def is_relevant(chunk: Chunk, q: Question) -> bool:
    """The judge: the chunk comes from a page that answers the question and its BODY holds that
    page's whole answer unit (the gold place, or one of the pooled `also` places).

    The body, not the embedded text: a context line ("datetime > Format Codes") helps a
    retriever find the chunk but is not an answer. The whole unit, not the quote: a table row's
    description without its key ("Day of the year as a zero-padded decimal number." without
    `%j`) does not tell the reader which directive to use. Works the same for every chunker, since
    any chunk has a page and a body. Nothing is relevant to an unanswerable question.
    """
    units = [unit for doc, unit in answer_units(q) if doc == chunk.doc]
    if not units:
        return False
    body = normalize(chunk.body)
    return any(holds_unit(body, unit) for unit in units)


def is_relevant_by_quote(chunk: Chunk, q: Question) -> bool:
    """Sensitivity rule only: the course's earlier judge, the quote alone without its fragments.

    It credits a table row's description cell even when the chunk lost the row's key; reported
    beside the judge (`sensitivity`) to show how much answer units move each pipeline."""
    quotes = [quote for doc, quote in answer_places(q) if doc == chunk.doc]
    body = normalize(chunk.body) if quotes else ""
    return any(normalize(quote) in body for quote in quotes)


def is_relevant_by_section(chunk: Chunk, q: Question) -> bool:
    """Sensitivity rule only: the judge above, OR the chunk's section id is the gold section.

    Only chunkers that record sections can score by the second clause, whatever text the chunk
    holds, so never use it to compare pipelines: `sensitivity` reports how much it moves each.
    """
    if q.answerable and chunk.doc == q.doc and q.section is not None and chunk.section_id == q.section:
        return True
    return is_relevant(chunk, q)


JUDGES: dict[str, Callable[[Chunk, Question], bool]] = {
    EVIDENCE: is_relevant, QUOTE: is_relevant_by_quote, SECTION: is_relevant_by_section}


def judge_rule(judge: str) -> Callable[[Chunk, Question], bool]:
    """The relevance function registered under `judge` ("evidence", "quote" or "section")."""
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
