"""The libraries a practitioner would otherwise reach for, as pipelines beside the course's.

LangChain (two HTML splitters), unstructured, docling, trafilatura, chonkie and LlamaIndex each
turn one page's HTML into chunk texts their own way; everything after that is the course's: the
same embedder (dense search, like the lesson 01-05 pipelines), the same questions, the same strict
judge.

**The course adds nothing to a peer's chunks**: no context line, no title (`text == body`). A
chunk is embedded as its library hands it over, so the library's own size bound counted all of
it. LangChain keeps its headers in metadata, outside the chunk and its bound: not embedded; so
does LlamaIndex its node's tag name.
docling's `contextualize(chunk)` (headings + text) is what its `max_tokens` bounds and what it
says to embed. **Every window is measured in the run** (`measure_window`): the embedder's real
limit, its special tokens, and the corpus's characters per token under its tokenizer; a library
that counts tokens gets the limit less the special tokens, one that counts characters those
tokens times the corpus's characters per token.

The chunkers themselves, their `Window` and the registry are in `peer_chunkers` (the code a
peer's cached chunks are keyed by); this module measures the window, runs a peer over a corpus
with its disk cache, and builds it as a pipeline. Peers live in `PEERS`, not in
`pipeline.PIPELINES`, so the lessons' loops over the course's pipelines never see them;
`build_any("peer:NAME", pages)` and `python -m course_lib evaluate --pipeline peer:NAME` build
them. The libraries are the optional extra `pip install -e .[peers]`; each is imported only
when its peer runs.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from course_lib.core.chunking import blocks_to_text
from course_lib.core.naive import fixed_size_chunks
from course_lib.core.pipeline import Pipeline, build_pipeline, clean_corpus
from course_lib.extras.peer_chunkers import (
    PEERS,
    PREFIX,
    Peer,
    Window,
    semantic_splitter,
    unstructured_chunks,
)
from course_lib.infra.json_cache import cache_path, code_digest, read_json, write_json
from course_lib.records import Chunk, Page

# Lesson 10 and its solution call two chunkers as `peers.semantic_splitter` and
# `peers.unstructured_chunks`; their home is `peer_chunkers`, these names keep the lesson working.
__all__ = ["PEERS", "PeerRun", "Window", "build_any", "build_peer", "measure_window", "pages_per_second",
           "peer", "run_peer", "semantic_splitter", "settings_rows", "unstructured_chunks"]


# --- the window, measured on the corpus -------------------------------------------------------

def measure_window(pages: Sequence[Page], *, model: str | None = None) -> Window:
    """The embedder's window and the characters per token of the pages' parsed text (the mean, and
    the rate of its densest window-sized spans, which sets a character-counting library's bound),
    measured now."""
    return _measure_window(tuple(pages), model)


@lru_cache(maxsize=4)
def _measure_window(pages: tuple[Page, ...], model: str | None) -> Window:
    from course_lib.core.tokens import chars_per_token, get_counter, low_chars_per_token

    counter = get_counter(model)
    texts = [blocks_to_text(page_blocks) for page_blocks in clean_corpus(pages)[0].values()]
    content = counter.limit - counter.special_tokens
    return Window(counter.limit, counter.special_tokens, chars_per_token(texts, counter=counter), model,
                  low_chars_per_token(texts, tokens=content, counter=counter))


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


_CACHE_FORMAT = "3"  # 3: keyed by code_digest of the chunkers' code


# The code that produces a peer's chunks, beside the peer's own function (one a test or a notebook
# registers): an edit to any of it chunks again; an edit to this module does not.
CHUNKER_CODE = ("course_lib.extras.peer_chunkers", fixed_size_chunks)


def _cache_path(name: str, pages: tuple[Page, ...], window: Window) -> Path | None:
    """Where this peer's run over these pages is kept; None when its code cannot be read."""
    entry = PEERS[name]
    try:
        code = code_digest([*CHUNKER_CODE, entry.chunk_page])
    except OSError:
        return None
    parts = [_CACHE_FORMAT, name, entry.library, entry.version, code, repr(window)]
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


def build_peer(name: str, pages: Sequence[Page], *, model: str | None = None,
               query_encoder: str = "torch") -> Pipeline:
    """The peer's chunks, at the window of `model` on these pages, searched with that embedder
    alone (dense, no BM25, no re-ranker), as the lesson 01-05 pipelines are: what differs is the
    chunking. `query_encoder` embeds the questions (`pipeline.with_query_encoder`)."""
    chunks = run_peer(name, pages, window=measure_window(pages, model=model)).chunks
    pipeline = Pipeline.over(chunks, model=model, bm25=False, query_encoder=query_encoder)
    pipeline.name = peer(name).name
    return pipeline


def build_any(name: str, pages: Sequence[Page], *, model: str | None = None,
              query_encoder: str = "torch") -> Pipeline:
    """A peer (`peer:NAME`) or one of the course's registered pipelines, by name: what the command
    line and the pooling script run, so a peer is compared wherever a lesson pipeline is."""
    if name.startswith(PREFIX):
        return build_peer(name, pages, model=model, query_encoder=query_encoder)
    return build_pipeline(name, pages, model=model, query_encoder=query_encoder)


def settings_rows(window: Window) -> list[dict[str, str]]:
    """One row per peer: library, installed version, the call it runs and the bound it keeps,
    with this window's figures."""
    return [{"peer": p.name, "library": p.library, "version": p.version, **p.describe(window)}
            for p in PEERS.values()]
