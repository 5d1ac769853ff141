"""The naive baseline: regex stripping and fixed-size chunks, failures included."""
import pytest

from course_lib.core.naive import fixed_size_chunks, naive_chunks, strip_tags
from course_lib.records import Page


def test_strip_tags_keeps_boilerplate_and_spaces_out_code():
    markup = ('<html><head><style>p{color:red}</style><script>var x=1;</script></head><body>'
              '<nav>Home | Index</nav><pre><span class="n">os</span><span class="o">.</span>'
              '<span class="n">path</span></pre><p>Fish &amp; chips</p></body></html>')
    assert strip_tags(markup) == "Home | Index os . path Fish & chips"


def test_fixed_size_chunks_overlap_and_cut_mid_word():
    text = "abcdefghij" * 3
    chunks = fixed_size_chunks(text, doc="d.html", size=12, overlap=4)
    assert [c.body for c in chunks] == [text[0:12], text[8:20], text[16:28], text[24:30]]
    assert [c.id for c in chunks] == ["d.html#0", "d.html#1", "d.html#2", "d.html#3"]
    assert all(c.doc == "d.html" and c.heading_path == () and c.section_id is None for c in chunks)


def test_fixed_size_chunks_cover_the_whole_text():
    text = " ".join(str(i) for i in range(500))
    chunks = fixed_size_chunks(text, doc="d", size=100, overlap=30)
    rebuilt = chunks[0].body + "".join(c.body[30:] for c in chunks[1:])
    assert rebuilt == text


def test_short_text_gives_one_chunk_and_empty_text_none():
    assert [c.body for c in fixed_size_chunks("hello", doc="d")] == ["hello"]
    assert fixed_size_chunks("", doc="d") == []


def test_overlap_must_be_smaller_than_size():
    with pytest.raises(ValueError, match="overlap"):
        fixed_size_chunks("text", doc="d", size=10, overlap=10)


def test_naive_chunks_keep_the_page_path_only():
    pages = [Page("a.html", "<p>" + "word " * 300 + "</p>"), Page("b.html", "<p>short</p>")]
    chunks = naive_chunks(pages, size=500, overlap=100)
    assert [c.doc for c in chunks] == ["a.html"] * 4 + ["b.html"]
    assert chunks[-1].body == "short" and chunks[-1].text == "short"
