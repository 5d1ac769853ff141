"""The int8, memory-mapped token-vector index behind MaxSim: bounded error, views not copies."""
from __future__ import annotations

import numpy as np
import pytest

from course_lib.core.rerank import MaxSimReranker, int8_token_index, maxsim
from course_lib.infra import models
from course_lib.infra.token_index import Int8TokenIndex, dequantize, maxsim_int8, quantize
from course_lib.records import Chunk

WIDTH = 384


def unit_rows(rng: np.random.Generator, rows: int) -> np.ndarray:
    found = rng.normal(size=(rows, WIDTH)).astype(np.float32)
    return found / np.linalg.norm(found, axis=1, keepdims=True)


@pytest.fixture
def chunks_vectors() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [unit_rows(rng, int(n)) for n in rng.integers(1, 120, size=30)]


def test_dequantisation_is_within_half_a_step_of_every_element(chunks_vectors):
    rows = np.concatenate(chunks_vectors)
    codes, scales = quantize(rows)
    assert codes.dtype == np.int8 and scales.dtype == np.float32 and scales.shape == (len(rows),)
    error = np.abs(dequantize(codes, scales) - rows)
    assert (error <= scales[:, None] / 2 + 1e-7).all()
    assert np.abs(codes).max() == 127  # each row's largest element uses the full range


def test_a_zero_row_stays_zero():
    codes, scales = quantize(np.zeros((2, WIDTH), np.float32))
    assert not codes.any() and (scales == 1).all()


def test_maxsim_from_int8_is_close_to_float16(chunks_vectors):
    query = unit_rows(np.random.default_rng(1), 12)
    codes, scales = zip(*(quantize(v) for v in chunks_vectors), strict=True)
    int8 = np.array([maxsim_int8(query, c, s) for c, s in zip(codes, scales, strict=True)])
    half = np.array([maxsim(query, v.astype(np.float16)) for v in chunks_vectors])
    assert np.abs(int8 - half).max() <= 0.01 * len(query)  # a hundredth of a cosine per query token
    assert maxsim_int8(query, codes[0][:0], scales[0][:0]) == 0.0


def test_the_index_round_trips_as_memory_mapped_views(tmp_path, chunks_vectors):
    keys = [f"k{i}" for i in range(len(chunks_vectors))]
    assert Int8TokenIndex.open(tmp_path / "index") is None
    Int8TokenIndex.build(tmp_path / "index", keys, chunks_vectors)
    index = Int8TokenIndex.open(tmp_path / "index")
    assert len(index) == len(keys) and "k3" in index and "nope" not in index
    assert index.tokens() == sum(len(v) for v in chunks_vectors)
    for key, vectors in zip(keys, chunks_vectors, strict=True):
        codes, scales = index.slice(key)
        assert isinstance(codes, np.memmap) and isinstance(scales, np.memmap)
        assert not codes.flags.owndata and np.shares_memory(codes, index.codes)
        assert np.abs(dequantize(codes, scales) - vectors).max() <= scales.max() / 2 + 1e-7
    assert WIDTH + 4 <= index.bytes_per_token() < WIDTH + 4 + 16  # vs 2 * WIDTH for float16
    assert index.size_bytes() == sum(p.stat().st_size for p in (tmp_path / "index").iterdir())


def test_building_again_replaces_the_index_whole(tmp_path, chunks_vectors):
    Int8TokenIndex.build(tmp_path / "index", ["a"], chunks_vectors[:1])
    index = Int8TokenIndex.build(tmp_path / "index", ["b", "c"], chunks_vectors[1:3])
    assert set(index.rows) == {"b", "c"}
    assert [p.name for p in tmp_path.iterdir()] == ["index"]  # no scratch folder left behind


@pytest.mark.model
def test_the_reranker_scores_from_the_index_when_asked(private_cache):
    texts = ["asyncio.gather runs awaitables concurrently", "json.dumps serialises an object",
             "pathlib.Path.glob yields matching paths", "re.compile builds a pattern object"]
    chunks = [Chunk(id=f"c{i}", doc=f"d{i}.html", body=t) for i, t in enumerate(texts)]
    plain = MaxSimReranker()
    assert plain.index is None  # opt-in: the default re-ranker is unchanged
    index = int8_token_index(chunks[:3], reranker=plain)
    assert int8_token_index(chunks[:3], reranker=plain).folder == index.folder  # reopened, not rebuilt
    compressed = MaxSimReranker(index=index)
    query = "run coroutines at the same time"
    exact, approx = plain.score(query, chunks), compressed.score(query, chunks)
    assert np.abs(exact - approx).max() <= 0.01 * len(plain.token_vectors([query], persist=False)[0])
    assert approx[3] == exact[3]  # a chunk the index lacks goes through the float16 path
    assert models.text_key(chunks[3].text) not in index


def low_rank_rows(rng: np.random.Generator, rows: int, rank: int = 24) -> np.ndarray:
    """Unit rows that live (almost) in a `rank`-dimensional subspace, as contextual token vectors do."""
    basis = np.linalg.qr(np.random.default_rng(7).normal(size=(WIDTH, rank)))[0].T
    found = rng.normal(size=(rows, rank)) @ basis + 0.01 * rng.normal(size=(rows, WIDTH))
    return (found / np.linalg.norm(found, axis=1, keepdims=True)).astype(np.float32)


def test_a_projected_index_is_smaller_and_scores_what_its_directions_keep(tmp_path):
    rng = np.random.default_rng(3)
    vectors = [low_rank_rows(rng, int(n)) for n in rng.integers(5, 60, size=25)]
    keys = [f"k{i}" for i in range(len(vectors))]
    full = Int8TokenIndex.build(tmp_path / "full", keys, vectors)
    small = Int8TokenIndex.build(tmp_path / "small", keys, vectors, dims=32)
    assert (full.dims, small.dims) == (WIDTH, 32) and full.projection is None
    assert Int8TokenIndex.open(tmp_path / "small").projection.shape == (WIDTH, 32)  # reopened with it
    assert small.codes.nbytes * (WIDTH // 32) == full.codes.nbytes  # the projection matrix is fixed cost
    query = low_rank_rows(np.random.default_rng(4), 10)
    exact = np.array([maxsim(query, v) for v in vectors])
    projected = np.array([small.maxsim(query, key) for key in keys])
    assert np.abs(projected - exact).max() <= 0.02 * len(query)  # the subspace holds nearly everything
    assert list(np.argsort(-projected)[:5]) == list(np.argsort(-exact)[:5])
    assert small.maxsim(query[:0], "k0") == 0.0


def test_a_projection_too_wide_for_the_vectors_is_refused(tmp_path, chunks_vectors):
    with pytest.raises(ValueError, match="dims must be between 1 and the vectors' width 384, not 500"):
        Int8TokenIndex.build(tmp_path / "index", ["a"], chunks_vectors[:1], dims=500)


def _pickled(path) -> None:
    np.save(path, np.array([{"runs": "code"}], dtype=object), allow_pickle=True)


def _truncated(path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def _scaled_up(path) -> None:  # one token 30 times a unit vector: it would outweigh every other
    scales = np.load(path)
    scales[5] *= 30
    np.save(path, scales)


@pytest.mark.parametrize(("name", "damage", "said"), [
    ("codes.npy", _truncated, "ValueError"), ("scales.npy", _pickled, "pickled"),
    ("offsets.npy", _pickled, "pickled"), ("keys.json", lambda p: p.write_text('{"k": 1}'), "keys.json"),
    ("scales.npy", _scaled_up, "longer than a unit vector"),
])
def test_a_damaged_or_planted_index_is_one_warning_and_built_again(tmp_path, chunks_vectors, caplog,
                                                                   name, damage, said):
    keys = [f"k{i}" for i in range(len(chunks_vectors))]
    Int8TokenIndex.build(tmp_path / "index", keys, chunks_vectors)
    damage(tmp_path / "index" / name)
    with caplog.at_level("WARNING", logger="course_lib.cache"):
        assert Int8TokenIndex.open(tmp_path / "index") is None  # the caller builds it again
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and str(tmp_path / "index") in lines[0] and "built again" in lines[0]
    assert said in lines[0] and "Traceback" not in lines[0]


@pytest.mark.model
def test_a_planted_index_is_rebuilt_by_the_reranker(private_cache):
    chunks = [Chunk(id=f"c{i}", doc=f"d{i}.html", body=t)
              for i, t in enumerate(("Bicycles need chain oil.", "Tomatoes like sun.", "Compost feeds soil."))]
    plain = MaxSimReranker()
    index = int8_token_index(chunks, reranker=plain)
    good = np.load(index.folder / "scales.npy")
    _scaled_up(index.folder / "scales.npy")
    again = int8_token_index(chunks, reranker=plain)
    assert np.array_equal(np.asarray(again.scales), good)  # rebuilt from the token vectors
