"""Every default has one home: a numeric default typed into a public signature is a test failure."""
from __future__ import annotations

import ast
import codecs
import re
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


SETTING_STRINGS = {value for name, value in vars(settings).items() if name.isupper() and isinstance(value, str)}


def is_tunable_string(text: str) -> bool:
    """A quantity ("1GB"), a versioned name ("claude-sonnet-4-5", "all-MiniLM-L6-v2") or a setting's
    string typed again. Choices are not: "rrf", "lxml", a codec ("utf-8"), an algorithm ("bm25")."""
    if text in SETTING_STRINGS or text[:1].isdigit():
        return True
    try:
        codecs.lookup(text)
        return False
    except LookupError:
        return any(c.isdigit() for c in text) and not re.fullmatch(r"[a-z]+\d+", text)


def is_typed_default(node: ast.expr) -> bool:
    """A number or a tunable string (see `is_tunable_string`): each belongs in settings.py."""
    value = node.operand if isinstance(node, ast.UnaryOp) else node
    if not isinstance(value, ast.Constant) or isinstance(value.value, bool):
        return False
    return isinstance(value.value, (int, float)) or (isinstance(value.value, str) and is_tunable_string(value.value))


def typed_defaults(path: Path) -> list[str]:
    """Signature defaults (numbers and strings) and argparse `default=` values that settings should hold."""
    found = []
    for name, node in public_functions(ast.parse(path.read_text())):
        args = node.args
        pairs = list(zip(args.args[len(args.args) - len(args.defaults):], args.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        found += [f"{path.relative_to(PACKAGE)}: {name}({arg.arg}={ast.unparse(d)})"
                  for arg, d in pairs if is_typed_default(d)]
    for call in ast.walk(ast.parse(path.read_text())):
        if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "add_argument":
            found += [f"{path.relative_to(PACKAGE)}:{call.lineno}: add_argument(default={ast.unparse(kw.value)})"
                      for kw in call.keywords if kw.arg == "default" and is_typed_default(kw.value)]
    return found


def test_no_signature_or_command_line_default_types_what_settings_should_hold():
    typed = [line for path in sorted(PACKAGE.rglob("*.py")) if path.name != "settings.py"
             for line in typed_defaults(path)]
    assert typed == []


def test_the_scan_finds_typed_strings_and_argparse_defaults(tmp_path, monkeypatch):
    module = tmp_path / "course_lib_sample.py"
    module.write_text("def ask(q, *, model='claude-9', fusion='rrf', final='reranked', k=-2, codec='utf-8',"
                      " lexical='bm25', memory='1GB'):\n    pass\n"
                      "parser.add_argument('--k', default=5)\nparser.add_argument('--mode', default='dev')\n"
                      "parser.add_argument('--on', default=True)\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path)
    assert typed_defaults(module) == ["course_lib_sample.py: ask(model='claude-9')",
                                      "course_lib_sample.py: ask(final='reranked')",
                                      "course_lib_sample.py: ask(k=-2)",
                                      "course_lib_sample.py: ask(memory='1GB')",
                                      "course_lib_sample.py:3: add_argument(default=5)"]


def test_every_setting_says_which_lesson_chose_it_or_what_it_is_for():
    source = (PACKAGE / "settings.py").read_text().splitlines()
    names = [n for n in dir(settings) if n.isupper()]
    assert len(names) >= 40
    for name in names:
        line = next(line for line in source if line.startswith(f"{name} ="))
        assert "#" in line, f"{name} has no comment saying why"
