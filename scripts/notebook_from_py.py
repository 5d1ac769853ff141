"""Authoring helper: turn a percent-format script into a fresh, unexecuted notebook.

    python scripts/notebook_from_py.py draft.py notebooks/NN_slug.ipynb

Cells are separated by `# %%` (code) and `# %% [markdown]` (markdown, each line's leading "# "
removed). The .ipynb is the source of truth afterwards; run `make course` to execute it.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

_MARKER = re.compile(r"^# %%( \[markdown\])?\s*$", re.M)


def cells_from_script(text: str) -> list:
    parts = _MARKER.split(text)
    cells = []
    for i in range(1, len(parts), 2):
        is_markdown, body = parts[i], parts[i + 1].strip("\n")
        if is_markdown:
            source = "\n".join(re.sub(r"^# ?", "", line) for line in body.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(source))
        elif body.strip():
            cells.append(nbformat.v4.new_code_cell(body))
    return cells


def main(source: str, target: str) -> None:
    notebook = nbformat.v4.new_notebook(cells=cells_from_script(Path(source).read_text()))
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook.metadata["language_info"] = {"name": "python"}
    nbformat.write(notebook, target)


if __name__ == "__main__":
    main(*sys.argv[1:3])
