"""The offline model loader and the disk cache of embeddings."""
import numpy as np
import pytest

from course_lib import models


def test_bundled_model_loads_offline_with_its_real_limit():
    embedder = models.load_embedder()
    assert embedder.get_embedding_dimension() == 384
    assert models.max_input_tokens() == 256


def test_the_tokenizer_claims_more_than_the_model_reads():
    # Lesson 05's trap: the tokenizer alone says 512, the embedder reads 256.
    assert models.load_tokenizer().model_max_length == 512
    assert models.max_input_tokens() < models.load_tokenizer().model_max_length


def test_a_local_folder_is_loaded_as_a_model(tmp_path):
    folder = tmp_path / "copy"
    models.load_embedder().save(str(folder))
    assert models.resolve_model(str(folder)) == (str(folder), True)
    vector = models.load_embedder(str(folder)).encode(["hi"], normalize_embeddings=True)
    reference = models.load_embedder().encode(["hi"], normalize_embeddings=True)
    assert np.allclose(vector, reference, atol=1e-5)


def test_an_unloadable_model_says_why_and_what_to_do(tmp_path):
    empty = tmp_path / "empty-model"
    empty.mkdir()
    with pytest.raises(models.ModelLoadError, match="local folder") as info:
        models.load_embedder(str(empty))
    assert "empty-model" in str(info.value)


def test_embeddings_are_unit_vectors_and_rank_sensibly(private_cache):
    vectors = models.embed(["How do I sort a list?", "Sorting lists in Python", "Tax rates in 1999"],
                           progress=False)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def _count_encodes(monkeypatch):
    encoder = models.load_embedder()
    calls = []
    original = encoder.encode

    def counting(texts, **kwargs):
        calls.append(list(texts))
        return original(texts, **kwargs)

    monkeypatch.setattr(encoder, "encode", counting)
    return calls


def test_a_rerun_embeds_nothing_again(private_cache, monkeypatch):
    calls = _count_encodes(monkeypatch)
    first = models.embed(["alpha", "beta", "alpha"], progress=False)
    second = models.embed(["beta", "alpha"], progress=False)
    assert calls == [["alpha", "beta"]]
    assert np.array_equal(second, first[[1, 0]])


def test_only_new_texts_are_embedded(private_cache, monkeypatch):
    calls = _count_encodes(monkeypatch)
    models.embed(["alpha"], progress=False)
    models.embed(["alpha", "gamma"], progress=False)
    assert calls == [["alpha"], ["gamma"]]


def test_a_corrupt_cache_shard_is_rebuilt_not_fatal(private_cache, monkeypatch):
    reference = models.embed(["alpha"], progress=False)
    shards = list(private_cache.rglob("*.npz"))
    assert len(shards) == 1
    shards[0].write_bytes(b"this is not a numpy file")
    monkeypatch.setattr(models, "_open_caches", {})  # as a new process would start
    calls = _count_encodes(monkeypatch)
    again = models.embed(["alpha"], progress=False)
    assert calls == [["alpha"]]
    assert np.allclose(again, reference, atol=1e-6)


def test_cache_is_keyed_by_model(private_cache):
    key = models.model_id()
    assert "max_seq_length=256" in key
    a = models.EmbeddingCache(key)
    b = models.EmbeddingCache(key.replace("256", "128"))
    assert a.folder != b.folder
    a.put_many(["k"], np.ones((1, 3), np.float32))
    assert models.EmbeddingCache(key).get("k") is not None and b.get("k") is None


def test_cache_shards_hold_no_pickle(private_cache):
    models.embed(["alpha"], progress=False)
    shard = next(private_cache.rglob("*.npz"))
    with np.load(shard, allow_pickle=False) as data:
        assert data["keys"].dtype.kind == "U" and data["vectors"].shape == (1, 384)


def test_many_small_shards_are_compacted_on_load(private_cache, monkeypatch):
    key = "test-model"
    cache = models.EmbeddingCache(key)
    for i in range(models.EmbeddingCache.max_shards + 3):
        cache.put_many([f"k{i}"], np.full((1, 2), i, np.float32))
    reloaded = models.EmbeddingCache(key)
    assert len(list(reloaded.folder.glob("*.npz"))) == 1
    assert len(reloaded) == models.EmbeddingCache.max_shards + 3
    assert np.array_equal(models.EmbeddingCache(key).get("k7"), np.full(2, 7, np.float32))


def test_duplicates_get_one_row_each_with_or_without_the_cache(private_cache):
    for use_cache in (False, True):
        vectors = models.embed(["a", "a", "b"], use_cache=use_cache, progress=False)
        assert vectors.shape == (3, 384)
        assert np.array_equal(vectors[0], vectors[1]) and not np.array_equal(vectors[0], vectors[2])
