"""Lesson 10's peer libraries as page chunkers: each turns one page's HTML into chunk texts.

LangChain (two HTML splitters), unstructured, docling, trafilatura, chonkie and LlamaIndex, each
called as its own documentation says, at a `Window` measured in the run (`peers.measure_window`).
This module is the code that produces a peer's chunks, and only that: `peers.run_peer` keys its disk cache by
this whole module's source (`infra.json_cache.code_digest`), so an edit here chunks again while
an edit to the running, caching and comparing in `peers` does not. Each library is imported only
when its peer runs (`pip install -e .[peers]`).
"""
from __future__ import annotations

import io
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata

from course_lib import settings
from course_lib.core.html_parts import HEADING_TAGS
from course_lib.core.naive import fixed_size_chunks
from course_lib.core.pipeline import PEER_PREFIX

PREFIX = PEER_PREFIX
SPLIT_HEADINGS = [(tag, tag) for tag in HEADING_TAGS[:4]]  # LangChain splits at h1-h4, named by tag


# --- the window and the registry ---------------------------------------------------------------

@dataclass(frozen=True)
class Window:
    """The embedder's window measured in the run: `tokens`, its real input limit (special tokens
    included); `special`, the tokens it adds to every text; `chars_per_token`, the corpus's mean
    characters per content token under its tokenizer; `model`, its name (None: the bundled one);
    `low_chars_per_token`, the rate of the corpus's densest window-sized spans
    (`tokens.low_chars_per_token`; None: the mean stands in)."""

    tokens: int
    special: int
    chars_per_token: float
    model: str | None = None
    low_chars_per_token: float | None = None

    @property
    def content_tokens(self) -> int:
        """Tokens left for text once the special tokens are in: a token-counting library's bound."""
        return self.tokens - self.special

    @property
    def chars(self) -> int:
        """The content tokens in characters at the rate of the corpus's densest spans: a
        character-counting library's bound. At the mean rate, a chunk of code or a table (denser in
        tokens than prose) would pass the window; at this one, all but the densest few fit."""
        rate = self.chars_per_token if self.low_chars_per_token is None else self.low_chars_per_token
        return int(self.content_tokens * rate)


@dataclass(frozen=True)
class Peer:
    """One library's chunker: what it is, the call it runs and the bound it keeps (both formatted
    with a `Window`'s `tokens`, `content_tokens` and `chars`), and how to run it on a page."""

    name: str
    library: str  # the distribution whose version is pinned in pyproject.toml's `peers` extra
    call: str
    bound: str
    chunk_page: Callable[[str, Window], list[str]] = field(repr=False)

    @property
    def version(self) -> str:
        """The installed version of the library, or "not installed"."""
        try:
            return metadata.version(self.library)
        except metadata.PackageNotFoundError:
            return "not installed"

    def describe(self, window: Window) -> dict[str, str]:
        """The call and the bound with this window's figures filled in."""
        figures = {"tokens": window.tokens, "content_tokens": window.content_tokens, "chars": window.chars,
                   "overlap": trafilatura_overlap(window)}
        return {"call": self.call.format(**figures), "bound": self.bound.format(**figures)}


PEERS: dict[str, Peer] = {}


def register_peer(name: str, library: str, call: str, bound: str) -> Callable:
    """Decorator adding a page chunker `(html, window) -> [chunk text]` as the peer `peer:name`."""

    def add(chunk_page: Callable[[str, Window], list[str]]) -> Callable[[str, Window], list[str]]:
        PEERS[PREFIX + name] = Peer(PREFIX + name, library, call, bound, chunk_page)
        return chunk_page

    return add


# --- the peers -------------------------------------------------------------------------------

@register_peer("langchain-header", "langchain-text-splitters",
               "HTMLHeaderTextSplitter(headers_to_split_on=h1-h4)",
               "none: one chunk per section, however long (it takes no size)")
def langchain_header(html: str, window: Window) -> list[str]:
    """One chunk per header section, its `page_content` (the headers stay in its metadata)."""
    from langchain_text_splitters import HTMLHeaderTextSplitter

    return [d.page_content for d in HTMLHeaderTextSplitter(SPLIT_HEADINGS).split_text(html)]


@lru_cache(maxsize=4)
def semantic_splitter(max_chunk_size: int):
    """LangChain's HTMLSemanticPreservingSplitter at h1-h4, no overlap, this many characters."""
    from langchain_core._api import LangChainBetaWarning
    from langchain_text_splitters import HTMLSemanticPreservingSplitter

    with warnings.catch_warnings():  # "in beta": true, and said once in lesson 10, not per run
        warnings.simplefilter("ignore", LangChainBetaWarning)
        return HTMLSemanticPreservingSplitter(headers_to_split_on=SPLIT_HEADINGS,
                                              max_chunk_size=max_chunk_size, chunk_overlap=0)


@register_peer("langchain-semantic", "langchain-text-splitters",
               "HTMLSemanticPreservingSplitter(headers_to_split_on=h1-h4, max_chunk_size={chars}, "
               "chunk_overlap=0)", "{chars} characters of page_content (tables and lists kept whole)")
def langchain_semantic(html: str, window: Window) -> list[str]:
    """Header sections split to the window's characters, tables and lists preserved (as markdown)."""
    return [d.page_content for d in semantic_splitter(window.chars).split_text(html)]


@lru_cache(maxsize=1)
def blank_spacy():
    """A blank English spaCy pipeline with a rule sentencizer: the offline stand-in for the
    `en_core_web_sm` model unstructured downloads at run time. In the HTML path that model only
    chooses NarrativeText or Text, which `chunk_by_title` treats alike (`force=` shows it)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def _offline_unstructured() -> None:
    import os

    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")  # an advert printed on first use
    os.environ.setdefault("SCARF_NO_ANALYTICS", "true")  # its telemetry ping: nothing leaves the machine
    from unstructured.nlp import tokenize

    tokenize._get_nlp = blank_spacy
    logging.getLogger("unstructured").setLevel(logging.ERROR)


def unstructured_elements(html: str, *, force: str | None = None) -> list:
    """partition_html's elements; `force="NarrativeText"` or `"Text"` gives every element that the
    text classifier would label one of those two the same label (the faithfulness check)."""
    _offline_unstructured()
    from unstructured.documents import elements
    from unstructured.partition.html import parser, partition_html

    if force is None:
        return partition_html(text=html)
    original = parser.derive_element_type_from_text
    forced = getattr(elements, force)

    def derive(text: str):
        kind = original(text)
        return forced if kind in (elements.NarrativeText, elements.Text) else kind

    parser.derive_element_type_from_text = derive
    try:
        return partition_html(text=html)
    finally:
        parser.derive_element_type_from_text = original


@register_peer("unstructured", "unstructured",
               "partition_html(text=html) + chunk_by_title(max_characters={chars}); blank spaCy offline",
               "{chars} characters")
def unstructured_chunks(html: str, window: Window, *, force: str | None = None) -> list[str]:
    """chunk_by_title over partition_html's elements, `max_characters` = the window's characters."""
    from unstructured.chunking.title import chunk_by_title

    elements = unstructured_elements(html, force=force)
    return [c.text for c in chunk_by_title(elements, max_characters=window.chars)]


@lru_cache(maxsize=2)
def embedder_tokenizer(model: str | None):
    """The embedder's own Hugging Face tokenizer, for the libraries that count tokens with it."""
    from transformers import AutoTokenizer

    from course_lib.infra.models import resolve_model

    target, local = resolve_model(model)
    # docling and chonkie count whole sections before splitting them: no warning at 512
    return AutoTokenizer.from_pretrained(target, local_files_only=local, model_max_length=1_000_000)


@lru_cache(maxsize=2)
def _docling(max_tokens: int, model: str | None):
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer

    logging.getLogger("docling").setLevel(logging.ERROR)
    auto = embedder_tokenizer(model)
    chunker = HybridChunker(tokenizer=HuggingFaceTokenizer(tokenizer=auto, max_tokens=max_tokens))
    return DocumentConverter(allowed_formats=[InputFormat.HTML]), chunker


@register_peer("docling", "docling-slim",
               "DocumentConverter(HTML) + HybridChunker(the embedder's tokenizer, "
               "max_tokens={content_tokens}); each chunk as chunker.contextualize(chunk)",
               "{content_tokens} tokens of headings + text, + the model's special tokens = {tokens}")
def docling_chunks(html: str, window: Window) -> list[str]:
    """docling's document model chunked by HybridChunker; each chunk is `contextualize(chunk)`, its
    headings and text: the text HybridChunker's `max_tokens` bounds (counted without special
    tokens, so it gets the window's content tokens) and the text docling says to embed."""
    from docling.datamodel.base_models import DocumentStream

    converter, chunker = _docling(window.content_tokens, window.model)
    stream = DocumentStream(name="page.html", stream=io.BytesIO(html.encode("utf-8")))
    doc = converter.convert(stream).document
    return [chunker.contextualize(c) for c in chunker.chunk(doc)]


def trafilatura_overlap(window: Window) -> int:
    """Lesson 01's share of overlap (`NAIVE_OVERLAP_CHARS / NAIVE_CHUNK_CHARS`) of the window's characters."""
    return round(window.chars * settings.NAIVE_OVERLAP_CHARS / settings.NAIVE_CHUNK_CHARS)


@register_peer("trafilatura", "trafilatura",
               "trafilatura.extract(html) + naive.fixed_size_chunks(size={chars}, overlap={overlap})",
               "{chars} characters")
def trafilatura_chunks(html: str, window: Window) -> list[str]:
    """The main text trafilatura extracts, cut like lesson 01's chunks at the window's characters."""
    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    text = trafilatura.extract(html) or ""
    chunks = fixed_size_chunks(text, doc="", size=window.chars, overlap=trafilatura_overlap(window))
    return [c.body for c in chunks]


@lru_cache(maxsize=2)
def _chonkie(chunk_size: int, model: str | None):
    from chonkie import RecursiveChunker, TableChef, TableChunker

    logging.getLogger("chonkie").setLevel(logging.ERROR)
    tokenizer = embedder_tokenizer(model)
    return (TableChef(), TableChunker(tokenizer=tokenizer, chunk_size=chunk_size),
            RecursiveChunker(tokenizer=tokenizer, chunk_size=chunk_size))


@register_peer("chonkie", "chonkie",
               "TableChef().parse(html) + TableChunker(the embedder's tokenizer, "
               "chunk_size={content_tokens}) per <table>; the rest "
               "BeautifulSoup.get_text('\\n', strip=True) + RecursiveChunker(same tokenizer, "
               "chunk_size={content_tokens})",
               "{content_tokens} tokens (chonkie counts without special tokens)")
def chonkie_chunks(html: str, window: Window) -> list[str]:
    """chonkie's HTML path: `TableChef` finds each top-level `<table>` and `TableChunker` splits it by
    rows, repeating its header, as HTML markup (what it hands over). chonkie reads no other HTML,
    so the text outside the tables is left to the user: the page's text, one line per string
    (BeautifulSoup's `get_text`, scripts and styles left out), cut by `RecursiveChunker`.
    `TableChef` is called as `parse`, the string path of `process`, which first asks whether a
    whole page of HTML names a file (an OSError on a long page)."""
    from bs4 import BeautifulSoup

    chef, table_chunker, text_chunker = _chonkie(window.content_tokens, window.model)
    tables = chef.parse(html).tables
    rest, start = [], 0
    for table in sorted(tables, key=lambda t: t.start_index):
        rest.append(html[start:table.start_index])
        start = table.end_index
    text = BeautifulSoup("".join(rest) + html[start:], "html.parser").get_text("\n", strip=True)
    chunks = [c.text for c in text_chunker.chunk(text)]
    return chunks + [c.text for table in tables for c in table_chunker.chunk(table.content)]


@register_peer("llamaindex", "llama-index-core",
               "HTMLNodeParser() (its default tags: p, h1-h6, li, b, i, u, section) over "
               "Document(text=html); each node's get_content(MetadataMode.NONE)",
               "none: one node per run of same-tag elements, however long (it takes no size)")
def llamaindex_chunks(html: str, window: Window) -> list[str]:
    """LlamaIndex's `HTMLNodeParser` with its defaults: one node per run of consecutive elements of
    one tag among its list, each node's text without its metadata ("tag: p", not page text)."""
    from llama_index.core import Document
    from llama_index.core.node_parser import HTMLNodeParser
    from llama_index.core.schema import MetadataMode

    nodes = HTMLNodeParser().get_nodes_from_documents([Document(text=html)])
    return [node.get_content(metadata_mode=MetadataMode.NONE) for node in nodes]
