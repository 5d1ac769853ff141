"""benchmarks/bench_page_size.py: its pages are what they claim to be (the thread as deep as its
replies, the nested page as deep as its size allows), and `pages` measures each page through
parse -> chunk -> index and states every ratio against the first (baseline) page. Structure and
arithmetic only: no timing threshold, which a shared machine could not keep."""
import contextlib
import io
import re
from html.parser import HTMLParser

import bench_page_size as bench  # benchmarks/ is on the path (tests/conftest.py)
import pytest


class _Shape(HTMLParser):
    """The deepest nesting of <div> and how many of each tag a page has."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.depth = self.deepest = 0
        self.tags: dict[str, int] = {}
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "div":
            self.depth += 1
            self.deepest = max(self.deepest, self.depth)

    def handle_endtag(self, tag):
        if tag == "div":
            self.depth -= 1

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.parametrize("replies", [1, 40, 2000])
def test_the_thread_nests_each_reply_inside_the_one_before(replies):
    shape = _Shape(bench.thread(replies))
    assert (shape.deepest, shape.tags["div"], shape.depth) == (replies, replies, 0)  # every div closed
    assert re.findall(r"Reply (\d+):", "".join(shape.text)) == [str(i) for i in range(replies)]


@pytest.mark.parametrize("size", [2_000, 50_000])
def test_the_nested_page_is_as_deep_as_its_size_allows(size):
    shape = _Shape(bench.nested(size))
    assert shape.deepest == size // len("<div>word </div>") and shape.depth == 0


@pytest.mark.parametrize("size", [20_000, 200_000])
def test_the_documentation_page_is_sections_of_prose_table_and_code_of_about_its_size(size):
    html = bench.documentation(size)
    shape = _Shape(html)
    sections = shape.tags["h2"]
    assert size <= len(html) < size + len(bench.SECTION.format(i=sections)) + 100
    assert shape.tags["table"] == shape.tags["pre"] == sections and shape.tags["tr"] == 3 * sections


def test_the_prose_page_has_no_sentence_punctuation_and_the_table_one_row_per_step():
    words = _Shape(bench.prose(10_000)).text[-1]
    assert len(words) >= 10_000 and not re.search(r"[.!?]", words)
    row = "<tr><td>alpha beta</td><td>gamma delta epsilon</td></tr>"
    assert _Shape(bench.table(10_000)).tags["tr"] == 1 + 10_000 // len(row)  # the header row and the rest


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """`pages` on a 20 KB baseline, a 200 KB page and a 200-reply thread (with a cache of its own):
    its rows and its printout."""
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setenv("COURSE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        rows = bench.pages(0.2, 200, base_mb=0.02)
    return rows, printed.getvalue().splitlines()


@pytest.mark.model  # chunking counts tokens with the bundled model's tokenizer
def test_pages_measures_each_page_against_the_baseline(measured):
    rows, _ = measured
    assert [row["page"] for row in rows] == ["0.02 MB page", "0.2 MB page", "thread, 200 nested replies"]
    base = rows[0]
    assert (base["bytes_ratio"], base["time_ratio"], base["memory_ratio"]) == (1.0, 1.0, 1.0)
    for row in rows:
        assert row["total_s"] == pytest.approx(row["parse_s"] + row["chunk_s"] + row["index_s"])
        assert row["bytes_ratio"] == pytest.approx(row["mb"] / base["mb"])
        assert row["time_ratio"] == pytest.approx(row["total_s"] / base["total_s"])
        assert row["memory_ratio"] == pytest.approx(row["peak_mb"] / base["peak_mb"])
        assert row["peak_mb"] > 0 and row["chunks"] >= 1
    big = rows[1]
    assert big["mb"] == pytest.approx(len(bench.documentation(200_000).encode()) / 1e6)
    assert 9 < big["bytes_ratio"] < 11
    # ten times the sections: about ten times the blocks and the chunks (the same text per section)
    assert 9 < big["blocks"] / base["blocks"] < 11 and 8 < big["chunks"] / base["chunks"] < 12


@pytest.mark.model
def test_pages_prints_a_header_and_one_row_per_page_with_its_ratios(measured):
    rows, lines = measured
    assert lines[0].split()[:2] == ["page", "MB"] and lines[0].endswith("ratios to 0.02 MB: bytes, time, memory")
    assert len(lines) == 1 + len(rows)
    for line, row in zip(lines[1:], rows, strict=True):
        assert line.startswith(row["page"])
        ratios = line.rsplit("| ", 1)[1]
        assert ratios == f"{row['bytes_ratio']:.1f}, {row['time_ratio']:.1f}, {row['memory_ratio']:.1f}"
        assert f" {row['blocks']:>7} {row['chunks']:>7} |" in line
