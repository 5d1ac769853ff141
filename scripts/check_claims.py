"""Keep verdicts honest: flag any verdict a notebook states in hand-written words.

    python scripts/check_claims.py [NOTEBOOK ...]      (default: notebooks/**/*.ipynb)

A verdict is a sentence that uses the course's verdict vocabulary (helps, better, worse, gains,
improvement, winner, beats, outperforms, hurts, costs, faster, equivalent, cannot tell, …). In a
Markdown cell it passes only when the nearest code cell before or after it backs it:

- the code cell renders the comparison (`verdict(`, `verdict_table(`, `technique_table(` from
  course_lib.evaluation.verdicts) and, when the sentence names a quantity (recall@5, MRR,
  latency, tokens, …), that quantity appears in the code cell's comparison; or
- the code cell asserts on the SAME quantity the sentence names (`assert c.delta > 0` does not
  back "re-ranking improves MRR" unless the assert mentions MRR).

A verdict in a code cell's plain string (`print("BM25 beats dense")`) is always flagged: it is a
verdict typed in, not rendered. Headings and questions (a sentence ending in "?") state no
verdict and are not read. Sentences about the sources are exempt: a blockquote line (`> …`)
or a line saying "the production write-up says" / "the chunking lesson says". Code spans and
fenced code inside Markdown are not prose and are skipped. Exit status 1 when anything is
flagged; `--count` prints the number of flags per notebook and exits 0.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

VERDICT_WORDS = (
    "help", "helps", "helped", "better", "worse", "significant", "significantly", "no difference",
    "improves", "improved", "improvement", "improvements", "hurts", "hurt", "beats", "beat", "winner",
    "outperforms", "outperformed", "gain", "gains", "gained", "loses", "loss", "costs", "faster",
    "slower", "equivalent", "cannot tell", "pays off", "worth it", "matters",
)
_VERDICT = re.compile(r"\b(" + "|".join(w.replace(" ", r"\s+") for w in VERDICT_WORDS) + r")\b", re.I)
_EXEMPT_LINE = re.compile(r"^\s*>|the production write-up says|the chunking lesson says", re.I)
# A heading names a section and a question asks one: neither states a verdict.
_HEADING = re.compile(r"^\s*#")
_SENTENCE_END = re.compile(r"(?<=[.!?])[*_]*\s+")
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_RENDERS = re.compile(r"\b(verdict|verdict_table|technique_table)\s*\(")
_ASSERT = re.compile(r"^\s*assert\b[^\n]*(<|>|==|!=|\bsignificant\b|\bequivalent\b)[^\n]*", re.M)
# What a sentence can be about, and how code names the same quantity.
QUANTITIES: dict[str, tuple[str, str]] = {
    "recall@k": (r"recall\s*@\s*(\d+)", r"recall@{k}|recall_at\(\s*{k}\s*\)|hits_at\(\s*{k}\s*\)|recall{k}"),
    "mrr": (r"\bMRR\b|reciprocal rank", r"\bmrr\b|reciprocal_rank"),
    "latency": (r"\blatenc\w*|\bp50\b|\bp95\b|\bmillisecond\w*|\bms\b",
                r"latenc|p50|p95|percentile|_ms\b|\bms\b|seconds|timings?"),
    "tokens": (r"\btokens?\b", r"token"),
    "memory": (r"\bmemory\b|\bMB\b|\bGB\b", r"memory|bytes|_mb\b|nbytes"),
}


@dataclass(frozen=True)
class Flag:
    """One cell whose verdict words nothing beside them backs."""

    notebook: str
    cell: int
    words: tuple[str, ...]
    line: str
    why: str


def verdict_words(markdown: str) -> list[tuple[str, str]]:
    """(word, line) for each verdict word in the prose of a Markdown cell, exempt lines skipped."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", markdown))
    found = []
    for line in prose.splitlines():
        if _EXEMPT_LINE.search(line) or _HEADING.match(line):
            continue
        statements = " ".join(s for s in _SENTENCE_END.split(line) if not s.rstrip(" *_").endswith("?"))
        found += [(" ".join(m.group(1).lower().split()), line.strip()) for m in _VERDICT.finditer(statements)]
    return found


def quantities(text: str) -> list[str]:
    """The code patterns of every quantity a sentence names (recall@5 becomes recall@5's names)."""
    patterns = []
    for name, (prose, code) in QUANTITIES.items():
        for match in re.finditer(prose, text, re.I):
            patterns.append(code.format(k=match.group(1)) if name == "recall@k" else code)
    return list(dict.fromkeys(patterns))


def backs(code: str, sentence: str) -> bool:
    """True when a code cell renders or asserts the verdict a sentence states."""
    named = quantities(sentence)
    if _RENDERS.search(code):
        default_metric = all("recall@5" in p for p in named) and "metric=" not in code  # recall@5
        return not named or any(re.search(p, code, re.I) for p in named) or default_metric
    asserts = [m.group(0) for m in _ASSERT.finditer(code)]
    return bool(named) and any(re.search(p, line, re.I) for line in asserts for p in named)


def _neighbour_code(cells: list, index: int, step: int) -> str:
    """The source of the nearest code cell before (step -1) or after (step +1) `index`."""
    i = index + step
    while 0 <= i < len(cells):
        if cells[i].cell_type == "code":
            return cells[i].source
        i += step
    return ""


def typed_verdicts(code: str) -> list[str]:
    """Plain string literals in a code cell that state a verdict (f-strings render figures)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # IPython magics: nothing to read as Python
        return []
    formatted = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in formatted
            and _VERDICT.search(node.value) and " " in node.value.strip()]


def flag_cells(notebook: nbformat.NotebookNode, *, name: str = "") -> list[Flag]:
    """Every cell of a notebook that states a verdict nothing backs."""
    cells, flags = notebook.cells, []
    for index, cell in enumerate(cells):
        if cell.cell_type == "code":
            flags += [Flag(name, index, tuple(m.lower() for m in _VERDICT.findall(text)), text,
                           "a verdict typed into a string") for text in typed_verdicts(cell.source)]
            continue
        if cell.cell_type != "markdown":
            continue
        unbacked = [(word, line) for word, line in verdict_words(cell.source)
                    if not any(backs(_neighbour_code(cells, index, step), line) for step in (-1, 1))]
        if unbacked:
            words = tuple(dict.fromkeys(word for word, _ in unbacked))
            why = "no code cell beside it renders or asserts it"
            flags.append(Flag(name, index, words, unbacked[0][1], why))
    return flags


def check_paths(paths: list[Path]) -> dict[str, list[Flag]]:
    """Flags per notebook path, for every notebook given."""
    return {str(path): flag_cells(nbformat.read(path, as_version=4), name=str(path)) for path in paths}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--count", action="store_true", help="print flagged cells per notebook, exit 0")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    paths = args.notebooks or sorted((root / "notebooks").glob("**/*.ipynb"))
    results = check_paths(paths)
    total = sum(len(flags) for flags in results.values())
    for path, flags in results.items():
        if args.count:
            print(f"{len(flags):4d}  {path}")
            continue
        for flag in flags:
            print(f"{path}: cell {flag.cell}: {', '.join(flag.words)} ({flag.why}): {flag.line[:100]}")
    print(f"{total} cell(s) state a verdict with no rendered comparison or assertion on it beside them",
          file=sys.stderr)
    return 0 if args.count or total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
