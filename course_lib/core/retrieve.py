"""Retrieval: dense search, BM25 with a code-aware tokenizer, rank fusion, metadata filters, and
the one search configuration.

Every retriever here has a chunk list and a `search(query, *, k, where, vector)` that returns
ranked `Hit`s, so a lesson swaps BM25 for dense search, or both for their fusion, by changing one
line. Rankings are deterministic: equal scores are ordered by chunk index (see `rank_hits`).
`SearchConfig` holds the knobs of fusion and re-ranking once, for `HybridRetriever`, `Pipeline`,
`SearchService` and the PostgreSQL `Store` alike.
"""
from __future__ import annotations

import dataclasses
import math
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from course_lib import settings
from course_lib.infra import models, onnx_encoder
from course_lib.infra.terminal import stage
from course_lib.records import Chunk, Hit

Where = Callable[[Chunk], bool]  # a `Filter`, or any predicate a learner writes


class Retriever(Protocol):
    """Anything with a chunk list and a ranked `search`; `where` keeps only chunks it accepts.

    `vector` is the query's embedding when the caller already has it (a pipeline embeds the
    question once; a service caches it): a dense retriever uses it instead of embedding the
    question again, and a retriever with no use for it (BM25, a learner's own) ignores it. So a
    caller passes it to every retriever alike, never asking which kind it holds.
    """

    chunks: list[Chunk]

    def search(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Where | None = None,
               vector: np.ndarray | None = None) -> list[Hit]: ...


# ---------------------------------------------------------------------------------------------
# The search configuration

FUSIONS = ("rrf", "weighted")


def _positive_int(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"SearchConfig: {name} must be a whole number >= 1, not {value!r}")


@dataclass(frozen=True)
class SearchConfig:
    """The knobs of one search, in one frozen object whose defaults are `course_lib.settings`.

    `fusion` ("rrf" ranks, or "weighted" min-max scaled scores) with `rrf_k` or `weights` (one per
    retriever; None: equal), `candidates` (each retriever's list before fusion), `top_n` (the
    shortlist a re-ranker re-orders) and `batch_size` (its pairs per forward pass), `parallel`
    (retrievers in threads). `HybridRetriever`, `Pipeline`, `SearchService` and the PostgreSQL
    `Store` all take one, so the served, the evaluated and the SQL search read the same values.
    A lesson that measures another value changes one knob: `config.replace(top_n=10)`, or the
    keyword itself (`Pipeline(..., top_n=10)`), which `search_config` applies on top. Invalid
    values raise here, when the object is made, not at the first query.
    """

    fusion: Literal["rrf", "weighted"] = "rrf"
    rrf_k: int = settings.RRF_K
    weights: tuple[float, ...] | None = None
    candidates: int = settings.FUSION_CANDIDATES
    top_n: int = settings.RERANK_TOP_N
    batch_size: int = settings.RERANK_BATCH_SIZE
    parallel: bool = False

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ValueError(f"SearchConfig: fusion must be one of {FUSIONS}, not {self.fusion!r}")
        for name in ("rrf_k", "candidates", "top_n", "batch_size"):
            _positive_int(name, getattr(self, name))
        if not isinstance(self.parallel, bool):
            raise ValueError(f"SearchConfig: parallel must be True or False, not {self.parallel!r}")
        if self.weights is not None:
            if self.fusion != "weighted":
                raise ValueError("SearchConfig: weights apply to fusion='weighted'; RRF fuses ranks only")
            try:  # any sequence of numbers in; a hashable tuple kept
                weights = tuple(float(w) for w in self.weights)
            except (TypeError, ValueError):
                weights = ()
            if not weights or not all(math.isfinite(w) and w >= 0 for w in weights) or not any(weights):
                raise ValueError("SearchConfig: weights must be numbers, finite, >= 0 and not all 0, "
                                 f"not {self.weights!r}")
            object.__setattr__(self, "weights", weights)

    def replace(self, **changes: object) -> SearchConfig:
        """This configuration with the named knobs changed (see `search_config`)."""
        return search_config(self, **changes)

    def weights_for(self, count: int) -> list[float]:
        """One weight per retriever of `count`: the given ones, or equal; a wrong count raises."""
        if self.weights is None:
            return [1 / count] * count
        if len(self.weights) != count:
            raise ValueError(f"SearchConfig: {count} retrievers but {len(self.weights)} weights")
        return list(self.weights)


KNOBS = tuple(field.name for field in dataclasses.fields(SearchConfig))


def search_config(config: SearchConfig | None = None, **knobs: object) -> SearchConfig:
    """`config` (None: the defaults from settings) with the knobs a caller named applied on top.

    The one place a keyword such as `Pipeline(..., fusion="weighted")` meets a configuration,
    so a lesson changes one knob by one keyword whatever else it passes. A misspelt knob is a
    TypeError naming the knobs, as a misspelt keyword argument is.
    """
    base = config if config is not None else SearchConfig()
    if not isinstance(base, SearchConfig):
        raise TypeError(f"config must be a SearchConfig, not {type(base).__name__}")
    unknown = sorted(set(knobs) - set(KNOBS))
    if unknown:
        raise TypeError(f"unknown search knob {unknown[0]!r}; the knobs are {', '.join(KNOBS)}")
    return dataclasses.replace(base, **knobs) if knobs else base


def _read_only(knob: str) -> property:
    """A read-only view of one knob of `self.config` (no setter: assigning one raises)."""
    return property(lambda self: getattr(self.config, knob), doc=f"`config.{knob}`, read-only.")


class Configured:
    """Read-only views of `self.config`'s knobs, so `pipeline.top_n` or `store.rrf_k` read as the
    attributes they were; to change one, build with `config=old.config.replace(top_n=...)`."""

    config: SearchConfig
    fusion = _read_only("fusion")
    rrf_k = _read_only("rrf_k")
    weights = _read_only("weights")
    candidates = _read_only("candidates")
    top_n = _read_only("top_n")
    batch_size = _read_only("batch_size")
    parallel = _read_only("parallel")


def rank_hits(hits: Iterable[Hit]) -> list[Hit]:
    """Sort hits by score, highest first, breaking ties by the lower chunk index.

    Ties are common: fusion gives the same RRF score to two chunks at mirrored ranks, BM25 gives
    the same score to duplicated chunks. Without a fixed rule their order, and so recall@k, could
    change between runs; like standard IR tools, which break ties by document id, we use the
    chunk's position in the index.
    """
    return sorted(hits, key=lambda hit: (-hit.score, hit.index))


def top_k(scores: np.ndarray, k: int, *, mask: np.ndarray | None = None) -> list[Hit]:
    """The best k entries of a score vector as ranked Hits, optionally only where `mask` is True.

    `argpartition` finds the top k in linear time instead of sorting every chunk; every chunk tied
    with the k-th score is kept before sorting, so which tied chunk makes the cut is decided by
    `rank_hits`, not by the partition's arbitrary order.
    """
    candidates = np.flatnonzero(mask) if mask is not None else np.arange(len(scores))
    if k <= 0 or candidates.size == 0:
        return []
    if candidates.size > k:
        best = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
        candidates = candidates[scores[candidates] >= scores[best].min()]
    return rank_hits(Hit(int(i), float(scores[i])) for i in candidates)[:k]


def check_k(k: int) -> int:
    """Refuse a ranking depth below 1: `k=0` is a programming error, not an empty result."""
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an integer >= 1, not {k!r}")
    return k


def where_mask(chunks: Sequence[Chunk], where: Where | None) -> np.ndarray | None:
    """A boolean array of the chunks `where` accepts (None when there is no filter)."""
    if where is None:
        return None
    return np.fromiter((bool(where(chunk)) for chunk in chunks), dtype=bool, count=len(chunks))


# ---------------------------------------------------------------------------------------------
# Metadata filters


@dataclass(frozen=True)
class Filter:
    """Which chunks a search may return: an exact page, a page-path prefix, block kinds.

    Conditions combine with AND; `kinds` accepts a chunk holding ANY of the given block kinds
    (e.g. {"code"} keeps every chunk with some code in it). The one filter type of the course:
    called on a Chunk it is the predicate the in-memory retrievers apply before their top-k cut
    (so a filtered search still returns k hits when k chunks pass); `course_lib.extras.postgres`
    turns the same fields into a WHERE clause; frozen, with `kinds` stored as a sorted tuple, it
    is hashable and order-free, so the search service keys its result cache on it.
    """

    doc: str | None = None
    path_prefix: str | None = None
    kinds: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.kinds is not None:  # any iterable in; one canonical, hashable form kept
            object.__setattr__(self, "kinds", tuple(sorted(set(self.kinds))))

    def __call__(self, chunk: Chunk) -> bool:
        return ((self.doc is None or chunk.doc == self.doc)
                and (self.path_prefix is None or chunk.doc.startswith(self.path_prefix))
                and (self.kinds is None or not set(self.kinds).isdisjoint(chunk.kinds)))


def make_filter(*, doc: str | None = None, path_prefix: str | None = None,
                kinds: Iterable[str] | None = None) -> Filter:
    """A `Filter` for `search(..., where=...)`: exact page, page-path prefix, block kinds.

    The lessons' spelling of `Filter(...)`; `kinds` may be any iterable (a list, a set).
    """
    return Filter(doc=doc, path_prefix=path_prefix, kinds=tuple(kinds) if kinds is not None else None)


# ---------------------------------------------------------------------------------------------
# Dense retrieval


class DenseRetriever:
    """Cosine search over unit-normalised embeddings of `chunk.text`, as one NumPy dot product.

    The chunk vectors come from `models.embed` (disk-cached) unless `vectors` are passed, e.g.
    to compare models or to test. Queries go through `models.embed` too; `cache_queries=False`
    skips its disk cache, which the latency lesson uses to show what that cache is worth.
    `query_encoder="onnx"` (or "onnx-int8") embeds queries on ONNX Runtime instead
    (`course_lib.infra.onnx_encoder`; no disk cache for them); the chunk vectors stay PyTorch's.
    """

    name = "dense"

    def __init__(self, chunks: Sequence[Chunk], *, model: str | None = None,
                 vectors: np.ndarray | None = None, cache_queries: bool = True,
                 query_encoder: str = "torch"):
        self.query_encoder = query_encoder  # validated by the property below
        self.chunks = list(chunks)
        self.model = model
        self.cache_queries = cache_queries
        if vectors is None:
            # No bar: a lesson shows results, not "Batches: 37%" debris (lesson 01 shows cold cost).
            with stage(f"embedding {len(self.chunks):,} chunks"):  # said by `ask`, silent in a lesson
                vectors = models.embed([c.text for c in self.chunks], model=model, progress=False)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        if self.vectors.ndim != 2 or len(self.vectors) != len(self.chunks):
            raise ValueError(f"expected one vector per chunk ({len(self.chunks)} rows), "
                             f"got an array of shape {self.vectors.shape}")

    @property
    def query_encoder(self) -> str:
        """What embeds the query: one of `onnx_encoder.ENCODERS`."""
        return self._query_encoder

    @query_encoder.setter
    def query_encoder(self, encoder: str) -> None:
        # Checked on every assignment, not only in __init__: the CLI switches a built pipeline's
        # encoder, and a misspelt one must fail there, not at the first query.
        if encoder not in onnx_encoder.ENCODERS:
            raise ValueError(f"query_encoder must be one of {onnx_encoder.ENCODERS}, not {encoder!r}")
        self._query_encoder = encoder

    def embed_query(self, query: str) -> np.ndarray:
        """The query's unit vector, from the same model as the chunks."""
        if self.query_encoder != "torch":
            return onnx_encoder.embed_queries([query], model=self.model, encoder=self.query_encoder)[0]
        return models.embed([query], model=self.model, use_cache=self.cache_queries,
                            progress=False, query=True)[0]

    def search(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Where | None = None,
               vector: np.ndarray | None = None) -> list[Hit]:
        """The k chunks most similar to the query (cosine = dot product of unit vectors).

        `vector` is the query's embedding when the caller already has it (a pipeline embeds
        the query once and shares it; a service caches it), so it is not computed again.
        """
        check_k(k)
        query_vector = self.embed_query(query) if vector is None else vector
        scores = self.vectors @ np.asarray(query_vector, dtype=np.float32)
        return top_k(scores, k, mask=where_mask(self.chunks, where))


# ---------------------------------------------------------------------------------------------
# Fusion


def rrf(rankings: Sequence[Sequence[int]], *, k: int = settings.RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: each list adds 1 / (k + rank + 1) to every id it ranks (rank from 0).

    Exactly the production write-up's function, returning (id, score) so the fused score can be shown.
    Only ranks count, so BM25's unbounded scores and cosine similarities need no calibration;
    k=60 (the value of the original paper) damps the difference between rank 1 and rank 5.
    Ties are frequent (two ids at mirrored ranks of two lists) and broken by the lower id. The
    terms are added with `math.fsum`, which rounds only once: with three lists a running `+=`
    gives ranks (0, 6, 1) and (6, 1, 0) sums that differ in the last bit, so the tie would be
    broken by rounding error instead of by id.
    """
    terms: dict[int, list[float]] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking):
            terms.setdefault(doc_id, []).append(1.0 / (k + rank + 1))
    scores = {doc_id: math.fsum(parts) for doc_id, parts in terms.items()}
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _normalized(hits: Sequence[Hit], how: str) -> dict[int, float]:
    if how == "none" or not hits:
        return {h.index: h.score for h in hits}
    lo, hi = min(h.score for h in hits), max(h.score for h in hits)
    # One candidate, or all equal: every one of them is this list's best, so each gets 1.
    return {h.index: (h.score - lo) / (hi - lo) if hi > lo else 1.0 for h in hits}


def weighted_fusion(hit_lists: Sequence[Sequence[Hit]], *, weights: Sequence[float],
                    normalize: Literal["minmax", "none"] = "minmax") -> list[Hit]:
    """Fuse by a weighted sum of scores, each list min-max scaled to [0, 1] over its candidates.

    A chunk missing from a list gets 0 from it. Shown for contrast with RRF: the result hangs on
    the weights and on the scaling (a list's worst candidate becomes 0 however good it was), and
    `normalize="none"` shows what happens when BM25's scores (tens) meet cosines (below 1).
    """
    if len(weights) != len(hit_lists):
        raise ValueError(f"{len(hit_lists)} hit lists but {len(weights)} weights")
    terms: dict[int, list[float]] = {}
    for hits, weight in zip(hit_lists, weights, strict=True):
        for index, score in _normalized(hits, normalize).items():
            terms.setdefault(index, []).append(weight * score)
    # fsum, as in `rrf`: equal sums must compare equal whatever the order of their terms.
    return rank_hits(Hit(index, math.fsum(parts)) for index, parts in terms.items())


def fuse(hit_lists: Sequence[Sequence[Hit]], *, fusion: Literal["rrf", "weighted"] = "rrf",
         rrf_k: int = settings.RRF_K, weights: Sequence[float] | None = None) -> list[Hit]:
    """Fuse ranked lists into one: by rank (`rrf`) or by weighted, min-max scaled score.

    The one place fusion happens: `HybridRetriever`, and through it every pipeline and the
    search service, call this.
    """
    if fusion == "rrf":
        return [Hit(i, s) for i, s in rrf([[h.index for h in hits] for hits in hit_lists], k=rrf_k)]
    count = len(hit_lists)
    return weighted_fusion(hit_lists, weights=list(weights) if weights is not None else [1 / count] * count)


def same_chunks(retrievers: Sequence[Retriever]) -> None:
    """Raise ValueError unless every retriever indexes the same chunks in the same order.

    Fusion adds up scores by chunk INDEX: two lists of equal length but different chunks
    (another chunker, another page set) would fuse unrelated chunks without any error.
    """
    first = [c.id for c in retrievers[0].chunks]
    for other in retrievers[1:]:
        if other.chunks is not retrievers[0].chunks and [c.id for c in other.chunks] != first:
            raise ValueError(f"retrievers index different chunk lists ({len(first)} and "
                             f"{len(other.chunks)} chunks, ids differ): fusion would mix unrelated chunks")


class HybridRetriever(Configured):
    """Runs several retrievers on the same chunks and fuses their rankings.

    Its knobs are a `SearchConfig` (`config`, with any knob given as a keyword on top): each
    retriever returns its best `candidates` (at least k); `fusion="rrf"` fuses ranks with
    `rrf_k`, `fusion="weighted"` fuses min-max scaled scores with `weights` (default equal).
    The retrievers run one after the other by default; `parallel=True` runs them in a thread
    pool, which pays where each retriever waits (a database, a remote service). In memory, on a
    laptop, lesson 08 measured the threads slower: each retriever takes about a millisecond, BM25's
    posting walk is Python and holds the GIL, and the handoff to a thread costs every query.
    `last_timings` holds the seconds of each retriever, of the fusion and of the whole search,
    for the latency lesson. The pool's threads stop with `close()`, at the end of a `with` block,
    or when the retriever is garbage-collected.
    """

    def __init__(self, retrievers: Sequence[Retriever], *, config: SearchConfig | None = None,
                 **knobs: object):
        if not retrievers:
            raise ValueError("HybridRetriever needs at least one retriever")
        self.config = search_config(config, **knobs)
        same_chunks(retrievers)
        self.retrievers = list(retrievers)
        self.chunks = self.retrievers[0].chunks
        self.fused_weights = self.config.weights_for(len(self.retrievers))
        # A ready query vector is the question under the first dense model (the one a pipeline
        # embeds with); a dense retriever over another model must embed the question itself.
        models_ = [getattr(r, "model", None) for r in self.retrievers if hasattr(r, "embed_query")]
        self._takes_vector = [not models_ or getattr(r, "model", None) == models_[0] for r in self.retrievers]
        names = [getattr(r, "name", type(r).__name__) for r in self.retrievers]
        # Two retrievers of one kind (e.g. two dense models) still get separate timings.
        self.names = [n if names.count(n) == 1 else f"{n}#{i}" for i, n in enumerate(names)]
        self.name = "+".join(names) + f" ({self.fusion})"
        self.last_timings: dict[str, float] = {}
        self._pool = (ThreadPoolExecutor(len(retrievers), thread_name_prefix="hybrid")
                      if self.parallel else None)
        # The finalizer holds the pool, not self, so a dropped retriever is collected and its threads end.
        self._finalizer = weakref.finalize(self, self._pool.shutdown, wait=False) if self._pool else None

    def close(self) -> None:
        """Stop the thread pool and wait for its threads; later searches run one after the other."""
        if self._pool is not None and self._finalizer is not None:
            self._finalizer.detach()
            self._pool.shutdown(wait=True)
            self._pool = self._finalizer = None

    def __enter__(self) -> HybridRetriever:
        """The retriever itself; its thread pool is closed when the block ends."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the thread pool (see `close`)."""
        self.close()

    def _timed(self, retriever: Retriever, query: str, n: int, where: Where | None, vector):
        start = time.perf_counter()
        hits = retriever.search(query, k=n, where=where, vector=vector)
        return hits, time.perf_counter() - start

    def search(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Where | None = None,
               vector: np.ndarray | None = None) -> list[Hit]:
        """The k best chunks by fused score (the RRF or weighted score is each Hit's score).

        `vector` is the query's vector under the first dense retriever's model: every retriever
        over that model gets it (BM25 ignores it), so the question is not embedded again.
        """
        check_k(k)
        start = time.perf_counter()
        n = max(k, self.candidates)
        given = [vector if takes else None for takes in self._takes_vector]
        if self._pool is not None:
            futures = [self._pool.submit(self._timed, r, query, n, where, v)
                       for r, v in zip(self.retrievers, given, strict=True)]
            results = [f.result() for f in futures]
        else:
            results = [self._timed(r, query, n, where, v)
                       for r, v in zip(self.retrievers, given, strict=True)]
        fuse_start = time.perf_counter()
        fused = fuse([hits for hits, _ in results], fusion=self.fusion, rrf_k=self.rrf_k,
                     weights=self.fused_weights)
        end = time.perf_counter()
        self.last_timings = {name: seconds
                             for name, (_, seconds) in zip(self.names, results, strict=True)}
        self.last_timings.update(fuse=end - fuse_start, total=end - start)
        return fused[:k]
