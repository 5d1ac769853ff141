"""Tests of judging and metrics on hand-made chunks; every expected number is worked by hand."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import scipy.stats

from course_lib.core.retrieve import rank_hits
from course_lib.core.tokens import WordCounter
from course_lib.evaluation.budget import budget_context, budget_values, recall_within_budget
from course_lib.evaluation.compare import holm_adjust, paired_comparison
from course_lib.evaluation.golden import Place, Question, normalize
from course_lib.evaluation.judging import (
    EVIDENCE,
    JUDGES,
    QUOTE,
    SECTION,
    answer_units,
    is_relevant,
    is_relevant_by_quote,
    is_relevant_by_section,
    judge_rule,
    unreachable,
)
from course_lib.evaluation.metrics import (
    bootstrap_ci,
    by_kind,
    evaluate_rankings,
    evaluate_retriever,
    rejudge,
    score_gap,
    sensitivity,
    summary,
)
from course_lib.evaluation.results import RunResult
from course_lib.records import Chunk, Hit

DT = "library/datetime.html"

Q_TABLE = Question("qt", "Which directive is the day?", DT, "format-codes",
                   "Day of the month as a zero-padded decimal number.", "table", "dev")
Q_CODE = Question("qc", "How to join paths?", DT, "examples", 'os.path.join("a", "b")', "code")
Q_FLAT = Question("qf", "Install on Windows?", "flat.html", "install",
                  "Double click the setup file", "paraphrase")
Q_NONE = Question("qn", "Capital of France?", None, None, None, "unanswerable")

CHUNKS = [
    Chunk("c0", DT, "The datetime module supplies classes.", section_id="module-datetime",
          heading_path=("datetime",)),
    Chunk("c1", DT, "%d  Day of the month\nas a   zero-padded decimal number.",
          section_id="format-codes"),
    Chunk("c2", DT, "os . path . join(&quot;a&quot;, &quot;b&quot;)"),   # naive: no section id
    Chunk("c3", "other.html", "Day of the month as a zero-padded decimal number.",
          section_id="format-codes"),                                   # right words, wrong page
    Chunk("c4", DT, "%a Weekday as locale's abbreviated name.", section_id="format-codes"),
    Chunk("c5", "flat.html", "Run the installer from a terminal.", section_id="install"),
]


# --- judging -----------------------------------------------------------------------------------

def test_evidence_matches_through_whitespace_and_entities():
    assert is_relevant(CHUNKS[1], Q_TABLE)
    assert is_relevant(CHUNKS[2], Q_CODE)


def test_gold_section_without_the_evidence_is_not_relevant_by_default():
    # c4 sits in the gold section but does not hold the quote: the judge says no ...
    assert normalize(Q_TABLE.evidence) not in normalize(CHUNKS[4].body)
    assert not is_relevant(CHUNKS[4], Q_TABLE)
    assert not is_relevant(CHUNKS[5], Q_FLAT)
    # ... only the separately named sensitivity rule gives section credit.
    assert is_relevant_by_section(CHUNKS[4], Q_TABLE)
    assert is_relevant_by_section(CHUNKS[5], Q_FLAT)


def test_the_context_line_is_not_evidence():
    in_context = Chunk("cx", DT, "unrelated body", context=Q_TABLE.evidence, section_id="format-codes")
    assert normalize(Q_TABLE.evidence) in normalize(in_context.text)
    assert not is_relevant(in_context, Q_TABLE)


def test_section_rule_still_needs_the_gold_page_and_an_answerable_question():
    assert not is_relevant_by_section(CHUNKS[3], Q_TABLE)
    assert not any(is_relevant_by_section(chunk, Q_NONE) for chunk in CHUNKS)
    assert is_relevant_by_section(CHUNKS[1], Q_TABLE)  # evidence alone is enough for it too


def test_wrong_doc_is_never_relevant_even_with_evidence_and_section():
    assert not is_relevant(CHUNKS[3], Q_TABLE)


def test_wrong_section_without_evidence_is_not_relevant():
    assert not is_relevant(CHUNKS[0], Q_TABLE)
    assert not is_relevant(CHUNKS[1], Q_CODE)


def test_an_also_place_is_credited_by_the_same_evidence_rule():
    # c3 holds the gold words on another page: a miss, until pooling records that page as a place
    # that answers, with its own quote; then exactly the chunks holding that quote there count.
    pooled = Question("qt", Q_TABLE.question, DT, "format-codes", Q_TABLE.evidence, "table", "dev",
                      also=(Place("other.html", "zero-padded decimal number"),))
    assert not is_relevant(CHUNKS[3], Q_TABLE) and is_relevant(CHUNKS[3], pooled)
    assert is_relevant(CHUNKS[1], pooled)  # the gold place still counts
    assert not is_relevant(Chunk("c9", "other.html", "a different sentence"), pooled)
    assert not is_relevant(Chunk("c8", "third.html", "zero-padded decimal number"), pooled)
    assert unreachable([pooled], [CHUNKS[3]]) == []


def test_unanswerable_is_never_relevant():
    assert not any(is_relevant(chunk, Q_NONE) for chunk in CHUNKS)


def test_chunk_without_section_does_not_match_question_without_section():
    q = Question("x", "q?", DT, None, "words that are nowhere here", "exact")
    assert not is_relevant(CHUNKS[2], q)


# --- ranking and ties --------------------------------------------------------------------------

def test_rank_hits_sorts_by_score_then_index():
    hits = [Hit(5, 0.5), Hit(2, 0.5), Hit(1, 0.9), Hit(0, 0.1)]
    assert [h.index for h in rank_hits(hits)] == [1, 2, 5, 0]
    assert [h.index for h in rank_hits(list(reversed(hits)))] == [1, 2, 5, 0]


def test_ties_are_broken_by_chunk_index_not_input_order():
    # c1 (relevant) and c0 (not) tie; c0 has the lower index, so it ranks first.
    run = evaluate_rankings([Q_TABLE], [[Hit(1, 0.7), Hit(0, 0.7)]], CHUNKS, name="tie")
    assert run.results[0].ranked_ids == ("c0", "c1")
    assert run.results[0].first_hit_rank == 2


# --- metrics -----------------------------------------------------------------------------------

@pytest.fixture
def run() -> RunResult:
    """qt: hit at rank 1; qc: hit at rank 3; qf: no hit; qn: unanswerable."""
    rankings = [
        [Hit(1, 0.9), Hit(0, 0.5)],
        [Hit(0, 0.8), Hit(3, 0.6), Hit(2, 0.4)],
        [Hit(0, 0.3)],
        [Hit(4, 0.2), Hit(1, 0.1)],
    ]
    return evaluate_rankings([Q_TABLE, Q_CODE, Q_FLAT, Q_NONE], rankings, CHUNKS, name="base")


def test_question_results(run):
    first = run.results[0]
    assert first.ranked_ids == ("c1", "c0") and first.scores == (0.9, 0.5)
    assert first.top_score == 0.9 and first.top_chunk is CHUNKS[1]
    assert [r.first_hit_rank for r in run.results] == [1, 3, None, None]
    assert run.first_hit_ranks == [1, 3, None]


def test_recall_and_mrr_by_hand(run):
    assert run.recall_at(1) == pytest.approx(1 / 3)
    assert run.recall_at(2) == pytest.approx(1 / 3)
    assert run.recall_at(3) == pytest.approx(2 / 3)
    assert run.recall_at(20) == pytest.approx(2 / 3)
    assert run.mrr == pytest.approx((1 + 1 / 3 + 0) / 3)
    np.testing.assert_allclose(run.hits_at(5), [1, 1, 0])
    np.testing.assert_allclose(run.reciprocal_ranks(), [1, 1 / 3, 0])


def test_recall_curve(run):
    curve = run.recall_curve()
    assert curve.shape == (20,)
    np.testing.assert_allclose(curve[:4], [1 / 3, 1 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(curve[19], 2 / 3)


def test_mrr_is_cut_at_20():
    hits = [Hit(i, 1.0 - i / 100) for i in range(25)]
    chunks = [Chunk(f"n{i}", "x.html", "nothing") for i in range(25)]
    chunks[21] = Chunk("n21", DT, Q_TABLE.evidence)  # relevant only at rank 22
    deep = evaluate_rankings([Q_TABLE], [hits], chunks, name="deep", k=25)
    assert deep.results[0].first_hit_rank == 22
    assert deep.mrr == 0.0
    assert deep.recall_at(25) == 1.0


def test_cut_at_k_hides_deeper_hits_and_refuses_deeper_metrics():
    run = evaluate_rankings([Q_CODE], [[Hit(0, 0.8), Hit(3, 0.6), Hit(2, 0.4)]], CHUNKS,
                            name="k2", k=2)
    assert run.results[0].ranked_ids == ("c0", "c3")
    assert run.results[0].first_hit_rank is None
    assert run.recall_at(2) == 0.0
    with pytest.raises(ValueError, match="k=5 is outside 1..2"):
        run.recall_at(5)
    with pytest.raises(ValueError):
        _ = run.mrr


def test_empty_rankings_count_as_misses():
    run = evaluate_rankings([Q_TABLE, Q_NONE], [[], []], CHUNKS, name="empty")
    assert run.results[0].first_hit_rank is None
    assert run.results[0].top_score is None and run.results[0].top_chunk is None
    assert run.recall_at(5) == 0.0 and run.mrr == 0.0
    assert score_gap(run) is None


def test_all_unanswerable_gives_undefined_metrics():
    run = evaluate_rankings([Q_NONE], [[Hit(0, 0.4)]], CHUNKS, name="none")
    assert math.isnan(run.recall_at(5)) and math.isnan(run.mrr)
    s = summary(run, budget=None)
    assert s["recall@5"] is None and s["mrr_ci"] == [None, None]
    assert s["n_answerable"] == 0 and s["n_unanswerable"] == 1 and s["score_gap"] is None
    json.dumps(s, allow_nan=False)


def test_ranking_count_and_index_are_checked():
    with pytest.raises(ValueError, match="1 rankings for 2 questions"):
        evaluate_rankings([Q_TABLE, Q_CODE], [[]], CHUNKS, name="x")
    with pytest.raises(IndexError):
        evaluate_rankings([Q_TABLE], [[Hit(99, 1.0)]], CHUNKS, name="x")
    with pytest.raises(IndexError):
        evaluate_rankings([Q_TABLE], [[Hit(-1, 1.0)]], CHUNKS, name="x")


def test_score_gap(run):
    # answerable tops 0.9, 0.8, 0.3 -> mean 2/3; unanswerable top 0.2
    assert score_gap(run) == pytest.approx(2 / 3 - 0.2)


def test_summary(run):
    s = summary(run, budget=None)
    assert s["name"] == "base"
    assert s["recall@5"] == pytest.approx(2 / 3) and s["recall@20"] == pytest.approx(2 / 3)
    assert s["mrr"] == pytest.approx(4 / 9)
    assert s["recall@5_ci"][0] <= s["recall@5"] <= s["recall@5_ci"][1]
    assert 0.0 <= s["mrr_ci"][0] <= s["mrr"] <= s["mrr_ci"][1] <= 1.0
    assert (s["n_answerable"], s["n_unanswerable"]) == (3, 1)
    assert s["score_gap"] == pytest.approx(2 / 3 - 0.2)
    assert json.loads(json.dumps(s, allow_nan=False)) == s


def test_by_kind(run):
    kinds = by_kind(run)
    assert list(kinds) == ["paraphrase", "table", "code", "unanswerable"]
    # Wilson 95% interval of 1/1: [0.2065, 1]; of 0/1: [0, 0.7935].
    table = kinds["table"]
    assert {k: table[k] for k in ("n", "hit@5", "hit@20", "miss@20", "recall@5", "recall@20")} == {
        "n": 1, "hit@5": 1, "hit@20": 1, "miss@20": 0, "recall@5": 1.0, "recall@20": 1.0}
    assert table["recall@5_ci"] == pytest.approx([0.2065, 1.0], abs=1e-4)
    assert kinds["paraphrase"]["miss@20"] == 1 and kinds["paraphrase"]["recall@5"] == 0.0
    assert kinds["paraphrase"]["recall@20_ci"] == pytest.approx([0.0, 0.7935], abs=1e-4)
    assert kinds["unanswerable"] == {"n": 1, "hit@5": 0, "hit@20": 0, "miss@20": 0,
                                     "recall@5": None, "recall@5_ci": [None, None],
                                     "recall@20": None, "recall@20_ci": [None, None]}


class FakeRetriever:
    """Returns fixed hits per query and records how it was called."""

    def __init__(self, answers: dict[str, list[Hit]]):
        self.chunks, self.answers, self.calls = CHUNKS, answers, []

    def search(self, query: str, *, k: int) -> list[Hit]:
        self.calls.append((query, k))
        return self.answers[query][:k]


def test_evaluate_retriever():
    retriever = FakeRetriever({Q_TABLE.question: [Hit(0, 0.9), Hit(1, 0.8)],
                               Q_NONE.question: [Hit(2, 0.5)]})
    run = evaluate_retriever(retriever, [Q_TABLE, Q_NONE], name="fake", k=7, progress=False)
    assert retriever.calls == [(Q_TABLE.question, 7), (Q_NONE.question, 7)]
    assert run.name == "fake" and run.k == 7
    assert [r.first_hit_rank for r in run.results] == [2, None]
    assert run.recall_at(1) == 0.0 and run.recall_at(2) == 1.0


# --- bootstrap ---------------------------------------------------------------------------------

def test_bootstrap_ci_contains_mean_and_is_deterministic():
    values = [1.0] * 50 + [0.0] * 50
    mean, lo, hi = bootstrap_ci(values, seed=3)
    assert mean == 0.5
    assert lo < 0.5 < hi
    # The normal approximation gives 0.5 +- 1.96 * 0.05 = [0.402, 0.598].
    assert lo == pytest.approx(0.40, abs=0.03) and hi == pytest.approx(0.60, abs=0.03)
    assert bootstrap_ci(values, seed=3) == (mean, lo, hi)
    assert bootstrap_ci(values, seed=4) != (mean, lo, hi)


def test_bootstrap_ci_confidence_widens_interval():
    values = np.arange(40) % 3 == 0
    _, lo90, hi90 = bootstrap_ci(values, confidence=0.90)
    _, lo99, hi99 = bootstrap_ci(values, confidence=0.99)
    assert lo99 < lo90 and hi90 < hi99


def test_bootstrap_ci_constant_and_empty():
    assert bootstrap_ci([0.25, 0.25, 0.25]) == (0.25, 0.25, 0.25)
    assert all(math.isnan(x) for x in bootstrap_ci([]))


# --- paired comparison -------------------------------------------------------------------------

def make_run(name: str, ranks: list[int | None], *, order=None) -> RunResult:
    """A run over questions p0..pN whose relevant chunk sits at the given rank (None = absent)."""
    chunks = [Chunk("rel", DT, "four words of evidence", section_id="s")] + [
        Chunk(f"x{i}", "x.html", "nothing") for i in range(20)]
    questions = [Question(f"p{i}", f"q{i}", DT, "s", "four words of evidence", "exact")
                 for i in range(len(ranks))]
    rankings = []
    for rank in ranks:
        filler = list(range(1, 21))
        if rank is not None:
            filler.insert(rank - 1, 0)
        rankings.append([Hit(index, 1.0 - pos / 100) for pos, index in enumerate(filler[:20])])
    order = order or range(len(ranks))
    return evaluate_rankings([questions[i] for i in order], [rankings[i] for i in order],
                             chunks, name=name)


def test_make_run_places_hits_where_asked():
    assert make_run("r", [1, 4, None]).first_hit_ranks == [1, 4, None]


def test_paired_comparison_of_identical_runs():
    a = make_run("a", [1, 3, None, 7, 2])
    c = paired_comparison(a, make_run("b", [1, 3, None, 7, 2]))
    assert (c.delta, c.wins, c.losses, c.p_value) == (0.0, 0, 0, 1.0)
    assert c.lo < 0 < c.hi  # five questions leave room for a difference either way
    assert (c.name_a, c.name_b, c.metric, c.n, c.test) == ("a", "b", "recall@5", 5, "exact McNemar")
    assert c.value_a == c.value_b == pytest.approx(0.6)
    assert not c.significant and not c.equivalent  # five questions can show neither


def test_paired_comparison_of_clearly_better_run():
    a, b = make_run("a", [None] * 30), make_run("b", [1] * 30)
    c = paired_comparison(a, b)
    assert (c.delta, c.wins, c.losses) == (1.0, 30, 0)
    assert c.p_value == pytest.approx(2 * 0.5 ** 30) and c.significant and c.lo > 0.8
    reverse = paired_comparison(b, a)
    assert (reverse.delta, reverse.wins, reverse.losses) == (-1.0, 0, 30) and reverse.hi < -0.8


def test_paired_comparison_four_losses_and_no_win_is_not_significant():
    # Lesson 08's "4 chunks instead of 8" case: 4 losses, 0 wins. The exact test says p = 0.125.
    c = paired_comparison(make_run("eight", [1] * 4 + [2] * 40), make_run("four", [None] * 4 + [2] * 40))
    assert (c.wins, c.losses) == (0, 4)
    assert c.p_value == pytest.approx(0.125) and not c.significant


def test_paired_comparison_one_discordant_pair_is_no_evidence():
    c = paired_comparison(make_run("a", [None, 1, 1]), make_run("b", [1, 1, 1]))
    assert c.delta == pytest.approx(1 / 3) and (c.wins, c.losses) == (1, 0)
    assert c.lo < 0 < c.hi and c.p_value == 1.0 and not c.significant


def test_paired_comparison_uses_mcnemar_for_recall_and_permutation_for_mrr():
    a = make_run("a", [None] * 12 + [1] * 3 + [2] * 25)
    b = make_run("b", [1] * 12 + [None] * 3 + [2] * 25)
    recall = paired_comparison(a, b)
    assert (recall.wins, recall.losses, recall.test) == (12, 3, "exact McNemar")
    assert recall.p_value == pytest.approx(scipy.stats.binomtest(12, 15).pvalue)
    assert recall.delta == pytest.approx(9 / 40) and recall.lo > 0 and recall.significant
    mrr = paired_comparison(a, b, metric="mrr")
    assert mrr.test == "paired permutation" and (mrr.wins, mrr.losses) == (12, 3)
    assert mrr.delta == pytest.approx(9 / 40) and mrr.lo < mrr.delta < mrr.hi and mrr.significant


def test_paired_comparison_refuses_runs_judged_by_different_rules():
    a, b = make_run("a", [1, None, 3]), make_run("b", [1, 2, 1])
    with pytest.raises(ValueError, match="different rules"):
        paired_comparison(a, rejudge(b, "section"))
    assert paired_comparison(rejudge(a, "section"), rejudge(b, "section")).judge == "section"


def test_paired_comparison_matches_by_id_and_supports_metrics():
    ranks_a, ranks_b = [1, None, 6, 2], [2, 1, 1, None]
    a = make_run("a", ranks_a)
    b = make_run("b", ranks_b, order=[3, 1, 0, 2])   # same questions, another order
    assert paired_comparison(a, b, metric="recall@1").delta == pytest.approx((2 - 1) / 4)
    assert paired_comparison(a, b, metric="RECALL@5").delta == pytest.approx((3 - 2) / 4)
    mrr_a, mrr_b = (1 + 0 + 1 / 6 + 1 / 2) / 4, (1 / 2 + 1 + 1 + 0) / 4
    assert paired_comparison(a, b, metric="mrr").delta == pytest.approx(mrr_b - mrr_a)


def test_paired_comparison_is_deterministic_under_seed():
    a, b = make_run("a", [1, None, 3, None, 9, 1]), make_run("b", [1, 2, 1, 4, None, 1])
    assert paired_comparison(a, b, seed=5) == paired_comparison(a, b, seed=5)


def test_paired_comparison_rejects_different_questions_and_metrics():
    with pytest.raises(ValueError, match="cover different questions"):
        paired_comparison(make_run("a", [1, 2]), make_run("b", [1, 2, 3]))
    with pytest.raises(ValueError, match="unknown metric"):
        paired_comparison(make_run("a", [1]), make_run("b", [1]), metric="ndcg")


# --- judges, sensitivity, reachability ---------------------------------------------------------

def test_rejudge_keeps_rankings_and_changes_only_the_rule(run):
    # qf's ranking is [c0]; under section credit still a miss. qn's [c4, c1] stays unanswerable.
    by_section = rejudge(run, "section")
    assert by_section.judge == "section" and run.judge == "evidence"
    assert [r.ranked_ids for r in by_section.results] == [r.ranked_ids for r in run.results]
    table_by_section = evaluate_rankings([Q_TABLE], [[Hit(4, 0.9), Hit(1, 0.5)]], CHUNKS, name="s")
    assert table_by_section.results[0].first_hit_rank == 2
    assert rejudge(table_by_section, "section").results[0].first_hit_rank == 1
    with pytest.raises(ValueError, match="unknown judge"):
        rejudge(run, "vibes")


def test_sensitivity_reports_both_judges_side_by_side():
    # Q_TABLE: c4 (section only) then c1 (evidence); Q_FLAT: c5 (section only).
    run = evaluate_rankings([Q_TABLE, Q_FLAT], [[Hit(4, 0.9), Hit(1, 0.5)], [Hit(5, 0.9)]],
                            CHUNKS, name="structured")
    [row] = sensitivity([run])
    assert row["pipeline"] == "structured" and row["n"] == 2
    assert row["evidence"] == pytest.approx({"recall@5": 0.5, "recall@20": 0.5, "mrr": 0.25})
    assert row["section"] == pytest.approx({"recall@5": 1.0, "recall@20": 1.0, "mrr": 1.0})
    assert row["shift"] == pytest.approx({"recall@5": 0.5, "recall@20": 0.5, "mrr": 0.75})


def test_sensitivity_runs_retrievers_by_name():
    retriever = FakeRetriever({Q_TABLE.question: [Hit(4, 0.9), Hit(1, 0.5)]})
    [row] = sensitivity({"fake": retriever}, [Q_TABLE])
    assert row["pipeline"] == "fake" and row["evidence"]["mrr"] == 0.5 and row["section"]["mrr"] == 1.0
    with pytest.raises(ValueError, match="need the questions"):
        sensitivity({"fake": retriever})


def test_unreachable_lists_questions_whose_quote_no_chunk_holds_whole():
    halves = [Chunk("h1", DT, "Day of the month as a"), Chunk("h2", DT, "zero-padded decimal number.")]
    assert unreachable([Q_TABLE, Q_NONE], halves) == [Q_TABLE]
    assert unreachable([Q_TABLE, Q_NONE], CHUNKS) == []


# --- the context budget (a word counter: one token per word, 2 special tokens) -----------------

WORDS = WordCounter()
Q_BUDGET = Question("qb", "Where is the needle?", "hay.html", "s", "the needle is here", "exact")


def budget_run(bodies: list[str], q: Question = Q_BUDGET) -> RunResult:
    chunks = [Chunk(f"b{i}", "hay.html", body, section_id="s") for i, body in enumerate(bodies)]
    return evaluate_rankings([q], [[Hit(i, 1 - i / 100) for i in range(len(chunks))]], chunks, name="b")


def test_budget_context_keeps_whole_chunks_then_cuts_the_last():
    run = budget_run(["one two three four", "five six seven eight nine", "ten"])
    kept = budget_context(run.results[0], budget=6, counter=WORDS)
    assert [c.body for c in kept] == ["one two three four", "five six"]
    assert [c.id for c in budget_context(run.results[0], budget=100, counter=WORDS)] == ["b0", "b1", "b2"]


def test_budget_recall_counts_evidence_only_if_the_cut_keeps_it():
    hay = "hay " * 6
    # The evidence (4 words) starts at token 6 of a budget of 8: cut in half, so not found ...
    cut = budget_run([hay.strip(), "the needle is here"])
    assert recall_within_budget(cut, budget=8, counter=WORDS) == 0.0
    # ... with a budget of 10 it fits whole.
    assert recall_within_budget(cut, budget=10, counter=WORDS) == 1.0
    # recall@5 says found in both cases: the budget is the stricter question.
    assert cut.recall_at(5) == 1.0


def test_budget_precision_and_iou_by_hand():
    run = budget_run(["hay hay hay hay hay hay", "the needle is here"])
    values = budget_values(run, budget=100, counter=WORDS)
    # context = 6 + 4 = 10 tokens, evidence = 4 tokens, all found
    assert values["recall"].tolist() == [1.0]
    assert values["precision"].tolist() == pytest.approx([0.4])
    assert values["iou"].tolist() == pytest.approx([4 / 10])
    missed = budget_values(budget_run(["hay hay"]), budget=100, counter=WORDS)
    # not found: precision 0, IoU 0 / (2 + 4)
    assert missed["precision"].tolist() == [0.0] and missed["iou"].tolist() == [0.0]


def test_budget_metrics_follow_the_runs_judge():
    run = budget_run(["hay hay in the gold section"])
    assert recall_within_budget(run, budget=100, counter=WORDS) == 0.0
    assert recall_within_budget(rejudge(run, "section"), budget=100, counter=WORDS) == 1.0


def test_summary_with_budget_keys():
    run = budget_run(["hay hay hay hay hay hay", "the needle is here"])
    s = summary(run, budget=8, counter=WORDS)
    assert s["judge"] == "evidence" and s["budget"] == 8
    assert s["recall@budget"] == 0.0 and s["precision@budget"] == 0.0 and s["iou@budget"] == 0.0
    assert s["recall@budget_ci"] == pytest.approx([0.0, 0.7935], abs=1e-4)
    s = summary(run, budget=10, counter=WORDS)
    assert s["recall@budget"] == 1.0 and s["precision@budget"] == pytest.approx(0.4)
    json.dumps(s, allow_nan=False)


def test_summary_recall_interval_is_wilson_and_never_zero_width():
    run = make_run("all", [1] * 16)
    s = summary(run, budget=None)
    assert s["recall@5"] == 1.0
    assert s["recall@5_ci"] == pytest.approx([0.8064, 1.0], abs=1e-4)


# --- Holm over a table -------------------------------------------------------------------------

def test_holm_adjust_treats_a_whole_table_as_one_family_and_names_it():
    a, b = make_run("a", [None] * 8 + [1] * 8), make_run("b", [1] * 16)
    c = make_run("c", [None] * 7 + [1] * 9)
    table = [paired_comparison(a, b), paired_comparison(a, c), paired_comparison(a, b, metric="mrr", n_resamples=999)]
    adjusted = holm_adjust(table)
    smallest = min(t.p_value for t in table)
    assert [t.family for t in adjusted] == [3, 3, 3]
    assert min(t.p_holm for t in adjusted) == pytest.approx(min(1, 3 * smallest))
    assert all(t.p_holm >= t.p_value for t in adjusted) and adjusted[0].p == adjusted[0].p_holm
    assert adjusted[0].family_name == "the recall@5, mrr comparisons of this table"
    assert holm_adjust(table, family="lesson 06's table")[1].family_name == "lesson 06's table"
    with pytest.raises(ValueError, match="different rules"):
        holm_adjust([table[0], paired_comparison(rejudge(a, "section"), rejudge(b, "section"))])


# --- answer units and markup ------------------------------------------------------------------

Q_UNIT = Question("qu", "Which directive gives the day of the month?", DT, "format-codes",
                  "Day of the month as a zero-padded decimal number.", "table", "dev", fragments=("%d",))


def test_a_chunk_that_lost_the_rows_key_does_not_answer():
    # The description without `%d` does not say which directive to use: the quote alone credited it.
    description_only = Chunk("d1", DT, "Day of the month as a zero-padded decimal number.")
    whole_row = Chunk("d2", DT, "Directive: %d | Meaning: Day of the month as a zero-padded decimal number.")
    assert not is_relevant(description_only, Q_UNIT) and is_relevant(whole_row, Q_UNIT)
    assert is_relevant_by_quote(description_only, Q_UNIT) and is_relevant_by_quote(whole_row, Q_UNIT)
    assert unreachable([Q_UNIT], [description_only]) == [Q_UNIT]


def test_an_also_place_needs_its_own_fragments():
    pooled = dataclasses.replace(Q_UNIT, also=(Place("other.html", "day of month, padded", ("%d",)),))
    assert not is_relevant(Chunk("o1", "other.html", "day of month, padded"), pooled)
    assert is_relevant(Chunk("o2", "other.html", "%d: day of month, padded"), pooled)
    assert answer_units(pooled) == [(DT, ("Day of the month as a zero-padded decimal number.", "%d")),
                                    ("other.html", ("day of month, padded", "%d"))]


@pytest.mark.parametrize("markdown", [
    "| `%d` | Day of the month as a **zero-padded** decimal number. |",   # docling's table row
    "[%d](https://docs.python.org/x.html#d) Day of the *month* as a zero\\-padded decimal number.",
    "__%d__ Day of the month as a zero-padded `decimal` number.",
])
def test_markdown_a_library_adds_is_not_a_miss(markdown):
    assert is_relevant(Chunk("m", DT, markdown), Q_UNIT)


def test_markup_folding_never_joins_other_words():
    assert not is_relevant(Chunk("m", DT, "| %d | Day of the week |"), Q_UNIT)
    assert normalize("[text](https://x.org/a_b)") == normalize("text")
    assert normalize(r"a\_b \| c") == normalize("a_b c")


def test_the_quote_rule_is_a_sensitivity_judge():
    assert judge_rule(QUOTE) is is_relevant_by_quote and set(JUDGES) == {EVIDENCE, QUOTE, SECTION}
