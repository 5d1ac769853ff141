"""The records that flow through the pipeline: pages, blocks, chunks and search hits.

Every stage of the course passes these small frozen dataclasses along, so a lesson can swap one
stage (the parser, the chunker, the retriever) without touching the others.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


def text_digest(text: str) -> str:
    """The sha256 hex digest of a text's UTF-8 bytes: the course's one text digest.

    It keys the embedding cache and the shipped embeddings (`models.text_key`: those files hold
    these values, so they must never change), drops duplicate chunks (`Chunk.content_hash`),
    seals the parse cache and PostgreSQL's pages; a short key (token counts, boilerplate blocks)
    is a prefix of it. Lone surrogates are hashed as they are (`surrogatepass`), not refused.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Page:
    """One HTML page of a corpus: its path relative to the corpus root and its decoded HTML."""

    path: str
    html: str


@dataclass(frozen=True)
class Block:
    """One unit of a page's content in document order, as the parser emits it.

    `kind` is one of "heading", "text", "table", "code", "list_item", "definition".
    `heading_path` is the chain of headings above the block (the page title first);
    `section_id` is the `id` of the innermost section (or heading) that contains it.
    """

    kind: str
    text: str
    heading_path: tuple[str, ...] = ()
    section_id: str | None = None
    level: int = 0


@dataclass(frozen=True)
class Chunk:
    """A retrievable piece of a page with the metadata a filter or a judge needs.

    `body` is what a learner reads; `text` is what gets embedded and indexed: the context line
    (e.g. "datetime > Format Codes") followed by the body, or the body alone when there is none.
    Naive chunks carry no heading path or section id: the judge falls back on evidence for them.
    """

    id: str
    doc: str
    body: str
    title: str = ""
    heading_path: tuple[str, ...] = ()
    section_id: str | None = None
    kinds: tuple[str, ...] = ()
    context: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def text(self) -> str:
        """The text that is embedded and searched: context line, blank line, body."""
        return f"{self.context}\n\n{self.body}" if self.context else self.body

    @property
    def content_hash(self) -> str:
        """The digest of the embedded text (`text_digest`), used to drop exact duplicates."""
        return text_digest(self.text)


@dataclass(frozen=True)
class Hit:
    """One ranked search result: the chunk's position in the index's chunk list and its score."""

    index: int
    score: float
