"""Structure-aware chunking on hand-made blocks.

Most tests count with WordCounter (words + 2 specials) so every boundary can be worked out by hand;
the budget arithmetic is in the comments. The last tests use the real MiniLM tokenizer.
"""
from __future__ import annotations

import pytest

from course_lib.core.chunking import blocks_to_text, chunk_blocks, chunk_report, context_line, dedupe
from course_lib.core.splitting import split_block, split_sentences
from course_lib.core.tokens import WordCounter, get_counter
from course_lib.records import Block, Chunk

WORDS = WordCounter(limit=256)
PAGE = ("Page",)


def text(words: str, path=PAGE, section="top", kind="text") -> Block:
    return Block(kind, words, path, section)


def heading(title: str, path, section) -> Block:
    return Block("heading", title, tuple(path), section, len(path))


def bodies(chunks: list[Chunk]) -> list[str]:
    return [c.body for c in chunks]


def three_word_blocks(n: int, path=PAGE, section="top") -> list[Block]:
    return [text(f"{c}1 {c}2 {c}3", path, section) for c in "abcdefgh"[:n]]


# --- packing ---------------------------------------------------------------------------------

def test_packs_whole_blocks_up_to_the_budget():
    # context "Page" (1) + 2 specials + 3 per block: 3 blocks = 12 fit a budget of 12, 4 do not.
    chunks = chunk_blocks(three_word_blocks(5), doc="p", title="Page", budget=12, counter=WORDS)
    assert bodies(chunks) == ["a1 a2 a3\n\nb1 b2 b3\n\nc1 c2 c3", "d1 d2 d3\n\ne1 e2 e3"]
    assert [c.meta["tokens"] for c in chunks] == [12, 9]
    assert [c.meta["tokens"] for c in chunks] == [WORDS.count(c.text) for c in chunks]
    assert [c.meta["block_indices"] for c in chunks] == [(0, 1, 2), (3, 4)]


def test_margin_holds_tokens_back():
    chunks = chunk_blocks(three_word_blocks(4), doc="p", title="Page", budget=12, margin=3, counter=WORDS)
    assert [c.meta["block_indices"] for c in chunks] == [(0, 1), (2, 3)]
    assert max(c.meta["tokens"] for c in chunks) == 9


def test_default_budget_is_the_counters_limit():
    chunks = chunk_blocks(three_word_blocks(5), doc="p", title="Page", counter=WordCounter(limit=9))
    assert [c.meta["block_indices"] for c in chunks] == [(0, 1), (2, 3), (4,)]


def test_a_heading_always_starts_a_new_chunk():
    blocks = [
        heading("Page", PAGE, "top"),
        text("intro words"),
        heading("Usage", ("Page", "Usage"), "usage"),
        text("how to use it", ("Page", "Usage"), "usage"),
        # a second heading with the same path (two "Usage" sections): still a new chunk
        heading("Usage", ("Page", "Usage"), "usage"),
        text("more usage", ("Page", "Usage"), "usage"),
    ]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=100, counter=WORDS, headings=False)
    assert bodies(chunks) == ["intro words", "how to use it", "more usage"]
    kept = chunk_blocks(blocks, doc="p", title="Page", budget=100, counter=WORDS)
    assert bodies(kept) == ["Page\n\nintro words", "Usage\n\nhow to use it", "Usage\n\nmore usage"]
    assert [c.heading_path for c in chunks] == [PAGE, ("Page", "Usage"), ("Page", "Usage")]
    assert [c.context for c in chunks] == ["Page", "Page > Usage", "Page > Usage"]
    assert [c.meta["block_indices"] for c in chunks] == [(1,), (3,), (5,)]


def test_headings_without_content_make_no_chunks():
    blocks = [
        heading("Page", PAGE, "top"),
        heading("Empty", ("Page", "Empty"), "empty"),
        heading("Deeper", ("Page", "Empty", "Deeper"), "deeper"),
        text("   "),  # whitespace-only text is no content either
        text("finally some text", ("Page", "Empty", "Deeper"), "deeper"),
    ]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=100, counter=WORDS, headings=False)
    assert bodies(chunks) == ["finally some text"]
    assert chunks[0].context == "Page > Empty > Deeper"
    assert chunks[0].section_id == "deeper"
    # kept, the headings open the body of the first block they name: no chunk of headings alone
    kept = chunk_blocks(blocks, doc="p", title="Page", budget=100, counter=WORDS)
    assert bodies(kept) == ["Page\n\nEmpty\n\nDeeper\n\nfinally some text"]
    assert kept[0].context == "Page > Empty > Deeper" and kept[0].meta["block_indices"] == (0, 1, 2, 4)


def test_kept_headings_that_do_not_fit_or_end_the_page_make_their_own_chunk():
    blocks = [
        heading("A long heading of six words", ("Page", "H"), "h"),
        text("one two three four five", ("Page", "H"), "h"),
        heading("Trailing heading", ("Page", "T"), "t"),
    ]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=8, counter=WORDS, context=False)
    assert bodies(chunks) == ["A long heading of six words", "one two three four five", "Trailing heading"]
    assert chunks[2].heading_path == ("Page", "T")


def test_the_context_line_counted_or_not():
    blocks = [text(f"word{i} " * 4, ("Page", "Usage"), "usage") for i in range(6)]
    bare = chunk_blocks(blocks, doc="p", title="Page", budget=12, counter=WORDS, context=False)
    with_line = chunk_blocks(blocks, doc="p", title="Page", budget=12, counter=WORDS, count_context=False)
    assert bodies(bare) == bodies(with_line) and all(c.context == "Page > Usage" for c in with_line)
    counted = chunk_blocks(blocks, doc="p", title="Page", budget=12, counter=WORDS)
    assert len(counted) > len(bare)  # the line's words take room: smaller bodies


def test_a_heading_path_longer_than_the_window_is_cut_and_its_section_still_chunked():
    long_path = ("Page", " ".join(f"h{i}" for i in range(40)))  # 41 words of context for a 12-word budget
    blocks = [text("the body must survive chunking", long_path, "long")]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=12, counter=WORDS)
    assert bodies(chunks) == ["the body must survive chunking"]
    # at most half the budget (settings.CONTEXT_MAX_SHARE), cut at a word, marked as cut
    line = chunks[0].context
    assert line.startswith("Page > h0") and line.endswith(" …") and WORDS.count(line) <= 6
    one_more = " ".join(("Page > h0 h1 h2 h3 h4 h5".split())[:len(line.split())]) + " …"
    assert WORDS.count(one_more) > 6  # the longest start that fits, not merely a short one
    assert all(WORDS.count(c.text) <= 12 for c in chunks)
    # A line that leaves room for a body is never touched, even past half the budget.
    fits = ("Page", "one two three four five six")
    kept = chunk_blocks([text("body words here", fits, "u")], doc="p", title="Page", budget=12, counter=WORDS)
    assert WORDS.count(kept[0].context) > 6 and kept[0].context == "Page > one two three four five six"


def test_different_heading_paths_or_sections_are_never_mixed():
    # No heading blocks at all: the change of path or section id alone ends the chunk.
    blocks = [
        text("one", ("Page", "A"), "a"),
        text("two", ("Page", "A"), "a"),
        text("three", ("Page", "B"), "b"),
        text("four", ("Page", "B"), "b2"),
        text("five", ("Page", "A"), "a"),
    ]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=100, counter=WORDS)
    assert bodies(chunks) == ["one\n\ntwo", "three", "four", "five"]
    assert [c.section_id for c in chunks] == ["a", "b", "b2", "a"]


def test_overlap_of_one_block_within_a_section():
    # budget 12: [a b c] fill it; d starts a new chunk that repeats c: [c d e] = 12.
    chunks = chunk_blocks(three_word_blocks(5), doc="p", title="Page", budget=12, overlap_blocks=1, counter=WORDS)
    assert [c.meta["block_indices"] for c in chunks] == [(0, 1, 2), (2, 3, 4)]
    assert [c.meta["overlap"] for c in chunks] == [0, 1]
    assert chunks[1].body.startswith("c1 c2 c3\n\nd1")


def test_no_overlap_across_sections():
    blocks = three_word_blocks(2, ("Page", "A"), "a") + three_word_blocks(2, ("Page", "B"), "b")
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=100, overlap_blocks=1, counter=WORDS)
    assert [c.meta["block_indices"] for c in chunks] == [(0, 1), (2, 3)]
    assert [c.meta["overlap"] for c in chunks] == [0, 0]


def test_overlap_is_dropped_when_it_would_not_fit():
    # "b" alone fills the budget (1 + 6 + 2 = 9), so repeating "a" before it would overflow.
    blocks = [text("a1 a2 a3"), text("b1 b2 b3 b4 b5 b6")]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=9, overlap_blocks=1, counter=WORDS)
    assert bodies(chunks) == ["a1 a2 a3", "b1 b2 b3 b4 b5 b6"]
    assert [c.meta["overlap"] for c in chunks] == [0, 0]


# --- metadata --------------------------------------------------------------------------------

def test_context_line_and_title_prefix():
    assert context_line(("Guide", "Install"), "Guide") == "Guide > Install"
    assert context_line(("Install", "Linux"), "Guide") == "Guide > Install > Linux"
    assert context_line((), "Guide") == "Guide"
    assert context_line(("Install",), "") == "Install"
    blocks = [text("apt install it", ("Install", "Linux"), "linux")]
    chunk = chunk_blocks(blocks, doc="g", title="Guide", counter=WORDS)[0]
    assert chunk.context == "Guide > Install > Linux"
    assert chunk.heading_path == ("Install", "Linux")  # the parser's path, unchanged
    assert chunk.text == "Guide > Install > Linux\n\napt install it"
    bare = chunk_blocks(blocks, doc="g", title="Guide", context=False, counter=WORDS)[0]
    assert bare.context == "" and bare.text == "apt install it"
    assert bare.meta["tokens"] == 5  # the budget counts the body alone when there is no context


def test_ids_kinds_and_metadata():
    blocks = [
        text("intro"),
        Block("code", "```python\nx = 1\n```", PAGE, "top"),
        Block("list_item", "- an item", PAGE, "top"),
        text("other", ("Page", "B"), "b"),
    ]
    chunks = chunk_blocks(blocks, doc="guide.html", title="Page", budget=100, counter=WORDS)
    assert [c.id for c in chunks] == ["guide.html#0", "guide.html#1"]
    assert chunks[0].kinds == ("code", "list_item", "text")
    assert chunks[1].kinds == ("text",)
    assert {c.doc for c in chunks} == {"guide.html"} and {c.title for c in chunks} == {"Page"}
    assert chunks[0].meta["parts"] == ((0, 0, 1), (1, 0, 1), (2, 0, 1))
    assert chunks[0].meta["split"] == ()
    # Stable: the same blocks give the same chunks.
    assert chunk_blocks(blocks, doc="guide.html", title="Page", budget=100, counter=WORDS) == chunks


def test_blocks_to_text():
    blocks = [heading("Page", PAGE, "top"), text("  Some text. "), Block("code", "```py\nx = 1\n```"), text("")]
    assert blocks_to_text(blocks) == "Page\n\nSome text.\n\n```py\nx = 1\n```"
    assert blocks_to_text(blocks, headings=False) == "Some text.\n\n```py\nx = 1\n```"


def test_dedupe_by_content_hash():
    blocks = [text("same words", ("Page", "A"), "a"), text("same words", ("Page", "A"), "a2")]
    chunks = chunk_blocks(blocks, doc="p", title="Page", counter=WORDS)
    other = chunk_blocks([text("same words", ("Page", "B"), "b")], doc="p", title="Page", counter=WORDS)
    kept, dropped = dedupe(chunks + other)
    # Same context and body: one dropped. Same body under another heading: a different text, kept.
    assert [c.id for c in kept] == ["p#0", "p#0"] and [c.section_id for c in kept] == ["a", "b"]
    assert [c.section_id for c in dropped] == ["a2"]
    assert dedupe([]) == ([], [])


def test_dedupe_keeps_a_page_that_is_in_the_corpus_twice_and_reports_it():
    blocks = [text("same words", ("Page", "A"), "a")]
    one = chunk_blocks(blocks, doc="a.html", title="Page", counter=WORDS)
    two = chunk_blocks(blocks, doc="copy/a.html", title="Page", counter=WORDS)
    report: list[tuple[str, str]] = []
    kept, dropped = dedupe(one + two, report=report)
    assert [c.doc for c in kept] == ["a.html", "copy/a.html"] and dropped == []
    assert report == [("copy/a.html#0", "a.html#0")]


# --- over-long blocks ------------------------------------------------------------------------

CODE_PATH = ("Page", "Code")


def code_block(functions: list[list[str]], lang: str = "python") -> Block:
    body = "\n\n".join("\n".join(f) for f in functions)
    return Block("code", f"```{lang}\n{body}\n```", CODE_PATH, "code")


def nonblank_code_lines(chunks: list[Chunk]) -> list[str]:
    lines = []
    for c in chunks:
        lines += [ln for ln in c.body.split("\n")[1:-1] if ln.strip()]
    return lines


def test_long_code_is_split_at_blank_lines_and_refenced():
    # 4 functions of 2 lines of 3 words, blank lines between. Overhead: context 3 + fences 2 +
    # specials 2 = 7. Budget 22: greedy would cut inside the third function (7 + 15 = 22); a blank
    # line after a piece over 0.6 * 22 = 13.2 tokens ends it, so f1+f2 (19) and f3+f4 (19).
    functions = [[f"def f{i} x:", f"  return {i} now"] for i in range(4)]
    block = code_block(functions)
    chunks = chunk_blocks([block], doc="p", title="Page", budget=22, counter=WORDS)
    assert bodies(chunks) == [
        "```python\ndef f0 x:\n  return 0 now\n\ndef f1 x:\n  return 1 now\n```",
        "```python\ndef f2 x:\n  return 2 now\n\ndef f3 x:\n  return 3 now\n```",
    ]
    assert [c.meta["tokens"] for c in chunks] == [19, 19]
    assert [c.meta["parts"] for c in chunks] == [((0, 0, 2),), ((0, 1, 2),)]
    assert [c.meta["split"] for c in chunks] == [("lines",), ("lines",)]


def test_long_code_keeps_every_line_exactly_once():
    functions = [[f"def f{i}(a, b):", f"    total = a + b + {i}", f"    return total * {i}"] for i in range(12)]
    block = code_block(functions, lang="py")
    original = [ln for f in functions for ln in f]
    for budget in (15, 20, 31, 60):
        chunks = chunk_blocks([block], doc="p", title="Page", budget=budget, counter=WORDS)
        assert len(chunks) > 1
        assert all(c.body.startswith("```py\n") and c.body.endswith("\n```") for c in chunks)
        assert nonblank_code_lines(chunks) == original
        assert max(c.meta["tokens"] for c in chunks) <= budget


def test_unfenced_code_is_split_at_lines_too():
    code = "\n".join(f"line number {i}" for i in range(10))
    split = split_block(code, kind="code", budget=10, counter=WORDS)  # 2 + 3 per line: 2 lines
    assert split.method == "lines"
    assert split.pieces == tuple(f"line number {i}\nline number {i + 1}" for i in range(0, 10, 2))


def test_long_table_is_split_by_rows_with_the_caption_repeated():
    caption = "Rates by region"
    rows = [f"region: r{i} | rate: {i}" for i in range(6)]
    block = Block("table", "\n".join([caption, *rows]), ("Page", "Rates"), "rates")
    # context 3 + caption 3 + specials 2 = 8, plus 5 per row: budget 18 holds two rows.
    chunks = chunk_blocks([block], doc="p", title="Page", budget=18, counter=WORDS)
    assert bodies(chunks) == [f"{caption}\n{rows[i]}\n{rows[i + 1]}" for i in (0, 2, 4)]
    assert [c.meta["split"] for c in chunks] == [("rows",)] * 3
    assert [c.kinds for c in chunks] == [("table",)] * 3


def test_long_prose_is_split_at_sentences_not_at_abbreviations():
    sentences = [
        "Use a decorator, e.g. Python's timing wrapper, to measure calls. ",  # 10 words
        "It wraps the function. ",  # 4
        "Stacking works too. ",  # 3
        "The order matters.",  # 3
    ]
    block = text("".join(sentences))
    # overhead 1 + 2 = 3: the first sentence alone is 13 <= 14; the other three together are 13.
    chunks = chunk_blocks([block], doc="p", title="Page", budget=14, counter=WORDS)
    assert bodies(chunks) == [sentences[0].strip(), "It wraps the function. Stacking works too. The order matters."]
    assert [c.meta["split"] for c in chunks] == [("sentences",), ("sentences",)]
    assert chunk_report(chunks, WORDS).hard_cut_chunks == 0


def test_split_long_false_keeps_a_long_block_whole():
    long_words = " ".join(f"w{i}" for i in range(30))
    blocks = [text("before it"), text(long_words), text("after it")]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=12, split_long=False, counter=WORDS)
    assert bodies(chunks) == ["before it", long_words, "after it"]
    assert [c.meta["tokens"] for c in chunks] == [5, 33, 5]
    report = chunk_report(chunks, WORDS, limit=12)
    assert (report.over_limit, report.share_over_limit) == (1, pytest.approx(1 / 3))


def test_a_sentence_longer_than_the_budget_is_hard_cut_and_counted():
    long_words = " ".join(f"w{i}" for i in range(30))  # no sentence boundary at all
    blocks = [text(long_words), text("tail block")]
    # overhead 3, budget 12: 9 words a piece; the last 3 words share a chunk with "tail block".
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=12, counter=WORDS)
    assert [len(c.body.split()) for c in chunks] == [9, 9, 9, 5]
    assert " ".join(c.body for c in chunks).split() == long_words.split() + ["tail", "block"]
    assert all("tokens" in c.meta["split"] for c in chunks)
    report = chunk_report(chunks, WORDS)
    assert (report.split_chunks, report.hard_cut_chunks) == (4, 4)


def test_a_long_table_row_is_cut_at_a_sentence_end_when_one_is_near():
    block = Block("table", "T\nk: v | d: One two three. Four five six. Seven eight nine.", PAGE, "top")
    # overhead: context 1 + caption 1 + specials 2 = 4; budget 13 leaves 9 words, which would cut
    # after "five"; the sentence end after "three." (7 words) is used instead.
    chunks = chunk_blocks([block], doc="p", title="Page", budget=13, counter=WORDS)
    assert bodies(chunks) == ["T\nk: v | d: One two three.", "T\nFour five six. Seven eight nine."]
    assert [c.meta["split"] for c in chunks] == [("rows", "tokens")] * 2


@pytest.mark.model
def test_a_word_longer_than_the_budget_is_cut_inside():
    split = split_block("x" * 50, kind="text", budget=4, counter=get_counter())
    assert "".join(split.pieces) == "x" * 50
    assert split.hard == (True,) * len(split.pieces)
    assert all(get_counter().count(p) <= 4 for p in split.pieces)


def test_a_budget_too_small_for_any_context_line_is_an_error():
    # A long heading path is cut to its share (test above); a budget that cannot hold the shortest
    # line ("…") and one character of the body is still refused with a message, never a silent loss.
    block = text("some words here", ("Page", "A very long section heading"), "s")
    with pytest.raises(ValueError, match="budget"):
        chunk_blocks([block], doc="p", title="Page", budget=3, counter=WORDS)


def test_split_sentences():
    text_ = "See os.path and e.g. NumPy 3.11.2 here. It works! Does it? (Yes.) And i.e. This.\nNext line"
    assert split_sentences(text_) == [
        "See os.path and e.g. NumPy 3.11.2 here. ",
        "It works! ",
        "Does it? ",
        "(Yes.) ",
        "And i.e. This.\n",
        "Next line",
    ]
    assert "".join(split_sentences(text_)) == text_
    assert split_sentences("Added in version 3.11. The default changed.") == [
        "Added in version 3.11. ",
        "The default changed.",
    ]
    assert split_sentences("Call f() etc. Then stop. dr. Who") == ["Call f() etc. Then stop. dr. Who"]


# --- the report ------------------------------------------------------------------------------

def test_chunk_report_by_kind():
    blocks = [text("a b c"), Block("code", "```\nx = 1\n```", ("Page", "C"), "c")]
    chunks = chunk_blocks(blocks, doc="p", title="Page", counter=WORDS)
    naive = [Chunk(id="n#0", doc="n", body="one two three four five six seven")]
    report = chunk_report(chunks + naive, WORDS, limit=8)
    assert [c.meta["tokens"] for c in chunks] == [6, 10]  # "Page > C" + ``` x = 1 ```
    assert (report.count, report.median_tokens, report.max_tokens) == (3, 9.0, 10)
    assert (report.over_limit, report.share_over_limit) == (2, pytest.approx(2 / 3))
    assert report.by_kind == {
        "-": {"chunks": 1, "median_tokens": 9.0, "over_limit": 1, "share_over_limit": 1.0},
        "code": {"chunks": 1, "median_tokens": 10.0, "over_limit": 1, "share_over_limit": 1.0},
        "text": {"chunks": 1, "median_tokens": 6.0, "over_limit": 0, "share_over_limit": 0.0},
    }


# --- with the real tokenizer -----------------------------------------------------------------

@pytest.mark.model
def test_real_tokenizer_budget_defaults_to_the_models_limit():
    counter = get_counter()
    code = "\n\n".join(
        f"def handler_{i}(request, *, timeout=30):\n    response = client.get(request.url, timeout=timeout)\n"
        f"    response.raise_for_status()\n    return response.json()['items'][{i}]"
        for i in range(25)
    )
    prose = "The client retries failed requests, e.g. on timeouts. " * 60
    blocks = [
        Block("heading", "HTTP client", ("HTTP client",), "top", 1),
        Block("text", prose, ("HTTP client",), "top"),
        Block("code", f"```python\n{code}\n```", ("HTTP client", "Examples"), "examples"),
    ]
    assert counter.count(f"```python\n{code}\n```") > 1000
    chunks = chunk_blocks(blocks, doc="http.html", title="HTTP client", headings=False)
    sizes = [counter.count(c.text) for c in chunks]
    assert [c.meta["tokens"] for c in chunks] == sizes
    assert max(sizes) <= 256 == counter.limit
    code_chunks = [c for c in chunks if c.kinds == ("code",)]
    assert len(code_chunks) >= 5
    assert all(c.body.startswith("```python\n") and c.body.endswith("\n```") for c in code_chunks)
    assert nonblank_code_lines(code_chunks) == [ln for ln in code.split("\n") if ln.strip()]
    # Pieces end between functions (at blank lines), never inside one.
    assert all(c.body.split("\n")[1].startswith("def handler_") for c in code_chunks)
    whole = chunk_blocks(blocks, doc="http.html", title="HTTP client", split_long=False, headings=False)
    assert [counter.count(c.text) > 256 for c in whole] == [True, True]
    assert chunk_report(whole).over_limit == 2 and chunk_report(chunks).over_limit == 0


# --- fixed windows, the control of lessons 04 and 09 ---------------------------------------------

def test_windows_hold_the_same_text_and_fill_the_budget_ignoring_blocks():
    from course_lib.core.chunking import window_chunks

    blocks = [heading("Page", PAGE, "top"), text("First sentence here. Second one follows."),
              text("Another block. And more words here."),
              heading("Usage", ("Page", "Usage"), "usage"), text("How to use it well.", ("Page", "Usage"), "usage")]
    windows = window_chunks(blocks, doc="p", title="Page", budget=9, counter=WORDS)
    assert bodies(windows) == ["Page\n\nFirst sentence here. Second one follows.",
                               "Another block. And more words here.\n\nUsage",
                               "How to use it well."]
    assert [c.id for c in windows] == ["p#w0", "p#w1", "p#w2"] and all(c.context == "" for c in windows)
    assert all(c.meta["tokens"] <= 9 for c in windows)
    # the same words as the structured chunks with headings kept, in the same order
    structured = chunk_blocks(blocks, doc="p", title="Page", budget=9, counter=WORDS, context=False)
    assert " ".join(" ".join(bodies(windows)).split()) == " ".join(" ".join(bodies(structured)).split())


def test_windows_within_a_heading_path_restart_there_and_carry_its_context_line():
    from course_lib.core.chunking import window_chunks

    blocks = [heading("Page", PAGE, "top"), text("One two three. Four five six."),
              heading("Usage", ("Page", "Usage"), "usage"), text("Use it like this.", ("Page", "Usage"), "usage")]
    windows = window_chunks(blocks, doc="p", title="Page", budget=12, counter=WORDS, within_heading_path=True,
                            context=True)
    assert bodies(windows) == ["Page\n\nOne two three. Four five six.", "Usage\n\nUse it like this."]
    assert [c.context for c in windows] == ["Page", "Page > Usage"]
    assert all(WORDS.count(c.text) <= 12 for c in windows)  # the context line is counted


def test_a_sentence_longer_than_a_window_is_cut_by_the_splitter():
    from course_lib.core.chunking import window_chunks

    windows = window_chunks([text(" ".join(f"w{i}" for i in range(30)))], doc="p", budget=12, counter=WORDS)
    assert len(windows) >= 3 and all(c.meta["tokens"] <= 12 for c in windows)
    assert " ".join(bodies(windows)).split() == [f"w{i}" for i in range(30)]


def test_without_context_keeps_every_body_and_drops_only_the_line():
    from course_lib.core.chunking import without_context

    blocks = [text("alpha beta", ("Page", "A"), "a"), text("gamma delta", ("Page", "B"), "b")]
    chunks = chunk_blocks(blocks, doc="p", title="Page", budget=20, counter=WORDS, count_context=False)
    bare = without_context(chunks)
    assert bodies(bare) == bodies(chunks) and [c.context for c in bare] == ["", ""]
    assert [c.text for c in bare] == bodies(chunks) and chunks[0].text != bare[0].text
