"""The abstain threshold: chosen on dev by its declared rule, judged on test, on hand-made scores."""
import math

import pytest

from course_lib.evaluation.abstain import (
    MAX_WRONG_ABSTAIN,
    abstain_on_test,
    choose_threshold,
    judge_threshold,
    share,
    top_scores,
)
from course_lib.evaluation.golden import Question
from course_lib.evaluation.results import QuestionResult, RunResult


def test_the_threshold_turns_away_at_most_the_declared_share_of_answerable_questions():
    scores = [0.1 * i for i in range(1, 21)]  # 20 answerable questions, 0.1 .. 2.0
    # 5% of 20 is one question: the threshold is the second-lowest score, so only 0.1 is below it.
    assert choose_threshold(scores) == pytest.approx(0.2)
    assert choose_threshold(scores, max_wrong_abstain=0.0) == pytest.approx(0.1)  # nothing turned away
    assert choose_threshold(scores, max_wrong_abstain=0.25) == pytest.approx(0.6)  # five below
    assert choose_threshold(list(reversed(scores))) == pytest.approx(0.2)  # order does not matter
    assert MAX_WRONG_ABSTAIN == 0.05


def test_ties_never_turn_away_more_than_allowed():
    # Ten answerable questions all at 0.5: any threshold above 0.5 would turn all ten away.
    assert choose_threshold([0.5] * 10, max_wrong_abstain=0.3) == 0.5
    assert judge_threshold(0.5, [0.5] * 10, []).answerable_abstained.k == 0


@pytest.mark.parametrize("scores, cap", [([], 0.05), ([0.1, math.nan], 0.05), ([0.1], 1.0), ([0.1], -0.1)])
def test_bad_input_is_one_clear_error(scores, cap):
    with pytest.raises(ValueError):
        choose_threshold(scores, max_wrong_abstain=cap)


def test_judging_counts_both_kinds_of_question_with_wilson_intervals():
    result = judge_threshold(0.5, answerable_scores=[0.4, 0.6, 0.7, 0.9], unanswerable_scores=[0.1, 0.2, 0.8])
    assert (result.unanswerable_abstained.k, result.unanswerable_abstained.n) == (2, 3)
    assert (result.answerable_abstained.k, result.answerable_abstained.n) == (1, 4)
    # 2 of 3: the Wilson 95% interval, as the course prints every share of questions.
    assert result.unanswerable_abstained.lo == pytest.approx(0.2077, abs=1e-3)
    assert result.unanswerable_abstained.hi == pytest.approx(0.9385, abs=1e-3)
    assert str(result.unanswerable_abstained) == "2/3 = 0.67 [0.21, 0.94]"
    assert "abstain below 0.500" in str(result) and "95% Wilson" in str(result)
    assert str(share(0, 0)) == "0/0 (no question)"


def _run(name, answerable, unanswerable):
    def result(i, score, doc):
        q = Question(id=f"q{i:03d}", question=f"question {i}", doc=doc, section=None, evidence=None, kind="prose")
        return QuestionResult(q, ("c",) if score is not None else (), (score,) if score is not None else (),
                              None, None)

    results = [result(i, s, "a.html") for i, s in enumerate(answerable)]
    results += [result(100 + i, s, None) for i, s in enumerate(unanswerable)]
    return RunResult(name, results)


def test_dev_chooses_and_test_is_judged_with_the_same_threshold():
    dev = _run("final", answerable=[0.3 + 0.01 * i for i in range(40)], unanswerable=[0.1, 0.2, 0.5])
    test = _run("final", answerable=[0.25, 0.5, 0.6, 0.7], unanswerable=[0.2, 0.4, None])
    on_dev, on_test = abstain_on_test(dev, test)
    assert on_dev.threshold == on_test.threshold == pytest.approx(0.32)  # 5% of 40: two below it
    assert on_dev.answerable_abstained.k == 2 and on_dev.unanswerable_abstained.k == 2
    # On test: 0.25 is turned away wrongly; 0.2 and the empty ranking (nothing found) are abstained on.
    assert on_test.answerable_abstained.k == 1 and on_test.unanswerable_abstained.k == 2
    assert top_scores(test)[1][2] == -math.inf


def test_a_threshold_is_not_carried_to_another_retriever():
    run = _run("final", [0.5], [0.1])
    with pytest.raises(ValueError, match="same retriever"):
        abstain_on_test(run, _run("naive", [0.5], [0.1]))
