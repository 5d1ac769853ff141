"""Serving a query fast: caches around one `Pipeline`, per-stage timings, prompt assembly.

The production write-up made its pipeline both more accurate and faster. `SearchService` serves
a `course_lib.core.pipeline.Pipeline`, the very object lessons 06-09 evaluate, and adds only what
serving needs:

    query-vector cache -> Pipeline.search (embed, BM25, dense, fuse, re-rank) -> result cache (TTL)

With an ONNX query encoder and a MaxSim re-ranker, one forward pass over the question gives both
its sentence vector and the token vectors the re-ranker scores with (the shared pass), so a new
question runs the model once instead of twice.

It contains no retrieval or fusion of its own, so what lesson 08 times is what lesson 09 scores.
`build_prompt` assembles the top chunks with numbered sources for an LLM, and `ask_llm` sends it
where a key is set (`course_lib.core.answer` checks the reply's citations).
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

import cachetools
import numpy as np

from course_lib import settings
from course_lib.core.lexical import case_sensitive_spans
from course_lib.core.pipeline import Pipeline
from course_lib.core.rerank import MaxSimReranker, Reranker
from course_lib.core.retrieve import Filter, SearchConfig, make_filter, search_config
from course_lib.infra import onnx_encoder
from course_lib.infra.threads import blas_limit
from course_lib.records import Chunk, Hit

__all__ = ["DOCS_URL", "Answer", "LRUCache", "SearchService", "TTLCache", "as_filter", "ask_llm",
           "build_prompt", "llm_missing", "normalize_query", "source_url"]

DOCS_URL = "https://docs.python.org/3.11/"  # the shipped corpus's site; pass base_url=None for paths alone


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


class _Counting:
    """What `get` found (hits) and did not (misses): lesson 08 prints the hit rates."""

    hits = misses = 0

    def get(self, key, default=None):
        """The stored value, or `default` (a miss) when it is absent or expired."""
        try:
            value = self[key]
        except KeyError:
            self.misses += 1
            return default
        self.hits += 1
        return value


class LRUCache(_Counting, cachetools.LRUCache):
    """cachetools' bounded least-recently-used cache, counting its hits and misses."""

    def __init__(self, size: int = settings.QUERY_CACHE_SIZE):
        super().__init__(maxsize=size)


class TTLCache(_Counting, cachetools.TTLCache):
    """cachetools' LRU cache whose entries expire `ttl` seconds after they were stored.

    Results go stale when the index changes; a short TTL bounds how stale. `ttl` is read-only
    (assigning it raises: make a new cache, or `clear()` this one). `clock` is injectable so
    tests (and lesson 08) can move time forward.
    """

    def __init__(self, size: int = settings.RESULT_CACHE_SIZE, *, ttl: float = settings.RESULT_TTL_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__(maxsize=size, ttl=ttl, timer=clock)


def as_filter(filters: Filter | Mapping[str, object] | None) -> Filter | None:
    """The `Filter` a service request asks for: a Filter, its keywords as a dict, or None.

    A dict's lists and sets become one canonical Filter, so {"kinds": ["table", "code"]} and
    {"kinds": {"code", "table"}} are one cache entry; a request that filters nothing is None.
    """
    where = filters if isinstance(filters, Filter) else make_filter(**filters or {})
    return None if where == Filter() else where


@dataclass
class Answer:
    """Ranked hits for a query, how long each stage took, and whether it came from the cache."""

    query: str
    hits: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)
    cached: bool = False


class SearchService:
    """A pipeline served one query at a time, with a query-vector cache and a result cache.

    Pass chunks (the pipeline is built here: dense + BM25, optional `reranker`, the search knobs
    as a `SearchConfig` and/or single keywords on top, defaults from `settings`) or a ready
    `Pipeline` (which carries its own config). `filters`
    (a `Filter`: page `doc`, page-path prefix `path_prefix`, block `kinds`) are applied inside
    the retrievers, before the top-k cut. `cache_results=False` and `cache_queries=False` switch
    off one speed-up each, and `parallel=True` runs the retrievers in threads (off by default:
    lesson 08 measured it slower on a laptop), so lesson 08 can measure what each is worth.

    `query_encoder` ("torch", "onnx", "onnx-int8") embeds the question. With an ONNX encoder and a
    `MaxSimReranker` over the same model, `shared_pass=True` (the default) takes the re-ranker's
    question token vectors from the forward pass that embeds the question, and caches both
    together; `shared_pass=False` keeps the two passes, to measure what sharing is worth.
    `blas_threads` (default 1) caps NumPy's BLAS threads while a query is computed (see
    `blas_limit`); None leaves the process's setting.
    """

    def __init__(self, chunks: Sequence[Chunk] | Pipeline, *, model: str | None = None,
                 vectors: np.ndarray | None = None, reranker: Reranker | None = None,
                 config: SearchConfig | None = None, query_encoder: str = "torch",
                 ttl: float = settings.RESULT_TTL_SECONDS, cache_queries: bool = True,
                 cache_results: bool = True, shared_pass: bool = True,
                 blas_threads: int | None = settings.SERVE_BLAS_THREADS, **knobs: object):
        if query_encoder not in onnx_encoder.ENCODERS:
            raise ValueError(f"query_encoder must be one of {onnx_encoder.ENCODERS}, not {query_encoder!r}")
        if isinstance(chunks, Pipeline):
            if config is not None or knobs:  # silently serving other knobs than asked would mislead
                raise ValueError("a ready Pipeline carries its own SearchConfig: pass config (or the "
                                 "knobs) to the Pipeline, or pass chunks here")
            self.pipeline = chunks
        else:
            # The query vector comes from this service's own cache: no disk lookup per query.
            self.pipeline = Pipeline.over(chunks, model=model, vectors=vectors, cache_queries=False,
                                          query_encoder=query_encoder, reranker=reranker,
                                          config=search_config(config, **knobs))
        self.query_vectors = LRUCache(settings.QUERY_CACHE_SIZE) if cache_queries else None
        self.results = TTLCache(settings.RESULT_CACHE_SIZE, ttl=ttl) if cache_results else None
        self.shared_pass = shared_pass
        self.blas_threads = blas_threads
        self._encoders: dict[tuple[str | None, str], onnx_encoder.OnnxEncoder] = {}

    @property
    def config(self) -> SearchConfig:
        """The served pipeline's search knobs."""
        return self.pipeline.config

    @property
    def chunks(self) -> list[Chunk]:
        return self.pipeline.chunks

    @property
    def vectors(self) -> np.ndarray | None:
        return self.pipeline.vectors

    @property
    def reranker(self) -> Reranker | None:
        return self.pipeline.reranker

    @reranker.setter
    def reranker(self, reranker: Reranker | None) -> None:
        self.pipeline.reranker = reranker

    def shared_encoder(self) -> onnx_encoder.OnnxEncoder | None:
        """The ONNX encoder whose one pass serves dense search and re-ranker, or None where the
        two passes stay apart: `shared_pass=False`, a PyTorch encoder (its dense stage and
        re-ranker keep their own caches), no dense stage, or no MaxSim re-ranker of the same model."""
        dense, reranker = self.pipeline.dense, self.pipeline.reranker
        if (not self.shared_pass or dense is None or dense.query_encoder == "torch"
                or not isinstance(reranker, MaxSimReranker) or reranker.model != dense.model):
            return None
        # Kept per service: `load_encoder` fingerprints the model's files on every call (ms).
        key = (dense.model, dense.query_encoder)
        if key not in self._encoders:
            self._encoders[key] = onnx_encoder.load_encoder(dense.model, encoder=dense.query_encoder)
        return self._encoders[key]

    def encode_query(self, query: str) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The query's vector and, on the shared pass, the re-ranker's token vectors for it (else
        None), from memory when the same (normalised) query was seen before."""
        key = normalize_query(query)
        found = self.query_vectors.get(key) if self.query_vectors is not None else None
        if found is None:
            encoder = self.shared_encoder()
            if encoder is None:
                found = (self.pipeline.embed_query(query), None)
            else:
                both = encoder.encode_query(query)
                # A re-ranker with a lower limit than the encoder would cut a long question
                # elsewhere: then it encodes the question itself, as without sharing.
                fits = both.pieces <= self.pipeline.reranker.max_tokens
                found = (both.vector, both.tokens if fits else None)
            if self.query_vectors is not None and found[0] is not None:
                self.query_vectors[key] = found
        return found

    def embed_query(self, query: str) -> np.ndarray | None:
        """The query's vector, from memory when the same (normalised) query was seen before."""
        return self.encode_query(query)[0]

    def answer(self, query: str, *, k: int = settings.EVAL_DEPTH,
               filters: Filter | Mapping[str, object] | None = None) -> Answer:
        """Rank chunks for a query, as an `Answer` (the hits, the seconds per stage, whether it was
        cached): named for what it returns, since a `Retriever`'s `search` returns the hits alone. A
        repeat of a (normalised) query and filter comes from the cache.

        `filters` is a `Filter` or its keywords as a dict (`{"kinds": ["code"]}`); see `as_filter`.
        """
        start = time.perf_counter()
        where = as_filter(filters)
        key = (normalize_query(query), where, k)
        cached = self.results.get(key) if self.results is not None else None
        if cached is not None:  # a copy: a caller sorting or trimming its hits must not edit the cache
            return Answer(query, list(cached), {"total": time.perf_counter() - start}, cached=True)
        with blas_limit(self.blas_threads):
            vector, tokens = self.encode_query(query)
            embedded = time.perf_counter()
            reranker = self.pipeline.reranker
            shared = tokens is not None and isinstance(reranker, MaxSimReranker)
            given = reranker.given_query(query, tokens) if shared else nullcontext()
            with given:  # the re-ranker scores with the shared pass's token vectors, encoding nothing
                hits = self.pipeline.search(query, k=k, where=where, vector=vector)
        timings = dict(self.pipeline.last_timings)
        timings["embed query"] = embedded - start  # the cached or computed vector, not the pipeline's
        if self.results is not None:
            self.results[key] = list(hits)
        timings["total"] = time.perf_counter() - start
        return Answer(query, hits, timings)


def source_url(chunk: Chunk, *, base_url: str | Mapping[str, str] | None = DOCS_URL) -> str:
    """Where a learner can read the chunk: the page under `base_url`, at its section.

    `base_url=None` cites the page path alone (`library/os.html#os.walk`): right for a corpus
    whose site is unknown, where a Python-docs address would be a wrong citation. A mapping gives
    each page its own site (`{page path: site}`, a page not in it cites its path): a learner's
    folder of pages saved from several sites, each naming its own in a canonical link or <base>.
    """
    anchor = f"#{chunk.section_id}" if chunk.section_id else ""
    site = base_url.get(chunk.doc, "") if isinstance(base_url, Mapping) else base_url
    return f"{site or ''}{chunk.doc}{anchor}"


def build_prompt(question: str, hits: Sequence[Hit], chunks: Sequence[Chunk], *,
                 max_chunks: int = settings.PROMPT_CHUNKS,
                 base_url: str | Mapping[str, str] | None = DOCS_URL) -> str:
    """The prompt for an LLM: instructions, the top chunks as numbered sources, the question.

    Each source shows title, heading path and URL, so the model can cite [1], [2] and a reader
    can check them. The production write-up went from eight chunks to four: better retrieval needs
    fewer. `base_url=None` cites page paths alone (see `source_url`).
    """
    sources = []
    for number, hit in enumerate(hits[:max_chunks], 1):
        chunk = chunks[hit.index]
        where = " > ".join(chunk.heading_path) or chunk.title or chunk.doc
        sources.append(f"[{number}] {where}\n{source_url(chunk, base_url=base_url)}\n\n{chunk.body}")
    return ("Answer the question using only the sources below. Cite them as [1], [2], ... "
            "If they do not contain the answer, say so.\n\n"
            + "\n\n---\n\n".join(sources) + f"\n\n---\n\nQuestion: {question}\nAnswer:")


OFFLINE_SWITCH = "COURSE_OFFLINE_LLM"
KEY_VARIABLE = "ANTHROPIC_API_KEY"
LLM_PACKAGE = "anthropic"  # the client `ask_llm` calls; `pip install -e '.[llm]'` installs it


def llm_missing() -> str | None:
    """What stops `ask_llm` from calling the model, named exactly; None when nothing does.

    Three things can: the offline switch (COURSE_OFFLINE_LLM=1, set by the course's tests and CI so
    a test run never calls a paid API), the API key (read from the environment only), and the client
    package (the `llm` extra). All that are missing are named, so one message says what to fix.
    """
    import importlib.util

    if os.environ.get(OFFLINE_SWITCH) == "1":
        return (f"{OFFLINE_SWITCH}=1 is set (the course's tests and CI set it, so no paid API is called): "
                "unset it in the shell that starts Jupyter to send the prompt")
    missing = []
    if not os.environ.get(KEY_VARIABLE):
        missing.append(f"{KEY_VARIABLE} is not set (export it in the shell that starts Jupyter, never in a "
                       "notebook)")
    if importlib.util.find_spec(LLM_PACKAGE) is None:
        missing.append(f"the package {LLM_PACKAGE} is not installed (pip install -e '.[llm]')")
    return "; ".join(missing) or None


def ask_llm(prompt: str, *, model: str = settings.LLM_MODEL,
            max_tokens: int = settings.ANSWER_MAX_TOKENS, client=None) -> str | None:
    """Send the prompt to Claude and return the text of its reply; None when `llm_missing()` says
    something stops the call, so a notebook shows the prompt and moves on. The key is read from the
    environment only, never printed or stored. `client` is an object with the Anthropic client's
    `messages.create` (a stand-in in the tests, which never call a paid API); given one, it is
    called whatever the environment says."""
    if client is None:
        if llm_missing() is not None:
            return None
        import anthropic

        client = anthropic.Anthropic()
    reply = client.messages.create(model=model, max_tokens=max_tokens,
                                   messages=[{"role": "user", "content": prompt}])
    return "".join(block.text for block in reply.content if getattr(block, "type", "") == "text")
