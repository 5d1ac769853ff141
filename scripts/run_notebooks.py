"""Execute every lesson notebook top to bottom in a fresh kernel, in place, then summarise.

    python scripts/run_notebooks.py [notebooks/ | notebooks/01_naive_baseline.ipynb ...]

This is `make course`. Each notebook runs with its own folder as working directory, exactly as
JupyterLab would run it; the outputs are written back so they can be read on GitHub, and the
figures each lesson recorded (course_lib.report) are printed at the end with its runtime.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from course_lib.report import format_records, load_records, record


def notebooks_in(args: list[str]) -> list[Path]:
    paths: list[Path] = []
    for arg in args or ["notebooks"]:
        path = Path(arg)
        if path.is_dir():
            paths += sorted(path.glob("[0-9][0-9]_*.ipynb")) + sorted(path.glob("solutions/[0-9][0-9]_*.ipynb"))
        else:
            paths.append(path)
    return paths


def execute(path: Path, *, timeout: int = 1800) -> float:
    """Run one notebook in place; return its wall-clock seconds."""
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    try:
        NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        # Written even on failure, so the error is visible in the notebook where it happened.
        nbformat.write(notebook, path)
    return time.perf_counter() - start


def main(args: list[str]) -> int:
    failed = []
    for path in notebooks_in(args):
        print(f"running {path} ...", flush=True)
        try:
            seconds = execute(path)
        except CellExecutionError as err:
            failed.append(path)
            print(f"  FAILED: {str(err).splitlines()[-1] if str(err) else err}", flush=True)
            continue
        if path.parent.name != "solutions":
            record(path.stem, runtime_s=round(seconds, 1))
        print(f"  done in {seconds:.0f} s", flush=True)
    print("\nWhat each lesson measured:\n" + format_records(load_records()))
    if failed:
        print("\nFailed: " + ", ".join(map(str, failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
