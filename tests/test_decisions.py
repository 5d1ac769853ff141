"""The decision line and the keep rule: rendered from verdicts, each branch on hand-made comparisons."""
from __future__ import annotations

import re

import pytest

from course_lib.evaluation.compare import Comparison, holm_adjust
from course_lib.evaluation.decisions import (
    KEEP_RULE,
    SITE_STEPS,
    Recorded,
    decide,
    decision_line,
    footnote,
    kept_rows,
    main_verdict_table,
    site_steps,
    step_figures,
)
from course_lib.evaluation.stats import Equivalence
from course_lib.evaluation.verdicts import interval_text, word


def comparison(delta: float, lo: float, hi: float, p: float, *, wins: int = 20, losses: int = 7,
               equivalence_p: float = 0.5, metric: str = "recall@5") -> Comparison:
    shown = Equivalence(delta, lo, hi, equivalence_p, 0.05, 194)
    return Comparison("without", "with", metric, 194, 0.817, 0.817 + delta, delta, lo, hi, p, wins, losses,
                      "exact McNemar", shown)


GAIN = comparison(0.07, 0.01, 0.15, 0.02, wins=21, losses=7)
LOSS = comparison(-0.07, -0.15, -0.01, 0.02, wins=7, losses=21)
EQUIVALENT = comparison(0.01, -0.02, 0.03, 0.6, wins=3, losses=1, equivalence_p=0.01)
CANNOT_TELL = comparison(0.01, -0.08, 0.10, 0.6, wins=9, losses=7, equivalence_p=0.3)
STILL = comparison(0.0, -0.08, 0.08, 1.0, wins=0, losses=0, equivalence_p=0.3)


def test_the_hand_made_comparisons_carry_the_four_words():
    assert [word(c) for c in (GAIN, LOSS, EQUIVALENT, CANNOT_TELL, STILL)] == [
        "gain", "loss", "equivalent", "cannot tell", "cannot tell"]


def test_a_gain_is_kept_and_its_figures_are_named():
    d = decide("re-ranking", {"test MRR": GAIN, "test recall@5": CANNOT_TELL})
    assert d.kept and d.why == f"it gains on test MRR {interval_text(GAIN)}, 21 better / 7 worse"
    assert interval_text(GAIN).startswith("+0.070 [+0.0") and interval_text(GAIN).endswith("(95%)")


def test_a_loss_drops_it_even_beside_a_gain_and_what_it_buys():
    d = decide("four chunks", {"recall@5": GAIN, "evidence in the prompt": LOSS}, buys="fewer tokens read")
    assert not d.kept and d.why.startswith("it loses on evidence in the prompt −0.070 [")
    assert "21 worse" in d.why


def test_equivalent_and_buying_something_is_kept_saying_both():
    d = decide("token limits", {"test recall@5": EQUIVALENT}, buys="no truncation")
    assert d.kept
    assert d.why == f"it buys no truncation, and it is equivalent on test recall@5 {interval_text(EQUIVALENT)}, " \
                    "3 better / 1 worse"
    assert interval_text(EQUIVALENT).endswith("(90%)")


def test_cannot_tell_and_buying_something_is_kept_as_no_loss_shown():
    d = decide("context line", {"test recall@5": CANNOT_TELL}, buys="a page and section named in every chunk")
    assert d.kept and d.why.endswith("; no loss was shown on test recall@5 (cannot tell)")
    still = decide("split over-long blocks", STILL, buys="a findable tail")
    assert still.kept and still.why == "it buys a findable tail; on recall@5 it moved no question"


@pytest.mark.parametrize("evidence", [EQUIVALENT, CANNOT_TELL, STILL])
def test_buying_nothing_without_a_gain_is_dropped(evidence):
    d = decide("weighted fusion", evidence)
    assert not d.kept and d.why == "it gains on nothing here and buys nothing named"


def test_a_recorded_verdict_is_weighed_like_a_comparison():
    d = decide("hybrid", {"test recall@5": CANNOT_TELL,
                          "pandas recall@5": Recorded("+0.130 [+0.008, +0.248] (99.6%)", "gain")})
    assert d.kept and d.why == "it gains on pandas recall@5 +0.130 [+0.008, +0.248] (99.6%)"
    assert not decide("x", {"pandas": Recorded("−0.1 [−0.2, −0.01]", "loss")}, buys="y").kept


def test_no_evidence_is_one_clear_error():
    with pytest.raises(ValueError, match="no evidence for 'x'"):
        decide("x", {})


def test_the_decision_line_follows_the_rule():
    line = decision_line("re-ranking", {"test MRR": GAIN}, when="when answers are found but ranked low")
    assert line == ("**Decision: use re-ranking** when answers are found but ranked low: it gains on test MRR "
                    f"{interval_text(GAIN)}, 21 better / 7 worse.")
    assert decision_line("four chunks", LOSS).startswith("**Decision: leave out four chunks**: it loses on")
    assert decision_line("x", EQUIVALENT)._repr_markdown_().startswith("**Decision: leave out x**")


def test_the_kept_column_is_the_rules_output_and_the_rule_is_declared():
    rows = kept_rows([decide("a", GAIN), decide("b", LOSS, buys="z")])
    assert [(name, kept) for name, kept, _ in rows] == [("a", "yes"), ("b", "no")]
    assert "kept" in KEEP_RULE and "dropped" in KEEP_RULE and "buys" in KEEP_RULE


def test_the_main_verdict_table_is_three_figure_columns_and_one_footnote():
    table = main_verdict_table([GAIN, CANNOT_TELL], what=["with against without", "other"], family="the step")
    body = re.sub(r' style="[^"]*"', "", table.data)
    assert body.count("<th>") == 4  # the row's name, then the three columns
    first = body.split("<tbody>")[1].split("</tr>")[0]
    cells = re.findall(r"<td>(.*?)</td>", first)
    assert cells[0] == "with against without" and cells[2] == "21 / 7"
    assert cells[3] in ("<b>gain</b>", "<b>cannot tell</b>")  # Holm over two may overturn it
    assert body.count("<p>") == 1 and "exact McNemar (recall@5)" in body and "Holm family: the step" in body
    with pytest.raises(ValueError, match="1 labels for 2"):
        main_verdict_table([GAIN, LOSS], what=["one"])


def test_the_footnote_names_test_level_and_family_once():
    line = footnote([GAIN])
    # One comparison alone: equivalence's Holm level is its own 90% (1 - 2 x 0.05), said in the caption.
    assert line.startswith("Test: exact McNemar (recall@5). Interval: for equivalence, the two one-sided "
                           "tests' at their Holm level (90% here")
    assert "not corrected (one comparison)" in line and "\n" not in line
    mixed = footnote([GAIN, comparison(0.01, -0.08, 0.10, 0.6, metric="recall@20"), LOSS])
    assert mixed.startswith("Test: exact McNemar (recall@5, recall@20). ")  # each test once, its metrics listed


def test_a_table_of_two_families_names_each_once():
    first = holm_adjust([GAIN, CANNOT_TELL], family="all test questions")
    second = holm_adjust([EQUIVALENT, STILL], family="the never-read ones")
    line = footnote(first + second)
    assert line.count("Holm family: all test questions (2 comparisons)") == 1
    assert line.count("Holm family: the never-read ones (2 comparisons)") == 1 and "\n" not in line


# --- lesson 10's steps, computed where they are read ------------------------------------------

def _site_runs() -> dict:
    """One run per pipeline the steps use: 'reranked' finds every answer first, the rest at rank 8."""
    from tests.test_evaluate import make_run

    names = {name for a, b, _ in SITE_STEPS for name in (a, b)}
    return {name: make_run(name, [1] * 30 if name == "reranked" else [8] * 30) for name in names}


def test_site_steps_is_one_holm_family_keyed_by_label_and_metric():
    steps = site_steps(_site_runs(), family="the site's steps")
    assert list(steps)[:2] == ["parsing instead of regex stripping (03) (recall@5)",
                               "chunks that follow structure (04) (recall@5)"]
    assert len(steps) == 2 * len(SITE_STEPS) and list(steps)[-1] == "the whole course against lesson 01 (mrr)"
    assert {c.family for c in steps.values()} == {len(steps)}
    assert {c.family_name for c in steps.values()} == {"the site's steps"}
    whole = steps["the whole course against lesson 01 (recall@5)"]
    assert (whole.name_a, whole.name_b, whole.wins, whole.losses, word(whole)) == ("naive", "reranked", 30, 0, "gain")
    unchanged = steps["the context line (04) (recall@5)"]
    assert (unchanged.delta, unchanged.wins, unchanged.losses) == (0.0, 0, 0)


def test_site_steps_names_the_pipelines_it_lacks():
    runs = _site_runs()
    del runs["hybrid"], runs["clean"]
    with pytest.raises(ValueError, match="missing: clean, hybrid"):
        site_steps(runs, family="x")


def test_step_figures_is_what_the_lessons_record():
    c = site_steps(_site_runs(), family="x")["MaxSim re-ranking (07) (mrr)"]
    figures = step_figures(c)
    assert figures == {"from": "hybrid", "to": "reranked", "delta": c.delta, "wins": 30, "losses": 0,
                       "p_holm": c.p, "verdict": "gain", "interval_text": interval_text(c)}
    assert c.delta == pytest.approx(1 - 1 / 8)
