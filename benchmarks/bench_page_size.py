"""Time against page size: does any stage grow faster than the page? (50 KB -> 5 MB)

    python benchmarks/bench_page_size.py [--shapes prose,table,nested,run] [--sizes 50,100,...]
                                         [--stage chunk|parse|both] [--max-seconds 180]
    python benchmarks/bench_page_size.py --pages [--big-mb 15] [--replies 5000] [--base-mb 1]

For each page shape (prose without sentence punctuation, one huge table, deep nesting, a long
run of one character) and each size, the page is generated, parsed with `parse.parse_blocks`
and chunked with `chunking.chunk_blocks` (the bundled model's tokenizer, its real 256-token
budget), and each stage is timed. Every time is printed with its ratio to the previous size:
a linear stage shows about 2.0 per doubling, a quadratic one about 4.0. A stage that takes
longer than --max-seconds stops that shape (the following sizes would only take longer).
The unit tests assert the same linearity by counting tokenizer work, not by the clock.

`--pages` runs whole pages through parse -> chunk -> index (the BM25 index over the chunks; the
dense index would only add the embedder's time per chunk, linear by construction) in one run: a
1 MB documentation-like page (headings, prose, tables, code), the same page at --big-mb MB, and a
discussion thread of --replies replies each nested in the one before. Each page runs in its own
forked process, so its peak memory (ru_maxrss, less the process's size when it started) is its
own; times and peak memory are printed with their ratios to the 1 MB page, and the bytes ratio
beside them: linear growth keeps the time ratio near the bytes ratio.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
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


SECTION = ("<h2>Section {i}</h2><p>The reader opens file number {i} and checks its header first. "
           "It then decodes every row, keeps the values it knows and reports the others.</p>"
           "<table><tr><th>Option</th><th>Default</th></tr><tr><td>option{i}</td><td>{i}</td></tr>"
           "<tr><td>limit{i}</td><td>100</td></tr></table>"
           "<pre>def read_{i}(path):\n    with open(path) as handle:\n        return handle.read()</pre>")


def documentation(size: int) -> str:
    """A documentation-like page of `size` bytes: sections of prose, a small table and code."""
    sections, n, i = [], 0, 0
    while n < size:
        sections.append(SECTION.format(i=i))
        n += len(sections[-1])
        i += 1
    return "<html><body><main><h1>Reference</h1>" + "".join(sections) + "</main></body></html>"


def thread(replies: int) -> str:
    """A discussion thread: each reply nested inside the one before, as threaded forums write them."""
    opening = "".join(f'<div class="reply"><p class="author">user{i}</p><p>Reply {i}: I tried the fix '
                      f"from the previous answer and it works for version {i % 7}.</p>" for i in range(replies))
    return ("<html><body><main><h1>Thread: reading large files</h1><p>How do I read a large file?</p>"
            + opening + "</div>" * replies + "</main></body></html>")


def _through_index(html: str, out) -> None:
    """Parse, chunk and index one page (in a forked process); send back the times and peak memory."""
    from course_lib.core.pipeline import Pipeline

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    start = time.perf_counter()
    blocks = parse_blocks(html)
    times.append(time.perf_counter() - start)
    start = time.perf_counter()
    chunks = chunk_blocks(blocks, doc="page.html", counter=get_counter())
    times.append(time.perf_counter() - start)
    start = time.perf_counter()
    Pipeline.over(chunks, dense=False)
    times.append(time.perf_counter() - start)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base  # KB on Linux
    out.send((times, len(blocks), len(chunks), peak_kb / 1024))


def measure(rows: dict[str, str]) -> list[dict]:
    """Each named page through parse -> chunk -> index in its own forked process, the first page
    the baseline: its bytes, stage times, peak memory (MB), block and chunk counts, and the
    ratios of bytes, total time and peak memory to the first page's."""
    context = multiprocessing.get_context("fork")  # the warmed tokenizer comes along
    measured, first = [], None
    for name, html in rows.items():
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_through_index, args=(html, send))
        child.start()
        times, n_blocks, n_chunks, peak = receive.recv()
        child.join()
        size, total = len(html.encode()) / 1e6, sum(times)
        first = first or (size, max(total, 1e-9), max(peak, 1e-3))  # a tiny baseline never divides by 0
        measured.append({"page": name, "mb": size, "parse_s": times[0], "chunk_s": times[1],
                         "index_s": times[2], "total_s": total, "peak_mb": peak, "blocks": n_blocks,
                         "chunks": n_chunks, "bytes_ratio": size / first[0], "time_ratio": total / first[1],
                         "memory_ratio": peak / first[2]})
    return measured


def pages(big_mb: float, replies: int, *, base_mb: float = 1.0) -> list[dict]:
    """The `base_mb` page, the big page and the thread, each through parse -> chunk -> index,
    printed with their ratios to the `base_mb` page; returns the measured rows."""
    rows = {f"{base_mb:g} MB page": documentation(int(base_mb * 1e6)),
            f"{big_mb:g} MB page": documentation(int(big_mb * 1e6)),
            f"thread, {replies} nested replies": thread(replies)}
    print(f"{'page':<30} {'MB':>6} {'parse s':>8} {'chunk s':>8} {'index s':>8} {'total s':>8} {'peak MB':>8} "
          f"{'blocks':>7} {'chunks':>7} | ratios to {base_mb:g} MB: bytes, time, memory", flush=True)
    measured = measure(rows)
    for row in measured:
        print(f"{row['page']:<30} {row['mb']:>6.2f} {row['parse_s']:>8.2f} {row['chunk_s']:>8.2f} "
              f"{row['index_s']:>8.2f} {row['total_s']:>8.2f} {row['peak_mb']:>8.1f} {row['blocks']:>7} "
              f"{row['chunks']:>7} | {row['bytes_ratio']:.1f}, {row['time_ratio']:.1f}, "
              f"{row['memory_ratio']:.1f}", flush=True)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_KB)), help="page sizes in KB")
    parser.add_argument("--max-seconds", type=float, default=180.0)
    parser.add_argument("--pages", action="store_true", help="whole pages through parse, chunk and index")
    parser.add_argument("--big-mb", type=float, default=15.0, help="the big page's size (--pages)")
    parser.add_argument("--replies", type=int, default=5000, help="the thread's nested replies (--pages)")
    parser.add_argument("--base-mb", type=float, default=1.0, help="the baseline page's size (--pages)")
    args = parser.parse_args()
    counter = get_counter()
    chunk_blocks(parse_blocks(prose(5000)), doc="warm-up.html", counter=counter)  # load and warm the tokenizer
    if args.pages:
        pages(args.big_mb, args.replies, base_mb=args.base_mb)
        return
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
