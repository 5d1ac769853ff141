"""Learner copies of the lessons, without outputs and without solutions: `make handout`.

    python scripts/make_handout.py [--out handout/]

Writes each lesson notebook (notebooks/NN_*.ipynb; never notebooks/solutions/) to the output
folder (git-ignored) with every output, execution count and execution timestamp removed, so a
learner runs each cell and sees the result appear, rather than reading a finished notebook.
Cell tags stay (they only matter to nbval). The handout notebooks import course_lib like the
originals, so hand them out inside a checkout of the repository: put the folder next to
`notebooks/` (the default) or copy its files over `notebooks/` on the learners' machines.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def strip(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook with no outputs, no execution counts and no execution timing metadata."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    return nb


def lessons(folder: Path) -> list[Path]:
    """The lesson notebooks of a folder: numbered, top level only (solutions live one level down)."""
    return sorted(folder.glob("[0-9][0-9]*_*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks")
    parser.add_argument("--out", type=Path, default=ROOT / "handout")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for path in lessons(args.notebooks):
        nbformat.write(strip(nbformat.read(path, as_version=4)), args.out / path.name)
        print(f"  {path.name}")
    print(f"{len(lessons(args.notebooks))} lessons without outputs or solutions in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
