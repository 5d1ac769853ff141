"""One pipeline object, from index to ranked answer, and every lesson's pipeline by name.

A `Pipeline` owns its stages:

    chunks -> dense index (vectors) and/or lexical index (BM25) -> fusion -> optional re-ranker

`search(query, k=..., where=...)` embeds the query once (shared by every dense stage), runs the
retrievers (one after the other; in threads with `parallel=True`), fuses their lists with `retrieve.fuse`, and
re-ranks the shortlist `rerank.shortlist_size(k, top_n=...)` decides. The seconds of each stage of the
last search are in `last_timings`, keyed by `STAGES` names. `serve.SearchService` adds caches
around a Pipeline and nothing else, so the served ranking is the evaluated one.

Each lesson adds one technique and registers the result by name, so `build_pipeline("naive",
pages)` (or `python -m course_lib evaluate --pipeline NAME`) runs any of them on any corpus:

    naive        lesson 01  regex-stripped text, fixed 1,000-character chunks, dense search
    clean        lesson 03  parsed, boilerplate-free text, the same fixed-size chunks
    structured   lesson 04  chunks packed from whole blocks within one heading path
    context      lesson 04  + the page title and heading path embedded with each chunk
    limited      lesson 05  + over-long blocks split so no chunk exceeds the model's limit
    bm25         lesson 06  the lesson 05 chunks, searched with code-aware BM25 alone
    hybrid       lesson 06  dense + BM25 fused by reciprocal rank fusion (k = settings.RRF_K)
    reranked     lesson 07  hybrid, then the fused shortlist re-ranked: settings.FINAL_PIPELINE
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from course_lib import settings
from course_lib.core.chunking import blocks_to_text, chunk_blocks, dedupe, window_chunks, without_context
from course_lib.core.frequency import FrequentBlock, drop_frequent_blocks
from course_lib.core.lexical import BM25Retriever
from course_lib.core.naive import fixed_size_chunks, naive_chunks
from course_lib.core.parse import check_parse_options, parse_pages
from course_lib.core.rerank import MaxSimReranker, Reranker, load_reranker, rerank, shortlist_size
from course_lib.core.retrieve import (
    Configured,
    DenseRetriever,
    HybridRetriever,
    Retriever,
    SearchConfig,
    Where,
    check_k,
    search_config,
)
from course_lib.core.tokens import get_counter
from course_lib.infra.errors import UsageError
from course_lib.infra.terminal import stage
from course_lib.records import Block, Chunk, Hit, Page

STAGES = ("embed query", "bm25", "dense", "fuse", "rerank")


class Pipeline(Configured):
    """Retrievers over one chunk list, their fusion, and an optional re-ranker, as one object.

    Build it from retriever objects (`Pipeline([DenseRetriever(chunks), BM25Retriever(chunks)])`)
    or with `Pipeline.over(chunks, ...)`. Its knobs are one `SearchConfig` (`config`; default:
    `course_lib.settings`); a lesson that measures another value passes one keyword
    (`fusion="weighted"`, `top_n=10`), applied on top of `config` by `search_config`. The
    retrievers run one after the other unless `parallel=True`: lesson 08 measured threads slower
    on a 2-core laptop for an in-memory index (each retriever takes about a millisecond and BM25
    holds the GIL), so they are opt-in. `pipeline.top_n` and the other knobs read `config`.
    """

    def __init__(self, retrievers: Sequence[Retriever], *, reranker: Reranker | None = None,
                 config: SearchConfig | None = None, name: str | None = None, **knobs: object):
        if not retrievers:
            raise ValueError("a pipeline needs at least one retriever")
        self.config = search_config(config, **knobs)
        self.retrievers = list(retrievers)
        # One retriever is searched directly; several go through the one fusion implementation.
        self.retrieval: Retriever = (self.retrievers[0] if len(self.retrievers) == 1 else
                                     HybridRetriever(self.retrievers, config=self.config))
        self.chunks: list[Chunk] = self.retrievers[0].chunks
        self.reranker = reranker
        parts = "+".join(getattr(r, "name", type(r).__name__) for r in self.retrievers)
        self.name = name or (parts if reranker is None else f"{parts} + {reranker.name}")
        self.last_timings: dict[str, float] = {}

    @classmethod
    def over(cls, chunks: Sequence[Chunk], *, model: str | None = None, vectors: np.ndarray | None = None,
             dense: bool = True, bm25: bool = True, query_encoder: str = "torch", cache_queries: bool = True,
             **options) -> Pipeline:
        """Dense and/or BM25 retrieval over `chunks` (fused when both): the one place both are built.

        Lesson 09's ablations switch one part off at a time (`dense=False`, `bm25=False`, a
        `reranker`); the lessons call it by its other name, `retriever_over`. `query_encoder` and
        `cache_queries` go to the `DenseRetriever` (lesson 08: "onnx" embeds queries on ONNX
        Runtime); `options` (`reranker`, `config`, `top_n`, `rrf_k`, `parallel`...) as in `Pipeline`.
        """
        chunks = list(chunks)
        parts: list[Retriever] = []
        if dense:
            parts.append(DenseRetriever(chunks, model=model, vectors=vectors, cache_queries=cache_queries,
                                        query_encoder=query_encoder))
        if bm25:
            with stage(f"indexing {len(chunks):,} chunks for BM25"):
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
        return Pipeline(self.retrievers, config=self.config)

    def embed_query(self, query: str) -> np.ndarray | None:
        """The query's vector under the dense stage's model (None without a dense stage)."""
        return self.dense.embed_query(query) if self.dense is not None else None

    # -- search -------------------------------------------------------------------------------
    def search(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Where | None = None,
               vector: np.ndarray | None = None) -> list[Hit]:
        """The k best chunks for the query; `where` filters before any cut.

        `vector` is the query's embedding if the caller has it (a service's cache). A
        re-ranking pipeline re-ranks the first `shortlist_size(k, top_n=top_n)` fused hits, so
        it never returns fewer than k when k chunks match.
        """
        check_k(k)
        timings: dict[str, float] = {}
        start = time.perf_counter()
        dense = self.dense
        if dense is not None and vector is None:
            vector = dense.embed_query(query)
        timings["embed query"] = time.perf_counter() - start
        depth = shortlist_size(k, top_n=self.top_n) if self.reranker is not None else k
        hits = self._retrieve(query, depth, where, vector, timings)
        if self.reranker is not None:
            stage = time.perf_counter()
            hits = rerank(self.reranker, query, hits, self.chunks, top_n=depth,
                          batch_size=self.batch_size)
            timings["rerank"] = time.perf_counter() - stage
        timings["total"] = time.perf_counter() - start
        self.last_timings = timings
        return hits[:k]

    def _retrieve(self, query: str, depth: int, where: Where | None, vector: np.ndarray | None,
                  timings: dict[str, float]) -> list[Hit]:
        """First-stage retrieval (fused if several retrievers), recording each stage's seconds."""
        stage = time.perf_counter()
        hits = self.retrieval.search(query, k=depth, where=where, vector=vector)
        if self.retrieval is self.retrievers[0]:
            timings[getattr(self.retrieval, "name", "retrieve")] = time.perf_counter() - stage
        else:  # the fusion timed each retriever and itself
            timings.update((name, s) for name, s in self.retrieval.last_timings.items() if name != "total")
        return hits

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}, {len(self.chunks)} chunks)"


Builder = Callable[..., Pipeline]
PIPELINES: dict[str, tuple[Builder, str]] = {}
# Names under this prefix are lesson 10's peer libraries (`extras.peers`), built outside this registry.
PEER_PREFIX = "peer:"


def register(name: str, description: str) -> Callable[[Builder], Builder]:
    """Decorator adding a pipeline builder `(pages, *, model) -> Pipeline` under `name`."""

    def add(builder: Builder) -> Builder:
        PIPELINES[name] = (builder, description)
        return builder

    return add


def build_pipeline(name: str, pages: Sequence[Page], *, model: str | None = None,
                   query_encoder: str = "torch") -> Pipeline:
    """Build a registered pipeline over pages; an unknown name lists the known ones. (Lesson 10's
    peer libraries have their own registry: `extras.peers.build_any` builds either kind.)
    `query_encoder` embeds the questions (see `with_query_encoder`)."""
    if name not in PIPELINES:
        raise KeyError(f"unknown pipeline {name!r}; known: {', '.join(PIPELINES)}")
    builder, _ = PIPELINES[name]
    pipeline = builder(pages, model=model)
    pipeline.name = name
    return with_query_encoder(pipeline, query_encoder)


def with_query_encoder(pipeline: Pipeline, query_encoder: str) -> Pipeline:
    """The pipeline with its questions embedded by `query_encoder` ("torch", "onnx", "onnx-int8",
    lesson 08); the chunk vectors are the same whichever it is, so nothing is rebuilt. A pipeline
    without a dense stage has no question to embed: asking it for another encoder is a UsageError
    (the command line's `--query-encoder` exits with it)."""
    if query_encoder != "torch" and pipeline.dense is None:
        raise UsageError(f"--query-encoder {query_encoder}: the pipeline {pipeline.name!r} has no dense "
                         "stage to embed the question for",
                         hint="keep the torch encoder, or pick a dense pipeline")
    if pipeline.dense is not None:
        pipeline.dense.query_encoder = query_encoder  # checked against the known encoders there
    return pipeline


def clean_corpus(pages: Sequence[Page], *, max_share: float = settings.BOILERPLATE_MAX_PAGE_SHARE,
                 **parse_options,
                 ) -> tuple[dict[str, list[Block]], list[tuple[str, str]], list[FrequentBlock]]:
    """Parse every page into blocks and drop boilerplate by structure and by frequency.

    `parse_options` go to `parse.parse_blocks` (e.g. `drop_boilerplate=False`, or
    `main_selector=None` to read the whole body) or to `parse.parse_corpus` (`min_chars`,
    `max_failure_share`); a misspelt one is a TypeError here, before any page is parsed.
    Returns the blocks per page, the skipped pages with their reasons (stubs, unreadable
    files), and the blocks removed for appearing on more than `max_share` of the pages
    (`max_share=1` turns that step off). Cached per process: lessons call it with the same
    pages many times, and a sweep over `max_share` parses the pages once; a build that raises is
    not cached.
    """
    check_parse_options(parse_options)
    kept, skipped, removed = _clean_corpus(tuple(pages), max_share, tuple(sorted(parse_options.items())))
    # Copies of the containers (the blocks are frozen): a caller's edit must not reach the cache.
    return {doc: list(blocks) for doc, blocks in kept.items()}, list(skipped), list(removed)


@lru_cache(maxsize=8)
def _parsed_corpus(pages: tuple[Page, ...], parse_options: tuple):
    # The parse does not depend on max_share (the frequency step only reads its blocks), so it
    # is cached on its own: choosing a threshold on dev costs one parse, not one per threshold.
    # parse_pages also keeps it on disk, so the next lesson's process does not parse again.
    return parse_pages(pages, **dict(parse_options))


@lru_cache(maxsize=16)
def _clean_corpus(pages: tuple[Page, ...], max_share: float, parse_options: tuple):
    parsed, skipped = _parsed_corpus(pages, parse_options)
    kept, removed = drop_frequent_blocks(parsed, max_share=max_share) if max_share < 1 else (parsed, [])
    return kept, skipped, removed


def clean_fixed_chunks(pages: Sequence[Page], *, size: int = settings.NAIVE_CHUNK_CHARS,
                       overlap: int = settings.NAIVE_OVERLAP_CHARS,
                       max_share: float = settings.BOILERPLATE_MAX_PAGE_SHARE,
                       **parse_options) -> list[Chunk]:
    """Lesson 03's chunks: the cleaned text of each page, cut like lesson 01's (`parse_options`
    go to the parser, e.g. `skip_rules=("link-dense",)`)."""
    blocks, _, _ = clean_corpus(pages, max_share=max_share, **parse_options)
    return [chunk for doc, page_blocks in blocks.items()
            for chunk in fixed_size_chunks(blocks_to_text(page_blocks), doc=doc, size=size, overlap=overlap)]


def page_title(blocks: Sequence[Block], doc: str) -> str:
    """The page title the parser put first in every heading path, or the page path if it found none."""
    return next((b.heading_path[0] for b in blocks if b.heading_path), doc)


def structured_chunks(pages: Sequence[Page], *, context: bool = True, count_context: bool = True,
                      split_long: bool = True, headings: bool = True, budget: int | None = None,
                      overlap_blocks: int = settings.CHUNK_OVERLAP_BLOCKS,
                      max_share: float = settings.BOILERPLATE_MAX_PAGE_SHARE,
                      model: str | None = None, **parse_options) -> list[Chunk]:
    """Lessons 04-05's chunks: whole blocks packed within one heading path, exact duplicates dropped.

    `budget` defaults to the model's real input limit, counted with its own tokenizer on the
    embedded text (the context line included when `count_context`); `split_long` splits blocks
    that exceed it alone; `headings` keeps each heading's text at the top of the body it opens.
    `parse_options` go to the parser (lesson 09's ablations switch cleaning steps off).
    """
    blocks, _, _ = clean_corpus(pages, max_share=max_share, **parse_options)
    with stage(f"chunking {len(blocks):,} page{'s' * (len(blocks) != 1)}"):  # minutes for a 15 MB page
        chunks = [chunk for doc, page_blocks in blocks.items()
                  for chunk in chunk_blocks(page_blocks, doc=doc, title=page_title(page_blocks, doc),
                                            budget=budget, overlap_blocks=overlap_blocks, context=context,
                                            count_context=count_context, split_long=split_long,
                                            headings=headings, model=model)]
    get_counter(model).save()  # the counts of this chunking, for the next process that builds it
    return dedupe(chunks)[0]


def window_chunks_of(pages: Sequence[Page], *, within_heading_path: bool = False, context: bool = False,
                     budget: int | None = None, max_share: float = settings.BOILERPLATE_MAX_PAGE_SHARE,
                     model: str | None = None) -> list[Chunk]:
    """Fixed windows (`chunking.window_chunks`) over every cleaned page: the control of lesson 04's
    step (a) and of lesson 09's ablation of structure-aware boundaries, exact duplicates dropped."""
    blocks, _, _ = clean_corpus(pages, max_share=max_share)
    chunks = [chunk for doc, page_blocks in blocks.items()
              for chunk in window_chunks(page_blocks, doc=doc, title=page_title(page_blocks, doc),
                                         budget=budget, within_heading_path=within_heading_path,
                                         context=context, model=model)]
    get_counter(model).save()
    return dedupe(chunks)[0]


# Lessons 04, 07, 09 and 10 and the benchmarks call it by this name: the same constructor, not a second one.
retriever_over = Pipeline.over


def reranker_for(model: str | None) -> Reranker:
    """The lesson 07 re-ranker; the MaxSim fallback uses the pipeline's own embedder `model`."""
    reranker = load_reranker()
    if model is not None and isinstance(reranker, MaxSimReranker):
        return MaxSimReranker(model)
    return reranker


@register("naive", "lesson 01: regex-stripped text, fixed 1,000-character chunks, dense search")
def naive_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(naive_chunks(pages), model=model, bm25=False)


@register("clean", "lesson 03: parsed text without boilerplate, the same fixed-size chunks")
def clean_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(clean_fixed_chunks(pages), model=model, bm25=False)


@register("structured", "lesson 04: whole blocks packed within one heading path, no context line")
def structured_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(without_context(context_chunks(pages, model=model)), model=model, bm25=False)


@register("context", "lesson 04: the same chunk bodies with title > heading path embedded")
def context_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(context_chunks(pages, model=model), model=model, bm25=False)


def context_chunks(pages: Sequence[Page], *, model: str | None = None) -> list[Chunk]:
    """Lesson 04's chunks: whole blocks within one heading path, the body alone counted against the
    budget (so the same bodies serve with and without the context line), nothing split."""
    return structured_chunks(pages, split_long=False, count_context=False, model=model)


@register("limited", "lesson 05: the context line counted and over-long blocks split: nothing over the limit")
def limited_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(structured_chunks(pages, model=model), model=model, bm25=False)


@register("bm25", "lesson 06: code-aware BM25 alone over the lesson 05 chunks")
def bm25_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(structured_chunks(pages, model=model), dense=False)


@register("hybrid", f"lesson 06: dense + BM25 fused by reciprocal rank fusion (k = {settings.RRF_K})")
def hybrid_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(structured_chunks(pages, model=model), model=model)


@register("reranked", f"lesson 07: hybrid, then the top {settings.RERANK_TOP_N} re-ranked (MaxSim late "
                      "interaction, unless a cross-encoder is named)")
def reranked_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return Pipeline.over(structured_chunks(pages, model=model), model=model, reranker=reranker_for(model))
