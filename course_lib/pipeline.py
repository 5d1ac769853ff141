"""One pipeline object, from index to ranked answer: the thing every lesson evaluates and serves.

A `Pipeline` owns its stages:

    chunks -> dense index (vectors) and/or lexical index (BM25) -> fusion -> optional re-ranker

`search(query, k=..., where=...)` embeds the query once (shared by every dense stage), runs the
retrievers (in parallel threads if `parallel=True`), fuses their lists with `search.fuse`, and
re-ranks the top `max(k, top_n)` with `rerank.rerank`. The seconds of each stage of the last
search are in `last_timings`, keyed by `serve.STAGES` names. `serve.SearchService` adds caches
around a Pipeline and nothing else, so the served ranking is the evaluated one.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal

import numpy as np

from . import settings
from .records import Chunk, Hit
from .rerank import Reranker, rerank
from .search import BM25Retriever, DenseRetriever, HybridRetriever, Retriever, Where, check_k

STAGES = ("embed query", "bm25", "dense", "fuse", "rerank")


class Pipeline:
    """Retrievers over one chunk list, their fusion, and an optional re-ranker, as one object.

    Build it from retriever objects (`Pipeline([DenseRetriever(chunks), BM25Retriever(chunks)])`)
    or with `Pipeline.over(chunks, ...)`. Knobs default to `course_lib.settings`; a lesson that
    measures another value passes one keyword.
    """

    def __init__(self, retrievers: Sequence[Retriever], *, reranker: Reranker | None = None,
                 fusion: Literal["rrf", "weighted"] = "rrf", rrf_k: int = settings.RRF_K,
                 weights: Sequence[float] | None = None, candidates: int = settings.CANDIDATES,
                 top_n: int = settings.TOP_N, batch_size: int = settings.BATCH_SIZE,
                 parallel: bool = True, name: str | None = None):
        if not retrievers:
            raise ValueError("a pipeline needs at least one retriever")
        check_k(top_n)
        self.retrievers = list(retrievers)
        # One retriever is searched directly; several go through the one fusion implementation.
        self.retrieval: Retriever = (self.retrievers[0] if len(self.retrievers) == 1 else
                                     HybridRetriever(self.retrievers, fusion=fusion, rrf_k=rrf_k,
                                                     weights=weights, candidates=candidates,
                                                     parallel=parallel))
        self.chunks: list[Chunk] = self.retrievers[0].chunks
        self.reranker, self.top_n, self.batch_size = reranker, top_n, batch_size
        self.fusion, self.rrf_k, self.weights, self.candidates = fusion, rrf_k, weights, candidates
        self.parallel = parallel
        parts = "+".join(getattr(r, "name", type(r).__name__) for r in self.retrievers)
        self.name = name or (parts if reranker is None else f"{parts} + {reranker.name}")
        self.last_timings: dict[str, float] = {}

    @classmethod
    def over(cls, chunks: Sequence[Chunk], *, model: str | None = None, vectors: np.ndarray | None = None,
             dense: bool = True, bm25: bool = True, **options) -> Pipeline:
        """Dense and/or BM25 retrieval over `chunks` (fused when both); `options` as in `Pipeline`."""
        chunks = list(chunks)
        parts: list[Retriever] = []
        if dense:
            parts.append(DenseRetriever(chunks, model=model, vectors=vectors))
        if bm25:
            parts.append(BM25Retriever(chunks))
        if not parts:
            raise ValueError("a retriever needs dense or bm25 (or both)")
        return cls(parts, **options)

    # -- the stages ---------------------------------------------------------------------------
    @property
    def dense(self) -> DenseRetriever | None:
        """The first dense stage, or None for a lexical-only pipeline."""
        return next((r for r in self.retrievers if isinstance(r, DenseRetriever)), None)

    @property
    def vectors(self) -> np.ndarray | None:
        """The dense index: one unit vector per chunk (None without a dense stage)."""
        return self.dense.vectors if self.dense is not None else None

    @property
    def base(self) -> Pipeline:
        """The same pipeline without its re-ranker (sharing the indexes): what is re-ranked."""
        if self.reranker is None:
            return self
        return Pipeline(self.retrievers, fusion=self.fusion, rrf_k=self.rrf_k, weights=self.weights,
                        candidates=self.candidates, parallel=self.parallel)

    def embed_query(self, query: str) -> np.ndarray | None:
        """The query's vector under the dense stage's model (None without a dense stage)."""
        return self.dense.embed_query(query) if self.dense is not None else None

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, *, k: int = settings.DEPTH, where: Where | None = None,
               vector: np.ndarray | None = None) -> list[Hit]:
        """The k best chunks for the query; `where` filters before any cut.

        `vector` is the query's embedding if the caller has it (a service's cache). A
        re-ranking pipeline re-ranks the first max(k, top_n) fused hits, so it never returns
        fewer than k when k chunks match.
        """
        check_k(k)
        timings: dict[str, float] = {}
        start = time.perf_counter()
        dense = self.dense
        if dense is not None and vector is None:
            vector = dense.embed_query(query)
        timings["embed query"] = time.perf_counter() - start
        depth = max(k, self.top_n) if self.reranker is not None else k
        hits = self._retrieve(query, depth, where, vector, timings)
        if self.reranker is not None:
            stage = time.perf_counter()
            hits = rerank(self.reranker, query, hits, self.chunks, top_n=depth, batch_size=self.batch_size)
            timings["rerank"] = time.perf_counter() - stage
        timings["total"] = time.perf_counter() - start
        self.last_timings = timings
        return hits[:k]

    def _retrieve(self, query: str, depth: int, where: Where | None, vector: np.ndarray | None,
                  timings: dict[str, float]) -> list[Hit]:
        """First-stage retrieval (fused if several retrievers), recording each stage's seconds."""
        if isinstance(self.retrieval, HybridRetriever):
            model = self.dense.model if self.dense is not None else None
            hits = self.retrieval.search(query, k=depth, where=where,
                                         vectors={model: vector} if vector is not None else None)
            timings.update((name, s) for name, s in self.retrieval.last_timings.items() if name != "total")
            return hits
        stage = time.perf_counter()
        if isinstance(self.retrieval, DenseRetriever) and vector is not None:
            hits = self.retrieval.search(query, k=depth, where=where, vector=vector)
        else:
            hits = self.retrieval.search(query, k=depth, where=where)
        timings[getattr(self.retrieval, "name", "retrieve")] = time.perf_counter() - stage
        return hits

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}, {len(self.chunks)} chunks)"
