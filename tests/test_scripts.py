"""The helper scripts: README runtimes come from recorded runs."""
import importlib
from types import ModuleType

import update_readme  # scripts/update_readme.py: tests/conftest.py puts scripts/ on the path


def _load(name: str) -> ModuleType:
    """A script under scripts/ as a module, by name (for the tests that pick one by name)."""
    return importlib.import_module(name)


def test_readme_runtimes_come_from_records_and_stay_empty_without_one():
    text = ("intro\n<!-- lessons:start -->\n| # | notebook | change | runtime |\n|---|---|---|---|\n"
            "| 00 | [a](notebooks/00_a.ipynb) | x | |\n| 01 | [b](notebooks/01_b.ipynb) | y | 9 s |\n"
            "<!-- lessons:end -->\n| 07 | [c](notebooks/07_c.ipynb) | z | |\n")
    out = update_readme.update(text, {"00_a": {"runtime_s": 24.1}, "07_c": {"runtime_s": 5}})
    assert "| 00 | [a](notebooks/00_a.ipynb) | x | 24 s |" in out
    assert "| 01 | [b](notebooks/01_b.ipynb) | y | |" in out
    assert out.endswith("| 07 | [c](notebooks/07_c.ipynb) | z | |\n")  # outside the markers
    assert "Together: the 1 lesson timed so far 0.4 min; lesson 01 not yet timed" in out  # 01_b has no record


def test_readme_total_comes_from_the_same_records_and_replaces_the_old_one():
    text = ("<!-- lessons:start -->\n| # | notebook | change | runtime |\n|---|---|---|---|\n"
            "| 00 | [a](notebooks/00_a.ipynb) | x | |\n| 01 | [b](notebooks/01_b.ipynb) | y | |\n"
            "Together: old.\n<!-- lessons:end -->\n")
    records = {"00_a": {"runtime_s": 60.0, "solutions_runtime_s": 30.0}, "01_b": {"runtime_s": 120.0}}
    out = update_readme.update(text, records)
    assert "Together: the 2 lessons 3.0 min.\n<!-- lessons:end -->" in out and "old" not in out
    records["01_b"]["solutions_runtime_s"] = 30.0
    assert "Together: the 2 lessons 3.0 min, 4.0 min with their solutions." in update_readme.update(out, records)


def test_a_runtime_measured_on_a_busy_machine_is_marked_and_named():
    text = ("<!-- lessons:start -->\n| # | notebook | change | runtime |\n|---|---|---|---|\n"
            "| 00 | [a](notebooks/00_a.ipynb) | x | |\n| 01 | [b](notebooks/01_b.ipynb) | y | |\n<!-- lessons:end -->\n")
    records = {"00_a": {"runtime_s": 60.0, "load_at_start": 0.4}, "01_b": {"runtime_s": 90.0, "load_at_start": 6.0}}
    out = update_readme.update(text, records)
    assert "| x | 60 s |" in out and "| y | 90 s† |" in out
    assert "† Lesson 01 last ran while the machine was busy" in out and "Lesson 00" not in out


def test_long_runtimes_are_shown_in_minutes():
    assert update_readme.runtime_cell(300) == " 5.0 min " and update_readme.runtime_cell(157) == " 2.6 min "

