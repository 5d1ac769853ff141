"""`make readme` renders the README's findings, study times and disk needs, and TEACHING's agendas,
targets and cache size from records and notebooks: never a figure no code produced."""
import json
from pathlib import Path

import nbformat
from test_scripts import _load

ROOT = Path(__file__).resolve().parent.parent
HEADLINE = {"naive_to_final_test": {
    "recall@5": {"naive": 0.75, "final": 0.85, "delta": 0.10, "interval": [0.02, 0.18], "wins": 30,
                 "decision": [0.01, 0.19], "decision_level": 0.975, "losses": 10, "p_holm": 0.01, "verdict": "gain"},
    "mrr": {"naive": 0.5, "final": 0.49, "delta": -0.01, "interval": [-0.04, 0.02], "wins": 20,
            "losses": 22, "p_holm": 0.6, "verdict": "equivalent"}},
    "reranker": "maxsim:test"}


def _lesson(path: Path, words: int, code_cells: int, further_words: int = 0) -> None:
    cells = [nbformat.v4.new_markdown_cell(" ".join(["word"] * words))]
    cells += [nbformat.v4.new_code_cell("x = 1") for _ in range(code_cells)]
    if further_words:
        cells += [nbformat.v4.new_markdown_cell("## Going further\n" + " ".join(["w"] * further_words)),
                  nbformat.v4.new_code_cell("y = 2")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def test_the_findings_are_lesson_09s_record_or_nothing():
    update = _load("update_readme")
    text = "a\n<!-- findings:start -->\nold\n<!-- findings:end -->\nb\n"
    out = update.update_findings(text, {"09_what_moved_the_needle": HEADLINE})
    assert "| recall@5 | 0.75 | 0.85 | +0.10 [+0.01, +0.19] 97.5% | 30 / 10 | **gain** |" in out  # decided on
    assert "| MRR | 0.50 | 0.49 | −0.01 [−0.04, +0.02] 95% | 20 / 22 | **equivalent** |" in out  # an older record
    assert "`maxsim:test`" in out and "Holm-adjusted level over these 2 metrics" in out and "\nold\n" not in out
    # no record: the block is emptied, never filled with a guess
    assert update.update_findings(out, {}) == "a\n<!-- findings:start -->\n<!-- findings:end -->\nb\n"


def test_study_time_counts_the_main_path_at_the_stated_rate(tmp_path):
    update = _load("update_readme")
    _lesson(tmp_path / "00_a.ipynb", words=300, code_cells=4, further_words=900)
    assert update.study_minutes(tmp_path / "00_a.ipynb", words_per_minute=150, minutes_per_code_cell=1) == 6
    assert update.study_minutes(tmp_path / "missing.ipynb") is None


def test_the_lesson_table_fills_study_and_runtime_and_a_02b_row(tmp_path):
    update = _load("update_readme")
    _lesson(tmp_path / "00_a.ipynb", words=update.WORDS_PER_MINUTE * 2, code_cells=3)
    _lesson(tmp_path / "02b_b.ipynb", words=update.WORDS_PER_MINUTE, code_cells=1)
    text = ("<!-- lessons:start -->\n| # | notebook | change | study | runtime |\n|---|---|---|---|---|\n"
            "| 00 | [a](notebooks/00_a.ipynb) | x | | |\n| 02b | [b](notebooks/02b_b.ipynb) | y | 9 min | |\n"
            "<!-- lessons:end -->\n")
    out = update.update(text, {"00_a": {"runtime_s": 30.0, "solutions_runtime_s": 10.0}}, notebooks=tmp_path)
    per_code = update.MINUTES_PER_CODE_CELL
    assert f"| 00 | [a](notebooks/00_a.ipynb) | x | {2 + 3 * per_code:.0f} min | 30 s |" in out
    assert f"| 02b | [b](notebooks/02b_b.ipynb) | y | {1 + per_code:.0f} min | |" in out
    assert f"Together: study about {(3 + 4 * per_code) / 60:.1f} h at {update.WORDS_PER_MINUTE} words" in out
    assert "the 1 lesson timed so far 0.5 min; lesson 02b not yet timed" in out  # 02b never ran: no total


def test_the_agenda_adds_up_and_flags_a_live_lesson_that_does_not_fit():
    update = _load("update_readme")
    plan = [("00", 15, "live"), ("break", 10, ""), ("01", 5, "live"), ("02", 20, "from committed outputs")]
    records = {"00_a": {"runtime_s": 60.0}, "01_b": {"runtime_s": 400.0}, "02_c": {"runtime_s": 900.0}}
    out = update.agenda(plan, records, ["00_a", "01_b", "02_c"], start=9 * 60)
    assert "| 9:00–9:15 | 00 a | live | 60 s |" in out and "| 9:15–9:25 | break |" in out
    assert "| 9:25–9:30 | 01 b |" in out and "| 9:30–9:50 | 02 c |" in out
    assert f"Together: {50 / 60:.1f} h in the room; the lessons run live compute {460 / 60:.1f} min" in out
    assert "Lessons 01 run longer than their slot" in out  # 02 is presented, so its runtime is no problem
    assert sum(minutes for _, minutes, _ in update.WORKSHOP) == 180  # the 3-hour workshop is 3 hours


def test_targets_are_marked_met_or_not_from_the_records():
    update = _load("update_readme")
    records = {"00_a": {"runtime_s": 60.0, "solutions_runtime_s": 30.0},
               "01_b": {"runtime_s": 100.0, "solutions_runtime_s": 30.0}}
    out = update.targets(records, ["00_a", "01_b"])
    assert "each lesson within 90 s: **not met** (lessons 01)" in out
    assert f"all 2 lessons within 12 min: {160 / 60:.1f} min, **met**" in out
    assert "with their solutions within 20 min" in out
    partly = update.targets(records, ["00_a", "01_b", "02_c"])
    assert "**not met** (lessons 01) among those timed; 02 not yet timed" in partly
    assert "not yet checked (lesson(s) 02 never timed" in partly


def test_teaching_blocks_and_disk_sizes_are_measured(tmp_path):
    update = _load("update_readme")
    cache = tmp_path / "cache"
    (cache / "embeddings").mkdir(parents=True)
    (cache / "embeddings" / "v.bin").write_bytes(b"x" * 2_000_000)
    (cache / "lessons").mkdir()
    (cache / "lessons" / "warm_cache.json").write_text(json.dumps({"runtime_s": 75}))
    text = "<!-- cache:start -->\nold\n<!-- cache:end -->\n<!-- targets:start -->\n<!-- targets:end -->\n"
    out = update.update_teaching(text, {"warm_cache": {"runtime_s": 75}}, ["00_a"], cache=cache)
    assert "the cache folder held 0.0 GB (largest: `embeddings` 2 MB" in out and "last took 75 s" in out
    assert "not yet checked: no lesson timed" in out and "\nold\n" not in out
    disk = update.disk_text(tmp_path, cache)  # no .venv/ and no data/ here: only what exists is named
    assert disk.startswith("the cache `.cache/` 0.00 GB (measured by `make readme`") and ".venv" not in disk


def test_the_readme_keeps_its_rendered_blocks_and_one_row_per_lesson():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ("findings", "disk", "lessons"):
        assert f"<!-- {name}:start -->" in text and f"<!-- {name}:end -->" in text
    rows = [line.split("|")[1].strip() for line in text.splitlines()
            if line.startswith("| ") and "](notebooks/" in line]
    assert rows == sorted(rows) and len(rows) == len(set(rows)) and "02b" in rows
    lessons = {p.name.split("_")[0] for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")}
    assert lessons <= set(rows)
    for doc in ("docs/TEACHING.md", "docs/SOURCES.md", "docs/GLOSSARY.md", "docs/CLI.md", "docs/CI.md"):
        assert doc in text and (ROOT / doc).exists()
    assert "download.pytorch.org/whl/cpu" in text and "environment.yml" in text and "WSL" in text


def test_the_browser_check_counts_the_plots_a_lesson_must_show(tmp_path):
    check = _load("browser_check")
    cell = nbformat.v4.new_code_cell("plot()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}),
                    nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell("![x](y.png)")]),
                   tmp_path / "a.ipynb")
    assert check.png_outputs(tmp_path / "a.ipynb") == 1
    assert check.errors_in(tmp_path / "a.ipynb", ran=False) == []  # shown as committed: errors only
    assert check.errors_in(tmp_path / "a.ipynb") == ["code cell 0: not executed"]


NEVER_READ = {"recall@5": {"naive": 0.78, "final": 0.85, "delta": 0.07, "decision": [-0.01, 0.16],
                           "decision_level": 0.975, "wins": 22, "losses": 11, "p_holm": 0.16,
                           "verdict": "cannot tell", "questions": 151},
              "mrr": {"naive": 0.59, "final": 0.72, "delta": 0.12, "decision": [0.04, 0.20], "decision_level": 0.983,
                      "wins": 62, "losses": 29, "p_holm": 0.001, "verdict": "gain", "questions": 151}}


def test_the_findings_say_the_test_split_was_read_and_show_the_never_read_questions():
    update = _load("update_readme")
    text = "<!-- findings:start -->\n<!-- findings:end -->\n"
    out = update.update_findings(text, {"09_what_moved_the_needle": {**HEADLINE, "never_read_test": NEVER_READ}})
    assert "| recall@5, never read | 0.78 | 0.85 | +0.07 [−0.01, +0.16] 97.5% | 22 / 11 | **cannot tell** |" in out
    assert "| MRR, never read | 0.59 | 0.72 | +0.12 [+0.04, +0.20] 98.3% | 62 / 29 | **gain** |" in out
    assert "Earlier versions of lesson 09 read the test split" in out and "its 151 questions written after q130" in out
    assert "recall@5 **cannot tell**, MRR **gain**" in out and "no choice was made on" not in out
    assert out.index("Earlier versions") < out.index("| on the test split |")  # said before the figures
    older = update.update_findings(text, {"09_what_moved_the_needle": HEADLINE})  # a record from before
    assert "read the test split, so it is not untouched; lesson 09's next run adds" in older


def _decided(path: Path, title: str, shown: str | None) -> None:
    decide = nbformat.v4.new_code_cell('decision_line("x", c)', metadata={"tags": ["decision-line"]})
    if shown is not None:
        decide.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": shown})]
    cells = [nbformat.v4.new_markdown_cell(title), decide, nbformat.v4.new_markdown_cell("## Going further")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def test_a_takeaway_gets_the_decision_line_its_lesson_rendered(tmp_path):
    update = _load("update_readme")
    path = tmp_path / "07_x.ipynb"
    title = "# 07 · X\n\n**Takeaway**\n\n- a\n- b\n- c\n\n**Decision: use y**: old figures."
    _decided(path, title, "**Decision: use x**: it gains on dev MRR +0.1 [+0.04, +0.16] (99%).")
    assert update.sync_decision(path)
    source = json.loads(path.read_text())["cells"][0]["source"]
    assert "".join(source) == ("# 07 · X\n\n**Takeaway**\n\n- a\n- b\n- c\n\n"
                               "**Decision: use x**: it gains on dev MRR +0.1 [+0.04, +0.16] (99%).")
    assert not update.sync_decision(path)  # already in step: the file is left alone
    _decided(path, title, None)  # never run: nothing to copy, nothing typed
    assert not update.sync_decision(path) and "old figures" in path.read_text()
