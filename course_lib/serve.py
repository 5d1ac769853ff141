"""Serving a query fast: caches, parallel retrievers, batched re-ranking, per-stage timings.

The first seed made its pipeline both more accurate and faster. `SearchService` runs the final
pipeline one stage at a time so each stage can be timed and each cache measured:

    embed query (cached) -> BM25 || dense (in parallel) -> RRF -> re-rank top_n (batched)

and `build_prompt` assembles the top chunks with numbered sources for an LLM.
"""
from __future__ import annotations

import os
import re
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from . import models
from .records import Chunk, Hit
from .rerank import Reranker, rerank
from .search import BM25Retriever, case_sensitive_spans, make_filter, rrf, top_k, where_mask

DOCS_URL = "https://docs.python.org/3.11/"
STAGES = ("embed query", "bm25", "dense", "fuse", "rerank")


def normalize_query(query: str) -> str:
    """The cache key of a query: case-folded, whitespace collapsed, trailing ?!. removed.

    "What is a decorator?" and "what is a  decorator" ask the same thing; a cache keyed on
    the raw string would miss that. Case is kept where it is the meaning, exactly where
    `code_aware_tokens` keeps it: format codes (`%Y` year vs `%y`) and single-dash options
    (`-X` vs `-x`); folding those would serve one question's cached answer for the other.
    """
    text = re.sub(r"[\s?!.]+$", "", " ".join(query.split()))
    parts, last = [], 0
    for start, end in case_sensitive_spans(text):
        parts += [text[last:start].casefold(), text[start:end]]
        last = end
    return "".join(parts) + text[last:].casefold()


class LRUCache:
    """A small in-memory least-recently-used cache with hit and miss counters."""

    def __init__(self, size: int = 1024):
        self.size, self.hits, self.misses = size, 0, 0
        self._items: OrderedDict = OrderedDict()

    def get(self, key):
        if key in self._items:
            self.hits += 1
            self._items.move_to_end(key)
            return self._items[key]
        self.misses += 1
        return None

    def put(self, key, value) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


class TTLCache(LRUCache):
    """An LRU cache whose entries expire `ttl` seconds after they were stored.

    Results go stale when the index changes; a short TTL bounds how stale. `clock` is
    injectable so tests can move time forward.
    """

    def __init__(self, size: int = 1024, *, ttl: float = 300.0, clock: Callable[[], float] = time.monotonic):
        super().__init__(size)
        self.ttl, self.clock = ttl, clock

    def get(self, key):
        entry = super().get(key)
        if entry is None:
            return None
        stored, value = entry
        if self.clock() - stored > self.ttl:
            del self._items[key]
            self.hits, self.misses = self.hits - 1, self.misses + 1
            return None
        return value

    def put(self, key, value) -> None:
        super().put(key, (self.clock(), value))


def filter_key(filters: dict | None) -> tuple:
    """A hashable, order-independent form of a filter dict (lists become sorted tuples)."""
    items = []
    for name, value in sorted((filters or {}).items()):
        items.append((name, tuple(sorted(value)) if isinstance(value, (list, set, tuple, frozenset)) else value))
    return tuple(items)


@dataclass
class Answer:
    """Ranked hits for a query, how long each stage took, and whether it came from the cache."""

    query: str
    hits: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)
    cached: bool = False


class SearchService:
    """The final pipeline served one query at a time, with caches and per-stage timings.

    `filters` (page `doc`, page-path prefix `path_prefix`, block `kinds`) are applied inside
    both retrievers, before the top-k cut. Set `reranker=None` to serve hybrid search alone;
    `parallel=False`, `cache_results=False` and `cache_queries=False` switch off one speed-up
    each, so lesson 08 can measure what each is worth.
    """

    def __init__(self, chunks: Sequence[Chunk], *, model: str | None = None, vectors: np.ndarray | None = None,
                 reranker: Reranker | None = None, top_n: int = 30, batch_size: int = 32,
                 candidates: int = 50, rrf_k: int = 60, parallel: bool = True, ttl: float = 300.0,
                 cache_queries: bool = True, cache_results: bool = True):
        self.chunks, self.model = list(chunks), model
        self.vectors = vectors if vectors is not None else models.embed([c.text for c in self.chunks], model=model)
        self.bm25 = BM25Retriever(self.chunks)
        self.reranker, self.top_n, self.batch_size = reranker, top_n, batch_size
        self.candidates, self.rrf_k = candidates, rrf_k
        self.query_vectors = LRUCache(4096) if cache_queries else None
        self.results = TTLCache(1024, ttl=ttl) if cache_results else None
        self._pool = ThreadPoolExecutor(2) if parallel else None

    def embed_query(self, query: str) -> np.ndarray:
        """The query's vector, from memory when the same (normalised) query was seen before."""
        key = normalize_query(query)
        vector = self.query_vectors.get(key) if self.query_vectors is not None else None
        if vector is None:
            vector = models.embed([query], model=self.model, use_cache=False, progress=False)[0]
            if self.query_vectors is not None:
                self.query_vectors.put(key, vector)
        return vector

    def _dense(self, vector: np.ndarray, mask) -> list[Hit]:
        return top_k(self.vectors @ vector, self.candidates, mask=mask)

    def _bm25(self, query: str, where) -> list[Hit]:
        return self.bm25.search(query, k=self.candidates, where=where)

    def _retrieve(self, query: str, vector: np.ndarray, where, timings: dict) -> tuple[list[Hit], list[Hit]]:
        mask = where_mask(self.chunks, where)

        def timed(name, fn, *args):
            start = time.perf_counter()
            result = fn(*args)
            timings[name] = time.perf_counter() - start
            return result

        if self._pool is None:
            return timed("bm25", self._bm25, query, where), timed("dense", self._dense, vector, mask)
        bm25 = self._pool.submit(timed, "bm25", self._bm25, query, where)
        dense = self._pool.submit(timed, "dense", self._dense, vector, mask)
        return bm25.result(), dense.result()

    def search(self, query: str, *, k: int = 5, filters: dict | None = None) -> Answer:
        """Rank chunks for a query; a repeat of a (normalised) query and filter set is served from the cache."""
        start = time.perf_counter()
        key = (normalize_query(query), filter_key(filters), k)
        cached = self.results.get(key) if self.results is not None else None
        if cached is not None:  # a copy: a caller sorting or trimming its hits must not edit the cache
            return Answer(query, list(cached), {"total": time.perf_counter() - start}, cached=True)
        timings: dict[str, float] = {}
        stage = time.perf_counter()
        vector = self.embed_query(query)
        timings["embed query"] = time.perf_counter() - stage
        where = make_filter(**filters) if filters else None
        bm25_hits, dense_hits = self._retrieve(query, vector, where, timings)
        stage = time.perf_counter()
        fused = [Hit(i, s) for i, s in rrf([[h.index for h in dense_hits], [h.index for h in bm25_hits]], k=self.rrf_k)]
        timings["fuse"] = time.perf_counter() - stage
        stage = time.perf_counter()
        if self.reranker is not None:
            fused = rerank(self.reranker, query, fused, self.chunks, top_n=self.top_n, batch_size=self.batch_size)
        timings["rerank"] = time.perf_counter() - stage
        hits = fused[:k]
        if self.results is not None:
            self.results.put(key, list(hits))
        timings["total"] = time.perf_counter() - start
        return Answer(query, hits, timings)


def source_url(chunk: Chunk, *, base_url: str = DOCS_URL) -> str:
    """Where a learner can read the chunk: the page on the docs site, at its section."""
    anchor = f"#{chunk.section_id}" if chunk.section_id else ""
    return f"{base_url}{chunk.doc}{anchor}"


def build_prompt(question: str, hits: Sequence[Hit], chunks: Sequence[Chunk], *, max_chunks: int = 4,
                 base_url: str = DOCS_URL) -> str:
    """The prompt for an LLM: instructions, the top chunks as numbered sources, the question.

    Each source shows title, heading path and URL, so the model can cite [1], [2] and a reader
    can check them. The first seed went from eight chunks to four: better retrieval needs fewer.
    """
    sources = []
    for number, hit in enumerate(hits[:max_chunks], 1):
        chunk = chunks[hit.index]
        where = " > ".join(chunk.heading_path) or chunk.title or chunk.doc
        sources.append(f"[{number}] {where}\n{source_url(chunk, base_url=base_url)}\n\n{chunk.body}")
    return ("Answer the question using only the sources below. Cite them as [1], [2], ... "
            "If they do not contain the answer, say so.\n\n"
            + "\n\n---\n\n".join(sources) + f"\n\n---\n\nQuestion: {question}\nAnswer:")


def ask_llm(prompt: str, *, model: str = "claude-sonnet-4-5", max_tokens: int = 500) -> str | None:
    """Send the prompt to Claude when ANTHROPIC_API_KEY is set and the `anthropic` package is
    installed; otherwise return None, so a notebook shows the prompt and moves on. The key is
    read from the environment only, never printed or stored."""
    if not os.environ.get("ANTHROPIC_API_KEY"):
        return None
    try:
        import anthropic
    except ImportError:
        return None
    reply = anthropic.Anthropic().messages.create(model=model, max_tokens=max_tokens,
                                                  messages=[{"role": "user", "content": prompt}])
    return "".join(block.text for block in reply.content if getattr(block, "type", "") == "text")
