"""The teacher's kit scripts: no nbval marker comments left in the notebooks, the runner's load guard,
handouts, runtime table."""
from pathlib import Path

import nbformat
from test_scripts import _load  # one loader for the scripts under test

ROOT = Path(__file__).resolve().parent.parent


def test_committed_notebooks_carry_no_marker_comments():
    for path in ROOT.glob("notebooks/**/*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                assert "# NBVAL_" not in cell.source, path.name


def test_the_runner_warns_on_a_busy_machine_only():
    runner = _load("run_notebooks")
    assert runner.load_problem(0.4) is None and runner.load_problem(None) is None
    warning = runner.load_problem(3.2)
    assert "3.20 > 1.5" in warning and "quiet machine" in warning
    assert runner.lesson_of(Path("notebooks/solutions/07_reranking_solutions.ipynb")) == (
        "07_reranking", "solutions_")
    assert runner.lesson_of(Path("notebooks/07_reranking.ipynb")) == ("07_reranking", "")


def test_strict_load_refuses_to_start_a_notebook(monkeypatch, tmp_path, capsys):
    runner = _load("run_notebooks")
    monkeypatch.setattr(runner, "load_average", lambda: 9.0)
    monkeypatch.setattr(runner, "execute", lambda path: (_ for _ in ()).throw(AssertionError("ran")))
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    slept = []
    monkeypatch.setattr(runner.time, "sleep", slept.append)
    assert runner.main(["--strict-load", "--wait", "30", str(tmp_path / "00_x.ipynb")]) == 1
    out = capsys.readouterr().out
    assert "waiting for a quiet machine (load 9.00 > 1.5)" in out and "REFUSED" in out
    assert slept == [10, 10, 10]  # it waited its 30 s for the load to settle, then refused


def test_the_runner_starts_a_notebook_once_the_load_settles(monkeypatch):
    runner = _load("run_notebooks")
    loads = iter([4.0, 2.5, 1.2, 9.0])
    monkeypatch.setattr(runner, "load_average", lambda: next(loads))
    slept = []
    assert runner.wait_for_quiet(max_wait_s=600, poll_s=10, sleep=slept.append) == 1.2
    assert slept == [10, 10]
    monkeypatch.setattr(runner, "load_average", lambda: None)  # Windows: no load average, no wait
    assert runner.wait_for_quiet(sleep=slept.append) is None and slept == [10, 10]


def test_handout_has_no_outputs_and_no_solutions(tmp_path):
    handout = _load("make_handout")
    lessons = tmp_path / "notebooks"
    (lessons / "solutions").mkdir(parents=True)
    timing = {"execution": {"iopub.status.busy": "2026-01-01T00:00:00Z"}}
    cell = nbformat.v4.new_code_cell("print(1)", execution_count=1, metadata=timing)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    for path in (lessons / "00_a.ipynb", lessons / "solutions" / "00_a_solutions.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    assert handout.main(["--notebooks", str(lessons), "--out", str(tmp_path / "out")]) == 0
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["00_a.ipynb"]
    copy = nbformat.read(tmp_path / "out" / "00_a.ipynb", as_version=4).cells[0]
    assert copy.outputs == [] and copy.execution_count is None and "execution" not in copy.metadata
    assert copy.source == "print(1)"


def test_teaching_runtime_table_comes_from_records_only():
    update = _load("update_readme")
    text = "agenda\n<!-- runtimes:start -->\nold table\n<!-- runtimes:end -->\nafter\n"
    records = {"00_a": {"runtime_s": 30.0, "solutions_runtime_s": 12.0, "load_at_start": 0.31},
               "01_b": {"runtime_s": 150.0}}
    out = update.update_teaching(text, records, ["00_a", "01_b", "02_c"])
    assert "old table" not in out and out.endswith("<!-- runtimes:end -->\nafter\n")
    assert "| 00_a | 30 s | 12 s | 0.31 | 30 s |" in out
    assert "| 01_b | 2.5 min | | | 3.0 min |" in out
    assert "| 02_c | | | | |" in out  # never run: empty, never a guess


def test_record_returns_this_runs_figures_and_keeps_the_rest_on_disk(tmp_path, monkeypatch):
    from course_lib.infra import lesson_records as report

    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    report.record("00_x", runtime_s=12.5, load_at_start=0.3)
    shown = report.record("00_x", pages=62, tables=59)
    assert shown == {"pages": 62, "tables": 59}
    from IPython.lib.pretty import pretty

    assert pretty(shown) == repr(shown) == "recorded 2 figures in 00_x.json (make course summarises them)"
    assert report.load_records()["00_x"] == {"load_at_start": 0.3, "pages": 62, "runtime_s": 12.5,
                                             "tables": 59}


def _code(source, tags=(), output="1\n"):
    cell = nbformat.v4.new_code_cell(source, execution_count=1, metadata={"tags": list(tags)})
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
    return cell


def test_a_todo_cell_becomes_a_todo_and_a_self_check_without_outputs():
    handout = _load("make_handout")
    source = "def worth(k, rank):\n    return 1 / (k + rank)\n\nprint(worth(60, 1))\nassert worth(1, 1) == 0.5"
    nb = nbformat.v4.new_notebook(cells=[_code("x = 1"), _code(source, tags=["handout-todo"], output="0.016\n")])
    copy = handout.handout(nb, keep_outputs=True)
    todo, check = copy.cells[1], copy.cells[2]
    assert todo.source.startswith("# TODO: write this cell: define `worth`") and "return" not in todo.source
    assert todo.outputs == [] and check.outputs == [] and todo.execution_count is None  # no answer shown
    assert check.source.endswith('assert worth(1, 1) == 0.5\nprint("self-check passed")')
    assert check.metadata["tags"] == ["handout-check"]
    assert copy.cells[0].outputs[0].text == "1\n"  # a presented lesson keeps its other outputs
    namespace = {}
    exec(source, namespace)  # the learner's answer (the original) passes the self-check
    exec(check.source, namespace)


def test_a_todo_cell_that_cannot_check_itself_is_refused():
    handout = _load("make_handout")
    for source in ("x = 1\nprint(x)", "x = 1\nassert y == 2"):  # no closing assert; an assert on nothing it defines
        try:
            handout.split_todo(source, where="01_a.ipynb, cell 3")
        except ValueError as err:
            assert "01_a.ipynb, cell 3" in str(err)
        else:
            raise AssertionError(f"accepted {source!r}")


def test_presented_lessons_keep_their_outputs_and_the_others_lose_them(tmp_path):
    handout = _load("make_handout")
    presented = handout.presented_lessons()
    assert "09" in presented and "00" not in presented  # the 3-hour workshop's own plan
    lessons = tmp_path / "notebooks"
    lessons.mkdir()
    for name in ("00_a.ipynb", "09_b.ipynb"):
        nbformat.write(nbformat.v4.new_notebook(cells=[_code("print(1)")]), lessons / name)
    assert handout.main(["--notebooks", str(lessons), "--out", str(tmp_path / "out")]) == 0
    assert nbformat.read(tmp_path / "out" / "00_a.ipynb", as_version=4).cells[0].outputs == []
    assert nbformat.read(tmp_path / "out" / "09_b.ipynb", as_version=4).cells[0].outputs[0].text == "1\n"


def test_the_lessons_leave_one_or_two_cells_to_write_each_with_a_self_check():
    handout = _load("make_handout")
    with_todos = {}
    for path in handout.lessons(ROOT / "notebooks"):
        nb = nbformat.read(path, as_version=4)
        todos = [c for c in nb.cells if "handout-todo" in c.metadata.get("tags", [])]
        for cell in todos:
            assert cell.cell_type == "code"
            todo, check = handout.split_todo(cell.source, where=path.name)  # raises if it cannot check itself
            assert todo.startswith("# TODO") and "assert" in check
        if todos:
            with_todos[path.name.split("_")[0]] = len(todos)
    assert all(1 <= n <= 2 for n in with_todos.values()), with_todos
    assert {"01", "02", "03", "04", "05", "06", "07"} <= set(with_todos), with_todos
