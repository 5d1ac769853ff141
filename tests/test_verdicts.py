"""Verdicts are rendered from a comparison's figures: one word, the interval it was decided on,
wins and losses, the family."""
from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.evaluation.compare import Comparison, compare_values, holm_adjust  # noqa: E402
from course_lib.evaluation.stats import Equivalence  # noqa: E402
from course_lib.evaluation.verdicts import (  # noqa: E402
    comparison_p,
    forest_plot,
    p_text,
    technique_table,
    verdict,
    verdict_table,
    word,
)

MARGIN = 0.05


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


def test_a_verdict_sentence_shows_figures_the_decision_interval_wins_losses_test_and_word():
    c = comparison(0.070, 0.010, 0.150, 0.02, wins=21, losses=7)
    text = verdict(c, what="RRF against dense")
    d = c.decision
    assert (d.basis, d.level) == ("test", 0.95) and 0 < d.lo < d.hi  # one comparison: its own 95%
    assert text == ("**RRF against dense, recall@5:** 0.817 → 0.887, "
                    f"+0.070 [+{d.lo:.3f}, +{d.hi:.3f}], 21 vs 7 questions: gain"
                    "<br><small>95% interval · exact McNemar p = 0.02; equivalence margin ±0.05 · "
                    "21 questions up, 7 down, of 194</small>")
    assert text._repr_markdown_() == text
    one = verdict(comparison(0.005, -0.01, 0.02, 1.0, wins=1, losses=0, equivalence_p=0.001))
    assert "1 vs 0 questions: equivalent" in one and "two one-sided tests within margin ±0.05, p = 0.001" in one
    assert "+0.005 [−0.010, +0.020], " in one and "<small>90% interval" in one  # the TOST's own interval
    assert "questions: cannot tell<br>" in verdict(comparison(0.02, -0.04, 0.08, 0.4))


def test_holm_can_overturn_a_gain_and_the_family_is_named():
    table = holm_adjust([comparison(0.07, 0.01, 0.15, 0.02), comparison(0.05, 0.0, 0.1, 0.03),
                         comparison(0.0, -0.1, 0.1, 0.9)], family="lesson 06's retrievers")
    assert [word(c) for c in table] == ["cannot tell"] * 3  # 0.02 * 3 = 0.06
    assert ": cannot tell<br><small>" in verdict(table[0])
    assert "exact McNemar Holm p = 0.06 over 3;" in verdict(table[0])
    # Holm stops at its first step (3 * 0.02 >= 0.05): every comparison is judged at that level
    assert [c.step_alpha for c in table] == pytest.approx([0.05 / 3] * 3)
    assert all(c.decision.lo <= 0 <= c.decision.hi for c in table)  # Holm rejected none
    html = verdict_table(table, holm=False).data
    assert "One primary Holm family: lesson 06&#x27;s retrievers (3 comparisons); equivalence margin ±0.05." in html
    # the two one-sided tests are corrected over the family too: three equivalence p of 0.5, step alpha / 3
    assert "Interval: for equivalence, the two one-sided tests&#x27; at their Holm level (96.7% here; it lies " \
           "inside ±0.05); otherwise the test&#x27;s own at the row&#x27;s Holm level (98.3% here)" in html


def test_verdict_table_rows_and_labels():
    table = [comparison(0.07, 0.03, 0.11, 0.0001), comparison(-0.06, -0.1, -0.02, 0.001, wins=2, losses=14)]
    body = rows(verdict_table(table, what=["RRF against dense", "BM25 against dense"]).data)
    first = holm_adjust(table)[0].decision
    assert first.level == pytest.approx(0.975) and first.lo > 0
    assert body[0].startswith('<tr class="cl-gain"><td>RRF against dense</td><td>recall@5</td>'
                              f"<td>0.817 → 0.887</td><td>+0.070 [+{first.lo:.3f}, +{first.hi:.3f}] (97.5%)</td>"
                              "<td>20 wins / 7 losses</td>"
                              "<td>exact McNemar, Holm p &lt; 0.001 over 2</td><td><b>gain</b></td>")
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
    assert "Interval: for equivalence, the two one-sided tests&#x27; at their Holm level (95% here" in html


def test_forest_plot_draws_dev_and_test_for_every_step():
    steps = [("a", comparison(0.1, 0.05, 0.15, 0.001, wins=20, losses=1),
              comparison(0.08, 0.0, 0.16, 0.04, wins=18, losses=2)),
             ("b", comparison(-0.02, -0.06, 0.02, 0.4, wins=2, losses=6),
              comparison(0.0, -0.04, 0.04, 1.0, wins=3, losses=3))]
    ax = forest_plot(steps)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "a"]
    points = sorted(float(c.lines[0].get_xdata()[0]) for c in ax.containers)
    assert points == pytest.approx(sorted([0.1, 0.08, -0.02, 0.0]))
    assert any(np.all(line.get_xdata() == 0) for line in ax.lines)  # the zero line
    labels = ax.get_legend_handles_labels()[1]
    assert "±0.05: equivalent if the whole interval is inside" in labels  # the shaded band
    assert "clear of 0 = gain or loss" in ax.get_title()
    # each bar is the interval its verdict was decided on: the dev column's Holm-level intervals
    dev = holm_adjust([steps[0][1], steps[1][1]], family="the dev column")
    bars = {float(c.lines[0].get_xdata()[0]): c.lines[2][0].get_segments()[0][:, 0] for c in ax.containers}
    assert bars[0.1] == pytest.approx([dev[0].decision.lo, dev[0].decision.hi])
    assert "with" in forest_plot.__doc__ and "inside the shaded band" in forest_plot.__doc__
    plt.close(ax.figure)


def test_p_text_says_floor_and_holm():
    assert p_text(0.02) == "p = 0.02" and p_text(0.0004) == "p < 0.001" and p_text(0.999) == "p = 1"
    assert p_text(2 / 10_001, at_floor=True) == "p ≤ 0.0002"  # rounded up: the bound stays true
    assert p_text(0.0625, at_floor=True) == "p ≤ 0.063"
    assert p_text(1.0, holm=True) == "Holm p = 1" and p_text(0.0006, holm=True, at_floor=True) == "Holm p ≤ 0.0006"


def test_a_permutation_p_at_its_resampling_floor_prints_as_a_bound():
    rng = np.random.default_rng(0)
    a = rng.random(60)
    c = compare_values(a, a + 0.05 + 0.1 * rng.random(60), metric="mrr", n_resamples=999)  # all better
    # 999 draws put the floor 2/1000 within 4 errors of 0.05/64: drawn until clear (999 * 16)
    assert c.p_floor == pytest.approx(2 / (999 * 16 + 1)) and c.p_at_floor
    assert comparison_p(c) == "p ≤ 0.00013" and "paired permutation p ≤ 0.00013" in verdict(c)
    [alone] = holm_adjust([c])
    assert comparison_p(alone) == "p ≤ 0.00013"  # a family of one: nothing to say about Holm
    family = holm_adjust([c, comparison(0.0, -0.1, 0.1, 0.9)])
    assert comparison_p(family[0]) == "Holm p ≤ 0.00026 over 2" and comparison_p(family[1]) == "Holm p = 0.9 over 2"
    exact = compare_values(np.zeros(5), np.ones(5) * 0.5, metric="mrr")  # 32 sign patterns, all counted
    assert exact.p_floor == 0 and not exact.p_at_floor and comparison_p(exact) == "p = 0.062"


def test_a_family_is_primary_or_secondary_and_says_so():
    rng = np.random.default_rng(1)
    a, b = rng.random(80) < 0.7, rng.random(80) < 0.7
    recall20 = compare_values(a, b, metric="recall@20")
    html = verdict_table([recall20, compare_values(a, b, metric="recall@5")]).data
    assert "One secondary Holm family" in html
    assert "One primary Holm family" in verdict_table([compare_values(a, b, metric="recall@5")] * 2).data
    assert "One secondary Holm family" in verdict_table([compare_values(a, b, metric="recall@5")] * 2,
                                                         family_kind="secondary").data
    with pytest.raises(ValueError, match="primary family compares only recall@5, mrr"):
        holm_adjust([recall20], family_kind="primary")
    with pytest.raises(ValueError, match="family_kind"):
        holm_adjust([recall20], family_kind="tertiary")


def _synthetic(rng: np.random.Generator, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two paired runs with a random true effect, share of changed questions and size."""
    n = int(rng.integers(40, 400))
    if binary:
        discordance = rng.choice([0.02, 0.05, 0.1, 0.2, 0.4])
        effect = float(np.clip(rng.choice([-0.1, -0.03, 0, 0, 0.03, 0.1]), -discordance, discordance))
        cells = [0.6, (discordance + effect) / 2, (discordance - effect) / 2]
        kind = rng.choice(4, size=n, p=cells + [1 - sum(cells)])
        return np.isin(kind, (0, 2)).astype(float), np.isin(kind, (0, 1)).astype(float)
    a = rng.choice([0, 1, 0.5, 1 / 3, 0.25], size=n)
    share, shift = rng.choice([0.03, 0.1, 0.3, 0.6]), rng.choice([-0.1, -0.02, 0, 0, 0.02, 0.1])
    changed = rng.random(n) < share
    return a, np.where(changed, np.clip(a + rng.normal(shift / share * 0.3, 0.3, n), 0, 1), a)


def agrees(c: Comparison) -> bool:
    """The reading rule: the printed interval says what the word says."""
    d, inside = c.decision, -MARGIN < c.decision.lo and c.decision.hi < MARGIN
    return {"gain": d.lo > 0, "loss": d.hi < 0, "equivalent": inside,
            "cannot tell": d.lo <= 0 <= d.hi and not inside}[word(c)]


@pytest.mark.parametrize("metric", ["recall@5", "mrr"])
def test_every_word_agrees_with_the_interval_printed_beside_it(metric):
    """For many random families of synthetic paired runs: gain => the decision interval lies above
    0, loss => below, equivalent => inside +-margin, cannot tell => it contains 0 and reaches past
    the margin. So a reader who applies the reading rule to the printed interval reads the word."""
    rng, seen = np.random.default_rng(7 if metric == "mrr" else 8), set()
    for _ in range(30):
        family = [compare_values(*_synthetic(rng, metric != "mrr"), metric=metric, n_resamples=499)
                  for _ in range(int(rng.integers(1, 6)))]
        for c in holm_adjust(family) + family:  # in a Holm family, and each judged alone
            assert agrees(c), (word(c), c.decision, c.p, c.delta)
            if c.decision.basis == "test":
                alpha = c.step_alpha if c.step_alpha is not None else 0.05
                assert c.decision.level == pytest.approx(1 - alpha)
            seen.add(word(c))
    assert seen == {"gain", "loss", "equivalent", "cannot tell"}  # every word was exercised


def test_holm_columns_corrects_each_column_once_and_the_table_keeps_it():
    from course_lib.evaluation.verdicts import holm_columns
    rng = np.random.default_rng(3)
    effects = []
    for name in ("a", "b", "c"):
        pair = []
        for _ in range(2):
            a = rng.integers(0, 2, 120)
            b = np.where(rng.random(120) < 0.2, 1 - a, a)
            pair.append(compare_values(a, b, metric="recall@5"))
        effects.append((name, *pair))
    adjusted = holm_columns(effects, family_kind="secondary")
    assert [name for name, _, _ in adjusted] == ["a", "b", "c"]
    assert all(d.family == 3 and t.family == 3 and t.family_kind == "secondary" for _, d, t in adjusted)
    # split by row, the table keeps the column's correction instead of re-correcting over one row
    assert "Holm" in technique_table(adjusted[:1]).data and adjusted[0][2].family == 3


def paired_runs(both: int, wins: int, losses: int, neither: int) -> tuple[np.ndarray, np.ndarray]:
    """Two yes/no runs with this paired table: both answer, only B, only A, neither."""
    a = np.r_[np.ones(both), np.zeros(wins), np.ones(losses), np.zeros(neither)]
    b = np.r_[np.ones(both), np.ones(wins), np.zeros(losses), np.zeros(neither)]
    return a, b


def test_equivalence_is_corrected_over_the_family_like_a_gain():
    """Two one-sided tests that show equivalence alone (p = 0.0185) do not over a family of three:
    Holm judges the smallest at 0.05 / 3. The printed interval is theirs at their Holm level."""
    alone = compare_values(*paired_runs(140, 8, 9, 43), metric="recall@5")
    assert word(alone) == "equivalent" and alone.decision.level == pytest.approx(0.9)
    assert alone.equivalence.p_value == pytest.approx(0.0185, abs=5e-4)
    family = holm_adjust([alone, alone, alone])
    assert [c.equivalence_step_alpha for c in family] == pytest.approx([0.05 / 3] * 3)
    assert family[0].equivalence_p_holm == pytest.approx(3 * alone.equivalence.p_value)
    assert [word(c) for c in family] == ["cannot tell"] * 3
    unchanged = compare_values(*paired_runs(140, 0, 0, 60), metric="recall@5")
    strong = holm_adjust([alone, unchanged])  # the unchanged pair first (p near 0), then alone at 0.05
    assert [word(c) for c in strong] == ["equivalent"] * 2
    assert strong[1].decision.level == pytest.approx(1 - 2 * 0.05 / 2)
    assert strong[0].decision.level == pytest.approx(0.9)  # Holm's second step: alpha / 1
    assert -MARGIN < strong[1].decision.lo <= 0 <= strong[1].decision.hi < MARGIN
    assert "two one-sided tests within margin ±0.05, Holm p" in verdict(strong[1])
    assert " over 2 · " in verdict(strong[1])
    rng = np.random.default_rng(4)
    mrr = compare_values(rng.random(200), rng.random(200), metric="mrr")
    [one] = holm_adjust([mrr])
    assert one.equivalence_interval == pytest.approx((mrr.equivalence.lo, mrr.equivalence.hi))


def test_a_widened_cannot_tell_prints_the_level_it_has():
    """A "cannot tell" whose test interval fits inside the margin takes in the equivalence
    interval too; the union covers at least as often as either, and the row prints that level,
    the higher of the two, as the caption says in words."""
    gain = compare_values(*paired_runs(100, 40, 2, 58), metric="recall@5")
    borderline = compare_values(*paired_runs(140, 8, 9, 43), metric="recall@5")
    family = holm_adjust([gain, gain, borderline])
    c = family[2]
    assert c.step_alpha == pytest.approx(0.05) and c.equivalence_step_alpha == pytest.approx(0.05 / 3)
    assert word(c) == "cannot tell" and c.decision.widened
    assert c.decision.level == pytest.approx(1 - 2 * 0.05 / 3)  # 96.7%, above the test's 95%
    test_lo, test_hi = c._test_interval(0.05)
    eq_lo, eq_hi = c.equivalence_interval
    assert (c.decision.lo, c.decision.hi) == (min(test_lo, eq_lo), max(test_hi, eq_hi))
    assert c.decision.lo <= 0 <= c.decision.hi and c.decision.hi - c.decision.lo > 0
    assert not (-MARGIN < c.decision.lo and c.decision.hi < MARGIN)
    table = verdict_table(family, holm=False).data
    assert "(96.7%)" in table and "the row prints the higher of their levels" in table
