"""Diversity of the top results: share of one page, per-page cap, MMR on hand-made vectors."""
import numpy as np
import pytest

from course_lib.extras.diversity import cap_per_page, mmr, top_page_share
from course_lib.records import Chunk, Hit

CHUNKS = [Chunk(f"{d}#{i}", d, "x") for i, d in enumerate(["a", "a", "a", "b", "c", "a"])]
HITS = [Hit(i, 1.0 - i / 10) for i in range(6)]


def test_top_page_share():
    assert top_page_share(HITS, CHUNKS, k=5) == pytest.approx(3 / 5)
    assert top_page_share([Hit(3, 1), Hit(4, 1)], CHUNKS, k=5) == pytest.approx(1 / 2)
    assert top_page_share([], CHUNKS) == 0.0


def test_cap_per_page_moves_the_surplus_to_the_end_in_order():
    capped = cap_per_page(HITS, CHUNKS, max_per_page=2)
    assert [h.index for h in capped] == [0, 1, 3, 4, 2, 5]


def test_mmr_with_full_weight_keeps_the_relevance_order():
    vectors = np.eye(4, dtype=np.float32)
    query = np.array([0.9, 0.5, 0.1, 0.0], np.float32)
    hits = [Hit(i, float(query[i])) for i in range(3)]
    assert [h.index for h in mmr(hits, vectors, query, weight=1.0)] == [0, 1, 2]


def test_mmr_skips_a_near_duplicate_of_what_it_already_picked():
    vectors = np.array([[1, 0, 0], [0.98, 0.199, 0], [0, 0, 1]], np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = np.array([0.8, 0.1, 0.59], np.float32)
    hits = [Hit(i, float(vectors[i] @ query)) for i in range(3)]
    assert [h.index for h in mmr(hits, vectors, query, weight=1.0)] == [1, 0, 2]
    assert [h.index for h in mmr(hits, vectors, query, weight=0.5)] == [1, 2, 0]
