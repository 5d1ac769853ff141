"""Lesson 06's picture of two ranked lists fused by RRF."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from course_lib.core.retrieve import rrf  # noqa: E402
from course_lib.extras.fusion_view import Link, fusion_figure, fusion_links  # noqa: E402

BM25, DENSE = [7, 3, 9, 1], [3, 5, 7, 8]
FUSED = [i for i, _ in rrf([BM25, DENSE], k=60)]  # 3 and 7 are in both lists, so they lead


def test_each_lists_top_items_are_linked_to_their_fused_rank():
    assert FUSED[:2] == [3, 7]
    links = fusion_links({"bm25": BM25, "dense": DENSE}, FUSED, depth=3)
    assert Link("bm25", 1, 7, 2) in links and Link("dense", 1, 3, 1) in links
    assert len(links) == 6  # the top 3 of each list
    # 9 is BM25's third and only there; dense's second (5) outscores it, so 9 falls below the fused top 3
    assert Link("bm25", 3, 9, None) in links and Link("dense", 2, 5, 3) in links


def test_the_answer_is_marked_and_every_fused_box_names_both_ranks():
    figure = fusion_figure({"bm25": BM25, "dense": DENSE}, FUSED, relevant={9}, depth=3,
                           labels={9: "the answer"})
    ax = figure.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    assert len(boxes) == 9  # three columns of three
    assert sum(b.get_linewidth() > 2 for b in boxes) == 1  # 9 appears in BM25's top 3 only
    texts = [t.get_text() for t in ax.texts]
    assert "3. the answer\nchunk 9" in texts
    assert "1. chunk 3\nbm25 2 · dense 1" in texts
    assert "3. chunk 5\nbm25 – · dense 2" in texts
    assert sum(line.get_linestyle() == ":" for line in ax.lines) == 1  # 9 falls below the fused top 3


def test_a_labelled_fused_box_keeps_its_id_and_both_ranks():
    figure = fusion_figure({"bm25": BM25, "dense": DENSE}, FUSED, depth=2, labels={3: "Lock Objects"})
    assert "1. Lock Objects\nchunk 3 · bm25 2 · dense 1" in [t.get_text() for t in figure.axes[0].texts]


def test_only_two_lists_are_drawn():
    with pytest.raises(ValueError, match="exactly two lists"):
        fusion_figure({"a": [1], "b": [2], "c": [3]}, [1, 2, 3])
