"""The four-words picture: each interval reads as its word, and the picture draws them all."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.evaluation.compare import compare_values  # noqa: E402
from course_lib.evaluation.verdict_pictures import (  # noqa: E402
    WORD_COLOURS,
    Example,
    example_of,
    four_words_picture,
    word_of_interval,
)
from course_lib.evaluation.verdicts import CANNOT_TELL, EQUIVALENT, GAIN, LOSS, word  # noqa: E402


@pytest.mark.parametrize(("lo", "hi", "expected"), [
    (0.01, 0.2, GAIN), (-0.2, -0.01, LOSS), (-0.03, 0.04, EQUIVALENT), (-0.03, 0.09, CANNOT_TELL),
    (-0.05, 0.01, CANNOT_TELL),  # touching the margin is not inside it
])
def test_an_interval_reads_as_one_word(lo, hi, expected):
    assert word_of_interval(lo, hi, margin=0.05) == expected


def test_a_comparisons_example_reads_as_its_word():
    a = np.array([0] * 60 + [1] * 40)
    b = np.array([1] * 30 + [0] * 30 + [1] * 40)  # 30 wins, no loss
    c = compare_values(a, b, metric="recall@5")
    example = example_of(c, label="B against A")
    assert word(c) == GAIN == word_of_interval(example.lo, example.hi)
    assert example.lo <= example.estimate <= example.hi


def test_the_picture_draws_one_interval_per_example_and_the_band():
    examples = [Example("g", 0.08, 0.03, 0.13), Example("l", -0.08, -0.13, -0.03),
                Example("e", 0.0, -0.02, 0.03), Example("c", 0.02, -0.04, 0.08)]
    ax = four_words_picture(examples, margin=0.05)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c", "e", "l", "g"]
    assert sorted(t.get_text() for t in ax.texts) == sorted([GAIN, LOSS, EQUIVALENT, CANNOT_TELL])
    colours = {t.get_text(): t.get_color() for t in ax.texts}
    assert colours == WORD_COLOURS
    assert len(ax.patches) == 1  # the ±margin band
    plt.close(ax.figure)
