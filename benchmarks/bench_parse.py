"""Parse throughput of the three BeautifulSoup parsers on the corpus, and whether they agree.

    python benchmarks/bench_parse.py [--corpus DIR] [--repeat N]

Each parser turns every page into blocks with `course_lib.core.parse.parse_blocks` (pages decoded
once beforehand, so only parsing is timed). Speeds are printed as pages/s and as ratios against
html.parser and against the fastest parser, all measured in the same run on the same machine,
so the ratios hold even where the absolute figures do not. Then every parser's blocks are
compared with lxml's, page by page, and the first difference of each disagreeing page shown.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

from course_lib.core.decode import decode_html
from course_lib.core.parse import parse_blocks

PARSERS = ("html.parser", "lxml", "html5lib")
REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPORA = (REPO / "data" / "corpus", Path("/tmp/pydoc/x/usr/share/doc/python3.11/html"))


def load(corpus: Path) -> dict[str, str]:
    """Every HTML page under `corpus` (Sphinx's _sources and _static skipped), decoded."""
    paths = sorted(p for p in corpus.rglob("*.html") if not p.relative_to(corpus).parts[0].startswith("_"))
    return {p.relative_to(corpus).as_posix(): decode_html(p.read_bytes()) for p in paths}


def timed(pages: dict[str, str], parser: str) -> tuple[float, dict[str, list]]:
    """Seconds to parse every page with one parser, and the blocks it produced."""
    gc.collect()  # the previous run's soups are cyclic garbage: do not bill this run for them
    start = time.perf_counter()
    blocks = {path: parse_blocks(html, parser=parser) for path, html in pages.items()}
    return time.perf_counter() - start, blocks


def race(pages: dict[str, str], repeat: int) -> dict[str, tuple[float, dict[str, list]]]:
    """Best time per parser over `repeat` rounds; each round runs every parser, in a rotating
    order, so a busy moment on a shared machine does not land on one parser only."""
    best: dict[str, tuple[float, dict[str, list]]] = {}
    for round_ in range(repeat):
        for parser in PARSERS[round_ % len(PARSERS):] + PARSERS[:round_ % len(PARSERS)]:
            seconds, blocks = timed(pages, parser)
            if parser not in best or seconds < best[parser][0]:
                best[parser] = (seconds, blocks)
    return {parser: best[parser] for parser in PARSERS}


def first_difference(a: list, b: list) -> str:
    """A one-line description of where two block lists part."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"block {i}: {x.kind} {x.text[:60]!r} vs {y.kind} {y.text[:60]!r}"
    return f"lengths {len(a)} vs {len(b)}"


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--corpus", type=Path, default=next((c for c in DEFAULT_CORPORA if c.is_dir()), None))
    args.add_argument("--repeat", type=int, default=3, help="rounds; each parser's best one counts")
    opts = args.parse_args(argv)
    if opts.corpus is None or not opts.corpus.is_dir():
        print("No corpus folder: pass --corpus DIR", file=sys.stderr)
        return 2
    pages = load(opts.corpus)
    print(f"{len(pages)} pages from {opts.corpus}, best of {opts.repeat} run(s)\n")

    results = race(pages, opts.repeat)
    fastest = min(seconds for seconds, _ in results.values())
    baseline = results["html.parser"][0]
    print(f"{'parser':<12} {'seconds':>8} {'pages/s':>8} {'speed vs html.parser':>21} {'time vs fastest':>16}")
    for parser, (seconds, _) in results.items():
        print(f"{parser:<12} {seconds:8.2f} {len(pages) / seconds:8.1f} {baseline / seconds:20.2f}x"
              f" {seconds / fastest:15.2f}x")

    reference = results["lxml"][1]
    print("\nAgreement with lxml (same blocks on a page):")
    for parser, (_, blocks) in results.items():
        differing = [path for path in pages if blocks[path] != reference[path]]
        print(f"  {parser:<12} {len(pages) - len(differing)}/{len(pages)} pages identical")
        for path in differing[:5]:
            print(f"      {path}: {first_difference(blocks[path], reference[path])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
