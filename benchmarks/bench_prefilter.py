"""Is the boilerplate remover's pre-filter worth having? Parse time with it and without it.

    python benchmarks/bench_prefilter.py [--corpus DIR] [--repeat N]

`boilerplate._remove` asks soupsieve about an element only when the element's name or
attributes contain a token that every match must carry. This parses every page of the corpus
with `parse_blocks` twice per round, once with that remover and once with a plain
`soupsieve.select` in its place, alternating the order, and prints the best time of each and
their ratio (measured in the same run, so the ratio holds on another machine). It also checks
that both produce the same blocks on every page (tests/test_parse_prefilter.py checks the same
property on generated selectors and pages).
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import soupsieve

from course_lib.core import boilerplate, parse
from course_lib.core.decode import decode_html
from course_lib.core.load import CORPUS_DIR
from course_lib.core.parse import parse_blocks


def remove_plainly(root, selectors: tuple[str, ...]) -> int:
    """The reference remover: `soupsieve.select`, no pre-filter."""
    doomed = soupsieve.select(", ".join(selectors), root)
    for tag in doomed:
        if not tag.decomposed:
            tag.decompose()
    return len(doomed)


def timed(pages: list[str], remover) -> tuple[float, list]:
    """Seconds to parse every page with `remover` in place of the parser's, and the blocks."""
    parse._remove = remover  # parse_blocks looks the remover up in its module at call time
    try:
        gc.collect()
        start = time.perf_counter()
        blocks = [parse_blocks(html) for html in pages]
        return time.perf_counter() - start, blocks
    finally:
        parse._remove = boilerplate._remove


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--corpus", type=Path, default=Path(CORPUS_DIR))
    args.add_argument("--repeat", type=int, default=3, help="rounds; the best of each counts")
    opts = args.parse_args(argv)
    if not opts.corpus.is_dir():
        print(f"No corpus folder at {opts.corpus}: pass --corpus DIR", file=sys.stderr)
        return 2
    paths = sorted(p for p in opts.corpus.rglob("*.html")
                   if not p.relative_to(opts.corpus).parts[0].startswith("_"))  # Sphinx's _sources, _static
    pages = [decode_html(p.read_bytes()) for p in paths]
    removers = {"pre-filter": boilerplate._remove, "soupsieve.select": remove_plainly}
    best: dict[str, tuple[float, list]] = {}
    for round_ in range(opts.repeat):
        for name in list(removers)[:: 1 if round_ % 2 == 0 else -1]:
            seconds, blocks = timed(pages, removers[name])
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, blocks)
    fast, plain = best["pre-filter"][0], best["soupsieve.select"][0]
    same = best["pre-filter"][1] == best["soupsieve.select"][1]
    print(f"{len(pages)} pages from {opts.corpus}, best of {opts.repeat}")
    print(f"pre-filter {fast:.2f}s, soupsieve.select {plain:.2f}s: "
          f"the pre-filter parses {plain / fast:.2f}x as fast")
    print("same blocks on every page:", same)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
