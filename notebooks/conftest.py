"""Under `make test`, print how long each notebook took under nbval, and the lessons' subtotals.

Not course material: it lets CI's log state a cold run's per-lesson times (issue: the cold
`make test` budget is ≤ 20 minutes for lessons 00–09 and ≤ 60 for everything), measured by the
run itself rather than typed in. The wall-clock span of a notebook is from its first cell's
start to its last cell's end, kernel start included.
"""
from __future__ import annotations

import re
import time

_spans: dict[str, list[float]] = {}


def pytest_runtest_logstart(nodeid: str, location) -> None:
    notebook = nodeid.split("::")[0]
    _spans.setdefault(notebook, [time.monotonic(), time.monotonic()])


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    notebook = nodeid.split("::")[0]
    if notebook in _spans:
        _spans[notebook][1] = time.monotonic()


def lesson_number(notebook: str) -> int | None:
    match = re.search(r"(?:^|/)(\d\d)_", notebook)
    return int(match.group(1)) if match else None


def pytest_terminal_summary(terminalreporter) -> None:
    if not _spans:
        return
    seconds = {notebook: end - start for notebook, (start, end) in _spans.items()}
    write = terminalreporter.write_line
    terminalreporter.section("seconds per notebook (nbval)")
    for notebook, span in seconds.items():
        write(f"{notebook:<64}{span:>8.0f} s")
    groups = {"lessons 00-09 with solutions": lambda n: n is not None and n <= 9,
              "lessons 10-11 with solutions": lambda n: n is not None and n >= 10}
    for label, wanted in groups.items():
        total = sum(span for notebook, span in seconds.items() if wanted(lesson_number(notebook)))
        write(f"{label:<64}{total:>8.0f} s ({total / 60:.1f} min)")
