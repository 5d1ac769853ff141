"""Move nbval's comment markers out of the code learners read and into cell tags.

A line such as ``# NBVAL_CHECK_OUTPUT`` at the top of a cell is noise to a learner and is easy to
lose when a cell is edited; a cell tag carries the same instruction to nbval and stays out of the
source. Markers become tags as follows:

- ``# NBVAL_CHECK_OUTPUT``     -> tag ``nbval-check-output``
- ``# NBVAL_SKIP``             -> tag ``nbval-skip``
- ``# NBVAL_RAISES_EXCEPTION`` -> tag ``raises-exception``
- ``# NBVAL_IGNORE_OUTPUT``    -> removed (``--nbval-lax`` already ignores every untagged output)

Only the marker lines and the tags change: outputs, execution counts and all other metadata are
written back as nbformat read them. Running the script twice changes nothing the second time.

Usage: python scripts/markers_to_tags.py [NOTEBOOK_OR_FOLDER ...]   (default: notebooks/)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent

# None means "drop the line, add no tag".
MARKER_TAGS: dict[str, str | None] = {
    "# NBVAL_CHECK_OUTPUT": "nbval-check-output",
    "# NBVAL_SKIP": "nbval-skip",
    "# NBVAL_RAISES_EXCEPTION": "raises-exception",
    "# NBVAL_IGNORE_OUTPUT": None,
}


def convert_source(source: str) -> tuple[str, list[str]]:
    """Return the source without marker lines and the tags those lines asked for, in order."""
    kept: list[str] = []
    tags: list[str] = []
    for line in source.split("\n"):
        marker = line.strip()
        if marker in MARKER_TAGS:
            tag = MARKER_TAGS[marker]
            if tag is not None and tag not in tags:
                tags.append(tag)
            continue
        kept.append(line)
    return "\n".join(kept), tags


def convert_notebook(nb: nbformat.NotebookNode) -> int:
    """Convert every code cell of ``nb`` in place; return how many cells changed."""
    changed = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source, tags = convert_source(cell.source)
        if source == cell.source:
            continue
        cell.source = source
        if tags:
            existing = list(cell.metadata.get("tags", []))
            cell.metadata["tags"] = existing + [t for t in tags if t not in existing]
        changed += 1
    return changed


def notebooks_under(paths: list[Path]) -> list[Path]:
    """Every .ipynb named or found below the given paths, skipping checkpoint copies."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        else:
            found.append(path)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "notebooks"])
    args = parser.parse_args(argv)
    total = 0
    for path in notebooks_under(args.paths):
        nb = nbformat.read(path, as_version=4)
        changed = convert_notebook(nb)
        if changed:
            nbformat.write(nb, path)
            print(f"{path}: {changed} cell(s) converted")
        total += changed
    print(f"{total} cell(s) converted in total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
