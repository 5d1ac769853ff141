"""Data tests: the shipped golden set is valid against the shipped corpus, well balanced, and
reachable under the strict judge by every lesson's chunking."""
from collections import Counter

import pytest

from course_lib.core.load import ensure_corpus, load_pages
from course_lib.core.naive import naive_chunks
from course_lib.core.pipeline import clean_fixed_chunks, structured_chunks
from course_lib.evaluation.golden import KINDS, load_golden, validate_golden
from course_lib.evaluation.judging import unreachable
from course_lib.infra.paths import GOLDEN_FILE

# Every chunking a lesson pipeline searches (bm25, hybrid and reranked reuse "limited"'s).
CHUNKINGS = {
    "naive": naive_chunks,
    "clean": clean_fixed_chunks,
    "structured": lambda pages: structured_chunks(pages, context=False, split_long=False),
    "context": lambda pages: structured_chunks(pages, split_long=False),
    "limited": structured_chunks,
}


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
    rows = re.findall(r"^\| `(\w+)` \|.*\| (\d+) \| (\d+) \| (\d+) \|$", readme, re.MULTILINE)
    counts = Counter((q.kind, q.split) for q in questions)
    assert {kind for kind, *_ in rows} == set(KINDS)
    for kind, dev, test, total in rows:
        assert (int(dev), int(test), int(total)) == (counts[kind, "dev"], counts[kind, "test"],
                                                      counts[kind, "dev"] + counts[kind, "test"])


@pytest.fixture(scope="module")
def pages():
    return load_pages()


@pytest.mark.slow
@pytest.mark.parametrize("chunking", list(CHUNKINGS))
def test_every_evidence_is_kept_whole_by_every_chunking(chunking, pages, questions):
    # The judge needs the quote inside one chunk's body; a question no chunk can answer would be
    # a miss for every retriever, and would make the comparison unfair to that chunker.
    chunks = CHUNKINGS[chunking](pages)
    assert {q.doc for q in questions if q.answerable} <= {c.doc for c in chunks}
    assert [q.id for q in unreachable(questions, chunks)] == []
