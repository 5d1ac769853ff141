"""Fill the README's lesson table runtimes from what `make course` measured (.cache/lessons/).

    python scripts/update_readme.py      # or: make readme

Only the runtime column between the `lessons:start/end` markers changes; a lesson that has not
been run keeps an empty cell, so the README never shows a number no code produced.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from course_lib.report import load_records

README = Path(__file__).resolve().parent.parent / "README.md"
_ROW = re.compile(r"^(\| \d\d \| \[[^\]]+\]\(notebooks/(?P<stem>[\w-]+)\.ipynb\) \| [^|]+ \|)[^|\n]*\|$", re.M)


def runtime_cell(seconds: float | None) -> str:
    if seconds is None:
        return " "
    return f" {seconds:.0f} s " if seconds < 120 else f" {seconds / 60:.0f} min "


def update(text: str, records: dict[str, dict]) -> str:
    start, end = text.index("<!-- lessons:start -->"), text.index("<!-- lessons:end -->")
    table = _ROW.sub(lambda m: m.group(1) + runtime_cell(records.get(m.group("stem"), {}).get("runtime_s")) + "|",
                     text[start:end])
    return text[:start] + table + text[end:]


def main() -> int:
    README.write_text(update(README.read_text(), load_records()))
    print(f"updated {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
