"""Learner copies of the lessons, with cells to write and the presented lessons' outputs: `make handout`.

    python scripts/make_handout.py [--out handout/]

Writes each lesson notebook (notebooks/NN_*.ipynb; never notebooks/solutions/) to the output
folder (git-ignored), so a learner runs each cell and sees the result appear:

- **cells to write**: a code cell tagged `handout-todo` (one or two per lesson) loses its code; a
  `# TODO` line names what to define, and a self-check cell after it keeps the cell's own closing
  `assert`s, so the learner knows when the cell is right (`split_todo`). A tagged cell must end
  with at least one assert that reads a name the cell defines; the script refuses one that does not.
- **outputs**: the lessons the 3-hour workshop presents from committed outputs (`WORKSHOP` in
  scripts/update_readme.py) keep theirs, so the teacher can scroll through them on a learner's
  screen; every other lesson has every output, execution count and timestamp removed. A cell to
  write and its self-check never keep an output: it would show the answer.

Cell tags stay (they only matter to nbval). The handout notebooks import course_lib like the
originals, so hand them out inside a checkout of the repository: put the folder next to
`notebooks/` (the default) or copy its files over `notebooks/` on the learners' machines.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TODO_TAG = "handout-todo"
CHECK_TAG = "handout-check"
PRESENTED_HOW = "from committed outputs"


def presented_lessons() -> set[str]:
    """The lesson numbers ("02b", "09") the 3-hour workshop presents from committed outputs."""
    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
    update = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(update)
    return {key for key, _, how in update.WORKSHOP if how.startswith(PRESENTED_HOW)}


def strip_cell(cell: nbformat.NotebookNode) -> None:
    """Remove a cell's outputs, execution count and execution timing metadata."""
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    cell.metadata.pop("execution", None)


def strip(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook with no outputs, no execution counts and no execution timing metadata."""
    for cell in nb.cells:
        strip_cell(cell)
    return nb


def _defined(statements: list[ast.stmt]) -> list[str]:
    """Top-level names the statements bind (assignments, functions, classes), in order."""
    names: list[str] = []
    for node in statements:
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
        found = [t.id for t in targets if isinstance(t, ast.Name)]
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.append(node.name)
        names += [n for n in found if n not in names]
    return names


def split_todo(source: str, *, where: str = "cell") -> tuple[str, str]:
    """(the cell the learner writes, its self-check) from a `handout-todo` cell's source.

    The closing asserts become the self-check; the rest is replaced by a `# TODO` that names what
    the asserts read, so the learner knows which names to define. A cell without closing asserts
    that read one of its names cannot check itself: ValueError naming `where`.
    """
    tree = ast.parse(source)
    body = list(tree.body)
    first_check = len(body)
    while first_check and isinstance(body[first_check - 1], ast.Assert):
        first_check -= 1
    checks = body[first_check:]
    check_text = "\n".join(ast.get_source_segment(source, node) for node in checks)
    read = {n.id for node in checks for n in ast.walk(node) if isinstance(n, ast.Name)}
    wanted = [name for name in _defined(body[:first_check]) if name in read]
    if not checks or not wanted:
        raise ValueError(f"{where}: a {TODO_TAG} cell must end with asserts that read a name it defines")
    names = ", ".join(f"`{name}`" for name in wanted)
    todo = (f"# TODO: write this cell: define {names} as the text above describes.\n"
            "# Then run the self-check cell below; it passes when your cell is right.\n")
    return todo, f"# Self-check: runs without an error when the cell above is right.\n{check_text}\n" \
                 'print("self-check passed")'


def handout(nb: nbformat.NotebookNode, *, keep_outputs: bool,
            name: str = "notebook") -> nbformat.NotebookNode:
    """A lesson as a learner gets it: each `handout-todo` cell replaced by a TODO and a self-check
    (neither with an output), and every other output kept only when `keep_outputs`."""
    cells = []
    for number, cell in enumerate(nb.cells, 1):
        if not keep_outputs:
            strip_cell(cell)
        if cell.cell_type == "code" and TODO_TAG in cell.metadata.get("tags", []):
            todo, check = split_todo(cell.source, where=f"{name}, cell {number}")
            strip_cell(cell)
            cell.source = todo
            check_cell = nbformat.v4.new_code_cell(check, metadata={"tags": [CHECK_TAG]})
            check_cell["id"] = f"{cell.get('id', number)}-check"[:64]
            cells += [cell, check_cell]
        else:
            cells.append(cell)
    nb.cells = cells
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
    presented = presented_lessons()
    for path in lessons(args.notebooks):
        keep = path.name.split("_")[0] in presented
        try:
            copy = handout(nbformat.read(path, as_version=4), keep_outputs=keep, name=path.name)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        nbformat.write(copy, args.out / path.name)
        todos = sum(TODO_TAG in c.metadata.get("tags", []) for c in copy.cells)
        print(f"  {path.name}: {todos} cell(s) to write, outputs {'kept (presented)' if keep else 'removed'}")
    print(f"{len(lessons(args.notebooks))} lessons without solutions in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
