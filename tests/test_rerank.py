"""Unit tests of course_lib.core.rerank: MaxSim, a real (tiny) cross-encoder, the offline fallback.

Every test that builds a re-ranker or uses the tiny model is marked `model`: they import torch,
transformers and sentence-transformers, and the module-scoped fixtures do so before the per-test
guard in conftest starts listening, so only the mark keeps them out of `make unit-fast`.
"""
from __future__ import annotations

import socket

import numpy as np
import pytest

from course_lib import settings
from course_lib.core import rerank as rr
from course_lib.core.rerank import (
    DEFAULT_CROSS_ENCODER,
    CrossEncoderReranker,
    MaxSimReranker,
    describe,
    load_reranker,
    maxsim,
    rerank,
)
from course_lib.infra import models
from course_lib.infra.errors import ModelLoadError
from course_lib.infra.models import DEFAULT_EMBEDDER
from course_lib.records import Chunk, Hit

WORDS = ("how do i join two paths path file system year format code day month the a of to with "
         "and os datetime").split()
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "?", "(", ")", "_", "%"] + WORDS
TEXTS = ["join two paths with os path join", "the year format code", "day of the month",
         "file system path", "a b c", ""]
QUERY = "how do i join two paths?"


def make_chunks(texts):
    return [Chunk(id=f"c{i}", doc=f"page{i}.html", body=t) for i, t in enumerate(texts)]


def save_tiny_cross_encoder(folder):
    """A 2-layer, 32-wide BERT with one output: a real cross-encoder, just an untrained one."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    # from_pretrained reads vocab.txt on transformers 4 and 5 alike (5 ignores `vocab_file=`).
    tokenizer = BertTokenizer.from_pretrained(str(folder))
    assert tokenizer.unk_token_id not in tokenizer("join two paths")["input_ids"]
    torch.manual_seed(0)
    # A wider init than BERT's 0.02 so that an untrained model still tells the texts apart.
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
                        num_labels=1, initializer_range=0.2)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return save_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "cross-encoder")


@pytest.fixture(scope="module")
def tiny_reranker(tiny_model):
    return CrossEncoderReranker(str(tiny_model))


@pytest.fixture(scope="module")
def maxsim_reranker():
    return MaxSimReranker(persist=False)  # memory only: these tests must not write the real cache


# --- maxsim ----------------------------------------------------------------------------------

def test_maxsim_on_hand_made_vectors():
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    doc = np.array([[1.0, 0.0], [0.6, 0.8], [-1.0, 0.0]])
    # query token 1 best matches doc token 0 (1.0), query token 2 doc token 1 (0.8)
    assert maxsim(query, doc) == pytest.approx(1.8, abs=1e-6)
    assert maxsim(query, doc[2:]) == pytest.approx(-1.0 + 0.0, abs=1e-6)
    assert maxsim(query[:1], doc[1:2]) == pytest.approx(0.6, abs=1e-6)
    assert maxsim(np.zeros((0, 2)), doc) == 0.0 and maxsim(query, np.zeros((0, 2))) == 0.0


# --- MaxSimReranker (the real bundled MiniLM, offline) ------------------------------------------

REAL_CHUNKS = [
    Chunk(id="dt", doc="library/datetime.html", context="datetime > Format Codes",
          body="%j Day of the year as a zero-padded decimal number. %Y Year with century."),
    Chunk(id="os", doc="library/os.path.html", context="os.path > Functions",
          body="os.path.join(path, *paths): Join one or more path segments intelligently. The "
               "return value is the concatenation of path and any members of *paths."),
    Chunk(id="rnd", doc="library/random.html", context="random > Functions for sequences",
          body="random.shuffle(x): Shuffle the sequence x in place. To shuffle an immutable "
               "sequence and return a new shuffled list, use sample(x, k=len(x)) instead."),
]


@pytest.mark.model
@pytest.mark.parametrize("query, best", [
    ("How do I combine two file system paths into one?", 1),
    ("Which directive gives the day of the year?", 0),
    ("How can I put a list in random order?", 2),
])
def test_maxsim_reranker_ranks_the_relevant_chunk_first(maxsim_reranker, query, best):
    scores = maxsim_reranker.score(query, REAL_CHUNKS)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    assert int(np.argmax(scores)) == best
    assert scores[best] > 1.5 * np.delete(scores, best).max()  # by a wide margin, not by luck
    hits = rerank(maxsim_reranker, query, [Hit(i, 0.0) for i in range(3)], REAL_CHUNKS)
    assert hits[0].index == best and hits[0].score == pytest.approx(scores[best])


@pytest.mark.model
def test_maxsim_reranker_drops_special_tokens_and_normalises(maxsim_reranker):
    vectors = maxsim_reranker.token_vectors(["hello world"])[0]
    assert vectors.shape == (2, 384) and vectors.dtype == np.float16  # no [CLS], no [SEP]
    np.testing.assert_allclose(np.linalg.norm(vectors.astype(np.float32), axis=1), 1.0, atol=2e-3)
    assert maxsim_reranker.token_vectors([""])[0].shape == (0, 384)
    assert maxsim_reranker.name == f"maxsim:{DEFAULT_EMBEDDER}"


@pytest.mark.model
def test_maxsim_reranker_caches_chunk_vectors(maxsim_reranker, monkeypatch):
    encoded = []
    real_encode = maxsim_reranker.encoder.encode
    monkeypatch.setattr(maxsim_reranker.encoder, "encode",
                        lambda texts, **kw: encoded.append(list(texts)) or real_encode(texts, **kw))
    first = maxsim_reranker.score("random order of a list", REAL_CHUNKS)
    second = maxsim_reranker.score("random order of a list", REAL_CHUNKS)
    np.testing.assert_array_equal(first, second)
    assert sum(len(batch) for batch in encoded) <= 4  # at most the query and 3 chunks, once


@pytest.mark.model
def test_maxsim_reranker_truncates_and_bounds_its_cache():
    short = MaxSimReranker(max_tokens=8, cache_size=2)
    long_text = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    assert short.token_vectors([long_text])[0].shape == (6, 384)  # 8 minus [CLS] and [SEP]
    short.score("query", REAL_CHUNKS)
    assert len(short.memory) == 2 and short.memory.maxsize == 2
    assert MaxSimReranker(max_tokens=10_000).max_tokens == 256  # never past the model's limit


@pytest.mark.model
def test_a_cold_maxsim_reranker_keeps_nothing_in_memory():
    """cache_size=0 is lesson 07's cold re-ranker: it scores as the warm one does and remembers nothing."""
    cold = MaxSimReranker(persist=False, cache_size=0)
    warm = MaxSimReranker(persist=False)
    np.testing.assert_allclose(cold.score("query", REAL_CHUNKS), warm.score("query", REAL_CHUNKS), rtol=1e-6)
    assert len(cold.memory) == 0 and len(warm.memory) == len(REAL_CHUNKS) + 1  # the chunks and the query


def _new_process(monkeypatch):
    monkeypatch.setattr(rr, "_token_stores", {})


@pytest.mark.model
def test_chunk_token_vectors_are_an_index_on_disk(private_cache, monkeypatch):
    _new_process(monkeypatch)
    first = MaxSimReranker()
    reference = first.score("How do I combine two paths?", REAL_CHUNKS)
    assert len(first.store) == 3  # the chunks, not the query
    assert len(first.query_store) == 1  # the question, in a store of its own
    for persist_queries, expected in ((False, [["How do I combine two paths?"]]), (True, [])):
        _new_process(monkeypatch)
        second = MaxSimReranker(persist_queries=persist_queries)  # a fresh process: empty memory, same disk
        encoded = []
        real_encode = second.encoder.encode
        monkeypatch.setattr(second.encoder, "encode",
                            lambda texts, encoded=encoded, real_encode=real_encode, **kw:
                            encoded.append(list(texts)) or real_encode(texts, **kw))
        again = second.score("How do I combine two paths?", REAL_CHUNKS)
        # No chunk is encoded again; the question is, unless its vectors were kept (a service opts out).
        assert encoded == expected and (second.query_store is None) == (not persist_queries)
        np.testing.assert_allclose(again, reference, rtol=1e-6)
    stored = second.store.get(models.text_key(REAL_CHUNKS[1].text), width=384)
    assert stored.dtype == np.float16
    np.testing.assert_array_equal(stored, first.token_vectors([REAL_CHUNKS[1].text])[0])


@pytest.mark.model
def test_the_token_store_is_keyed_by_the_cut(private_cache, monkeypatch):
    _new_process(monkeypatch)
    assert MaxSimReranker(max_tokens=8).store.folder != MaxSimReranker().store.folder
    assert MaxSimReranker(persist=False).store is None


@pytest.mark.model
def test_token_store_size_predicts_what_is_stored(private_cache, monkeypatch):
    _new_process(monkeypatch)
    reranker = MaxSimReranker()
    reranker.score("query", REAL_CHUNKS)
    size = rr.token_store_size(REAL_CHUNKS, reranker=reranker)
    rows = sum(len(v) for v in reranker.token_vectors([c.text for c in REAL_CHUNKS]))
    assert (size.chunks, size.tokens, size.width, size.stored_chunks) == (3, rows, 384, 3)
    assert size.bytes == rows * 384 * 2 and size.bytes_per_chunk == pytest.approx(size.bytes / 3)
    assert size.stored_bytes >= size.bytes
    assert "3 chunks" in str(size) and "KB per chunk" in str(size)


# --- CrossEncoderReranker on a real tiny model ----------------------------------------------

@pytest.mark.model
def test_cross_encoder_scores_one_finite_value_per_chunk(tiny_reranker, tiny_model):
    chunks = make_chunks(TEXTS)
    scores = tiny_reranker.score(QUERY, chunks)
    assert scores.shape == (len(TEXTS),) and np.all(np.isfinite(scores))
    assert len(np.unique(scores.round(6))) == len(TEXTS)  # it reads the text: all different
    assert tiny_reranker.name == str(tiny_model)
    assert tiny_reranker.score(QUERY, []).shape == (0,)


@pytest.mark.model
def test_cross_encoder_batching_does_not_change_scores(tiny_reranker):
    chunks = make_chunks(TEXTS)
    one = tiny_reranker.score(QUERY, chunks, batch_size=1)
    eight = tiny_reranker.score(QUERY, chunks, batch_size=8)
    np.testing.assert_allclose(one, eight, atol=1e-5)  # padding moves only the last bits


@pytest.mark.model
def test_rerank_orders_the_shortlist_by_cross_encoder_scores(tiny_reranker):
    chunks = make_chunks(TEXTS)
    fused = [Hit(i, 1.0 - i / 10) for i in range(len(TEXTS))]
    scores = tiny_reranker.score(QUERY, chunks)
    reranked = rerank(tiny_reranker, QUERY, fused, chunks, top_n=len(TEXTS))
    assert [h.index for h in reranked] == list(np.argsort(-scores, kind="stable"))
    np.testing.assert_allclose([h.score for h in reranked], np.sort(scores)[::-1], atol=1e-6)
    top3 = rerank(tiny_reranker, QUERY, fused, chunks, top_n=3)
    assert sorted(h.index for h in top3) == [0, 1, 2]  # only the shortlist, nothing after it
    assert rerank(tiny_reranker, QUERY, [], chunks) == []


class ConstantReranker:
    name = "constant"

    def __init__(self, scores):
        self.scores = scores

    def score(self, query, chunks, *, batch_size=32):
        return np.array(self.scores[: len(chunks)], dtype=float)


def test_the_shortlist_is_top_n_or_k_when_k_is_larger():
    assert [rr.shortlist_size(k, top_n=30) for k in (1, 20, 30, 31, 100)] == [30, 30, 30, 31, 100]
    assert rr.shortlist_size(5) == max(5, settings.RERANK_TOP_N)


def test_rerank_ties_keep_the_fused_order():
    chunks = make_chunks(["a", "b", "c", "d"])
    fused = [Hit(3, 0.4), Hit(0, 0.3), Hit(2, 0.2), Hit(1, 0.1)]
    out = rerank(ConstantReranker([1.0, 2.0, 1.0, 2.0]), "q", fused, chunks)
    assert out == [Hit(0, 2.0), Hit(1, 2.0), Hit(3, 1.0), Hit(2, 1.0)]


# --- loading, errors and the fallback -------------------------------------------------------

@pytest.mark.model
def test_hub_name_offline_fails_fast_with_advice(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    attempts = []

    def no_network(sock, address):
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    with pytest.raises(ModelLoadError) as info:
        CrossEncoderReranker(DEFAULT_CROSS_ENCODER, cache_dir=str(tmp_path))
    assert attempts == []  # no retries against an unreachable hub: it never even tried
    message = str(info.value)
    assert DEFAULT_CROSS_ENCODER in message and "local folder" in message
    assert "MaxSimReranker" in message and "HF_HUB_OFFLINE" in message


@pytest.mark.model
def test_local_folder_without_a_model_says_what_is_missing(tmp_path):
    with pytest.raises(ModelLoadError, match="config.json"):
        CrossEncoderReranker(str(tmp_path))


@pytest.mark.model
def test_load_reranker_falls_back_to_maxsim(monkeypatch, tmp_path, private_cache):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(rr.RERANKER_ENV, raising=False)
    reranker = load_reranker(None, cache_dir=str(tmp_path))  # an empty hub cache
    assert isinstance(reranker, MaxSimReranker)
    assert reranker.name.startswith("maxsim:")
    assert DEFAULT_CROSS_ENCODER in describe(reranker)
    assert isinstance(load_reranker("maxsim"), MaxSimReranker)
    # A service's re-ranker encodes every question (lesson 08, the benchmarks): no question store.
    assert load_reranker(None, cache_dir=str(tmp_path)).query_store is not None
    assert load_reranker(None, cache_dir=str(tmp_path), persist_queries=False).query_store is None
    assert load_reranker("maxsim", persist_queries=False).query_store is None


def _hub_cache_with_cross_encoder(tmp_path, tiny_model):
    """A hub cache laid out as huggingface_hub writes it, holding the default cross-encoder."""
    import shutil

    repo = tmp_path / ("models--" + DEFAULT_CROSS_ENCODER.replace("/", "--"))
    shutil.copytree(tiny_model, repo / "snapshots" / "0123abcd")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    return tmp_path


@pytest.mark.model
def test_a_cross_encoder_in_the_hub_cache_is_not_used_unless_named(monkeypatch, tmp_path, tiny_model,
                                                                     private_cache):
    # A cross-encoder some other project left in the laptop's cache must not change the numbers.
    cache = _hub_cache_with_cross_encoder(tmp_path, tiny_model)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(rr.RERANKER_ENV, raising=False)
    reranker = load_reranker(None, cache_dir=str(cache))
    assert isinstance(reranker, MaxSimReranker) and reranker.name.startswith("maxsim:")
    said = describe(reranker, cache_dir=str(cache))
    assert "stand-in" in said and "not used unless named" in said
    assert "not used unless named" not in describe(reranker, cache_dir=str(tmp_path / "empty"))
    # Named, by argument or by the environment, it is used, loaded from that cache offline.
    named = load_reranker(DEFAULT_CROSS_ENCODER, cache_dir=str(cache))
    assert isinstance(named, CrossEncoderReranker) and named.name == DEFAULT_CROSS_ENCODER
    assert "maxsim" in describe(named) and "(named)" in describe(named)
    monkeypatch.setenv(rr.RERANKER_ENV, DEFAULT_CROSS_ENCODER)
    from_env = load_reranker(None, cache_dir=str(cache))
    assert isinstance(from_env, CrossEncoderReranker)
    from_folder = CrossEncoderReranker(str(tiny_model))
    np.testing.assert_allclose(from_env.score(QUERY, make_chunks(TEXTS)),
                               from_folder.score(QUERY, make_chunks(TEXTS)), atol=1e-6)
    # An explicit "maxsim" wins over the environment.
    assert isinstance(load_reranker("maxsim"), MaxSimReranker)


def test_named_reranker_reads_the_argument_then_the_environment(monkeypatch):
    monkeypatch.delenv(rr.RERANKER_ENV, raising=False)
    assert rr.named_reranker() == rr.MAXSIM
    monkeypatch.setenv(rr.RERANKER_ENV, "  ")
    assert rr.named_reranker() == rr.MAXSIM
    monkeypatch.setenv(rr.RERANKER_ENV, "some/cross-encoder")
    assert rr.named_reranker() == "some/cross-encoder"
    assert rr.named_reranker("maxsim") == rr.MAXSIM
    assert rr.named_reranker("/a/folder") == "/a/folder"


@pytest.mark.model
def test_load_reranker_by_folder(tiny_model):
    reranker = load_reranker(str(tiny_model))
    assert isinstance(reranker, CrossEncoderReranker) and reranker.name == str(tiny_model)
    assert rr.MAXSIM not in reranker.name
