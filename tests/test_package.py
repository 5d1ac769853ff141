"""The package's shape: light to import, one home per name, no import circles, short modules."""
from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import course_lib

PACKAGE = Path(course_lib.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_importing_the_package_loads_no_torch():
    code = "import course_lib, sys; assert 'torch' not in sys.modules, 'torch'; print(len(course_lib.__all__))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == len(course_lib.LESSON_NAMES)


@pytest.mark.parametrize("name", sorted(course_lib.LESSON_NAMES))
def test_each_lesson_name_is_its_home_modules_object(name):
    home = importlib.import_module(course_lib.LESSON_NAMES[name])
    assert getattr(course_lib, name) is getattr(home, name)
    body = ast.parse(Path(home.__file__).read_text()).body
    defined = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for node in body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    defined |= {node.target.id for node in body if isinstance(node, ast.AnnAssign)}
    assert name in defined, f"{name} is imported into {home.__name__}, not defined there"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        course_lib.nope  # noqa: B018


def test_no_module_re_exports_a_name_it_imports():
    facades = []
    for path in MODULES:
        for line in path.read_text().splitlines():
            if line.lstrip().startswith(("from ", "import ")) and "re-export" in line:
                facades.append(f"{path.name}: {line.strip()}")
    assert facades == []


def imports_of(path: Path) -> set[str]:
    """The course_lib modules a module imports (at any depth of its code)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("course_lib"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    known = {module_name(p) for p in MODULES}
    return {name for name in found if name in known} - {module_name(path)}


def test_no_circle_of_imports():
    graph = {module_name(p): imports_of(p) for p in MODULES if p.name != "__init__.py"}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 1:
            raise AssertionError(" -> ".join(trail[trail.index(node):] + [node]))
        if state.get(node) == 2:
            return
        state[node] = 1
        for target in graph.get(node, ()):
            visit(target, trail + [node])
        state[node] = 2

    for module in graph:
        visit(module, [])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_reads_in_one_sitting(path):
    assert len(path.read_text().splitlines()) <= 400


def test_every_function_reads_on_one_screen():
    """No function in the package is over 60 lines (issue 26: the walker and `chunk_blocks` were
    one long function each; every module stays under 400 lines by the test above)."""
    long = {}
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > 60:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = lines
    assert long == {}
