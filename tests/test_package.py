"""The package's shape: light to import, one home per name; its folder layers and import circles are
checked by `lint-imports` and its function sizes by ruff's complexity rules (`make lint`)."""
from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

import course_lib

PACKAGE = Path(course_lib.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")


def test_importing_the_package_loads_no_torch_and_star_gives_each_home_object():
    code = ("import course_lib, importlib, json, sys; torch = 'torch' in sys.modules; ns = {}; "
            "exec('from course_lib import *', ns); "
            "print(json.dumps({'torch': torch, 'star': sorted(n for n in ns if not n.startswith('__')), "
            "'home': all(ns[n] is getattr(importlib.import_module(m), n) for n, m in course_lib.LESSON_NAMES.items())}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["torch"] is False
    assert {"chunk_blocks", "Pipeline", "SearchService", "load_golden", "evaluate_retriever"} <= set(found["star"])
    assert found["star"] == sorted(course_lib.LESSON_NAMES) and found["home"] is True


@pytest.mark.parametrize("name", sorted(course_lib.LESSON_NAMES))
def test_each_lesson_name_is_its_home_modules_object(name):
    home = importlib.import_module(course_lib.LESSON_NAMES[name])
    assert getattr(course_lib, name) is getattr(home, name)
    assert name in defined_names(Path(home.__file__)), f"{name} is imported into {home.__name__}, not defined there"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        course_lib.nope  # noqa: B018


def declared_all(path: Path) -> list[str] | None:
    """The names a module's literal `__all__` lists (None: it has none, or builds it)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return ast.literal_eval(node.value) if isinstance(node.value, (ast.List, ast.Tuple)) else None
    return None


def defined_names(path: Path) -> set[str]:
    """The functions, classes and variables a module defines at its top level (imports excluded)."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    defined = {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for node in body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    return defined | {node.target.id for node in body if isinstance(node, ast.AnnAssign)}


# Lesson 10 and its solution call these through `peers` (`peers.PEERS`, `peers.unstructured_chunks`);
# their home is `extras/peer_chunkers.py`. The only re-exports left: a new one fails the test below.
LESSON_10_RE_EXPORTS = {"extras/peers.py": {"PEERS", "Window", "semantic_splitter", "unstructured_chunks"}}


def test_no_module_re_exports_a_name_it_imports():
    """A name in a module's `__all__` is defined there: an imported one would give it a second home."""
    listed = {path: declared_all(path) for path in MODULES if path.name != "__init__.py"}
    listed = {path: names for path, names in listed.items() if names}
    assert listed, "no module declares __all__: nothing was checked"
    imported = {f"{path.relative_to(PACKAGE)}: {name}" for path, names in listed.items()
                for name in names if name not in defined_names(path)}
    allowed = {f"{module}: {name}" for module, names in LESSON_10_RE_EXPORTS.items() for name in names}
    assert imported == allowed


def test_a_name_imported_into_all_is_caught(tmp_path):
    module = tmp_path / "facade.py"
    module.write_text("from os.path import join\n__all__ = ['join', 'here']\nhere = 1\n")
    assert declared_all(module) == ["join", "here"] and defined_names(module) == {"__all__", "here"}


def test_the_folder_layers_are_a_contract_lint_imports_checks():
    """The folder rules live in pyproject.toml for `lint-imports` (`make lint`); here: they still
    name every folder, in the order the package's docstring gives, and hold today."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    named = [name.strip() for layer in layers["layers"] for name in layer.split("|")]
    assert folders <= set(named) and layers["exhaustive"] is True
    assert named.index("core") < named.index("infra") < named.index("settings")
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], capture_output=True, text=True, check=False,
                            cwd=PACKAGE.parent, env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)})
    assert result.returncode == 0, result.stdout[-2000:]
    assert "2 kept, 0 broken" in result.stdout
