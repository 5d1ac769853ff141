"""Re-ranking the fused shortlist: a cross-encoder, or MaxSim late interaction offline.

A re-ranker re-scores the top of a retriever's ranking with a slower, finer model. A
cross-encoder (ms-marco-MiniLM-L-6-v2 by default) reads the query and each candidate TOGETHER,
attention across both; it needs the hub or a local copy, and no pretrained one ships on PyPI.
`MaxSimReranker` is late interaction (ColBERT's MaxSim) over the bundled MiniLM: the query and
each chunk are encoded SEPARATELY into token vectors, and each query token takes its best match
in the chunk; the chunks' token vectors are an index kept on disk. It needs only the bundled
MiniLM, so every lesson runs offline, and it is a stand-in for a cross-encoder, not one.
`load_reranker` returns MaxSim unless a cross-encoder is named (an argument or $COURSE_RERANKER),
never one found by chance in a model cache, and its `.name` says which, so a notebook can print which
re-ranker produced its numbers.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cachetools
import numpy as np

from course_lib import settings
from course_lib.infra import models
from course_lib.infra.errors import ModelLoadError
from course_lib.infra.onnx_encoder import unit_tokens
from course_lib.infra.threads import blas_limit, one_text_threads
from course_lib.infra.token_index import Int8TokenIndex, index_folder
from course_lib.infra.vector_cache import VectorStore
from course_lib.records import Chunk, Hit

DEFAULT_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
MAXSIM = "maxsim"


class Reranker(Protocol):
    """Scores (query, chunk) pairs; higher means more relevant. `name` says which model."""

    name: str

    def score(self, query: str, chunks: Sequence[Chunk], *,
              batch_size: int = settings.RERANK_BATCH_SIZE) -> np.ndarray: ...


def shortlist_size(k: int, *, top_n: int = settings.RERANK_TOP_N) -> int:
    """How many fused hits a re-ranking search re-scores to answer with k: max(k, top_n).

    The one rule for `Pipeline.search` and the PostgreSQL store alike. At least `top_n`, the
    shortlist lesson 07 chose; and at least k, because re-ranker scores cannot be compared with
    fused scores, so hits past the shortlist cannot be appended in their fused order: a search
    for more than `top_n` re-ranks k hits and still returns k when k chunks match.
    """
    return max(k, top_n)


def rerank(reranker: Reranker, query: str, hits: Sequence[Hit], chunks: Sequence[Chunk], *,
           top_n: int = settings.RERANK_TOP_N, batch_size: int = settings.RERANK_BATCH_SIZE) -> list[Hit]:
    """Re-score the first `top_n` hits (in the order given) and return ONLY them, re-ordered.

    Each returned Hit carries the re-ranker's score. Hits past `top_n` are dropped, not appended
    in their old order, because their fused scores cannot be compared with re-ranker scores; so
    evaluate recall@k only for k <= top_n. Equal re-ranker scores keep their fused order (a
    stable sort), which is itself deterministic.
    """
    shortlist = list(hits[:top_n])
    if not shortlist:
        return []
    scores = reranker.score(query, [chunks[h.index] for h in shortlist], batch_size=batch_size)
    rescored = [Hit(h.index, float(s)) for h, s in zip(shortlist, scores, strict=True)]
    return sorted(rescored, key=lambda hit: -hit.score)


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder from a hub name or a local folder, scored in batches.

    It reads `chunk.text` (heading path included, as indexed). A local folder, or any name while
    HF_HUB_OFFLINE=1 is set, loads with `local_files_only=True`: nothing touches the network and
    a missing model fails at once, instead of after about 45 s of retries (huggingface_hub reads
    HF_HUB_OFFLINE only when it is imported, so setting it later in a notebook is not enough on
    its own). `cache_dir` points at another hub cache, e.g. a classroom's pre-warmed one.
    """

    def __init__(self, name: str = DEFAULT_CROSS_ENCODER, *, max_length: int = settings.RERANK_MAX_TOKENS,
                 device: str = "cpu", cache_dir: str | None = None, local_files_only: bool = False):
        from sentence_transformers import CrossEncoder

        folder = Path(name).expanduser()
        local = folder.is_dir()
        offline = local or local_files_only or _hub_offline()
        self.name = str(folder) if local else name
        # Passed only when set: sentence-transformers 3 called it `cache_dir`, 4+ `cache_folder`.
        where = {"cache_folder": cache_dir} if cache_dir is not None else {}
        try:
            self.model = CrossEncoder(self.name, max_length=max_length, device=device,
                                      local_files_only=offline, **where)
        except Exception as err:  # noqa: BLE001 - every failure gets the same actionable advice
            raise ModelLoadError(self._advice(name, local, offline, err)) from err

    @staticmethod
    def _advice(name: str, local: bool, offline: bool, err: Exception) -> str:
        what = f"Could not load the cross-encoder {name!r}: {type(err).__name__}: {err}. "
        if local:
            return what + ("That folder must hold a saved model: config.json, the weights and the "
                           "tokenizer files (as CrossEncoder.save_pretrained writes them).")
        if not models.is_missing_download(err):  # the files are here, or the name is wrong
            where = "Check the name on the Hugging Face hub. "
        elif offline:
            where = ("Only the local hub cache was searched (offline: HF_HUB_OFFLINE=1 or "
                     "local_files_only=True); unset it if you are online. ")
        else:
            where = "A hub name needs internet access to the Hugging Face hub or its cache. "
        return what + where + ("Otherwise pass the path of a local folder that holds the model, or "
                               "use MaxSimReranker() (load_reranker('maxsim')), which needs only "
                               "the bundled MiniLM.")

    def score(self, query: str, chunks: Sequence[Chunk], *,
              batch_size: int = settings.RERANK_BATCH_SIZE) -> np.ndarray:
        """One relevance score per chunk, computed `batch_size` pairs per forward pass."""
        if not chunks:
            return np.zeros(0)
        pairs = [(query, chunk.text) for chunk in chunks]
        scores = self.model.predict(pairs, batch_size=batch_size, show_progress_bar=False,
                                    convert_to_numpy=True)
        return np.asarray(scores, dtype=np.float64).reshape(len(chunks))


def maxsim(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """ColBERT's late interaction: each query token's best cosine with any chunk token, summed.

    Rows must already be unit vectors, so a dot product is a cosine. Each query word finds its
    own best match anywhere in the chunk, which one pooled vector per chunk cannot do. An empty
    query or chunk scores 0.
    """
    if len(query_tokens) == 0 or len(doc_tokens) == 0:
        return 0.0
    similarities = np.asarray(query_tokens, np.float32) @ np.asarray(doc_tokens, np.float32).T
    return float(similarities.max(axis=1).sum())


class MaxSimReranker:
    """MaxSim re-scoring over the bundled MiniLM's token embeddings: a re-ranker that needs no hub.

    Special tokens ([CLS], [SEP]) and padding are dropped via the attention mask and the
    tokenizer's special ids: in a model trained with mean pooling they carry no word of their
    own, and every chunk's [SEP] would match the query's [SEP] alike. Each token vector is
    L2-normalised. Texts are cut at `max_tokens` word pieces (default: the model's own limit).

    Chunk token vectors are an index, as in every late-interaction system: computed once, the
    first time a chunk is shortlisted, and kept on disk next to the embedding cache (float16,
    keyed by the model's fingerprint, `max_tokens` and the text's hash; `persist=False` keeps
    them in memory only). A bounded in-memory LRU (`memory`, `cache_size` chunks) sits in front. A warm
    re-rank therefore costs one query encoding plus the MaxSim arithmetic: storage traded for
    query time (see `token_store_size`). MiniLM was not trained for MaxSim (ColBERT was), so
    expect a weaker re-ranker than a cross-encoder; it keeps the lesson runnable offline.

    `index` (opt-in; see `int8_token_index`) scores the chunks it holds from its int8,
    memory-mapped token vectors instead; chunks it lacks go through the float16 path as before.

    A question's token vectors are kept on disk too, in a store of their own (`persist_queries`):
    the golden questions are re-ranked in five lessons, and encoding a question is most of a warm
    re-rank. A service facing an unbounded stream of new questions passes `persist_queries=False`,
    so it encodes each question as it must (lesson 08 times exactly that) and its store never grows.
    A service that already ran the model over the question (the ONNX shared pass, see
    `serve.SearchService`) hands its token vectors in with `given_query`, and none is encoded here.
    """

    def __init__(self, model: str | None = None, *, max_tokens: int | None = None,
                 cache_size: int = settings.TOKEN_VECTOR_CACHE, persist: bool = True,
                 persist_queries: bool = True, index: Int8TokenIndex | None = None):
        self.encoder = models.load_embedder(model)
        self.model = model
        self.index = index
        self.name = f"{MAXSIM}:{model or models.DEFAULT_EMBEDDER}"
        limit = int(self.encoder.max_seq_length)
        self.max_tokens = min(max_tokens, limit) if max_tokens else limit
        self.width = int(self.encoder.get_embedding_dimension())
        self.memory: cachetools.LRUCache[str, np.ndarray] = cachetools.LRUCache(maxsize=cache_size)
        self._special = np.array(sorted(set(self.encoder.tokenizer.all_special_ids)))
        self.store = open_token_store(model, max_tokens=self.max_tokens) if persist else None
        self.query_store = (open_token_store(model, max_tokens=self.max_tokens, kind=QUESTION_STORE)
                            if persist and persist_queries else None)
        # Per context (thread, task), so concurrent answers never see each other's questions.
        self._given: ContextVar[dict[str, np.ndarray] | None] = ContextVar(f"given-{id(self)}", default=None)

    @contextmanager
    def given_query(self, query: str, tokens: np.ndarray) -> Iterator[None]:
        """Inside the block, `query` is scored with these token vectors instead of being encoded.

        For a caller that already ran the model over the question (one forward pass gives the
        dense vector and these tokens). They are neither stored nor kept in memory: they may come
        from another runtime than the stores' PyTorch vectors, and they last one answer.
        """
        given = {**(self._given.get() or {}), models.text_key(query): tokens}
        reset = self._given.set(given)
        try:
            yield
        finally:
            self._given.reset(reset)

    def _truncate(self, text: str) -> str:
        """Cut the text after the word piece that fills `max_tokens` (special tokens counted)."""
        tokenizer = self.encoder.tokenizer
        room = self.max_tokens - tokenizer.num_special_tokens_to_add()
        # One piece more than there is room for tells "too long" without tokenizing it all.
        offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                            truncation=True, max_length=room + 1)["offset_mapping"]
        return text if len(offsets) <= room else text[: offsets[room - 1][1]]

    def encode_tokens(self, texts: Sequence[str], *, batch_size: int = settings.RERANK_BATCH_SIZE,
                      dtype: type = np.float16) -> list[np.ndarray]:
        """Unit token vectors of each text, without special tokens, computed now (no cache).

        float16 is what the store keeps; pass `dtype=np.float32` to check what that costs.
        """
        with one_text_threads(len(texts)):  # a question on one thread, a batch on every core
            outputs = self.encoder.encode([self._truncate(t) for t in texts], output_value=None,
                                          batch_size=batch_size, show_progress_bar=False)
        return [unit_tokens(out["token_embeddings"].float().cpu().numpy(), out["input_ids"].cpu().numpy(),
                            out["attention_mask"].cpu().numpy(), self._special, dtype=dtype)
                for out in outputs]

    def token_vectors(self, texts: Sequence[str], *, batch_size: int = settings.RERANK_BATCH_SIZE,
                      persist: bool = True) -> list[np.ndarray]:
        """Unit token vectors of each chunk text (float16): from memory, else disk, else computed.

        Computed vectors are written to the disk store when `persist`.
        """
        return self._vectors(texts, store=self.store, persist=persist, batch_size=batch_size)

    def query_vectors(self, query: str) -> np.ndarray:
        """The question's unit token vectors (float16): those handed in by `given_query`, else from
        memory, else the question store (when `persist_queries`), else encoded alone, as a service
        encodes a new question."""
        given = (self._given.get() or {}).get(models.text_key(query))
        if given is not None:
            return given
        return self._vectors([query], store=self.query_store, persist=True, batch_size=1)[0]

    def _vectors(self, texts: Sequence[str], *, store: VectorStore | None, persist: bool,
                 batch_size: int) -> list[np.ndarray]:
        """Token vectors from memory, else `store`, else computed (and written to `store` when `persist`)."""
        keys = [models.text_key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in missing:
                continue
            vectors = self.memory.get(key)
            if vectors is None and store is not None:
                vectors = store.get(key, width=self.width, unit_rows=True)  # a scaled token outweighs
            if vectors is None:
                missing[key] = text
            else:
                found[key] = vectors
        if missing:
            fresh = self.encode_tokens(list(missing.values()), batch_size=batch_size)
            found.update(zip(missing, fresh, strict=True))
            if persist and store is not None:
                store.put_many(list(missing), fresh)
        for key in keys if self.memory.maxsize > 0 else ():  # cache_size=0: a cold re-ranker, no memory
            self.memory[key] = found[key]  # in the order asked, so the last texts are the most recent
        return [found[key] for key in keys]

    def score(self, query: str, chunks: Sequence[Chunk], *,
              batch_size: int = settings.RERANK_BATCH_SIZE) -> np.ndarray:
        """MaxSim of the query against each chunk's text."""
        if not chunks:
            return np.zeros(0)
        query_vectors = self.query_vectors(query)
        keys = [models.text_key(c.text) for c in chunks]
        index = self.index
        rest = [c.text for c, key in zip(chunks, keys, strict=True) if index is None or key not in index]
        floats = dict(zip(map(models.text_key, rest), self.token_vectors(rest, batch_size=batch_size),
                          strict=True)) if rest else {}
        with blas_limit(1):  # dozens of small products: one thread each is quicker (see blas_limit)
            return np.array([maxsim(query_vectors, floats[key]) if key in floats
                             else index.maxsim(query_vectors, key) for key in keys],
                            dtype=np.float64)


_token_stores: dict[Path, VectorStore] = {}


QUESTION_STORE = "question_token_vectors"


def open_token_store(model: str | None = None, *, max_tokens: int | None = None,
                     kind: str = "token_vectors") -> VectorStore:
    """The process-wide disk store of a model's token vectors (float16), under COURSE_CACHE_DIR:
    chunks' by default, questions' with `kind=QUESTION_STORE` (kept apart, so a question never
    counts as part of the chunk index and each can be deleted alone)."""
    limit = max_tokens or models.max_input_tokens(model)
    folder = models.store_folder(kind, f"{models.model_id(model)}|max_tokens={limit}")
    if folder not in _token_stores:
        _token_stores[folder] = VectorStore(folder, dtype=np.float16)
    return _token_stores[folder]


def int8_token_index(chunks: Sequence[Chunk], *, reranker: MaxSimReranker | None = None,
                     dims: int | None = None) -> Int8TokenIndex:
    """The int8 token-vector index of a chunking, built on first use (from the float16 store,
    computing what it lacks) and reopened, memory-mapped, afterwards.

    Keyed by `token_index.index_folder` (model, cut, every chunk's text), so another chunking or
    model gets its own index. Pass it to `MaxSimReranker(index=...)`. `dims` projects the tokens
    onto that many principal directions first (see `token_index`): smaller, and judged against
    float16 in benchmarks/bench_serving.py.
    """
    reranker = reranker or MaxSimReranker()
    keys, folder = index_folder(chunks, reranker=reranker, kind=f"int8|dims={dims}")
    found = Int8TokenIndex.open(folder)
    if found is None:
        vectors = reranker.token_vectors([c.text for c in chunks])
        found = Int8TokenIndex.build(folder, keys, vectors, dims=dims)
    return found


@dataclass(frozen=True)
class StoreSize:
    """What the token-vector store costs for a set of chunks, and what is on disk now."""

    chunks: int
    tokens: int
    width: int
    stored_chunks: int
    stored_bytes: int

    @property
    def bytes(self) -> int:
        """float16 bytes of every chunk's token vectors (the values; the index adds little)."""
        return self.tokens * self.width * 2

    @property
    def bytes_per_chunk(self) -> float:
        return self.bytes / max(self.chunks, 1)

    def __str__(self) -> str:
        return (f"token-vector store for {self.chunks:,} chunks ({self.tokens:,} tokens x {self.width} "
                f"dims, float16): {self.bytes / 1e6:,.1f} MB, {self.bytes_per_chunk / 1e3:,.1f} KB per "
                f"chunk; on disk now: {self.stored_chunks:,} chunks, {self.stored_bytes / 1e6:,.1f} MB")


def token_store_size(chunks: Sequence[Chunk], *, reranker: MaxSimReranker | None = None) -> StoreSize:
    """The disk cost of keeping every chunk's token vectors, without computing any of them.

    Counts each chunk's word pieces with the model's tokenizer (cut at the re-ranker's limit,
    special tokens excluded, as `token_vectors` stores them), so a lesson can show the storage
    figure in seconds; `stored_*` say what the store holds now.
    """
    reranker = reranker or MaxSimReranker()
    tokenizer = reranker.encoder.tokenizer
    room = reranker.max_tokens - tokenizer.num_special_tokens_to_add()
    ids = tokenizer([c.text for c in chunks], add_special_tokens=False, truncation=True,
                    max_length=room)["input_ids"]
    store = reranker.store
    return StoreSize(chunks=len(chunks), tokens=sum(len(i) for i in ids), width=reranker.width,
                     stored_chunks=len(store) if store is not None else 0,
                     stored_bytes=store.size_bytes() if store is not None else 0)


def _in_hub_cache(name: str, cache_dir: str | None) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(name, "config.json", cache_dir=cache_dir), str)


# A cross-encoder named here is used by every lesson, pipeline and command that calls
# `load_reranker()` without a name, so a learner switches the whole course in one place.
RERANKER_ENV = "COURSE_RERANKER"


def named_reranker(name: str | None = None) -> str:
    """The re-ranker asked for: `name`, else $COURSE_RERANKER, else "maxsim" (the default).

    Nothing is chosen by what happens to sit on the machine: a cross-encoder left in a laptop's
    Hugging Face cache by some other project must not change a lesson's numbers silently, so the
    course runs the labelled MaxSim stand-in unless a cross-encoder is named.
    """
    chosen = name if name is not None else os.environ.get(RERANKER_ENV, "").strip()
    return chosen or MAXSIM


def load_reranker(name: str | None = None, *, cache_dir: str | None = None,
                  device: str = "cpu", persist_queries: bool = True) -> Reranker:
    """The re-ranker a lesson uses: MaxSim unless a cross-encoder is named.

    None means $COURSE_RERANKER if it is set, else `MaxSimReranker()`; "maxsim" asks for MaxSim;
    any other name or folder loads that cross-encoder (offline, only from the hub cache) and
    raises a clear error if it cannot. Print `.name` (or `describe(reranker)`) next to re-ranked
    numbers. `persist_queries` goes to a MaxSim re-ranker (False for a service, or a benchmark
    timing one).
    """
    chosen = named_reranker(name)
    if chosen == MAXSIM:
        return MaxSimReranker(persist_queries=persist_queries)
    return CrossEncoderReranker(chosen, cache_dir=cache_dir, device=device)


def describe(reranker: Reranker, *, cache_dir: str | None = None) -> str:
    """One sentence for a notebook: which re-ranker is in use and how to switch."""
    if reranker.name.startswith(MAXSIM):
        cached = (" (one is in this machine's hub cache: it is not used unless named)"
                  if _in_hub_cache(DEFAULT_CROSS_ENCODER, cache_dir) else "")
        return (f"Re-ranker: {reranker.name}, late interaction over the bundled embedder: the course's "
                f"stand-in for a cross-encoder, used unless one is named. For a cross-encoder{cached}: "
                f"load_reranker('{DEFAULT_CROSS_ENCODER}') when online, "
                f"load_reranker('/path/to/a/saved/cross-encoder'), or set {RERANKER_ENV} to either.")
    return (f"Re-ranker: cross-encoder {reranker.name} (named). For the offline stand-in: "
            f"load_reranker('{MAXSIM}').")
