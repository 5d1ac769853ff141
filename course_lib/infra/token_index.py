"""MaxSim's chunk token vectors as one compressed, memory-mapped index per chunking.

The float16 store (`rerank.open_token_store`) keeps one database value per chunk: 768 bytes a
token, about 416 MB for the default chunking. This index keeps each token vector as int8 with
ONE float32 scale per token (symmetric quantisation: scale = max |x| / 127, so every element is
within scale / 2 of its original), 388 bytes a token, in three `.npy` files:

- `codes.npy`, (tokens, width) int8: every chunk's token vectors, one chunk after the other;
- `scales.npy`, (tokens,) float32: each token's scale;
- `offsets.npy`, (chunks + 1,) int64: chunk i's tokens are rows offsets[i]:offsets[i + 1];

plus `keys.json`, each chunk's text hash in row order. Built with `dims=d`, the index first
projects every token onto the d principal directions of the corpus's own token vectors (fitted on a
seeded sample, around their mean) and quantises the projections, d + 4 bytes a token; `mean.npy`
and `projection.npy` hold the projection. MaxSim then scores q . x as
(P^T q) . (P^T (x - mean)) + q . mean: the last term is the same for every chunk token, so the
projection costs only the variance it drops, measured in benchmarks/bench_serving.py.

The arrays are opened with `np.load(mmap_mode="r")`, so opening costs nothing and re-ranking a
shortlist reads 30 slices straight from the page cache, without copying or unpickling anything.
The folder is written under a temporary name and renamed into place, so a reader never sees half
an index.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from course_lib import settings
from course_lib.infra import models
from course_lib.infra.vector_cache import warn_once
from course_lib.records import Chunk, text_digest

INT8_MAX = 127
FILES = ("codes.npy", "scales.npy", "offsets.npy", "keys.json")
PROJECTION_FILES = ("mean.npy", "projection.npy")
# The largest scale of a unit token vector (every element at most 1), with float16's rounding.
UNIT_SCALE_MAX = 1.01 / INT8_MAX


class TokenVectorSource(Protocol):
    """What the factory needs of a re-ranker (`core.rerank.MaxSimReranker` is one): its model, its
    cut, and the chunks' token vectors. A protocol, so this storage module never imports the stage
    above it."""

    model: str | None
    max_tokens: int

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]: ...


def index_folder(chunks: Sequence[Chunk], *, reranker: TokenVectorSource,
                 kind: str) -> tuple[list[str], Path]:
    """The chunks' text keys, and the cache folder of a `kind` of token index over them (e.g.
    "int8|dims=None"): keyed by the model's id (its files' fingerprint), the re-ranker's
    `max_tokens` and a hash of every chunk's text in order, so another chunking, model or cut gets
    an index of its own. The one recipe of every compressed index's key."""
    keys = [models.text_key(c.text) for c in chunks]
    texts_hash = text_digest("\n".join(keys))[:16]
    folder = models.store_folder("token_index", f"{models.model_id(reranker.model)}|max_tokens="
                                                f"{reranker.max_tokens}|{kind}|chunks={texts_hash}")
    return keys, folder


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-row int8: (codes, scales) with codes * scales[:, None] ~ vectors.

    Each row's scale is its largest magnitude / 127, so the largest element is exact and no
    element moves by more than half a step; an all-zero row gets scale 1 (its codes are 0).
    """
    rows = np.asarray(vectors, np.float32)
    peak = np.abs(rows).max(axis=1) if rows.size else np.zeros(len(rows), np.float32)
    scales = np.where(peak > 0, peak / INT8_MAX, 1.0).astype(np.float32)
    codes = np.clip(np.rint(rows / scales[:, None]), -INT8_MAX, INT8_MAX).astype(np.int8)
    return codes, scales


def dequantize(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """float32 rows back from int8 codes and their per-row scales."""
    return np.asarray(codes, np.float32) * np.asarray(scales, np.float32)[:, None]


def maxsim_int8(query_tokens: np.ndarray, codes: np.ndarray, scales: np.ndarray) -> float:
    """MaxSim (each query token's best match, summed) against an int8 chunk, without
    dequantising it first: q . (s * c) = s * (q . c), so the scales multiply the similarities."""
    if len(query_tokens) == 0 or len(codes) == 0:
        return 0.0
    similarities = np.asarray(query_tokens, np.float32) @ np.asarray(codes, np.float32).T
    return float((similarities * np.asarray(scales, np.float32)[None, :]).max(axis=1).sum())


def stack_chunks(keys: Sequence[str], arrays: Sequence[np.ndarray],
                 ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(unique keys in order, every chunk's tokens as one float32 (tokens, width) array, the
    offsets table: chunk i is rows offsets[i]:offsets[i + 1]). A key given twice is stored once."""
    unique = dict(zip(keys, arrays, strict=True))
    width = next((a.shape[1] for a in unique.values() if np.ndim(a) == 2), 0)
    stacked = np.concatenate([np.asarray(a, np.float32).reshape(-1, width) for a in unique.values()]) \
        if unique else np.zeros((0, width), np.float32)
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in unique.values()])]).astype(np.int64)
    return list(unique), stacked, offsets


def write_folder(folder: Path, arrays: dict[str, np.ndarray], keys: list[str]) -> None:
    """Write the arrays (`name.npy`) and keys.json into a temporary sibling of `folder`, then rename
    it into place: a concurrent reader sees the old index or the whole new one, never half."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, array in arrays.items():
            np.save(scratch / name, array)
        (scratch / "keys.json").write_text(json.dumps(keys))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(scratch, folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def fit_projection(rows: np.ndarray, dims: int, *, sample: int = settings.TOKEN_PROJECTION_SAMPLE,
                   seed: int = settings.SEED) -> tuple[np.ndarray, np.ndarray]:
    """(mean, projection): the mean row and the `dims` leading principal directions, as columns.

    Fitted on a seeded sample of rows, so building the index twice gives the same projection.
    """
    rows = np.asarray(rows, np.float32)
    if not 0 < dims <= rows.shape[1]:
        raise ValueError(f"dims must be between 1 and the vectors' width {rows.shape[1]}, not {dims}")
    picked = rows if len(rows) <= sample else rows[np.random.default_rng(seed).choice(len(rows), sample,
                                                                                        replace=False)]
    mean = picked.mean(axis=0)
    _, _, directions = np.linalg.svd(picked - mean, full_matrices=False)
    return mean.astype(np.float32), directions[:dims].T.astype(np.float32)


class ChunkIndex:
    """What every token index here shares: a folder of arrays, `keys.json` (each chunk's text
    hash in row order) and `offsets.npy` (chunk i's tokens are rows offsets[i]:offsets[i + 1]).
    A subclass names its `FILES`, loads its arrays, then calls `_read_rows` with its token count."""

    FILES: tuple[str, ...] = ("offsets.npy", "keys.json")

    def _read_rows(self, tokens: int) -> None:
        self.offsets = np.load(self.folder / "offsets.npy", allow_pickle=False)
        keys = json.loads((self.folder / "keys.json").read_text(encoding="utf-8"))
        if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
            raise ValueError("keys.json is not a list of text hashes")
        self.rows = {key: i for i, key in enumerate(keys)}
        if (self.offsets.ndim != 1 or self.offsets.dtype.kind != "i" or len(self.offsets) != len(keys) + 1
                or self.offsets[0] != 0 or self.offsets[-1] != tokens or (np.diff(self.offsets) < 0).any()):
            raise ValueError("offsets.npy does not match keys.json and the codes")

    @classmethod
    def open(cls, folder: Path):
        """The index in `folder`, or None when it is absent, incomplete or not an index as written
        here (truncated, pickled, of the wrong shape or values: one warning line naming the folder
        and the problem, and the caller builds it again). Nothing in it is ever unpickled."""
        if not all((Path(folder) / name).is_file() for name in cls.FILES):
            return None
        try:
            return cls(folder)
        except (OSError, ValueError, EOFError, UnicodeDecodeError) as err:
            # np.load raises ValueError for a pickled array (allow_pickle=False) and a truncated one.
            warn_once(Path(folder), "is not a usable token index (truncated, pickled or edited): "
                                    "built again", err)
            return None

    def __len__(self) -> int:
        return len(self.rows)

    def __contains__(self, key: str) -> bool:
        return key in self.rows

    def span(self, key: str) -> slice:
        """The rows of a chunk's tokens."""
        row = self.rows[key]
        return slice(int(self.offsets[row]), int(self.offsets[row + 1]))

    def files(self) -> tuple[str, ...]:
        """The files this index is made of."""
        return self.FILES

    def tokens(self) -> int:
        return int(self.offsets[-1])

    def size_bytes(self) -> int:
        """Bytes of the index's files on disk."""
        return sum((self.folder / name).stat().st_size for name in self.files())

    def bytes_per_token(self) -> float:
        """Bytes on disk per stored token (its codes, and the tables, offsets and keys spread over them)."""
        return self.size_bytes() / max(self.tokens(), 1)


class Int8TokenIndex(ChunkIndex):
    """An opened index: `slice(key)` gives a chunk's (codes, scales) as memory-mapped views.

    Build one with `Int8TokenIndex.build(folder, keys, arrays)`; open an existing one with
    `Int8TokenIndex.open(folder)` (None when absent or incomplete).
    """

    FILES = FILES

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.codes = np.load(self.folder / "codes.npy", mmap_mode="r", allow_pickle=False)
        self.scales = np.load(self.folder / "scales.npy", mmap_mode="r", allow_pickle=False)
        projected = all((self.folder / name).is_file() for name in PROJECTION_FILES)
        self.mean = np.load(self.folder / "mean.npy", allow_pickle=False) if projected else None
        self.projection = np.load(self.folder / "projection.npy", allow_pickle=False) if projected else None
        self._check_arrays()
        self._read_rows(len(self.codes))

    def _check_arrays(self) -> None:
        """Raise ValueError unless the arrays have the dtypes and shapes `build` writes, and, without
        a projection, scales no unit token vector can have (every element of one is at most 1, so
        its scale at most 1/127): a token scaled up to outweigh the others is refused, not ranked."""
        if self.codes.dtype != np.int8 or self.codes.ndim != 2 or self.scales.dtype != np.float32 \
                or self.scales.shape != (len(self.codes),):
            raise ValueError("codes.npy or scales.npy is not what the index writes")
        scales = np.asarray(self.scales)
        if not np.isfinite(scales).all() or (scales < 0).any():
            raise ValueError("scales.npy holds negative or non-finite scales")
        long = np.flatnonzero(scales > UNIT_SCALE_MAX)  # an all-zero row's scale is 1 (see `quantize`)
        if self.projection is None and ((scales[long] != 1.0).any() or np.asarray(self.codes[long]).any()):
            raise ValueError("scales.npy holds tokens longer than a unit vector")
        if self.projection is not None and (
                self.projection.ndim != 2 or self.projection.shape[1] != self.codes.shape[1]
                or self.mean.shape != (self.projection.shape[0],)):
            raise ValueError("mean.npy or projection.npy does not fit the codes")

    @classmethod
    def build(cls, folder: Path, keys: Sequence[str], arrays: Sequence[np.ndarray], *,
              dims: int | None = None) -> Int8TokenIndex:
        """Quantise each chunk's token vectors (projected to `dims` first, if given) and write the
        index, then open it.

        Written into a temporary sibling folder and renamed, so a concurrent reader sees the old
        index or the whole new one. A key given twice is stored once.
        """
        unique, stacked, offsets = stack_chunks(keys, arrays)
        mean = projection = None
        if dims is not None:
            mean, projection = fit_projection(stacked, dims)
            stacked = (stacked - mean) @ projection
        codes, scales = quantize(stacked)
        arrays = {"codes.npy": codes, "scales.npy": scales, "offsets.npy": offsets}
        if projection is not None:
            arrays |= {"mean.npy": mean, "projection.npy": projection}
        write_folder(Path(folder), arrays, unique)
        return cls(folder)

    def slice(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """A chunk's int8 codes and scales: views into the memory map, nothing copied."""
        rows = self.span(key)
        return self.codes[rows], self.scales[rows]

    def maxsim(self, query_tokens: np.ndarray, key: str) -> float:
        """MaxSim of a query's token vectors against a stored chunk, in the index's own space."""
        codes, scales = self.slice(key)
        query = np.asarray(query_tokens, np.float32)
        if self.projection is None:
            return maxsim_int8(query, codes, scales)
        if len(query) == 0 or len(codes) == 0:
            return 0.0
        return maxsim_int8(query @ self.projection, codes, scales) + float((query @ self.mean).sum())

    @property
    def dims(self) -> int:
        """The stored width: the vectors' own, or the projection's."""
        return int(self.codes.shape[1]) if self.codes.ndim == 2 else 0

    def files(self) -> tuple[str, ...]:
        """The index's files, the projection's included when it has one."""
        return FILES + (PROJECTION_FILES if self.projection is not None else ())

