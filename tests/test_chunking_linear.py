"""The parser, chunking and table expansion do work in proportion to the page, not to its square.

Counted, not timed: a wrapped token counter adds up the characters it is asked to tokenize, and
a profiler hook counts Python function calls (each resumed generator counts). As the generated
input doubles, the work must about double too (< 2.6 per doubling; a quadratic stage gives 4).
"""
import sys
from itertools import pairwise

from bs4 import BeautifulSoup

from course_lib.core.chunking import chunk_blocks
from course_lib.core.html_parts import table_to_text
from course_lib.core.splitting import split_block
from course_lib.records import Block

MAX_RATIO = 2.6


class CountingCounter:
    """Words plus one token per 8 characters (a long run of one letter is many word pieces, as
    it is for a real WordPiece tokenizer), and the characters tokenized so far."""

    limit = 256

    def __init__(self) -> None:
        self.chars = 0

    def count(self, text: str) -> int:
        self.chars += len(text)
        return len(text.split()) + len(text) // 8 + 2


def _ratios(work: list[int]) -> list[float]:
    return [b / a for a, b in pairwise(work)]


def _chunk_work(text: str, kind: str = "text") -> int:
    counter = CountingCounter()
    chunks = chunk_blocks([Block(kind, text, ("Page",), "s")], doc="p", title="Page", counter=counter)
    assert all(counter.count(c.text) <= counter.limit for c in chunks)
    return counter.chars


def _sizes(base: int = 40_000) -> list[int]:
    return [base, 2 * base, 4 * base]


def test_a_paragraph_without_punctuation_is_split_in_linear_work():
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "lambda", "sigma", "omega"]
    work = [_chunk_work(" ".join(words[i % len(words)] for i in range(n // 6))) for n in _sizes()]
    assert max(_ratios(work)) < MAX_RATIO, work


def test_a_long_run_of_one_character_is_split_in_linear_work():
    work = [_chunk_work("a" * n) for n in _sizes()]
    assert max(_ratios(work)) < MAX_RATIO, work


def test_code_with_a_long_run_of_blank_lines_is_linear():
    work = [_chunk_work("```py\nx = 1\n" + "\n" * n + "y = 2\n```", kind="code") for n in _sizes(20_000)]
    assert max(_ratios(work)) < MAX_RATIO, work


def test_a_huge_table_block_is_split_by_rows_in_linear_work():
    work = [_chunk_work("Caption\n" + "Key: alpha beta | Value: gamma delta\n" * (n // 36), kind="table")
            for n in _sizes()]
    assert max(_ratios(work)) < MAX_RATIO, work


def test_split_pieces_still_concatenate_to_the_text():
    text = " ".join(["word"] * 5000)
    split = split_block(text, budget=100, counter=CountingCounter())
    assert " ".join(split.pieces).split() == text.split() and split.hard_cuts == len(split.pieces)


def _calls(fn, *args) -> int:
    calls = 0

    def hook(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(hook)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return calls


def _table(rows: int, cols: int, rowspan: bool = False) -> BeautifulSoup:
    span = ' rowspan="2"' if rowspan else ""
    head = "<tr>" + "".join(f"<th>h{c}</th>" for c in range(cols)) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td{span if c % 2 == 0 else ''}>v{r}</td>" for c in range(cols)) + "</tr>"
                   for r in range(rows))
    return BeautifulSoup(f"<table>{head}{body}</table>", "lxml").table


def test_a_huge_table_expands_in_linear_work():
    work = [_calls(table_to_text, _table(n, 4)) for n in (500, 1000, 2000)]
    assert max(_ratios(work)) < MAX_RATIO, work


def test_a_very_wide_table_with_rowspans_expands_in_linear_work():
    work = [_calls(table_to_text, _table(4, n, rowspan=True)) for n in (250, 500, 1000)]
    assert max(_ratios(work)) < MAX_RATIO, work


def _page(body: str) -> str:
    return f"<html><head><title>T</title></head><body><main><h1>T</h1>{body}</main></body></html>"


def _nested_divs(depth: int) -> str:
    return "<div><p>some words here</p>" * depth + "</div>" * depth


def _nested_lists(depth: int) -> str:
    return "<ul><li>item words" * depth + "</li></ul>" * depth


def _parse_work(html: str) -> int:
    from course_lib.core.parse import parse_blocks

    return _calls(parse_blocks, html)


def test_the_parser_walks_deep_nesting_in_linear_work():
    work = [_parse_work(_page(_nested_divs(n))) for n in (250, 500, 1000)]
    assert max(_ratios(work)) < MAX_RATIO, work


def test_the_parser_walks_deeply_nested_lists_in_linear_work():
    work = [_parse_work(_page(_nested_lists(n))) for n in (250, 500, 1000)]
    assert max(_ratios(work)) < MAX_RATIO, work


def test_the_parser_reads_a_huge_table_and_a_long_paragraph_in_linear_work():
    def body(n: int) -> str:
        rows = "".join(f"<tr><td>k{r}</td><td>value {r}</td></tr>" for r in range(n))
        return f"<p>{'word ' * (20 * n)}</p><table><tr><th>key</th><th>value</th></tr>{rows}</table>"

    work = [_parse_work(_page(body(n))) for n in (500, 1000, 2000)]
    assert max(_ratios(work)) < MAX_RATIO, work
