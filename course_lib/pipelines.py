"""The pipelines the lessons build, registered by name so any of them runs on any corpus.

`build_pipeline("naive", pages)` returns a `Pipeline` (course_lib/pipeline.py);
`python -m course_lib evaluate --pipeline NAME` scores it on a golden file. Each lesson adds one
technique and registers the result here, so a practitioner can run the whole comparison on their own site:

    naive        lesson 01  regex-stripped text, fixed 1,000-character chunks, dense search
    clean        lesson 03  parsed, boilerplate-free text, the same fixed-size chunks
    structured   lesson 04  chunks packed from whole blocks within one heading path
    context      lesson 04  + the page title and heading path embedded with each chunk
    limited      lesson 05  + over-long blocks split so no chunk exceeds the model's limit
    bm25         lesson 06  the lesson 05 chunks, searched with code-aware BM25 alone
    hybrid       lesson 06  dense + BM25 fused by reciprocal rank fusion (k = settings.RRF_K)
    reranked     lesson 07  hybrid, then the top settings.TOP_N re-ranked: settings.FINAL_PIPELINE
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from . import settings
from .chunking import blocks_to_text, chunk_blocks, dedupe
from .naive import fixed_size_chunks, naive_chunks
from .parse import FrequentBlock, check_parse_options, drop_frequent_blocks, parse_corpus
from .pipeline import Pipeline
from .records import Block, Chunk, Page
from .rerank import MaxSimReranker, Reranker, load_reranker

Builder = Callable[..., Pipeline]
PIPELINES: dict[str, tuple[Builder, str]] = {}
MAX_SHARE = settings.MAX_SHARE  # kept importable: lessons read it from here


def register(name: str, description: str) -> Callable[[Builder], Builder]:
    """Decorator adding a pipeline builder `(pages, *, model) -> Pipeline` under `name`."""

    def add(builder: Builder) -> Builder:
        PIPELINES[name] = (builder, description)
        return builder

    return add


def build_pipeline(name: str, pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    """Build a registered pipeline over pages; an unknown name lists the known ones."""
    if name.startswith("peer:"):  # lesson 10's peer libraries: their own registry, course_lib/peers.py
        from .peers import build_peer

        return build_peer(name, pages, model=model)
    if name not in PIPELINES:
        raise KeyError(f"unknown pipeline {name!r}; known: {', '.join(PIPELINES)}")
    builder, _ = PIPELINES[name]
    pipeline = builder(pages, model=model)
    pipeline.name = name
    return pipeline


def clean_corpus(pages: Sequence[Page], *, max_share: float = MAX_SHARE, **parse_options,
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
    return _clean_corpus(tuple(pages), max_share, tuple(sorted(parse_options.items())))


@lru_cache(maxsize=8)
def _parsed_corpus(pages: tuple[Page, ...], parse_options: tuple):
    # The parse does not depend on max_share (the frequency step only reads its blocks), so it
    # is cached on its own: choosing a threshold on dev costs one parse, not one per threshold.
    return parse_corpus(pages, **dict(parse_options))


@lru_cache(maxsize=16)
def _clean_corpus(pages: tuple[Page, ...], max_share: float, parse_options: tuple):
    parsed, skipped = _parsed_corpus(pages, parse_options)
    kept, removed = drop_frequent_blocks(parsed, max_share=max_share) if max_share < 1 else (parsed, [])
    return kept, skipped, removed


def clean_fixed_chunks(pages: Sequence[Page], *, size: int = settings.NAIVE_SIZE,
                       overlap: int = settings.NAIVE_OVERLAP, max_share: float = MAX_SHARE) -> list[Chunk]:
    """Lesson 03's chunks: the cleaned text of each page, cut like lesson 01's."""
    blocks, _, _ = clean_corpus(pages, max_share=max_share)
    return [chunk for doc, page_blocks in blocks.items()
            for chunk in fixed_size_chunks(blocks_to_text(page_blocks), doc=doc, size=size, overlap=overlap)]


def page_title(blocks: Sequence[Block], doc: str) -> str:
    """The page title the parser put first in every heading path, or the page path if it found none."""
    return next((b.heading_path[0] for b in blocks if b.heading_path), doc)


def structured_chunks(pages: Sequence[Page], *, context: bool = True, split_long: bool = True,
                      budget: int | None = None, overlap_blocks: int = settings.OVERLAP_BLOCKS,
                      max_share: float = MAX_SHARE, model: str | None = None, **parse_options) -> list[Chunk]:
    """Lessons 04-05's chunks: whole blocks packed within one heading path, exact duplicates dropped.

    `budget` defaults to the model's real input limit, counted with its own tokenizer on the
    embedded text (context line included); `split_long` splits blocks that exceed it alone.
    `parse_options` go to the parser (lesson 09's ablations switch cleaning steps off).
    """
    blocks, _, _ = clean_corpus(pages, max_share=max_share, **parse_options)
    chunks = [chunk for doc, page_blocks in blocks.items()
              for chunk in chunk_blocks(page_blocks, doc=doc, title=page_title(page_blocks, doc),
                                        budget=budget, overlap_blocks=overlap_blocks, context=context,
                                        split_long=split_long, model=model)]
    return dedupe(chunks)[0]


def retriever_over(chunks: Sequence[Chunk], *, model: str | None = None, bm25: bool = True,
                   dense: bool = True, reranker: Reranker | None = None, top_n: int = settings.TOP_N,
                   **options) -> Pipeline:
    """The retrieval half of a pipeline over given chunks: dense and/or BM25 (fused by RRF when
    both), optionally re-ranked. Lesson 09's ablations switch one part off at a time; `options`
    (`rrf_k`, `candidates`, `parallel`...) go to `Pipeline`."""
    return Pipeline.over(chunks, model=model, dense=dense, bm25=bm25, reranker=reranker, top_n=top_n,
                         **options)


def reranker_for(model: str | None) -> Reranker:
    """The lesson 07 re-ranker; the MaxSim fallback uses the pipeline's own embedder `model`."""
    reranker = load_reranker()
    if model is not None and isinstance(reranker, MaxSimReranker):
        return MaxSimReranker(model)
    return reranker


@register("naive", "lesson 01: regex-stripped text, fixed 1,000-character chunks, dense search")
def naive_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(naive_chunks(pages), model=model, bm25=False)


@register("clean", "lesson 03: parsed text without boilerplate, the same fixed-size chunks")
def clean_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(clean_fixed_chunks(pages), model=model, bm25=False)


@register("structured", "lesson 04: whole blocks packed within one heading path, no context line")
def structured_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(structured_chunks(pages, context=False, split_long=False, model=model),
                          model=model, bm25=False)


@register("context", "lesson 04: structured chunks with title > heading path embedded")
def context_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(structured_chunks(pages, split_long=False, model=model), model=model, bm25=False)


@register("limited", "lesson 05: over-long blocks split so no chunk exceeds the model's limit")
def limited_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(structured_chunks(pages, model=model), model=model, bm25=False)


@register("bm25", "lesson 06: code-aware BM25 alone over the lesson 05 chunks")
def bm25_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(structured_chunks(pages, model=model), dense=False)


@register("hybrid", f"lesson 06: dense + BM25 fused by reciprocal rank fusion (k = {settings.RRF_K})")
def hybrid_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(structured_chunks(pages, model=model), model=model)


@register("reranked", f"lesson 07: hybrid, then the top {settings.TOP_N} re-ranked (MaxSim late "
                      "interaction offline; a cross-encoder if one is in the local hub cache)")
def reranked_pipeline(pages: Sequence[Page], *, model: str | None = None) -> Pipeline:
    return retriever_over(structured_chunks(pages, model=model), model=model, reranker=reranker_for(model))

