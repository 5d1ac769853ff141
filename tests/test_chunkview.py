"""The chunk viewer: every chunk shaded in turn, overlaps and over-window chunks visible, inline styles."""
from course_lib.core.tokens import WordCounter
from course_lib.evaluation.golden import strip_markup
from course_lib.extras import chunkview
from course_lib.records import Chunk, Page

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


def test_the_window_defaults_to_the_counters_never_a_typed_number():
    rows = chunkview.chunk_rows(["one two three"], counter=WordCounter(limit=2, special=0))
    assert rows[0]["over"]
    html = chunkview.side_by_side({"course": ["a b c"]}, counter=WordCounter(limit=2, special=0)).data
    assert "1 chunks, 1 over 2" in html


def test_strip_markup_removes_what_libraries_add():
    assert strip_markup("Use **`how='left'`** or [merge](x.html#m) a \\| b") == "Use how='left' or merge a  b"
    assert strip_markup(r"snake\_case and \[1\]") == "snake_case and [1]"


PAGE = Page("a.html", """<html><body><nav>Home</nav><h1>Join</h1><p>Join columns of another frame.</p>
<pre>df.join(other)
df.join(other, how='left')</pre>
<table><tr><th>Method</th><th>Description</th></tr><tr><td>left</td><td>Keys from the left frame</td></tr></table>
</body></html>""")


def test_page_parts_are_code_lines_table_cells_and_content_words():
    parts = chunkview.page_parts(PAGE, "Join\n\nJoin columns of another frame.")
    assert parts.code == (("df.join(other)", "df.join(other,how='left')"),)
    assert parts.rows == (("method", "description"), ("left", "keysfromtheleftframe"))
    assert parts.words["join"] == 2 and sum(parts.words.values()) == 6


def test_what_chunks_keep_tells_whole_split_and_damaged_apart():
    parts = {"a.html": chunkview.page_parts(PAGE, "Join\n\nJoin columns of another frame.")}
    whole = [Chunk(id="1", doc="a.html", body="Join columns of another frame.\n```\ndf.join(other)\n"
                                             "df.join(other, how='left')\n```\n| Method | Description |\n"
                                             "| left | Keys from the **left** frame |")]
    kept = chunkview.what_chunks_keep(parts, whole, counter=COUNTER)
    assert (kept.code_whole, kept.code_damaged, kept.rows_whole, kept.rows_damaged) == (1, 0, 2, 0)
    assert kept.words == 6 and kept.words_outside == 0
    split = [Chunk(id="1", doc="a.html", body="df.join(other) Method Description left"),
             Chunk(id="2", doc="a.html", body="df.join(other, how='left') Keys from the left"),
             Chunk(id="3", doc="b.html", body="Keys from the left frame")]  # another page: no credit
    kept = chunkview.what_chunks_keep(parts, split, counter=COUNTER, limit=4)
    assert (kept.code_blocks, kept.code_whole, kept.code_damaged) == (1, 0, 0)  # split at a line
    assert (kept.table_rows, kept.rows_whole, kept.rows_damaged) == (2, 1, 1)  # a cell cut mid-text
    assert kept.chunks == 3 and kept.over_window == 2
    assert kept.words_kept == 2  # "join" twice (in the code); the sentence is in no chunk of its page
