"""Data tests for the second shipped corpus (pandas 1.5.3 docs): the archive matches its
manifest, the extracted pages load, and the README states the page count and licence. Its golden
set is tested with the Python docs' set in tests/test_golden_sets.py."""
import hashlib
import tarfile

import pytest

from course_lib.core import load as corpus
from course_lib.infra.paths import DATA_DIR

PANDAS = DATA_DIR / "pandas"


@pytest.fixture(scope="module")
def folder():
    return corpus.ensure_corpus(corpus="pandas")


@pytest.fixture(scope="module")
def pages(folder):
    return corpus.load_pages(folder)


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


def test_furniture_share_counts_what_the_parser_removes_by_structure():
    import build_pandas_corpus as script  # scripts/ is on the path (tests/conftest.py)

    html = ("<html><head><title>T</title><style>p{}</style></head><body><nav>Home Docs</nav>"
            "<form>Search</form><main role='main'><h1>Title</h1><p>Body text</p>"
            "<div class='toctree-wrapper'>toc</div></main><footer>(c) 2023</footer></body></html>")
    total, kept = script.structural_share(html)
    # visible: HomeDocs Search Title Bodytext toc (c)2023 -> 8+6+5+8+3+7; kept: Title Bodytext
    assert (total, kept) == (37, 13)
