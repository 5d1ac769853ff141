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
fenced code inside Markdown are not prose and are skipped. A lesson's `**Takeaway**` cell sits
under its title, above the figures it summarises: its sentences pass when ANY code cell of the
notebook renders or asserts them (by the same rule). Exit status 1 when anything is
flagged; `--count` prints the number of flags per notebook and exits 0.

With `--intervals` it also reads what code cells PRINTED (text/html, text/markdown, text/plain,
streams) and flags a verdict word whose interval beside it says otherwise. The interval printed
beside a word is the one the word was decided on (`course_lib.evaluation.verdicts`), so the
reading rule is: "gain" lies above 0, "loss" below 0, "equivalent" inside ±margin (the margin the
output names, else the course's), and "cannot tell" contains 0 and reaches past ±margin (an
interval clear of 0 would have been a gain or a loss at its level, one inside the band
equivalent). A word and interval pair is a table row's interval cell and the `<b>word</b>` after
it, or a sentence's "[lo, hi] …: a gain". Figures are read as printed: an edge is flagged only
when every value that rounds to it breaks the rule (+0.000 beside "gain" passes, −0.000 does not).
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course_lib.settings import EQUIVALENCE_MARGIN

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
TAKEAWAY = "**Takeaway**"
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
        beside = ([c.source for c in cells if c.cell_type == "code"] if TAKEAWAY in cell.source
                  else [_neighbour_code(cells, index, step) for step in (-1, 1)])
        unbacked = [(word, line) for word, line in verdict_words(cell.source)
                    if not any(backs(code, line) for code in beside)]
        if unbacked:
            words = tuple(dict.fromkeys(word for word, _ in unbacked))
            why = "no code cell beside it renders or asserts it"
            flags.append(Flag(name, index, words, unbacked[0][1], why))
    return flags


_NUMBER = r"[+\-−]?(?:\d+(?:\.\d*)?|\.\d+|inf|∞)"
_INTERVAL = re.compile(rf"\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]")
_TEXT_WORD = re.compile(r":\s*(?:an?\s+)?(gain|loss|equivalent|cannot tell)\b")
_HTML_WORD = re.compile(r"<b>\s*(gain|loss|equivalent|cannot tell)\s*</b>")
_MARGIN = re.compile(r"(?:margin|within)\s*±\s*(\d*\.?\d+)")
_ROW = re.compile(r"<tr\b.*?</tr>", re.S)


def _figure(text: str) -> tuple[float, float, bool]:
    """A printed figure: its value, half a unit of its last digit, and whether it bears a minus."""
    plain = text.replace("−", "-").replace("∞", "inf")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return float(plain), 0.5 * 10.0 ** -decimals, plain.startswith("-")


def contradiction(word: str, lo_text: str, hi_text: str, margin: float) -> str | None:
    """Why a printed interval contradicts the word beside it, or None when it may agree."""
    (lo, lo_half, lo_minus), (hi, hi_half, hi_minus) = _figure(lo_text), _figure(hi_text)
    tiny = 1e-12
    if word == "gain" and lo_minus:
        return "a gain beside an interval that reaches 0"
    if word == "loss" and not hi_minus:
        return "a loss beside an interval that reaches 0"
    if word == "equivalent" and (hi - hi_half >= margin - tiny or lo + lo_half <= -margin + tiny):
        return f"equivalent beside an interval that reaches past ±{margin:g}"
    if word == "cannot tell":
        if lo >= 2 * lo_half - tiny or hi <= -2 * hi_half + tiny:
            return "cannot tell beside an interval clear of 0 (a gain or a loss at its level)"
        if lo - lo_half > -margin and hi + hi_half < margin:
            return f"cannot tell beside an interval inside ±{margin:g} (equivalent)"
    return None


def _pairs(text: str, words: re.Pattern) -> list[tuple[str, str, str]]:
    """(word, lo, hi) for each verdict word in `text` with the last interval printed before it."""
    found, last, taken = [], None, True
    events = sorted([(m.start(), "interval", m) for m in _INTERVAL.finditer(text)]
                    + [(m.start(), "word", m) for m in words.finditer(text)], key=lambda e: e[0])
    for _, kind, match in events:
        if kind == "interval":
            last, taken = match, False
        elif last is not None and not taken:
            found.append((match.group(1), last.group(1), last.group(2)))
            taken = True
    return found


def _printed(cell) -> list[str]:
    """What a code cell printed, one text per output: HTML when there is some, else Markdown, else text."""
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            texts.append(output.get("text", ""))
            continue
        data = output.get("data", {})
        for mime in ("text/html", "text/markdown", "text/plain"):
            if mime in data:
                value = data[mime]
                texts.append(value if isinstance(value, str) else "".join(value))
                break
    return texts


def interval_flags(notebook: nbformat.NotebookNode, *, name: str = "") -> list[Flag]:
    """Every printed verdict whose interval beside it contradicts its word (see the module doc)."""
    flags = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        for text in _printed(cell):
            margins = _MARGIN.findall(text)
            margin = float(margins[0]) if margins else EQUIVALENCE_MARGIN
            html_rows = _ROW.findall(text)
            units = ([(row, _HTML_WORD) for row in html_rows]
                     or [(line, _TEXT_WORD) for line in text.splitlines()])
            for unit, words in units:
                for word, lo, hi in _pairs(unit, words):
                    why = contradiction(word, lo, hi, margin)
                    if why:
                        flags.append(Flag(name, index, (word,), f"{word} beside [{lo}, {hi}]", why))
    return flags


def check_paths(paths: list[Path], *, intervals: bool = False) -> dict[str, list[Flag]]:
    """Flags per notebook path, for every notebook given; with `intervals`, printed verdicts too."""
    results = {}
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        flags = flag_cells(notebook, name=str(path))
        results[str(path)] = flags + (interval_flags(notebook, name=str(path)) if intervals else [])
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--count", action="store_true", help="print flagged cells per notebook, exit 0")
    parser.add_argument("--intervals", action="store_true",
                        help="also flag printed verdicts whose interval contradicts their word")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    paths = args.notebooks or sorted((root / "notebooks").glob("**/*.ipynb"))
    results = check_paths(paths, intervals=args.intervals)
    total = sum(len(flags) for flags in results.values())
    for path, flags in results.items():
        if args.count:
            print(f"{len(flags):4d}  {path}")
            continue
        for flag in flags:
            print(f"{path}: cell {flag.cell}: {', '.join(flag.words)} ({flag.why}): {flag.line[:100]}")
    extra = " or print an interval that contradicts their word" if args.intervals else ""
    print(f"{total} cell(s) state a verdict with no rendered comparison or assertion beside them{extra}",
          file=sys.stderr)
    return 0 if args.count or total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
