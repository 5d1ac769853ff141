"""What each lesson measured, saved as JSON so `make course` and the README can summarise it.

A notebook ends with `record("01_naive_baseline", chunks=2391, ...)`; the figures are the ones
the notebook computed in that run, never typed in.
"""
from __future__ import annotations

import json
from pathlib import Path

from course_lib.infra.files import atomic_write
from course_lib.infra.paths import cache_dir

# Above this 1-minute load average a lesson's timings are too slow: the runner warns, the README marks them.
QUIET_LOAD = 1.5


def lessons_dir() -> Path:
    folder = cache_dir() / "lessons"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Recorded(dict):
    """The figures one `record` call saved; a notebook shows it as one line, not a page of figures."""

    def __init__(self, figures: dict, *, path: Path):
        super().__init__(sorted(figures.items()))
        self.path = path

    def summary(self) -> str:
        return f"recorded {len(self)} figures in {self.path.name} (make course summarises them)"

    def __repr__(self) -> str:
        return self.summary()

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython would print the dict otherwise
        printer.text(self.summary())


def record(lesson: str, **figures) -> Recorded:
    """Merge figures into the lesson's JSON record; return only the figures given in this call.

    The file also holds what `make course` adds (runtime, load), which describe an EARLIER run of
    the notebook; returning them would print an old run's runtime as if this run had measured it.
    The returned mapping displays as one line: the figures are for `make course` and lesson 09.
    """
    path = lessons_dir() / f"{lesson}.json"
    current = json.loads(path.read_text()) if path.exists() else {}
    current.update(figures)
    atomic_write(path, json.dumps(current, indent=2, sort_keys=True, default=str))
    return Recorded(figures, path=path)


def load_records() -> dict[str, dict]:
    """Every lesson's record, by lesson name in lesson order; unreadable files are reported."""
    records = {}
    for path in sorted(lessons_dir().glob("*.json")):
        try:
            records[path.stem] = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            records[path.stem] = {"error": f"{path.name}: unreadable ({err})"}
    return records


def format_records(records: dict[str, dict]) -> str:
    """A short plain-text summary: one block per lesson, one figure per line."""
    lines = []
    for lesson, figures in records.items():
        lines.append(lesson)
        for key, value in figures.items():
            shown = f"{value:.3f}" if isinstance(value, float) else value
            lines.append(f"    {key:<32} {shown}")
    return "\n".join(lines)
