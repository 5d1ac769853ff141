"""Verdicts are rendered from a comparison's figures: one word, wins and losses, the family."""
from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.evaluation.compare import Comparison, holm_adjust  # noqa: E402
from course_lib.evaluation.stats import Equivalence  # noqa: E402
from course_lib.evaluation.verdicts import (  # noqa: E402
    forest_plot,
    technique_table,
    verdict,
    verdict_table,
    word,
)


def comparison(delta: float, lo: float, hi: float, p: float, *, wins: int = 20, losses: int = 7,
               equivalence_p: float = 0.5, metric: str = "recall@5") -> Comparison:
    shown = Equivalence(delta, lo, hi, equivalence_p, 0.05, 194)
    return Comparison("dense", "RRF", metric, 194, 0.817, 0.817 + delta, delta, lo, hi, p, wins, losses,
                      "exact McNemar", shown)


def rows(html: str) -> list[str]:
    return re.sub(r' style="[^"]*"', "", html).split("<tbody>")[1].split("</tr>")[:-1]


def test_the_one_word_follows_the_figures_only():
    assert word(comparison(0.07, 0.01, 0.15, 0.02)) == "gain"
    assert word(comparison(-0.07, -0.15, -0.01, 0.02)) == "loss"
    assert word(comparison(0.01, -0.02, 0.03, 0.6, equivalence_p=0.01)) == "equivalent"
    # an interval that contains zero is NOT a verdict of "no difference"
    assert word(comparison(0.01, -0.08, 0.10, 0.6, equivalence_p=0.3)) == "cannot tell"


def test_a_verdict_sentence_shows_figures_wins_losses_test_and_word():
    text = verdict(comparison(0.070, 0.010, 0.150, 0.02, wins=21, losses=7), what="RRF against dense")
    assert text == ("**RRF against dense, recall@5:** 0.817 → 0.887, +0.070 [+0.010, +0.150], "
                    "21 wins / 7 losses, exact McNemar p = 0.02: a gain, on 194 questions.")
    assert text._repr_markdown_() == text
    one = verdict(comparison(0.005, -0.01, 0.02, 1.0, wins=1, losses=0, equivalence_p=0.001))
    assert "1 win / 0 losses" in one and "equivalent: shown within ±0.05 (two one-sided tests, p = 0.001)" in one
    assert "cannot tell: neither a difference nor equivalence within ±0.05 is shown" in verdict(
        comparison(0.02, -0.04, 0.08, 0.4))


def test_holm_can_overturn_a_gain_and_the_family_is_named():
    table = holm_adjust([comparison(0.07, 0.01, 0.15, 0.02), comparison(0.05, 0.0, 0.1, 0.03),
                         comparison(0.0, -0.1, 0.1, 0.9)], family="lesson 06's retrievers")
    assert [word(c) for c in table] == ["cannot tell"] * 3  # 0.02 * 3 = 0.06
    assert "p = 0.06, Holm over 3: cannot tell" in verdict(table[0])
    html = verdict_table(table, holm=False).data
    assert "One Holm family: lesson 06&#x27;s retrievers (3 comparisons); equivalence margin ±0.05." in html


def test_verdict_table_rows_and_labels():
    table = [comparison(0.07, 0.03, 0.11, 0.0001), comparison(-0.06, -0.1, -0.02, 0.001, wins=2, losses=14)]
    body = rows(verdict_table(table, what=["RRF against dense", "BM25 against dense"]).data)
    assert body[0].startswith('<tr class="cl-gain"><td>RRF against dense</td><td>recall@5</td>'
                              "<td>0.817 → 0.887</td><td>+0.070 [+0.030, +0.110]</td><td>20 wins / 7 losses</td>"
                              "<td>exact McNemar, p &lt; 0.001</td><td><b>gain</b></td>")
    assert "<td>2 wins / 14 losses</td>" in body[1] and "<b>loss</b>" in body[1]
    with pytest.raises(ValueError, match="1 labels for 2"):
        verdict_table(table, what=["x"])


def test_technique_table_reports_dev_and_test_without_calling_them_contradictory():
    steps = [("hybrid retrieval", comparison(0.1, 0.05, 0.15, 0.001), comparison(0.1, 0.02, 0.18, 0.004)),
             ("context line", comparison(0.1, 0.05, 0.15, 0.001), comparison(0.02, -0.05, 0.09, 0.5))]
    html = technique_table(steps, source_rank={"hybrid retrieval": 4}).data
    body = rows(html)
    assert body[0].count("<b>gain</b>") == 2 and body[0].endswith("<td>4</td>")
    assert "<b>gain</b>" in body[1] and "<b>cannot tell</b>" in body[1] and body[1].endswith("<td>not ranked</td>")
    assert "contradict" not in html and "disagree" not in html
    assert "the dev column (2 comparisons)" in html and "the test column (2 comparisons)" in html


def test_forest_plot_draws_dev_and_test_for_every_step():
    steps = [("a", comparison(0.1, 0.05, 0.15, 0.001), comparison(0.08, 0.0, 0.16, 0.04)),
             ("b", comparison(-0.02, -0.06, 0.02, 0.4), comparison(0.0, -0.04, 0.04, 1.0))]
    ax = forest_plot(steps)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "a"]
    points = sorted(float(c.lines[0].get_xdata()[0]) for c in ax.containers)
    assert points == pytest.approx(sorted([0.1, 0.08, -0.02, 0.0]))
    assert any(np.all(line.get_xdata() == 0) for line in ax.lines)  # the zero line
    plt.close(ax.figure)
