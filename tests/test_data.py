"""Data tests: the shipped golden set is valid against the shipped corpus, and well balanced."""
from collections import Counter

import pytest

from course_lib.corpus import ensure_corpus
from course_lib.golden import KINDS, load_golden, validate_golden
from course_lib.paths import GOLDEN_FILE


@pytest.fixture(scope="module")
def questions():
    return load_golden(GOLDEN_FILE)


def test_golden_set_is_valid_against_the_shipped_corpus():
    assert validate_golden(GOLDEN_FILE, ensure_corpus()) == []


def test_golden_set_is_large_enough_and_covers_many_pages(questions):
    assert len(questions) >= 120
    assert len({q.doc for q in questions if q.answerable}) >= 40


def test_every_kind_is_present_in_both_splits(questions):
    counts = Counter((q.kind, q.split) for q in questions)
    for kind in KINDS:
        assert counts[kind, "dev"] > 0 and counts[kind, "test"] > 0, kind


def test_split_is_about_sixty_forty_within_each_kind(questions):
    for kind in KINDS:
        group = [q for q in questions if q.kind == kind]
        dev_share = sum(q.split == "dev" for q in group) / len(group)
        assert 0.5 <= dev_share <= 0.7, (kind, dev_share)


def test_kind_mix_follows_the_plan(questions):
    shares = {k: v / len(questions) for k, v in Counter(q.kind for q in questions).items()}
    assert shares["paraphrase"] == pytest.approx(0.30, abs=0.05)
    for kind in ("exact", "table"):
        assert shares[kind] == pytest.approx(0.20, abs=0.05)
    for kind in ("code", "context", "unanswerable"):
        assert shares[kind] == pytest.approx(0.10, abs=0.03)


def test_golden_readme_counts_match_the_file(questions):
    import re

    readme = (GOLDEN_FILE.parent / "README.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \|.*\| (\d+) \| (\d+) \| (\d+) \|$", readme, re.M)
    counts = Counter((q.kind, q.split) for q in questions)
    assert {kind for kind, *_ in rows} == set(KINDS)
    for kind, dev, test, total in rows:
        assert (int(dev), int(test), int(total)) == (counts[kind, "dev"], counts[kind, "test"],
                                                      counts[kind, "dev"] + counts[kind, "test"])
