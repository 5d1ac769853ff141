"""Execute every lesson notebook top to bottom in a fresh kernel, in place, then summarise.

    python scripts/run_notebooks.py [--strict-load] [notebooks/ | notebooks/01_naive_baseline.ipynb ...]

This is `make course`. Each notebook runs with its own folder as working directory, exactly as
JupyterLab would run it; the outputs are written back so they can be read on GitHub, and the
figures each lesson recorded (course_lib.infra.lesson_records) are printed at the end with its runtime.

Lessons are executed ONE AT A TIME on a QUIET machine before their outputs are committed: the
outputs teach latency figures, and a lesson run while other notebooks or tests share the CPU
prints timings several times too slow (and "goal NOT met" where it is met). So before each
notebook this runner WAITS until the 1-minute load average has settled at or below `MAX_LOAD`
(1.5), up to `--wait` seconds (default 900; 0 does not wait); if the machine is still busy it
warns, or with `--strict-load` refuses to start that notebook. Per-lesson
and total runtimes are printed, and each lesson's runtime and the load it ran under are
recorded for `make readme` (README and docs/TEACHING.md).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from course_lib.infra.lesson_records import QUIET_LOAD, format_records, load_records, record


def notebooks_in(args: list[str]) -> list[Path]:
    paths: list[Path] = []
    for arg in args or ["notebooks"]:
        path = Path(arg)
        if path.is_dir():
            paths += sorted(path.glob("[0-9][0-9]*_*.ipynb"))
            paths += sorted(path.glob("solutions/[0-9][0-9]*_*.ipynb"))
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


MAX_LOAD = QUIET_LOAD


def load_average() -> float | None:
    """The 1-minute load average, or None where the system does not report one (Windows)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def load_problem(load: float | None, *, limit: float = MAX_LOAD) -> str | None:
    """A one-line warning when the machine is too busy for trustworthy outputs, else None."""
    if load is None or load <= limit:
        return None
    return (f"load average {load:.2f} > {limit} on {os.cpu_count()} cores: timings in this "
            f"notebook's outputs will be too slow; run lessons one at a time on a quiet machine "
            f"before committing")


def wait_for_quiet(*, limit: float = MAX_LOAD, max_wait_s: float = 900, poll_s: float = 10,
                   sleep=None) -> float | None:
    """Wait until the 1-minute load is at or below `limit` (at most `max_wait_s`); return the last load.

    A lesson timed on a busy machine teaches wrong latencies, so the runner waits for the
    previous notebook's kernel, a test run or a build to settle instead of timing through it.
    """
    sleep = sleep or time.sleep
    load, waited = load_average(), 0.0
    while load is not None and load > limit and waited < max_wait_s:
        if waited == 0:
            print(f"  waiting for a quiet machine (load {load:.2f} > {limit}) ...", flush=True)
        sleep(poll_s)
        waited += poll_s
        load = load_average()
    return load


def lesson_of(path: Path) -> tuple[str, str]:
    """The lesson a notebook belongs to and the prefix of the figures its run is recorded as."""
    if path.parent.name == "solutions":
        return path.stem.removesuffix("_solutions"), "solutions_"
    return path.stem, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["notebooks"])
    parser.add_argument("--wait", type=float, default=900, metavar="SECONDS",
                        help="wait up to this long before each notebook for the load to settle (0: no wait)")
    parser.add_argument("--strict-load", action="store_true",
                        help=f"refuse to start a notebook while the 1-min load average exceeds {MAX_LOAD}")
    args = parser.parse_args(argv)
    failed, refused, times = [], [], {}
    for path in notebooks_in(args.paths):
        load = wait_for_quiet(max_wait_s=args.wait)
        problem = load_problem(load)
        if problem:
            print(f"{'REFUSED' if args.strict_load else 'WARNING'} {path}: {problem}", flush=True)
            if args.strict_load:
                refused.append(path)
                continue
        print(f"running {path} ...", flush=True)
        try:
            seconds = execute(path)
        except CellExecutionError as err:
            failed.append(path)
            print(f"  FAILED: {str(err).splitlines()[-1] if str(err) else err}", flush=True)
            continue
        times[path] = seconds
        lesson, prefix = lesson_of(path)
        started_at = None if load is None else round(load, 2)
        record(lesson, **{f"{prefix}runtime_s": round(seconds, 1), f"{prefix}load_at_start": started_at})
        print(f"  done in {seconds:.0f} s", flush=True)
    print("\nWhat each lesson measured:\n" + format_records(load_records()))
    print("\nRuntimes:")
    for path, seconds in times.items():
        print(f"  {path.name:<52}{seconds:>8.1f} s")
    lessons = sum(s for p, s in times.items() if p.parent.name != "solutions")
    print(f"  {'lessons':<52}{lessons:>8.1f} s ({lessons / 60:.1f} min)")
    print(f"  {'total':<52}{sum(times.values()):>8.1f} s ({sum(times.values()) / 60:.1f} min)")
    if refused:
        print("\nRefused (machine busy): " + ", ".join(map(str, refused)))
    if failed:
        print("\nFailed: " + ", ".join(map(str, failed)))
    return 1 if failed or refused else 0


if __name__ == "__main__":
    sys.exit(main())
