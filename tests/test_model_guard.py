"""The guard behind `make unit-fast`: a test not marked `model` that loads torch, transformers or
sentence-transformers, in its own process or in a Python it starts, fails (see conftest.py)."""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).parent

PROBE = textwrap.dedent('''
    import subprocess, sys
    import pytest

    def test_unmarked_loads_in_a_subprocess():
        subprocess.run([sys.executable, "-c", "import torch"], check=True)

    @pytest.mark.model
    def test_marked_loads_in_a_subprocess():
        subprocess.run([sys.executable, "-c", "import torch"], check=True)

    def test_unmarked_loads_here():
        import sentence_transformers  # noqa: F401

    def test_unmarked_loads_nothing():
        import json  # noqa: F401
''')

# A module-scoped fixture is set up before the guard's per-test fixture: its import must still count.
FIXTURE_PROBE = textwrap.dedent('''
    import pytest

    @pytest.fixture(scope="module")
    def loaded():
        import transformers  # noqa: F401

    def test_unmarked_uses_a_module_fixture_that_loads(loaded):
        pass
''')


def fake_model_libraries(folder: Path) -> Path:
    """Empty stand-ins named torch, transformers and sentence_transformers: importing them costs nothing."""
    for name in ("torch", "transformers", "sentence_transformers"):
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text("")
    return folder


def test_an_unmarked_test_that_loads_a_model_library_fails(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(TESTS / "conftest.py", suite)
    shutil.copytree(TESTS / "model_guard", suite / "model_guard")
    (suite / "test_probe.py").write_text(PROBE)
    (suite / "test_probe_fixture.py").write_text(FIXTURE_PROBE)
    fakes = fake_model_libraries(tmp_path / "fakes")
    env = {**os.environ, "PYTHONPATH": str(fakes)}
    env.pop("COURSE_MODEL_IMPORT_LOG", None)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
                            capture_output=True, text=True, check=False, env=env, cwd=tmp_path, timeout=300)
    out = result.stdout
    assert result.returncode == 1, out
    failed = {line.split("::")[1].split(" ")[0] for line in out.splitlines() if line.startswith("ERROR ")}
    assert failed == {"test_unmarked_loads_in_a_subprocess", "test_unmarked_loads_here",
                      "test_unmarked_uses_a_module_fixture_that_loads"}, out
    assert "5 passed" in out and "3 errors" in out, out
    assert out.count("not marked @pytest.mark.model but loaded a model library") >= 3
