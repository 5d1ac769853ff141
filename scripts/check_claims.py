"""Keep verdicts honest: flag Markdown cells that state a verdict in hand-written words.

    python scripts/check_claims.py [NOTEBOOK ...]      (default: notebooks/**/*.ipynb)

A Markdown cell that says a technique "helps", is "better", "significant" or makes "no
difference" is flagged unless the code cell just before or just after it backs the words:
either it renders the verdict from the figures (`verdict(`, `verdict_table(`, `technique_table(`
from course_lib.evaluation.display) or it holds an `assert` that compares a figure, so a rerun on other
data fails instead of leaving a stale claim. Sentences about the sources are exempt: a
blockquote line (`> ...`) or a line saying "the production write-up says" / "the chunking
lesson says". Code spans and fenced code are not prose and are skipped. Exit status 1 when a
cell is flagged; `--count` prints the number of flagged cells per notebook and exits 0.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

VERDICT_WORDS = ("helps", "helped", "better", "worse", "significant", "significantly", "no difference",
                 "improves", "improved", "hurts", "beats", "wins", "outperforms", "gain", "loses")
_VERDICT = re.compile(r"\b(" + "|".join(w.replace(" ", r"\s+") for w in VERDICT_WORDS) + r")\b", re.I)
_EXEMPT_LINE = re.compile(r"^\s*>|the production write-up says|the chunking lesson says", re.I)
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_RENDERS = re.compile(r"\b(verdict|verdict_table|technique_table)\s*\(")
# An assert that names a figure compares something: `assert c.delta > 0`, `assert p < 0.05`,
# `assert not c.significant` / `assert c.significant`.
_FIGURE_ASSERT = re.compile(r"^\s*assert\b[^\n]*(<|>|==|!=|\bsignificant\b)", re.M)


@dataclass(frozen=True)
class Flag:
    """One Markdown cell whose verdict words no neighbouring code cell backs."""

    notebook: str
    cell: int
    words: tuple[str, ...]
    line: str


def verdict_words(markdown: str) -> list[tuple[str, str]]:
    """(word, line) for each verdict word in the prose of a Markdown cell, exempt lines skipped."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", markdown))
    found = []
    for line in prose.splitlines():
        if _EXEMPT_LINE.search(line):
            continue
        found += [(" ".join(m.group(1).lower().split()), line.strip()) for m in _VERDICT.finditer(line)]
    return found


def backs_a_verdict(code: str) -> bool:
    """True when a code cell renders a verdict from figures or asserts one."""
    return bool(_RENDERS.search(code) or _FIGURE_ASSERT.search(code))


def _neighbour_code(cells: list, index: int, step: int) -> str:
    """The source of the nearest code cell before (step -1) or after (step +1) `index`."""
    i = index + step
    while 0 <= i < len(cells):
        if cells[i].cell_type == "code":
            return cells[i].source
        i += step
    return ""


def flag_cells(notebook: nbformat.NotebookNode, *, name: str = "") -> list[Flag]:
    """Every Markdown cell of a notebook that states an unbacked verdict."""
    cells, flags = notebook.cells, []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        found = verdict_words(cell.source)
        if not found:
            continue
        if any(backs_a_verdict(_neighbour_code(cells, index, step)) for step in (-1, 1)):
            continue
        words = tuple(dict.fromkeys(word for word, _ in found))
        flags.append(Flag(name, index, words, found[0][1]))
    return flags


def check_paths(paths: list[Path]) -> dict[str, list[Flag]]:
    """Flags per notebook path, for every notebook given."""
    return {str(path): flag_cells(nbformat.read(path, as_version=4), name=str(path)) for path in paths}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--count", action="store_true", help="print flagged cells per notebook, exit 0")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    paths = args.notebooks or sorted((root / "notebooks").glob("**/*.ipynb"))
    results = check_paths(paths)
    total = sum(len(flags) for flags in results.values())
    for path, flags in results.items():
        if args.count:
            print(f"{len(flags):4d}  {path}")
            continue
        for flag in flags:
            print(f"{path}: cell {flag.cell}: {', '.join(flag.words)}: {flag.line[:100]}")
    print(f"{total} cell(s) state a verdict with no rendered figure or assertion beside them",
          file=sys.stderr)
    return 0 if args.count or total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
