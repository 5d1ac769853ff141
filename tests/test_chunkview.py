"""The chunk viewer: every chunk shaded in turn, overlaps and over-window chunks visible, inline styles."""
from course_lib.core.tokens import WordCounter
from course_lib.extras import chunkview
from course_lib.records import Chunk

COUNTER = WordCounter(limit=256, special=0)


def test_repeated_prefix_finds_an_overlap_not_a_shared_word():
    assert chunkview.repeated_prefix("the first chunk ends with these words", "ends with these words and more",
                                     min_chars=10) == len("ends with these words")
    assert chunkview.repeated_prefix("a b", "b c", min_chars=2) == 0


def test_rows_count_tokens_of_the_embedded_text_and_flag_the_window():
    chunks = [Chunk(id="a", doc="d", body="one two three", context="ctx"), "four five"]
    rows = chunkview.chunk_rows(chunks, limit=3, counter=COUNTER)
    assert [r["tokens"] for r in rows] == [4, 2]
    assert [r["over"] for r in rows] == [True, False]


def test_html_has_inline_styles_only_and_alternating_shades():
    page = chunkview.chunks_html(["alpha beta <b>", "gamma", "delta"], limit=1, counter=COUNTER)
    assert "<style" not in page and "<script" not in page and "class=" not in page
    assert page.count(chunkview.SHADES[0]) == 2 and page.count(chunkview.SHADES[1]) == 1
    assert "&lt;b&gt;" in page  # chunk text is escaped
    assert "over 1" in page and "#1 · 3 tok" in page


def test_side_by_side_is_a_table_with_one_column_per_chunker():
    html = chunkview.side_by_side({"course": ["a b"], "peer": ["a", "b"]}, counter=COUNTER).data
    assert html.count("<th") == 2 and "2 chunks, 0 over 256" in html
