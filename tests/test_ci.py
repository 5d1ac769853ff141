"""CI's stages: `make test` runs ruff, the unit tests, the cache warm-up and the notebooks one after the
other (no background job), stops at the first failure, and `.ci/run` runs it with each step timed."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STEPS = ["make lint", "make unit", "make warm", "make notebooks"]


def make_test(tmp_path: Path, fail_at: str = "") -> tuple[int, list[str]]:
    """`make test` with a fake, up-to-date virtual environment and a stage command that records
    each step's name (and fails at `fail_at`) instead of running it."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / ".installed").touch()  # newer than pyproject.toml and constraints.txt: no install
    log = tmp_path / "steps.log"
    record = tmp_path / "record"
    record.write_text(f'#!/bin/sh\necho "$1" >> {log}\n[ "$1" != "{fail_at}" ]\n')
    record.chmod(0o755)
    result = subprocess.run(["make", "-s", "test", f"VENV={venv}", f"TEST_STAGE={record}"], cwd=ROOT,
                            capture_output=True, text=True, check=False, timeout=60, env=dict(os.environ))
    return result.returncode, log.read_text().splitlines() if log.exists() else []


def test_make_test_runs_each_step_in_turn_the_warm_up_before_the_notebooks(tmp_path):
    assert make_test(tmp_path) == (0, STEPS)


@pytest.mark.parametrize("fail_at", ["make unit", "make warm"])
def test_make_test_stops_at_the_first_step_that_fails(tmp_path, fail_at):
    status, ran = make_test(tmp_path, fail_at)
    assert status != 0 and ran == STEPS[:STEPS.index(fail_at) + 1]


def test_no_step_runs_in_the_background():
    recipe = (ROOT / "Makefile").read_text().split("\ntest: setup\n")[1].split("\n\n")[0]
    assert "&" not in recipe.replace("&&", "") and "kill" not in recipe


def test_ci_runs_the_readmes_command_with_each_step_a_stage():
    run = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in run
    assert '"$stage" "test: lint, unit tests, warm-up, notebooks (make test)" make test TEST_STAGE="$stage"' in run
    assert "make test" in (ROOT / "README.md").read_text()


def test_a_stage_prints_its_time_and_keeps_the_commands_status():
    ok = subprocess.run([ROOT / ".ci" / "stage", "fine", "true"], capture_output=True, text=True, check=False)
    failed = subprocess.run([ROOT / ".ci" / "stage", "broken", "sh", "-c", "exit 3"], capture_output=True,
                            text=True, check=False)
    assert ok.returncode == 0 and "=== fine: OK in" in ok.stdout
    assert failed.returncode == 3 and "=== broken: FAILED (exit 3) after" in failed.stdout
