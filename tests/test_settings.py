"""Every default has one home: a numeric default typed into a public signature is a test failure."""
from __future__ import annotations

import ast
from pathlib import Path

import course_lib
from course_lib import settings

PACKAGE = Path(course_lib.__file__).parent


def public_functions(tree: ast.Module):
    """Module-level functions and the methods of public classes, skipping private names."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            yield node.name, node
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        item.name == "__init__" or not item.name.startswith("_")):
                    yield f"{node.name}.{item.name}", item


def numeric_literal_defaults(path: Path) -> list[str]:
    found = []
    for name, node in public_functions(ast.parse(path.read_text())):
        args = node.args
        positional = list(zip(args.args[len(args.args) - len(args.defaults):], args.defaults, strict=True))
        keyword = [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for arg, default in positional + keyword:
            value = default.operand if isinstance(default, ast.UnaryOp) else default
            if isinstance(value, ast.Constant) and type(value.value) in (int, float):
                found.append(f"{path.relative_to(PACKAGE)}: {name}({arg.arg}={ast.unparse(default)})")
    return found


def test_no_public_signature_types_a_number_that_settings_should_hold():
    typed = [line for path in sorted(PACKAGE.rglob("*.py")) if path.name != "settings.py"
             for line in numeric_literal_defaults(path)]
    assert typed == []


def test_the_scan_finds_a_typed_number(tmp_path, monkeypatch):
    module = tmp_path / "course_lib_sample.py"
    module.write_text("def search(q, *, k=20, name='x', flag=True, depth=None):\n    pass\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path)
    assert numeric_literal_defaults(module) == ["course_lib_sample.py: search(k=20)"]


def test_every_setting_says_which_lesson_chose_it_or_what_it_is_for():
    source = (PACKAGE / "settings.py").read_text().splitlines()
    names = [n for n in dir(settings) if n.isupper()]
    assert len(names) >= 40
    for name in names:
        line = next(line for line in source if line.startswith(f"{name} ="))
        assert "#" in line, f"{name} has no comment saying why"
