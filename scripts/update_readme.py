"""Fill the README's lesson table and docs/TEACHING.md's runtime table from `make course` (.cache/lessons/).

    python scripts/update_readme.py      # or: make readme

Only the runtime column between the README's `lessons:start/end` markers changes, and only the
table between TEACHING.md's `runtimes:start/end` markers is rewritten; a lesson that has not
been run keeps an empty cell, so neither file shows a number no code produced.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from course_lib.infra.files import atomic_write
from course_lib.infra.lesson_records import QUIET_LOAD, load_records

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEACHING = ROOT / "docs" / "TEACHING.md"
_ROW = re.compile(r"^(\| \d\d \| \[[^\]]+\]\(notebooks/(?P<stem>[\w-]+)\.ipynb\) \| [^|]+ \|)[^|\n]*\|$",
                  re.M)


def runtime_cell(seconds: float | None) -> str:
    """A runtime for planning a session: seconds, or minutes to one decimal past two minutes (a
    lesson of 157 s must not read as "3 min", the classroom limit)."""
    if seconds is None:
        return " "
    return f" {seconds:.0f} s " if seconds < 120 else f" {seconds / 60:.1f} min "


def update(text: str, records: dict[str, dict]) -> str:
    start, end = text.index("<!-- lessons:start -->"), text.index("<!-- lessons:end -->")
    def cell(match: re.Match) -> str:
        figures = records.get(match.group("stem"), {})
        busy = (figures.get("load_at_start") or 0) > QUIET_LOAD and figures.get("runtime_s") is not None
        shown = runtime_cell(figures.get("runtime_s"))
        return match.group(1) + (shown.rstrip() + BUSY_MARK + " " if busy else shown) + "|"

    table = _ROW.sub(cell, text[start:end])
    stems = [match.group("stem") for match in _ROW.finditer(table)]
    # A blank line first: GitHub would read a line right after a table as one more row.
    table = _TOTAL.sub("", table).rstrip("\n") + "\n\n" + total_line(records, stems) + "\n"
    return text[:start] + table + text[end:]


_TOTAL = re.compile(r"^Together: .*\n?", re.M)
BUSY_MARK = "†"


def total_line(records: dict[str, dict], stems: list[str]) -> str:
    """The table's lessons together, from the same records; no total while any of them was never run."""
    lessons = [records.get(stem, {}).get("runtime_s") for stem in stems]
    solutions = [records.get(stem, {}).get("solutions_runtime_s") for stem in stems]
    if not lessons or None in lessons:
        return "Together: not yet timed (run `make course`, then `make readme`)."
    text = f"Together: the {len(lessons)} lessons {sum(lessons) / 60:.1f} min"
    if None not in solutions:
        text += f", {(sum(lessons) + sum(solutions)) / 60:.1f} min with their solutions"
    busy = [stem[:2] for stem in stems if (records.get(stem, {}).get("load_at_start") or 0) > QUIET_LOAD]
    if busy:
        lessons_named = f"Lesson{'s' * (len(busy) > 1)} {', '.join(busy)}"
        text += (f". {BUSY_MARK} {lessons_named} last ran while the machine was busy "
                 f"(1-minute load above {QUIET_LOAD} at its start): a quiet run is faster")
    return text + "."


def teaching_table(records: dict[str, dict], lessons: list[str]) -> str:
    """The teacher's runtime table: each lesson, its solutions, the load it ran under, running total."""
    rows = ["| lesson | runtime | solutions | load at start | lessons so far |", "|---|---|---|---|---|"]
    total = 0.0
    for lesson in lessons:
        figures = records.get(lesson, {})
        runtime = figures.get("runtime_s")
        total += runtime or 0.0
        load = figures.get("load_at_start")
        cells = [runtime, figures.get("solutions_runtime_s"), load, total if runtime else None]
        shown = [runtime_cell(cells[0]), runtime_cell(cells[1]), " " if load is None else f" {load:.2f} ",
                 runtime_cell(cells[3])]
        rows.append(f"| {lesson} |" + "|".join(shown) + "|")
    return "\n".join(rows)


def update_teaching(text: str, records: dict[str, dict], lessons: list[str]) -> str:
    start, end = text.index("<!-- runtimes:start -->"), text.index("<!-- runtimes:end -->")
    head = start + len("<!-- runtimes:start -->")
    return text[:head] + "\n" + teaching_table(records, lessons) + "\n" + text[end:]


def main() -> int:
    records = load_records()
    atomic_write(README, update(README.read_text(), records))
    print(f"updated {README}")
    if TEACHING.exists():
        lessons = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        atomic_write(TEACHING, update_teaching(TEACHING.read_text(), records, lessons))
        print(f"updated {TEACHING}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
