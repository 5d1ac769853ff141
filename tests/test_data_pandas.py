"""Data tests for the second shipped corpus (pandas 1.5.3 docs) and its golden set.

The archive matches its manifest, the golden file is valid against the extracted pages, every
quote survives both the course's structure-aware chunks and the naive fixed-size chunks of its
page (so the judge measures retrieval, not what a chunker threw away), and the counts the
READMEs state are the counts in the files.
"""
import hashlib
import re
import tarfile
from collections import Counter

import pytest

from course_lib.core import load as corpus
from course_lib.core import naive
from course_lib.core import pipeline as pipelines
from course_lib.evaluation.golden import KINDS, load_golden, normalize, validate_golden
from course_lib.infra.paths import DATA_DIR

PANDAS = DATA_DIR / "pandas"
GOLDEN = DATA_DIR / "golden" / "pandas.jsonl"
CHUNK_RANGE = (1500, 2500)  # what the page list was sized for (issue 14)


@pytest.fixture(scope="module")
def folder():
    return corpus.ensure_corpus(corpus="pandas")


@pytest.fixture(scope="module")
def pages(folder):
    return corpus.load_pages(folder)


@pytest.fixture(scope="module")
def questions():
    return load_golden(GOLDEN)


def test_archive_matches_manifest_and_page_list():
    with tarfile.open(PANDAS / "pandas-1.5.3-docs.tar.xz", "r:xz") as tar:
        members = tar.getmembers()
        digests = {m.name: hashlib.sha256(tar.extractfile(m).read()).hexdigest() for m in members}
    assert all(m.isfile() and m.mtime == 0 and m.uid == 0 and m.uname == "" for m in members)
    assert [m.name for m in members] == sorted(digests)  # sorted members: a reproducible archive
    assert digests == corpus.read_manifest(PANDAS / "MANIFEST.sha256")
    listed = [line.strip() for line in (PANDAS / "pages.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert sorted(listed) == sorted(digests)


def test_extracted_corpus_verifies_and_loads_every_page(folder, pages):
    assert corpus.verify(folder, PANDAS / "MANIFEST.sha256") == []
    assert len(pages) == len(corpus.read_manifest(PANDAS / "MANIFEST.sha256"))


def test_readme_states_the_page_count_and_the_licence_is_shipped(pages):
    readme = (PANDAS / "README.md").read_text()
    assert f"{len(pages)} pages" in readme
    assert "BSD-3" in (PANDAS / "LICENSE-pandas.txt").read_text()


def test_golden_set_is_valid_against_the_pandas_corpus(folder):
    assert validate_golden(GOLDEN, folder) == []


def test_size_kinds_and_splits(questions):
    assert len(questions) >= 100
    counts = Counter((q.kind, q.split) for q in questions)
    for kind in KINDS:
        assert counts[kind, "dev"] > 0 and counts[kind, "test"] > 0, kind
    assert sum(q.answerable and q.split == "test" for q in questions) >= 35
    assert len({q.doc for q in questions if q.answerable}) >= 40


def test_split_is_about_sixty_forty_within_each_kind(questions):
    for kind in KINDS:
        group = [q for q in questions if q.kind == kind]
        assert 0.5 <= sum(q.split == "dev" for q in group) / len(group) <= 0.7, kind


def test_each_quote_occurs_on_its_page_only(pages, questions):
    texts = {page.path: normalize(naive.strip_tags(page.html)) for page in pages}
    for q in questions:
        if q.answerable:
            found = [doc for doc, text in texts.items() if normalize(q.evidence) in text]
            assert found == [q.doc], (q.id, found)


@pytest.mark.slow
def test_every_quote_survives_structured_and_naive_chunking(pages, questions):
    structured = pipelines.structured_chunks(pages)
    assert CHUNK_RANGE[0] <= len(structured) <= CHUNK_RANGE[1]
    bodies: dict[str, list[str]] = {}
    for chunk in structured:
        bodies.setdefault(chunk.doc, []).append(normalize(chunk.body))
    fixed: dict[str, list[str]] = {}
    for chunk in naive.naive_chunks(pages):
        fixed.setdefault(chunk.doc, []).append(normalize(chunk.body))
    for q in questions:
        if q.answerable:
            quote = normalize(q.evidence)
            assert any(quote in body for body in bodies.get(q.doc, [])), (q.id, "structured")
            assert any(quote in body for body in fixed[q.doc]), (q.id, "naive")


def test_golden_readme_counts_match_the_file(questions):
    readme = (GOLDEN.parent / "README.md").read_text()
    section = readme[readme.index("## The pandas set"):]
    # bare kind names, unlike the Python set's table, so that test never reads these rows
    rows = re.findall(r"^\| (\w+) \| (\d+) \| (\d+) \| (\d+) \|$", section, re.MULTILINE)
    counts = Counter((q.kind, q.split) for q in questions)
    assert {kind for kind, *_ in rows} == set(KINDS)
    for kind, dev, test, total in rows:
        assert (int(dev), int(test), int(total)) == (counts[kind, "dev"], counts[kind, "test"],
                                                      counts[kind, "dev"] + counts[kind, "test"])
    assert f"{len(questions)} questions" in section


def test_furniture_share_counts_what_the_parser_removes_by_structure():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_pandas_corpus",
                                                  DATA_DIR.parent / "scripts" / "build_pandas_corpus.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    html = ("<html><head><title>T</title><style>p{}</style></head><body><nav>Home Docs</nav>"
            "<form>Search</form><main role='main'><h1>Title</h1><p>Body text</p>"
            "<div class='toctree-wrapper'>toc</div></main><footer>(c) 2023</footer></body></html>")
    total, kept = script.structural_share(html)
    # visible: HomeDocs Search Title Bodytext toc (c)2023 -> 8+6+5+8+3+7; kept: Title Bodytext
    assert (total, kept) == (37, 13)
