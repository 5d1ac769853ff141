"""The libraries a practitioner would otherwise reach for, as pipelines beside the course's.

Each peer turns one page's HTML into chunk texts its own way; everything after that is the
course's: the same embedder (dense search, like the lesson 01-05 pipelines), the same
questions, the same strict judge (evidence in the chunk BODY, from the gold page). So a
difference between two peers is a difference in what their chunks hold.

    peer:langchain-header     LangChain HTMLHeaderTextSplitter (h1-h4), no size limit (it takes none)
    peer:langchain-semantic   LangChain HTMLSemanticPreservingSplitter, max_chunk_size = WINDOW_CHARS
    peer:unstructured         unstructured partition_html + chunk_by_title, max_characters = WINDOW_CHARS
    peer:docling              docling HybridChunker, the bundled tokenizer, max_tokens = WINDOW_TOKENS
    peer:trafilatura          trafilatura's main text, cut by lesson 01's fixed-size chunker

They live in `PEERS`, not in `pipelines.PIPELINES`, so the lessons' loops over the course's
pipelines never see them; `pipelines.build_pipeline("peer:NAME", pages)` and
`python -m course_lib evaluate --pipeline peer:NAME` build them. The libraries are the optional
extra `pip install -e .[peers]`; each is imported only when its peer runs.
"""
from __future__ import annotations

import inspect
import io
import logging
import re
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from course_lib import settings
from course_lib.core.html_parts import HEADING_TAGS
from course_lib.core.naive import fixed_size_chunks
from course_lib.core.pipeline import Pipeline, build_pipeline
from course_lib.evaluation.golden import Question, normalize
from course_lib.infra.json_cache import cache_path, read_json, write_json
from course_lib.records import Chunk, Page

PREFIX = "peer:"
WINDOW_TOKENS = 256  # the embedder's window (models.max_input_tokens for the bundled MiniLM)
# LangChain and unstructured count characters, not tokens: 256 tokens of the pandas pages are about
# 760 characters (2.97 characters per token over the course's chunks, measured in lesson 10).
WINDOW_CHARS = 760
SPLIT_HEADINGS = [(tag, tag) for tag in HEADING_TAGS[:4]]  # LangChain splits at h1-h4, named by tag

PageChunks = list[tuple[str, str]]  # (context line, body) per chunk of one page


@dataclass(frozen=True)
class Peer:
    """One library's chunker: what it is, the settings it runs with, and how to run it on a page."""

    name: str
    library: str  # the distribution whose version is pinned in pyproject.toml's `peers` extra
    call: str
    window: str
    chunk_page: Callable[[str], PageChunks] = field(repr=False)

    @property
    def version(self) -> str:
        """The installed version of the library, or "not installed"."""
        try:
            return metadata.version(self.library)
        except metadata.PackageNotFoundError:
            return "not installed"


PEERS: dict[str, Peer] = {}


def register_peer(name: str, library: str, call: str, window: str) -> Callable:
    """Decorator adding a page chunker `(html) -> [(context, body)]` as the peer `peer:name`."""

    def add(chunk_page: Callable[[str], PageChunks]) -> Callable[[str], PageChunks]:
        PEERS[PREFIX + name] = Peer(PREFIX + name, library, call, window, chunk_page)
        return chunk_page

    return add


def _heading_line(metadata_: dict) -> str:
    return " > ".join(str(v) for v in metadata_.values() if v)


# --- the peers -------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _header_splitter():
    from langchain_text_splitters import HTMLHeaderTextSplitter

    return HTMLHeaderTextSplitter(headers_to_split_on=SPLIT_HEADINGS)


@register_peer("langchain-header", "langchain-text-splitters",
               "HTMLHeaderTextSplitter(headers_to_split_on=h1-h4)",
               "none: one chunk per section, however long")
def langchain_header(html: str) -> PageChunks:
    """One chunk per header section; its headers (the metadata) become the context line."""
    return [(_heading_line(d.metadata), d.page_content) for d in _header_splitter().split_text(html)]


@lru_cache(maxsize=1)
def _semantic_splitter():
    from langchain_core._api import LangChainBetaWarning
    from langchain_text_splitters import HTMLSemanticPreservingSplitter

    with warnings.catch_warnings():  # "in beta": true, and said once in lesson 10, not per run
        warnings.simplefilter("ignore", LangChainBetaWarning)
        return HTMLSemanticPreservingSplitter(headers_to_split_on=SPLIT_HEADINGS, max_chunk_size=WINDOW_CHARS,
                                              chunk_overlap=0)


@register_peer("langchain-semantic", "langchain-text-splitters",
          f"HTMLSemanticPreservingSplitter(headers_to_split_on=h1-h4, max_chunk_size={WINDOW_CHARS}, "
          "chunk_overlap=0)", f"{WINDOW_CHARS} characters (tables and lists kept whole)")
def langchain_semantic(html: str) -> PageChunks:
    """Header sections split to `WINDOW_CHARS`, tables and lists preserved (as markdown)."""
    return [(_heading_line(d.metadata), d.page_content) for d in _semantic_splitter().split_text(html)]


@lru_cache(maxsize=1)
def blank_spacy():
    """A blank English spaCy pipeline with a rule sentencizer: the offline stand-in for the
    `en_core_web_sm` model unstructured downloads at run time. In the HTML path that model
    only chooses NarrativeText or Text, which `chunk_by_title` treats alike (`force_element_type`
    shows it)."""
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


def unstructured_chunks(html: str, *, force: str | None = None) -> PageChunks:
    """chunk_by_title over partition_html's elements, `max_characters=WINDOW_CHARS`."""
    from unstructured.chunking.title import chunk_by_title

    chunks = chunk_by_title(unstructured_elements(html, force=force), max_characters=WINDOW_CHARS)
    return [("", c.text) for c in chunks]


register_peer("unstructured", "unstructured",
         f"partition_html(text=html) + chunk_by_title(max_characters={WINDOW_CHARS}); blank spaCy offline",
         f"{WINDOW_CHARS} characters")(unstructured_chunks)


@lru_cache(maxsize=1)
def _docling():
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.huggingface import (
        HuggingFaceTokenizer,
    )
    from transformers import AutoTokenizer

    from course_lib.infra.models import bundled_model_path

    logging.getLogger("docling").setLevel(logging.ERROR)
    tokenizer = HuggingFaceTokenizer(tokenizer=AutoTokenizer.from_pretrained(
        # docling counts whole sections before splitting them: its tokenizer must not warn at 512
        str(bundled_model_path()), model_max_length=1_000_000),
                                     max_tokens=WINDOW_TOKENS)
    return DocumentConverter(allowed_formats=[InputFormat.HTML]), HybridChunker(tokenizer=tokenizer)


@register_peer("docling", "docling-slim",
               f"DocumentConverter(HTML) + HybridChunker(bundled MiniLM tokenizer, "
               f"max_tokens={WINDOW_TOKENS})", f"{WINDOW_TOKENS} tokens (bundled tokenizer)")
def docling_chunks(html: str) -> PageChunks:
    """docling's document model, chunked by HybridChunker; its headings become the context line."""
    from docling.datamodel.base_models import DocumentStream

    converter, chunker = _docling()
    stream = DocumentStream(name="page.html", stream=io.BytesIO(html.encode("utf-8")))
    doc = converter.convert(stream).document
    return [(" > ".join(c.meta.headings or ()), c.text) for c in chunker.chunk(doc)]


@register_peer("trafilatura", "trafilatura", f"trafilatura.extract(html) + naive.fixed_size_chunks("
          f"size={settings.NAIVE_CHUNK_CHARS}, overlap={settings.NAIVE_OVERLAP_CHARS})",
          f"{settings.NAIVE_CHUNK_CHARS} characters, {settings.NAIVE_OVERLAP_CHARS} repeated")
def trafilatura_chunks(html: str) -> PageChunks:
    """The main text trafilatura extracts, cut like lesson 01's chunks."""
    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    text = trafilatura.extract(html) or ""
    return [("", c.body) for c in fixed_size_chunks(text, doc="", size=settings.NAIVE_CHUNK_CHARS,
                                                     overlap=settings.NAIVE_OVERLAP_CHARS)]


# --- chunks, pipelines and the measures lesson 10 reports -----------------------------------

def peer(name: str) -> Peer:
    """The registered peer `name` ("peer:docling" or "docling"); KeyError lists the known ones."""
    key = name if name.startswith(PREFIX) else PREFIX + name
    if key not in PEERS:
        raise KeyError(f"unknown peer {name!r}; known: {', '.join(PEERS)}")
    return PEERS[key]


@dataclass(frozen=True)
class PeerRun:
    """A peer's chunks over a corpus and the seconds its chunking took when they were computed
    (`cached`: read back from disk, so `seconds` describes that earlier run, not this one)."""

    name: str
    chunks: list[Chunk]
    seconds: float
    pages: int
    failures: tuple[tuple[str, str], ...] = ()
    cached: bool = False

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else float("inf")


def run_peer(name: str, pages: Sequence[Page], *, use_cache: bool = True) -> PeerRun:
    """Chunk every page with one peer, or read the chunks back from the disk cache.

    The slowest peers (docling) take far longer than the course's chunker and lesson 10 asks again
    on every run, so the chunks are kept under the course cache, keyed by the peer, its library's
    version, its code and the pages. A page the library raises on gets no chunks and is listed in
    `failures`, as the course's parser lists its skipped pages: one bad page must not hide the
    others' results.
    Time a peer in this run with `pages_per_second`, never from a cached run's `seconds`.
    """
    return _run_peer(peer(name).name, tuple(pages), use_cache)


@lru_cache(maxsize=16)
def _run_peer(name: str, pages: tuple[Page, ...], use_cache: bool) -> PeerRun:
    path = _cache_path(name, pages) if use_cache else None
    found = _read_run(path) if path is not None else None
    if found is not None:
        return found
    run = _chunk_pages(name, pages)
    if path is not None:
        _write_run(path, run)
    return run


def pages_per_second(name: str, pages: Sequence[Page]) -> float:
    """Chunk the pages with the peer now, timed, nothing cached: the throughput a lesson compares
    with the course's chunking timed in the same run."""
    return _chunk_pages(peer(name).name, tuple(pages)).pages_per_second


def _chunk_pages(name: str, pages: tuple[Page, ...]) -> PeerRun:
    chunk_page = PEERS[name].chunk_page
    chunk_page("<html><body><h1>warm up</h1>"
               "<p>Imports and models load here, not in the timing.</p></body></html>")
    chunks: list[Chunk] = []
    failures: list[tuple[str, str]] = []
    start = time.perf_counter()
    for page in pages:
        try:
            pieces = chunk_page(page.html)
        except Exception as err:  # noqa: BLE001 - a library's own failure on one page is a result to report
            failures.append((page.path, f"{type(err).__name__}: {err}"[:200]))
            continue
        chunks += [Chunk(id=f"{page.path}#{name}-{n}", doc=page.path, body=body, context=context,
                         kinds=("peer",), meta={"peer": name})
                   for n, (context, body) in enumerate(pieces) if body.strip()]
    return PeerRun(name, chunks, time.perf_counter() - start, len(pages), tuple(failures))


_CACHE_FORMAT = "1"


def _cache_path(name: str, pages: tuple[Page, ...]) -> Path | None:
    """Where this peer's run over these pages is kept; None when its code cannot be read (nothing
    to key a changed chunker on, so nothing is cached)."""
    entry = PEERS[name]
    try:
        code = inspect.getsource(entry.chunk_page)
    except (OSError, TypeError):
        return None
    parts = [_CACHE_FORMAT, name, entry.library, entry.version, code,
             Path(__file__).read_text(encoding="utf-8")]
    parts += [text for page in pages for text in (page.path, page.html)]
    return cache_path("peers", name.removeprefix(PREFIX), parts)


def _read_run(path: Path) -> PeerRun | None:
    data = read_json(path)
    try:
        chunks = [Chunk(id=c["id"], doc=c["doc"], body=c["body"], context=c["context"], kinds=("peer",),
                        meta={"peer": data["name"]}) for c in data["chunks"]]
        return PeerRun(data["name"], chunks, data["seconds"], data["pages"],
                       tuple(tuple(f) for f in data["failures"]), cached=True)
    except (KeyError, TypeError):  # absent (None) or another shape: chunk again
        return None


def _write_run(path: Path, run: PeerRun) -> None:
    write_json(path, {"name": run.name, "seconds": run.seconds, "pages": run.pages, "failures": run.failures,
                      "chunks": [{"id": c.id, "doc": c.doc, "body": c.body, "context": c.context}
                                 for c in run.chunks]})


def peer_chunks(name: str, pages: Sequence[Page]) -> list[Chunk]:
    """The peer's chunks over the pages (context line = the headings the library reports)."""
    return run_peer(name, pages).chunks


def build_peer(name: str, pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    """The peer's chunks searched with the course's embedder alone (dense, no BM25, no re-ranker),
    as the lesson 01-05 pipelines are: what differs is the chunking."""
    pipeline = Pipeline.over(peer_chunks(name, pages), model=model, bm25=False)
    pipeline.name = peer(name).name
    return pipeline


def build_any(name: str, pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    """A peer (`peer:NAME`) or one of the course's registered pipelines, by name: what the command
    line and the pooling script run, so a peer is compared wherever a lesson pipeline is."""
    if name.startswith(PREFIX):
        return build_peer(name, pages, model=model)
    return build_pipeline(name, pages, model=model)


def settings_rows() -> list[dict[str, str]]:
    """One row per peer: library, installed version, the call it runs and its window."""
    return [{"peer": p.name, "library": p.library, "version": p.version, "call": p.call, "window": p.window}
            for p in PEERS.values()]


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"\*\*|__|`")


def strip_markup(text: str) -> str:
    """The text without the markdown a peer adds: links to their text, backticks, `**`/`__`, and
    escaped pipes. The diagnostic judge uses it to tell text lost from text reformatted."""
    return _EMPHASIS.sub("", _LINK.sub(r"\1", text)).replace("\\|", "|")


def evidence_kept(questions: Sequence[Question], chunks: Sequence[Chunk], *, lenient: bool = False) -> float:
    """Share of answerable questions whose evidence is in the body of some chunk of the gold page:
    the ceiling on any retriever's recall over these chunks. `lenient=True` strips the markup a
    peer adds (`strip_markup`) from the chunks first: the diagnostic, never the judge."""
    answerable = [q for q in questions if q.answerable]
    if not answerable:
        raise ValueError("no answerable question")
    prepare = (lambda t: normalize(strip_markup(t))) if lenient else normalize
    bodies: dict[str, list[str]] = {}
    for chunk in chunks:
        bodies.setdefault(chunk.doc, []).append(prepare(chunk.body))
    needles = {q.id: (normalize(strip_markup(q.evidence)) if lenient else normalize(q.evidence))
               for q in answerable}
    kept = sum(any(needles[q.id] in body for body in bodies.get(q.doc, ())) for q in answerable)
    return kept / len(answerable)


def over_window(chunks: Sequence[Chunk], *, counter=None, limit: int | None = None) -> int:
    """How many chunks' embedded text exceeds the model's window (their tails are never embedded)."""
    from course_lib.core.tokens import get_counter

    counter = counter or get_counter()
    return len(counter.over_limit([c.text for c in chunks], limit=limit))
