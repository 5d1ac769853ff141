"""The libraries a practitioner would otherwise reach for, as pipelines beside the course's.

LangChain (two HTML splitters), unstructured, docling and trafilatura each turn one page's HTML
into chunk texts their own way; everything after that is the course's: the same embedder (dense
search, like the lesson 01-05 pipelines), the same questions, the same strict judge.

**The course adds nothing to a peer's chunks**: no context line, no title (`text == body`). A
chunk is embedded as its library hands it over, so the library's own size bound counted all of
it. LangChain keeps its headers in metadata, outside the chunk and its bound: not embedded.
docling's `contextualize(chunk)` (headings + text) is what its `max_tokens` bounds and what it
says to embed. **Every window is measured in the run** (`measure_window`): the embedder's real
limit, its special tokens, and the corpus's characters per token under its tokenizer; a library
that counts tokens gets the limit less the special tokens, one that counts characters those
tokens times the corpus's characters per token.

Peers live in `PEERS`, not in `pipeline.PIPELINES`, so the lessons' loops over the course's
pipelines never see them; `build_any("peer:NAME", pages)` and `python -m course_lib evaluate
--pipeline peer:NAME` build them. The libraries are the optional extra `pip install -e .[peers]`;
each is imported only when its peer runs.
"""
from __future__ import annotations

import inspect
import io
import logging
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from course_lib import settings
from course_lib.core.chunking import blocks_to_text
from course_lib.core.html_parts import HEADING_TAGS
from course_lib.core.naive import fixed_size_chunks
from course_lib.core.pipeline import PEER_PREFIX, Pipeline, build_pipeline, clean_corpus
from course_lib.infra.json_cache import cache_path, read_json, write_json
from course_lib.records import Chunk, Page

PREFIX = PEER_PREFIX
SPLIT_HEADINGS = [(tag, tag) for tag in HEADING_TAGS[:4]]  # LangChain splits at h1-h4, named by tag


# --- the window, measured on the corpus -------------------------------------------------------

@dataclass(frozen=True)
class Window:
    """The embedder's window measured in the run: `tokens`, its real input limit (special tokens
    included); `special`, the tokens it adds to every text; `chars_per_token`, the corpus's
    characters per content token under its tokenizer; `model`, its name (None: the bundled one)."""

    tokens: int
    special: int
    chars_per_token: float
    model: str | None = None

    @property
    def content_tokens(self) -> int:
        """Tokens left for text once the special tokens are in: a token-counting library's bound."""
        return self.tokens - self.special

    @property
    def chars(self) -> int:
        """The content tokens in characters at the corpus's rate: a character-counting library's
        bound (a chunk denser in tokens than the corpus, code or a table, still passes the window)."""
        return int(self.content_tokens * self.chars_per_token)


def measure_window(pages: Sequence[Page], *, model: str | None = None) -> Window:
    """The embedder's window and the characters per token of the pages' parsed text, measured now."""
    return _measure_window(tuple(pages), model)


@lru_cache(maxsize=4)
def _measure_window(pages: tuple[Page, ...], model: str | None) -> Window:
    from course_lib.core.tokens import chars_per_token, get_counter

    counter = get_counter(model)
    texts = [blocks_to_text(page_blocks) for page_blocks in clean_corpus(pages)[0].values()]
    return Window(counter.limit, counter.special_tokens, chars_per_token(texts, counter=counter), model)


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
def _docling(max_tokens: int, model: str | None):
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer
    from transformers import AutoTokenizer

    from course_lib.infra.models import resolve_model

    logging.getLogger("docling").setLevel(logging.ERROR)
    target, local = resolve_model(model)
    # docling counts whole sections before splitting them: its tokenizer must not warn at 512
    auto = AutoTokenizer.from_pretrained(target, local_files_only=local, model_max_length=1_000_000)
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


# --- chunks and pipelines ---------------------------------------------------------------------

def peer(name: str) -> Peer:
    """The registered peer `name` ("peer:docling" or "docling"); KeyError lists the known ones."""
    key = name if name.startswith(PREFIX) else PREFIX + name
    if key not in PEERS:
        raise KeyError(f"unknown peer {name!r}; known: {', '.join(PEERS)}")
    return PEERS[key]


@dataclass(frozen=True)
class PeerRun:
    """A peer's chunks over a corpus, its window, and the seconds its chunking took when they were
    computed (`cached`: read back from disk, so `seconds` is that earlier run's)."""

    name: str
    chunks: list[Chunk]
    seconds: float
    pages: int
    window: Window
    failures: tuple[tuple[str, str], ...] = ()
    cached: bool = False

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else float("inf")


def run_peer(name: str, pages: Sequence[Page], *, window: Window | None = None,
             use_cache: bool = True) -> PeerRun:
    """Chunk every page with one peer (at `window`, default `measure_window(pages)`), or read the
    chunks back from the course cache, keyed by the peer, its library's version, the peers' code,
    the window and the pages (docling is slow). A page the library raises on gets no chunks and is
    listed in `failures`. Time a peer with `pages_per_second`, never a cached run's `seconds`."""
    run = _run_peer(peer(name).name, tuple(pages), window or measure_window(pages), use_cache)
    return replace(run, chunks=list(run.chunks))  # a copy: the cached run keeps its own list


@lru_cache(maxsize=16)
def _run_peer(name: str, pages: tuple[Page, ...], window: Window, use_cache: bool) -> PeerRun:
    path = _cache_path(name, pages, window) if use_cache else None
    found = _read_run(path, window) if path is not None else None
    if found is not None:
        return found
    run = _chunk_pages(name, pages, window)
    if path is not None:
        _write_run(path, run)
    return run


def pages_per_second(name: str, pages: Sequence[Page], *, window: Window | None = None) -> float:
    """Chunk the pages with the peer now, timed, nothing cached (compare it with the course's timed now)."""
    return _chunk_pages(peer(name).name, tuple(pages), window or measure_window(pages)).pages_per_second


def _chunk_pages(name: str, pages: tuple[Page, ...], window: Window) -> PeerRun:
    chunk_page = PEERS[name].chunk_page
    chunk_page("<html><body><h1>warm up</h1>"
               "<p>Imports and models load here, not in the timing.</p></body></html>", window)
    chunks: list[Chunk] = []
    failures: list[tuple[str, str]] = []
    start = time.perf_counter()
    for page in pages:
        try:
            bodies = chunk_page(page.html, window)
        except Exception as err:  # noqa: BLE001 - a library's own failure on one page is a result to report
            failures.append((page.path, f"{type(err).__name__}: {err}"[:200]))
            continue
        # No context line: the course adds nothing to what the library's bound counted.
        chunks += [Chunk(id=f"{page.path}#{name}-{n}", doc=page.path, body=body, kinds=("peer",),
                         meta={"peer": name}) for n, body in enumerate(bodies) if body.strip()]
    return PeerRun(name, chunks, time.perf_counter() - start, len(pages), window, tuple(failures))


_CACHE_FORMAT = "2"


def peers_code() -> str:
    """This module's peers section (every chunker and the helpers it calls): part of the cache key,
    so a changed chunker chunks again while a changed docstring elsewhere does not."""
    source = Path(__file__).read_text(encoding="utf-8")
    return source[source.index("\n# --- the peers "):source.index("\n# --- chunks and pipelines ")]


def _cache_path(name: str, pages: tuple[Page, ...], window: Window) -> Path | None:
    """Where this peer's run over these pages is kept; None when its code cannot be read."""
    entry = PEERS[name]
    try:
        code = inspect.getsource(entry.chunk_page)
    except (OSError, TypeError):
        return None
    parts = [_CACHE_FORMAT, name, entry.library, entry.version, code, peers_code(), repr(window)]
    parts += [text for page in pages for text in (page.path, page.html)]
    return cache_path("peers", name.removeprefix(PREFIX), parts)


def _read_run(path: Path, window: Window) -> PeerRun | None:
    data = read_json(path)
    try:
        chunks = [Chunk(id=c["id"], doc=c["doc"], body=c["body"], kinds=("peer",),
                        meta={"peer": data["name"]}) for c in data["chunks"]]
        return PeerRun(data["name"], chunks, data["seconds"], data["pages"], window,
                       tuple(tuple(f) for f in data["failures"]), cached=True)
    except (KeyError, TypeError):  # absent (None) or another shape: chunk again
        return None


def _write_run(path: Path, run: PeerRun) -> None:
    write_json(path, {"name": run.name, "seconds": run.seconds, "pages": run.pages, "failures": run.failures,
                      "chunks": [{"id": c.id, "doc": c.doc, "body": c.body} for c in run.chunks]})


def build_peer(name: str, pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    """The peer's chunks, at the window of `model` on these pages, searched with that embedder
    alone (dense, no BM25, no re-ranker), as the lesson 01-05 pipelines are: what differs is the
    chunking."""
    chunks = run_peer(name, pages, window=measure_window(pages, model=model)).chunks
    pipeline = Pipeline.over(chunks, model=model, bm25=False)
    pipeline.name = peer(name).name
    return pipeline


def build_any(name: str, pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    """A peer (`peer:NAME`) or one of the course's registered pipelines, by name: what the command
    line and the pooling script run, so a peer is compared wherever a lesson pipeline is."""
    if name.startswith(PREFIX):
        return build_peer(name, pages, model=model)
    return build_pipeline(name, pages, model=model)


def settings_rows(window: Window) -> list[dict[str, str]]:
    """One row per peer: library, installed version, the call it runs and the bound it keeps,
    with this window's figures."""
    return [{"peer": p.name, "library": p.library, "version": p.version, **p.describe(window)}
            for p in PEERS.values()]
