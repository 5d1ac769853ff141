"""The centroid + residual token index (ColBERTv2's compression): exact packing, bounded error,
MaxSim close to float, memory-mapped views, and a folder that appears whole or not at all."""
from __future__ import annotations

import json

import numpy as np
import pytest
import residual_index as ri  # benchmarks/residual_index.py (tests/conftest.py puts benchmarks/ on the path)
from residual_index import ResidualTokenIndex

from course_lib.core.rerank import maxsim
from course_lib.infra import models
from course_lib.records import Chunk

WIDTH = 384


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered_rows(rng: np.random.Generator, rows: int, centres: np.ndarray) -> np.ndarray:
    """Unit rows scattered around a few topics, as contextual token vectors are (about 0.85 cosine
    to their topic; each row's own noise is what the residual codes must carry)."""
    picked = centres[rng.integers(len(centres), size=rows)]
    return unit(picked + 0.6 * rng.normal(size=(rows, WIDTH)) / np.sqrt(WIDTH))


@pytest.fixture
def chunks_vectors() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    centres = unit(np.random.default_rng(9).normal(size=(12, WIDTH)))
    return [clustered_rows(rng, int(n), centres) for n in rng.integers(1, 120, size=30)]


@pytest.fixture
def keys(chunks_vectors) -> list[str]:
    return [f"k{i}" for i in range(len(chunks_vectors))]


def test_the_centroid_count_follows_colbertv2s_rule():
    assert ri.default_centroids(542_044) == 2 ** 13  # the default chunking's tokens: 16 sqrt(n) = 11,780
    assert ri.default_centroids(1) == 16 and ri.default_centroids(0) == 16
    assert ri.default_centroids(4 ** 10) == 2 ** 14  # 16 * 2^10, a power of two already


@pytest.mark.parametrize("bits", ri.BITS)
def test_every_bucket_value_packs_and_unpacks_exactly(bits):
    rng = np.random.default_rng(1)
    levels = 2 ** bits
    weights = np.sort(rng.normal(size=(WIDTH, levels)), axis=1).astype(np.float32)
    cutoffs = ((weights[:, 1:] + weights[:, :-1]) / 2).astype(np.float32)
    codes = rng.integers(levels, size=(50, WIDTH))
    values = weights[np.arange(WIDTH)[None, :], codes]
    packed = ri.encode_residuals(values, cutoffs, bits)
    assert packed.dtype == np.uint8 and packed.shape == (50, WIDTH * bits // 8)
    assert np.array_equal(ri.decode_residuals(packed, ri.decode_table(weights, bits)), values)
    # the first dimension sits in the lowest bits of the first byte
    assert (packed[:, 0] & (levels - 1) == codes[:, 0]).all()


def test_colbertv2s_buckets_are_equal_count_and_each_weight_lies_in_its_own_bucket():
    residuals = np.random.default_rng(2).normal(size=(8000, WIDTH)).astype(np.float32)
    cutoffs, weights = ri.fit_buckets(residuals, 2, iterations=0)
    assert cutoffs.shape == (WIDTH, 3) and weights.shape == (WIDTH, 4)
    counts = np.stack([(residuals <= cutoffs[:, 0]).sum(0), (residuals > cutoffs[:, 2]).sum(0)])
    assert np.abs(counts - 2000).max() <= 2  # a quarter of the values in each outer bucket
    assert (weights[:, :-1] <= cutoffs).all() and (cutoffs <= weights[:, 1:]).all()
    assert np.allclose(cutoffs[:, 1], np.median(residuals, axis=0))


def squared_error(values: np.ndarray, cutoffs: np.ndarray, weights: np.ndarray) -> float:
    codes = (values[:, :, None] > cutoffs[None]).sum(axis=2)
    return float(((values - weights[np.arange(values.shape[1])[None, :], codes]) ** 2).sum())


@pytest.mark.parametrize("bits", ri.BITS)
def test_lloyd_max_buckets_are_their_values_means_and_leave_less_error(bits):
    values = np.random.default_rng(3).standard_t(4, size=(6000, 16)).astype(np.float32)  # heavy tails
    cutoffs, weights = ri.fit_buckets(values, bits)
    assert np.allclose(cutoffs, (weights[:, 1:] + weights[:, :-1]) / 2)  # halfway between weights
    assert (np.diff(weights, axis=1) > 0).all()
    codes = (values[:, :, None] > cutoffs[None]).sum(axis=2)
    dim, bucket = 5, 2 ** bits // 2  # one bucket's weight is (nearly) the mean of what it holds
    assert weights[dim, bucket] == pytest.approx(values[codes[:, dim] == bucket, dim].mean(), abs=0.02)
    assert squared_error(values, cutoffs, weights) < 0.97 * squared_error(values, *ri.fit_buckets(values, bits,
                                                                                                   iterations=0))


def test_k_means_is_repeatable_and_lowers_the_squared_error(chunks_vectors):
    rows = np.concatenate(chunks_vectors)

    def error(centroids: np.ndarray) -> float:
        return float(((rows - centroids[ri.nearest(rows, centroids)]) ** 2).sum())

    fitted = ri.fit_centroids(rows, 16, iterations=5)
    assert np.array_equal(fitted, ri.fit_centroids(rows, 16, iterations=5))
    assert error(fitted) < 0.9 * error(ri.fit_centroids(rows, 16, iterations=0))
    assert ri.fit_centroids(rows[:5], 16).shape == (5, WIDTH)  # no more centroids than rows


def test_nearest_is_the_euclidean_nearest_centroid():
    rng = np.random.default_rng(4)
    rows, centroids = rng.normal(size=(300, 8)), rng.normal(size=(20, 8))
    distances = ((rows[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    assert np.array_equal(ri.nearest(rows, centroids), distances.argmin(axis=1))


def test_the_index_round_trips_as_memory_mapped_views(tmp_path, chunks_vectors, keys):
    assert ResidualTokenIndex.open(tmp_path / "index") is None
    ResidualTokenIndex.build(tmp_path / "index", keys, chunks_vectors, bits=2, centroids=64)
    index = ResidualTokenIndex.open(tmp_path / "index")
    assert len(index) == len(keys) and "k3" in index and "nope" not in index
    assert json.loads((tmp_path / "index" / "keys.json").read_text()) == keys
    lengths = [len(v) for v in chunks_vectors]
    assert list(index.offsets) == list(np.concatenate([[0], np.cumsum(lengths)]))
    assert index.tokens() == sum(lengths) and index.bits == 2 and index.dims == WIDTH
    assert index.ids.dtype == np.uint16 and index.centroids.shape == (64, WIDTH)
    for key, vectors in zip(keys, chunks_vectors, strict=True):
        ids, codes = index.slice(key)
        assert isinstance(codes, np.memmap) and np.shares_memory(codes, index.residuals)
        assert np.shares_memory(ids, index.ids) and codes.shape == (len(vectors), WIDTH // 4)
        decoded = index.vectors(key)
        assert np.allclose(np.linalg.norm(decoded, axis=1), 1, atol=1e-5)
        assert (decoded * vectors).sum(axis=1).min() > 0.95  # every token keeps its direction
    shared = (64 * WIDTH * 2 + WIDTH * 7 * 4) / index.tokens()  # float16 centroids, weights, cutoffs
    assert 2 + 96 + shared < index.bytes_per_token() < 2 + 96 + shared + 8  # vs 768 for float16
    assert index.size_bytes() == sum(p.stat().st_size for p in (tmp_path / "index").iterdir())


def test_every_residual_is_read_back_from_its_own_bucket(tmp_path, chunks_vectors, keys):
    """The exact bound: a value in bucket c lies between cutoffs c-1 and c, and so does the value
    it is read back as (a bucket's mean, or its middle quantile); so an inner bucket's error is at
    most its width."""
    index = ResidualTokenIndex.build(tmp_path / "index", keys, chunks_vectors, bits=2, centroids=64)
    cutoffs = np.load(tmp_path / "index" / "cutoffs.npy")
    rows = np.concatenate(chunks_vectors)
    residuals = rows - index.centroids[np.asarray(index.ids, np.int64)]
    decoded = ri.decode_residuals(index.residuals, index.table)
    codes = (residuals[:, :, None] > cutoffs[None]).sum(axis=2)
    assert np.allclose(decoded, index.weights[np.arange(WIDTH)[None, :], codes])
    inner = (codes > 0) & (codes < 3)
    low = cutoffs[np.arange(WIDTH)[None, :], np.clip(codes - 1, 0, 2)]
    high = cutoffs[np.arange(WIDTH)[None, :], np.clip(codes, 0, 2)]
    assert (np.abs(residuals - decoded)[inner] <= (high - low)[inner] + 1e-6).all()


def test_maxsim_is_close_to_float_and_closer_with_more_bits(tmp_path, chunks_vectors, keys):
    centres = unit(np.random.default_rng(9).normal(size=(12, WIDTH)))
    query = clustered_rows(np.random.default_rng(5), 12, centres)
    exact = np.array([maxsim(query, v.astype(np.float16)) for v in chunks_vectors])
    errors, bounds = {}, {1: 0.07, 2: 0.035, 4: 0.01}  # of a cosine per query token
    for bits in ri.BITS:
        index = ResidualTokenIndex.build(tmp_path / f"b{bits}", keys, chunks_vectors, bits=bits, centroids=64)
        approx = np.array([index.maxsim(query, key) for key in keys])
        errors[bits] = np.abs(approx - exact).mean() / len(query)
        assert np.abs(approx - exact).max() <= bounds[bits] * len(query)
        assert np.corrcoef(approx, exact)[0, 1] > 0.999
    assert errors[4] < errors[2] < errors[1] and errors[2] <= 0.03
    assert index.maxsim(query[:0], "k0") == 0.0


def test_a_missing_or_partial_folder_opens_as_none(tmp_path, chunks_vectors, keys):
    ResidualTokenIndex.build(tmp_path / "index", keys, chunks_vectors, centroids=16)
    (tmp_path / "index" / "residuals.npy").unlink()
    assert ResidualTokenIndex.open(tmp_path / "index") is None
    assert ResidualTokenIndex.open(tmp_path / "nowhere") is None


def test_building_again_replaces_the_index_whole(tmp_path, chunks_vectors):
    ResidualTokenIndex.build(tmp_path / "index", ["a"], chunks_vectors[:1], centroids=4)
    index = ResidualTokenIndex.build(tmp_path / "index", ["b", "c", "b"], chunks_vectors[1:4], centroids=4)
    assert set(index.rows) == {"b", "c"} and index.tokens() == len(chunks_vectors[2]) + len(chunks_vectors[3])
    assert [p.name for p in tmp_path.iterdir()] == ["index"]  # no scratch folder left behind


def test_a_build_that_fails_midway_leaves_the_old_index(tmp_path, chunks_vectors, monkeypatch):
    ResidualTokenIndex.build(tmp_path / "index", ["a"], chunks_vectors[:1], centroids=4)
    real_save = np.save

    def failing_save(path, array):
        if str(path).endswith("residuals.npy"):
            raise OSError("disk full")
        real_save(path, array)

    monkeypatch.setattr(ri.np, "save", failing_save)
    with pytest.raises(OSError, match="disk full"):
        ResidualTokenIndex.build(tmp_path / "index", ["b"], chunks_vectors[1:2], centroids=4)
    assert set(ResidualTokenIndex.open(tmp_path / "index").rows) == {"a"}
    assert [p.name for p in tmp_path.iterdir()] == ["index"]


def test_bits_that_do_not_pack_and_empty_input_are_refused(tmp_path, chunks_vectors):
    with pytest.raises(ValueError, match=r"bits must be one of \(1, 2, 4\), not 3"):
        ResidualTokenIndex.build(tmp_path / "index", ["a"], chunks_vectors[:1], bits=3)
    with pytest.raises(ValueError, match="at least one token vector"):
        ResidualTokenIndex.build(tmp_path / "index", [], [])
    assert not (tmp_path / "index").exists()


class FakeReranker:
    """What `residual_token_index` uses of a MaxSimReranker, with vectors made up per text."""

    model = None
    max_tokens = 256

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors, self.calls = vectors, 0

    def token_vectors(self, texts):
        self.calls += 1
        return [self.vectors[t] for t in texts]


def test_the_factory_builds_once_per_chunking_and_bits(private_cache, monkeypatch, chunks_vectors):
    monkeypatch.setattr(models, "model_id", lambda name=None: "fake-model")
    texts = [f"chunk {i}" for i in range(len(chunks_vectors))]
    chunks = [Chunk(id=f"c{i}", doc=f"d{i}.html", body=t) for i, t in enumerate(texts)]
    reranker = FakeReranker(dict(zip([c.text for c in chunks], chunks_vectors, strict=True)))
    index = ri.residual_token_index(chunks, reranker=reranker, bits=2, centroids=16)
    again = ri.residual_token_index(chunks, reranker=reranker, bits=2, centroids=16)
    assert again.folder == index.folder and reranker.calls == 1  # reopened, not rebuilt
    assert index.folder.parent == private_cache / "token_index"
    assert models.text_key(chunks[0].text) in index
    one_bit = ri.residual_token_index(chunks, reranker=reranker, bits=1, centroids=16)
    fewer = ri.residual_token_index(chunks[:-1], reranker=reranker, bits=2, centroids=16)
    assert len({index.folder, one_bit.folder, fewer.folder}) == 3 and reranker.calls == 3
    assert (one_bit.bits, len(fewer)) == (1, len(chunks) - 1)
