"""Time against page size: does any stage grow faster than the page? (50 KB -> 5 MB)

    python benchmarks/bench_page_size.py [--shapes prose,table,nested,run] [--sizes 50,100,...]
                                         [--stage chunk|parse|both] [--max-seconds 180]

For each page shape (prose without sentence punctuation, one huge table, deep nesting, a long
run of one character) and each size, the page is generated, parsed with `parse.parse_blocks`
and chunked with `chunking.chunk_blocks` (the bundled model's tokenizer, its real 256-token
budget), and each stage is timed. Every time is printed with its ratio to the previous size:
a linear stage shows about 2.0 per doubling, a quadratic one about 4.0. A stage that takes
longer than --max-seconds stops that shape (the following sizes would only take longer).
The unit tests assert the same linearity by counting tokenizer work, not by the clock.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from course_lib.core.chunking import chunk_blocks
from course_lib.core.parse import parse_blocks
from course_lib.core.tokens import get_counter

SIZES_KB = (50, 100, 200, 400, 800, 1600, 3200, 5000)
WORDS = "alpha beta gamma delta epsilon zeta theta lambda sigma omega".split()


def prose(size: int) -> str:
    """One paragraph of words with no sentence punctuation at all."""
    words, n = [], 0
    while n < size:
        word = WORDS[len(words) % len(WORDS)]
        words.append(word)
        n += len(word) + 1
    return f"<html><body><h1>T</h1><p>{' '.join(words)}</p></body></html>"


def table(size: int) -> str:
    """One table with a header row and as many rows as fit."""
    row = "<tr><td>alpha beta</td><td>gamma delta epsilon</td></tr>"
    return ("<html><body><h1>T</h1><table><tr><th>Key</th><th>Value</th></tr>"
            + row * max(1, size // len(row)) + "</table></body></html>")


def nested(size: int) -> str:
    """Divs nested as deep as the size allows, a word in each."""
    depth = max(1, size // len("<div>word </div>"))
    return "<html><body><h1>T</h1>" + "<div>word " * depth + "</div>" * depth + "</body></html>"


def run(size: int) -> str:
    """A single 'word' that is one character repeated."""
    return f"<html><body><h1>T</h1><p>{'a' * size}</p></body></html>"


SHAPES = {"prose": prose, "table": table, "nested": nested, "run": run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_KB)), help="page sizes in KB")
    parser.add_argument("--max-seconds", type=float, default=180.0)
    args = parser.parse_args()
    counter = get_counter()
    chunk_blocks(parse_blocks(prose(5000)), doc="warm-up.html", counter=counter)  # load and warm the tokenizer
    print(f"{'shape':<8} {'size':>8} {'parse s':>9} {'ratio':>6} {'chunk s':>9} {'ratio':>6} {'chunks':>7}")
    for shape in args.shapes.split(","):
        previous: tuple[float, float] | None = None
        for kb in (int(s) for s in args.sizes.split(",")):
            html = SHAPES[shape](kb * 1000)
            start = time.perf_counter()
            blocks = parse_blocks(html)
            parsed = time.perf_counter() - start
            start = time.perf_counter()
            chunks = chunk_blocks(blocks, doc="page.html", counter=counter)
            chunked = time.perf_counter() - start
            ratios = ("", "") if previous is None else (
                f"{parsed / max(previous[0], 1e-9):.2f}", f"{chunked / max(previous[1], 1e-9):.2f}")
            print(f"{shape:<8} {kb:>6}KB {parsed:>9.2f} {ratios[0]:>6} {chunked:>9.2f} {ratios[1]:>6} "
                  f"{len(chunks):>7}", flush=True)
            previous = (parsed, chunked)
            if parsed + chunked > args.max_seconds:
                print(f"{shape:<8} stopped: {parsed + chunked:.0f} s > --max-seconds", flush=True)
                break


if __name__ == "__main__":
    main()
