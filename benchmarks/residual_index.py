"""MaxSim's chunk token vectors as centroid ids plus residual codes (ColBERTv2's compression).

It sits beside the benchmark that measures it (bench_serving.py), not in `course_lib`: no lesson and
no stage of the library uses it (its size and MRR are below; int8 is what lesson 07 serves from).

The int8 index (`token_index`) keeps 388 bytes a token, about 210 MB for the default chunking,
and projecting the tokens onto fewer principal directions loses MRR: MiniLM's token vectors are
not low-rank. ColBERTv2 (Santhanam et al., 2022) keeps every dimension but spends few bits on it:
each token is stored as the id of its nearest k-means centroid and its residual (token minus
centroid) quantised to `bits` bits per dimension. With 384 dims, 2 bits and 2^13 centroids that is
2 + 96 bytes a token plus one shared centroid table. Files, one index per chunking:

- `centroids.npy`, (centroids, width) float16: k-means centroids of a seeded sample of the tokens;
- `weights.npy`, (width, 2**bits) float32: each dimension's bucket values, the residual a code
  stands for (per dimension, because a few MiniLM dimensions spread far wider than the rest);
- `cutoffs.npy`, (width, 2**bits - 1) float32: the bucket boundaries the codes were cut at (kept so
  the index says how it was built; reading needs only the weights);
- `ids.npy`, (tokens,) uint16 (int32 past 65,536 centroids): each token's centroid;
- `residuals.npy`, (tokens, width * bits / 8) uint8: the codes, 8 / bits dimensions a byte, the
  first dimension in the lowest bits;
- `offsets.npy`, (chunks + 1,) int64, and `keys.json`: as in `token_index`.

Centroids and buckets are fitted on a seeded sample (`settings.RESIDUAL_SAMPLE` tokens), so
building twice gives the same index. The buckets start as ColBERTv2's (cutoffs at the sample
residuals' quantiles 1/2**bits, 2/2**bits, ..., weights at each bucket's middle quantile) and are
then refined by Lloyd-Max iterations, which on MiniLM's tokens kept far more top 5s (see
`fit_buckets`). A token is read back as centroid + bucket values and renormalised (the stored tokens
are unit vectors; ColBERTv2 renormalises too), and MaxSim is the plain dot product against that.
Decoding goes one byte at a time through a (bytes, 256, 8 / bits) lookup table, so a 30-chunk
shortlist costs one gather and one matrix product per chunk.

Measured on the default chunking (benchmarks/bench_serving.py --residual-bits 1,2, 205 dev
questions, top 30 re-ranked, against float16's MRR 0.753): 2 bits, 59.7 MB, MRR 0.756
(equivalent), top 5 unchanged for 155 of 205; 1 bit, 33.7 MB, MRR 0.730 (a loss), 102 of 205.
So residual codes meet issue 27's size and MRR goals but not its 97% unchanged top 5s (int8,
210.6 MB, keeps 204): MaxSim's top 5 among 30 near-tied chunks moves with small errors.

Arrays are opened with `np.load(mmap_mode="r")` and the folder is written under a temporary name
and renamed into place, as `token_index` does: a reader sees the old index or the whole new one.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from course_lib import settings
from course_lib.infra.token_index import (
    ChunkIndex,
    TokenVectorSource,
    index_folder,
    stack_chunks,
    write_folder,
)
from course_lib.records import Chunk

FILES = ("centroids.npy", "weights.npy", "cutoffs.npy", "ids.npy", "residuals.npy", "offsets.npy",
         "keys.json")
BITS = (1, 2, 4)  # widths that pack whole dimensions into a byte (8 would be the int8 index again)
BATCH = 16_384  # rows per matrix product while fitting and encoding: bounds the scratch memory


def default_centroids(tokens: int) -> int:
    """ColBERTv2's rule for how many centroids: 2 ** floor(log2(16 * sqrt(tokens))), at least 1."""
    return 2 ** int(math.floor(math.log2(max(16 * math.sqrt(max(tokens, 1)), 1))))


def nearest(rows: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Each row's nearest centroid (Euclidean), as int64, in batches of `BATCH` rows.

    |x - c|^2 = |x|^2 - 2 x.c + |c|^2, and |x|^2 is the same for every centroid, so the nearest
    centroid is the one with the largest x.c - |c|^2 / 2: one matrix product per batch.
    """
    centres = np.asarray(centroids, np.float32)
    half_norms = 0.5 * (centres * centres).sum(axis=1)
    found = np.empty(len(rows), np.int64)
    for start in range(0, len(rows), BATCH):
        batch = np.asarray(rows[start:start + BATCH], np.float32)
        found[start:start + BATCH] = (batch @ centres.T - half_norms).argmax(axis=1)
    return found


def seeded_sample(rows: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Up to `size` distinct rows drawn with `seed` (all of them, in order, when there are fewer)."""
    if len(rows) <= size:
        return np.asarray(rows, np.float32)
    picked = np.sort(np.random.default_rng(seed).choice(len(rows), size, replace=False))
    return np.asarray(rows[picked], np.float32)


def fit_centroids(rows: np.ndarray, count: int, *, iterations: int = settings.RESIDUAL_KMEANS_ITERATIONS,
                  seed: int = settings.SEED) -> np.ndarray:
    """`count` k-means centroids of `rows` (Lloyd's iterations from `count` seeded distinct rows).

    A centroid that loses every row keeps its last position instead of being re-drawn, so the
    result depends only on the rows, the count and the seed. Fewer rows than `count` gives one
    centroid per row.
    """
    rows = np.asarray(rows, np.float32)
    count = min(count, len(rows))
    start = np.random.default_rng(seed).choice(len(rows), count, replace=False)
    centroids = rows[np.sort(start)].copy()
    for _ in range(iterations):
        owner = nearest(rows, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, owner, rows)
        sizes = np.bincount(owner, minlength=count)
        filled = sizes > 0
        centroids[filled] = sums[filled] / sizes[filled, None]
    return centroids


def fit_buckets(residuals: np.ndarray, bits: int, *,
                iterations: int = settings.RESIDUAL_BUCKET_ITERATIONS) -> tuple[np.ndarray, np.ndarray]:
    """(cutoffs, weights) per dimension for 2**bits buckets: ColBERTv2's quantiles, then refined by
    `iterations` rounds of Lloyd-Max (each weight the mean of its bucket's residuals, each cutoff
    halfway between two weights), which lowers the squared error the buckets leave.

    ColBERTv2 stops at the quantiles (equal-count buckets read back as their medians). On the
    default chunking the refinement kept the top 5 of 155 dev questions out of 205 at 2 bits
    instead of 124 (bench_serving.py), for no bytes more; `iterations=0` gives ColBERTv2's buckets.
    """
    levels = 2 ** bits
    values = np.asarray(residuals, np.float32)
    cutoffs = np.quantile(values, np.arange(1, levels) / levels, axis=0).T.astype(np.float32)
    weights = np.quantile(values, (np.arange(levels) + 0.5) / levels, axis=0).T.astype(np.float32)
    width = values.shape[1]
    for _ in range(iterations):
        codes = (values[:, :, None] > cutoffs[None, :, :]).sum(axis=2)
        cells = (np.arange(width)[None, :] * levels + codes).ravel()  # (dimension, bucket) of each value
        sums = np.bincount(cells, weights=values.ravel(), minlength=width * levels).reshape(width, levels)
        counts = np.bincount(cells, minlength=width * levels).reshape(width, levels)
        weights = np.where(counts > 0, sums / np.maximum(counts, 1), weights).astype(np.float32)
        cutoffs = (weights[:, 1:] + weights[:, :-1]) / 2  # an empty bucket keeps its weight, so stays sorted
    return np.ascontiguousarray(cutoffs, np.float32), np.ascontiguousarray(weights, np.float32)


def encode_residuals(residuals: np.ndarray, cutoffs: np.ndarray, bits: int) -> np.ndarray:
    """Packed codes, (rows, width * bits / 8) uint8: each value's bucket, 8 / bits values a byte."""
    residuals = np.asarray(residuals, np.float32)
    rows, width = residuals.shape
    per_byte = 8 // bits
    codes = (residuals[:, :, None] > cutoffs[None, :, :]).sum(axis=2, dtype=np.uint8)
    grouped = codes.reshape(rows, width // per_byte, per_byte).astype(np.uint16)
    shifts = (np.arange(per_byte) * bits).astype(np.uint16)
    return (grouped << shifts).sum(axis=2).astype(np.uint8)


def decode_table(weights: np.ndarray, bits: int) -> np.ndarray:
    """(width * bits / 8, 256, 8 / bits) float32: the residual values every byte of a row stands for."""
    width, levels = weights.shape
    per_byte = 8 // bits
    byte = np.arange(256)[:, None]
    slots = (byte >> (np.arange(per_byte) * bits)) & (levels - 1)  # (256, per_byte) bucket numbers
    per_dim = np.asarray(weights, np.float32).reshape(width // per_byte, per_byte, levels)
    return per_dim[:, np.arange(per_byte)[None, :], slots]  # dims within a byte x bucket per slot


def decode_residuals(packed: np.ndarray, table: np.ndarray) -> np.ndarray:
    """float32 residuals, (rows, width), back from packed codes through `decode_table`'s table."""
    packed = np.asarray(packed)
    values = table[np.arange(table.shape[0])[None, :], packed]  # (rows, bytes, per_byte)
    return values.reshape(len(packed), -1)


def unit(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (an all-zero row stays zero)."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-12)


class ResidualTokenIndex(ChunkIndex):
    """An opened index: `vectors(key)` gives a chunk's decoded token vectors, `maxsim` scores them.

    Build one with `ResidualTokenIndex.build(folder, keys, arrays, bits=...)`; open an existing one
    with `ResidualTokenIndex.open(folder)` (None when absent or incomplete). It offers what
    `MaxSimReranker(index=...)` and benchmarks/bench_serving.py use of `Int8TokenIndex`.
    """

    FILES = FILES

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.centroids = np.load(self.folder / "centroids.npy", allow_pickle=False).astype(np.float32)
        self.weights = np.load(self.folder / "weights.npy", allow_pickle=False)
        self.ids = np.load(self.folder / "ids.npy", mmap_mode="r", allow_pickle=False)
        self.residuals = np.load(self.folder / "residuals.npy", mmap_mode="r", allow_pickle=False)
        self.bits = int(math.log2(self.weights.shape[1]))
        self.table = decode_table(self.weights, self.bits)
        if len(self.residuals) != len(self.ids):
            raise ValueError(f"{self.folder}: {len(self.ids)} centroid ids but "
                             f"{len(self.residuals)} residual codes")
        self._read_rows(len(self.ids))

    @classmethod
    def build(cls, folder: Path, keys: Sequence[str], arrays: Sequence[np.ndarray], *,
              bits: int = settings.RESIDUAL_BITS, centroids: int | None = None,
              sample: int = settings.RESIDUAL_SAMPLE, seed: int = settings.SEED) -> ResidualTokenIndex:
        """Fit centroids and buckets on a seeded sample, encode every chunk's tokens, write, open.

        `centroids` defaults to ColBERTv2's rule (`default_centroids`). Written into a temporary
        sibling folder and renamed, so a concurrent reader sees the old index or the whole new
        one. A key given twice is stored once.
        """
        if bits not in BITS:
            raise ValueError(f"bits must be one of {BITS}, not {bits}")
        unique, stacked, offsets = stack_chunks(keys, arrays)
        if len(stacked) == 0:
            raise ValueError("a residual index needs at least one token vector to fit its centroids")
        picked = seeded_sample(stacked, sample, seed)
        # Stored as float16, and the residuals are taken from what is stored, so fit to that.
        count = centroids or default_centroids(len(stacked))
        table = fit_centroids(picked, count, seed=seed).astype(np.float16)
        centres = table.astype(np.float32)
        cutoffs, weights = fit_buckets(picked - centres[nearest(picked, centres)], bits)
        ids = nearest(stacked, centres)
        codes = np.concatenate([encode_residuals(stacked[s:s + BATCH] - centres[ids[s:s + BATCH]],
                                                 cutoffs, bits) for s in range(0, len(stacked), BATCH)])
        write_folder(Path(folder), {
            "centroids.npy": table, "weights.npy": weights, "cutoffs.npy": cutoffs,
            "ids.npy": ids.astype(np.uint16 if len(table) <= 2 ** 16 else np.int32), "residuals.npy": codes,
            "offsets.npy": offsets}, unique)
        return cls(folder)

    def slice(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """A chunk's centroid ids and packed residual codes: views into the memory maps."""
        rows = self.span(key)
        return self.ids[rows], self.residuals[rows]

    def vectors(self, key: str) -> np.ndarray:
        """A chunk's token vectors decoded: centroid + bucket values, renormalised, float32."""
        ids, codes = self.slice(key)
        return unit(self.centroids[np.asarray(ids, np.int64)] + decode_residuals(codes, self.table))

    def maxsim(self, query_tokens: np.ndarray, key: str) -> float:
        """MaxSim of a query's unit token vectors against a stored chunk's decoded ones."""
        query = np.asarray(query_tokens, np.float32)
        doc = self.vectors(key)
        if len(query) == 0 or len(doc) == 0:
            return 0.0
        return float((query @ doc.T).max(axis=1).sum())

    @property
    def dims(self) -> int:
        """The token vectors' width (every dimension is kept)."""
        return int(self.centroids.shape[1])



def residual_token_index(chunks: Sequence[Chunk], *, reranker: TokenVectorSource,
                         bits: int = settings.RESIDUAL_BITS,
                         centroids: int | None = None) -> ResidualTokenIndex:
    """The residual token-vector index of a chunking, built on first use (from the float16 store,
    computing what it lacks) and reopened, memory-mapped, afterwards.

    Keyed by `token_index.index_folder`, as `rerank.int8_token_index` is, with the bits, the
    centroid count asked for, the fitting sample and seed. Pass it to `MaxSimReranker(index=...)`.
    """
    keys, folder = index_folder(chunks, reranker=reranker,
                                kind=f"residual|bits={bits}|centroids={centroids}|sample={settings.RESIDUAL_SAMPLE}"
                                     f"|iterations={settings.RESIDUAL_KMEANS_ITERATIONS}"
                                     f"|lloyd_max={settings.RESIDUAL_BUCKET_ITERATIONS}|seed={settings.SEED}")
    found = ResidualTokenIndex.open(folder)
    if found is None:
        vectors = reranker.token_vectors([c.text for c in chunks])
        found = ResidualTokenIndex.build(folder, keys, vectors, bits=bits, centroids=centroids)
    return found
