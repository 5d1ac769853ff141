"""The ways in, each run as a user runs it: the console script `course-lib`, every script and
benchmark, the wheelhouse's import check, the module paths the docs name, and the pytest markers
`make unit-fast` selects by. A moved or renamed module fails here, not on a learner's machine.
Nothing here loads a model or imports torch (each subprocess is checked with
PYTHONPROFILEIMPORTTIME), so all of it runs in `make unit-fast`."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
FIXTURES = ROOT / "tests" / "fixtures" / "eval"
SCRIPTS = sorted([*(ROOT / "scripts").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")])
# Scripts without a command line: running them would do their work (update_readme.py rewrites the
# README), so they are only checked for what they import. A new script belongs here or uses argparse.
NO_COMMAND_LINE = {
    "debian_corpus.py": "a module the two corpus builders import",
    "residual_index.py": "a module bench_serving.py imports (and tests/test_residual_index.py)",
    "update_readme.py": "no arguments; rewrites README.md and docs/TEACHING.md",
}
_TORCH_IMPORTED = re.compile(r"^import time:.*\|\s+torch$", re.M)


def _run(command: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run a command with Python's import profile on stderr, and fail if it imported torch."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert not _TORCH_IMPORTED.search(result.stderr), f"{command} imported torch"
    return result


def _errors(result: subprocess.CompletedProcess) -> str:
    return "\n".join(line for line in result.stderr.splitlines() if not line.startswith("import time:"))


# --- the console script --------------------------------------------------------------------------

def _console_scripts() -> dict[str, str]:
    return PYPROJECT["project"]["scripts"]


def test_the_package_declares_its_console_script():
    assert _console_scripts() == {"course-lib": "course_lib.__main__:run"}


@pytest.mark.parametrize("script", sorted(_console_scripts()))
def test_each_declared_entry_point_imports_and_is_callable(script):
    module_name, _, function = _console_scripts()[script].partition(":")
    module = importlib.import_module(module_name)  # a moved module fails here
    assert callable(getattr(module, function, None)), f"{module_name} has no function {function}"


def test_python_dash_m_runs_the_same_function_as_the_console_script():
    """Both ways in share `run`, so both leave an interrupted command the same way (exit 130)."""
    main_py = (ROOT / "course_lib" / "__main__.py").read_text(encoding="utf-8")
    module_name, _, function = _console_scripts()["course-lib"].partition(":")
    assert module_name == "course_lib.__main__"
    assert re.search(rf"""if __name__ == ["']__main__["']:\n    {function}\(\)""", main_py)
    assert "from course_lib.app.cli import main" in main_py


def _course_lib(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`course-lib ARGS` as installed beside this Python (by `pip install -e .`); where it is not
    installed, the declared entry point called the same way, so a broken declaration still fails."""
    installed = Path(sys.executable).parent / "course-lib"
    if installed.exists():
        module_name = _console_scripts()["course-lib"].partition(":")[0]
        assert module_name in installed.read_text(encoding="utf-8"), (
            f"{installed} is stale (it does not run {module_name}): reinstall with `pip install -e .`")
        return _run([str(installed), *args], cwd=cwd)
    module_name, _, function = _console_scripts()["course-lib"].partition(":")
    code = f"import sys; from {module_name} import {function}; sys.exit({function}())"
    return _run([sys.executable, "-c", code, *args], cwd=ROOT)  # `-c` imports course_lib from ROOT


def test_the_console_script_prints_its_help(tmp_path):
    result = _course_lib("--help", cwd=tmp_path)
    assert result.returncode == 0, _errors(result)
    assert result.stdout.startswith("usage: ")
    assert all(name in result.stdout for name in ("validate-golden", "evaluate", "pipelines", "ask"))


def test_the_console_script_lists_the_pipelines(tmp_path):
    result = _course_lib("pipelines", cwd=tmp_path)
    assert result.returncode == 0, _errors(result)
    assert [line.split()[0] for line in result.stdout.splitlines()][:2] == ["naive", "clean"]


def test_the_console_script_validates_a_golden_file(tmp_path):
    result = _course_lib("validate-golden", str(FIXTURES / "golden.jsonl"), "--corpus", str(FIXTURES / "corpus"),
                         cwd=tmp_path)
    assert result.returncode == 0, _errors(result)
    assert result.stdout.strip().endswith("5 questions, 0 errors")


# --- every script and benchmark ------------------------------------------------------------------

def _has_command_line(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return "argparse" in text and re.search(r"""__name__ == ["']__main__["']""", text) is not None


def test_every_script_has_a_command_line_or_says_why_not():
    without = {path.name for path in SCRIPTS if not _has_command_line(path)}
    assert without == set(NO_COMMAND_LINE)


@pytest.mark.parametrize("path", [p for p in SCRIPTS if _has_command_line(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_each_script_prints_its_usage(path):
    result = _run([sys.executable, str(path), "--help"])
    assert result.returncode == 0, _errors(result)
    assert result.stdout.startswith(f"usage: {path.name}"), result.stdout[:200]


def course_lib_references(tree: ast.AST) -> list[tuple[str, str | None]]:
    """(module, name) for every `from course_lib... import name` at any depth (function bodies
    too: the course imports heavy modules late), (module, None) for every `import course_lib...`,
    and (module, attribute) for every `module.attribute` read through a name so imported."""
    found: list[tuple[str, str | None]] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("course_lib"):
            for alias in node.names:
                found.append((node.module, alias.name))
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.startswith("course_lib")]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if _is_module(aliases[node.value.id]):
                found.append((aliases[node.value.id], node.attr))
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a parent that is a module, not a package, or that does not exist
        return False


def unresolved(references: list[tuple[str, str | None]]) -> list[str]:
    """The references that do not import: `module` or `module.name`."""
    missing = []
    for module_name, name in references:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            missing.append(module_name)
            continue
        if name is not None and not hasattr(module, name) and not _is_module(f"{module_name}.{name}"):
            missing.append(f"{module_name}.{name}")
    return sorted(set(missing))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_script_imports_only_what_the_package_has(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert unresolved(course_lib_references(tree)) == []


def test_the_wheelhouse_import_check_names_modules_that_exist():
    script = ROOT / "scripts" / "wheelhouse.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False).returncode == 0
    text = script.read_text(encoding="utf-8")
    snippet = re.search(r"<<'PY'\n(.*?)\nPY\n", text, re.S)
    assert snippet, "the python import check in wheelhouse.sh moved: update this test"
    tree = ast.parse(snippet.group(1))
    named = [(node.value, None) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("course_lib")]
    references = course_lib_references(tree) + named
    assert ("course_lib.infra.models", "embed") in references  # what the check calls
    assert unresolved(references) == []


# --- what the docs name --------------------------------------------------------------------------

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "pyproject.toml", ROOT / "Makefile"]


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        if _is_module(".".join(parts[:cut])):
            obj = importlib.import_module(".".join(parts[:cut]))
            for attribute in parts[cut:]:
                if not hasattr(obj, attribute):
                    return False
                obj = getattr(obj, attribute)
            return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_module_path_the_docs_name_exists(doc):
    text = doc.read_text(encoding="utf-8")
    dotted = set(re.findall(r"\bcourse_lib(?:\.[A-Za-z_]\w*)+", text))
    files = set(re.findall(r"\bcourse_lib/[\w/]+(?:\.py)?", text))
    assert sorted(name for name in dotted if not _resolves(name)) == []
    assert sorted(path for path in files if not (ROOT / path).exists()) == []


# --- the markers `make unit-fast` selects by -----------------------------------------------------

def test_every_declared_pytest_marker_is_used():
    declared = [line.split(":")[0] for line in PYPROJECT["tool"]["pytest"]["ini_options"]["markers"]]
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("*.py"))
    assert [name for name in declared if f"mark.{name}" not in tests] == []
