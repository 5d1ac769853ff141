"""A lesson a learner reads in about 45 minutes: its main path's size, its Takeaway, its picture.

The main path is every cell before the "## Going further" heading (side questions live after it);
a lesson without that heading is all main path. Counts are of cells and of Markdown words (prose;
code and outputs are read, not counted).
"""
import json
import re
from pathlib import Path

import pytest

from course_lib.extras.diagram import STAGE_KEYS

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
MAX_CELLS, MAX_WORDS = 50, 2000
GOING_FURTHER = "## Going further"


def main_path(cells: list[dict]) -> list[dict]:
    """The cells before the first "## Going further" heading."""
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and "".join(cell["source"]).lstrip().startswith(GOING_FURTHER):
            return cells[:index]
    return cells


def words(cells: list[dict]) -> int:
    return sum(len("".join(c["source"]).split()) for c in cells if c["cell_type"] == "markdown")


def cells_of(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def test_the_main_path_is_cut_at_going_further():
    cells = [{"cell_type": "markdown", "source": ["# 01 · Title\n", "one two"]},
             {"cell_type": "code", "source": ["x = 1"]},
             {"cell_type": "markdown", "source": ["## Going further\n", "three four five"]},
             {"cell_type": "markdown", "source": ["six"]}]
    assert len(main_path(cells)) == 2 and words(main_path(cells)) == 6
    assert main_path(cells[:2]) == cells[:2]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lessons_main_path_reads_in_about_45_minutes(path):
    path_cells = main_path(cells_of(path))
    assert len(path_cells) <= MAX_CELLS, f"{path.name}: {len(path_cells)} cells before '{GOING_FURTHER}'"
    assert words(path_cells) <= MAX_WORDS, f"{path.name}: {words(path_cells)} words before '{GOING_FURTHER}'"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_opens_with_a_three_point_takeaway_and_the_pipeline_picture(path):
    cells = cells_of(path)
    title = "".join(cells[0]["source"])
    assert re.match(r"# \d\d\w? · ", title), f"{path.name}: the first cell is the lesson's title"
    after = title.split("**Takeaway**", 1)
    assert len(after) == 2, f"{path.name}: no **Takeaway** under the title"
    bullets = [line for line in after[1].splitlines() if line.startswith("- ")]
    assert len(bullets) == 3, f"{path.name}: the Takeaway has {len(bullets)} bullets, not 3"
    header_code = next(c for c in cells if c["cell_type"] == "code")
    calls = re.findall(r"show_pipeline\(([^)]*)\)", "".join(header_code["source"]))
    assert calls, f"{path.name}: the first code cell draws the pipeline"
    stages = re.findall(r"[\"'](\w+)[\"']", calls[0])
    assert set(stages) <= set(STAGE_KEYS), f"{path.name}: unknown stages {stages}"
