"""Tests of the notebook displays on synthetic runs: escaped text, colour classes, plot lines."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from IPython.display import HTML  # noqa: E402

from course_lib.display import (compare_table, metrics_table, per_question_table,  # noqa: E402
                                plot_recall_curve)
from course_lib.evaluate import evaluate_rankings, paired_comparison  # noqa: E402
from course_lib.golden import Question  # noqa: E402
from course_lib.records import Chunk, Hit  # noqa: E402

DOC = "library/<tags>.html"
CHUNKS = [
    Chunk("c0", DOC, "The <div> & <span> tags.", section_id="s1",
          heading_path=("HTML <tags>", "Block & inline")),
    Chunk("c1", "other.html", "nothing relevant here"),
    Chunk("c2", DOC, "late answer", section_id="s2", heading_path=("HTML <tags>",)),
]
QUESTIONS = [
    Question("q1", "What does <div> & <span> do?", DOC, "s1", "The div and span tags", "exact"),
    Question("q2", "Where is the late answer?", DOC, "s2", "four words late answer", "context"),
    Question("q3", "Is there a <script> answer?", None, None, None, "unanswerable"),
]


@pytest.fixture
def run():
    # q1 hit at 1 (green), q2 hit at rank 7 (red: missed the top 5), q3 unanswerable (grey).
    filler = [Hit(1, 0.5 - i / 100) for i in range(6)]
    return evaluate_rankings(QUESTIONS, [[Hit(0, 0.9), Hit(1, 0.1)],
                                         filler + [Hit(2, 0.2)],
                                         [Hit(1, 0.3)]], CHUNKS, name="run <A>")


@pytest.fixture
def other(run):
    return evaluate_rankings(QUESTIONS, [[Hit(0, 0.9)], [Hit(2, 0.9)], []], CHUNKS, name="B")


def rows(table: HTML) -> list[str]:
    return table.data.split("<tbody>")[1].split("</tr>")[:-1]


def test_per_question_table_escapes_and_colours(run):
    table = per_question_table(run)
    assert isinstance(table, HTML)
    body = rows(table)
    assert len(body) == 3
    assert 'class="cl-hit"' in body[0] and 'class="cl-miss"' in body[1]
    assert 'class="cl-na"' in body[2]
    assert "What does &lt;div&gt; &amp; &lt;span&gt; do?" in body[0]
    assert "<div>" not in table.data and "<script>" not in table.data
    assert "<td>1</td>" in body[0] and "<td>7</td>" in body[1]
    assert "HTML &lt;tags&gt; &gt; Block &amp; inline" in body[0]
    assert "library/&lt;tags&gt;.html" in body[0]


def test_per_question_table_dashes_and_limit(run, other):
    body = rows(per_question_table(other))
    assert body[2].count("<td>—</td>") == 3     # no rank, no top page, no heading path
    assert "<td>other.html</td><td>—</td>" in rows(per_question_table(run))[2]
    assert len(rows(per_question_table(run, limit=2))) == 2


def test_metrics_table(run, other):
    table = metrics_table([run, other])
    body = rows(table)
    assert len(body) == 2
    assert "run &lt;A&gt;" in body[0]
    # run: recall@5 = 1/2, recall@20 = 2/2, MRR = (1 + 1/7) / 2
    assert "<td>0.500 [" in body[0] and "<td>1.000 [1.000, 1.000]</td>" in body[0]
    assert f"<td>{(1 + 1 / 7) / 2:.3f} [" in body[0]
    assert "<td>2</td>" in body[0]


def test_compare_table(run, other):
    same = paired_comparison(run, run)
    better = paired_comparison(run, other, metric="recall@5")
    body = rows(compare_table([same, better]))
    assert len(body) == 2
    assert "<td>+0.000</td><td>[+0.000, +0.000]</td><td>1.0000</td>" in body[0]
    assert "<td>run &lt;A&gt;</td><td>B</td><td>recall@5</td><td>0.500</td><td>1.000</td>" \
        "<td>+0.500</td>" in body[1]
    assert f"<td>{better.p_value:.4f}</td>" in body[1]


def test_plot_recall_curve_one_line_per_run(run, other):
    fig, ax = plt.subplots()
    returned = plot_recall_curve(run, other, ax=ax)
    assert returned is ax
    assert len(ax.get_lines()) == 2
    x, y = ax.get_lines()[0].get_data()
    np.testing.assert_array_equal(x, np.arange(1, 21))
    np.testing.assert_allclose(y[:8], [0.5] * 6 + [1.0] * 2)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["run <A>", "B"]
    plt.close(fig)


def test_plot_recall_curve_creates_axes_and_respects_run_depth():
    shallow = evaluate_rankings(QUESTIONS[:1], [[Hit(0, 1.0)]], CHUNKS, name="k5", k=5)
    ax = plot_recall_curve(shallow)
    x, y = ax.get_lines()[0].get_data()
    assert list(x) == [1, 2, 3, 4, 5] and list(y) == [1.0] * 5
    plt.close(ax.figure)
