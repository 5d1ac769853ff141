"""Keep verdicts honest: flag any verdict a notebook states in hand-written words.

    python scripts/check_claims.py [PATH ...]      (default: notebooks/**/*.ipynb)
    python scripts/check_claims.py --intervals     (default: the notebooks and README.md)

A verdict is a sentence that uses the course's verdict vocabulary (helps, better, worse, gains,
improvement, winner, beats, outperforms, hurts, costs, faster, equivalent, cannot tell, …). In a
Markdown cell it passes only when the nearest code cell before or after it backs it:

- the code cell renders the comparison (`verdict(`, `verdict_table(`, `technique_table(` from
  course_lib.evaluation.verdicts, `main_verdict_table(`, `decision_line(` from its decisions) and,
  when the sentence names a quantity (recall@5, MRR, latency, tokens, …), that quantity appears in
  the code cell's comparison; or
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
it (HTML), or in a line the interval and the word after it: "[lo, hi] …: a gain" (`verdict`),
"[lo, hi] (97.5%), **gain**" (lesson 09's Markdown) or "[lo, hi] 97.5% | … | **gain** |" (a
Markdown table row). Figures are read as printed: an edge is flagged only when every value that
rounds to it breaks the rule (+0.000 beside "gain" passes, −0.000 does not).

Two more facts printed beside a word must agree with it:

- the level, when one is printed right after the interval ("(97.5%)", "97.5%"): "equivalent"
  stands beside the two one-sided tests' interval at their Holm step level, 1 − 2α/j for a whole
  j (90% judged alone, 95%, 96.7%, 97.5%, … in a family) and no other; a gain or a loss beside
  the test's own interval at its Holm step level, never below 1 − α (95%). A "cannot tell" may
  stand at any level (the test's, or the higher of the two when widened to take in the
  equivalence interval, `compare.DecisionInterval.widened`);
- the word's own p-value, the one test p ("Holm p = …", else "p = …"; a two one-sided tests' p
  is not the test's) in its table row, or in its sentence between the word before it and the
  interval after it; none is read when there are two to choose from. A gain or a loss needs it
  below α (0.05); "equivalent" or "cannot tell" beside a Holm p below α AND an interval clear of 0
  is flagged (an uncorrected p below α may still fail Holm). "p < 0.001" and "p ≤ 0.0002" are
  bounds, and "p = 0.05" may be 0.0496: a p is flagged only when every value it may stand for is.

Markdown files given (`README.md` by default with `--intervals`) are read for intervals, levels
and p alone, flags named by line: the README's verdicts are rendered by scripts/update_readme.py
and it has no code cells beside which the hand-written rule could pass.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course_lib.settings import CONFIDENCE, EQUIVALENCE_MARGIN

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
_RENDERS = re.compile(r"\b(verdict|verdict_table|technique_table|main_verdict_table|decision_line)\s*\(")
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
    unit: str = "cell"  # "line" in a Markdown file


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
_WORD = r"(gain|loss|equivalent|cannot tell)"
# ": a gain" (`verdict`), ", **gain**" (lesson 09's Markdown) or "| **gain** |" (a Markdown table row).
_TEXT_WORD = re.compile(rf":\s*(?:an?\s+)?{_WORD}\b"
                        rf"|[,|]\s*(?:\*\*|<b>|<strong>)\s*{_WORD}\s*(?:\*\*|</b>|</strong>)")
_HTML_WORD = re.compile(rf"<b>\s*{_WORD}\s*</b>")
_MARGIN = re.compile(r"(?:margin|within)\s*±\s*(\d*\.?\d+)")
_ROW = re.compile(r"<tr\b.*?</tr>", re.S)
_LEVEL = re.compile(r"\s*\(?\s*(\d+(?:\.\d+)?)\s*%")  # right after the interval: "(97.5%)", "97.5%"
_P = re.compile(r"(Holm\s+)?\bp\s*(=|≤|<=|<|&lt;|&le;)\s*(\d+(?:\.\d+)?(?:e[+-]?\d+)?)")
_TOST = re.compile(r"one-sided|\bTOST\b|equivalence test", re.I)
# A sentence ends at ". ", "! ", "? " or "; ", never at the ";" that closes an HTML entity ("&lt;").
_SENTENCE_STOP = re.compile(r"(?<!&[a-z]{2})(?<!&[a-z]{3})(?<!&[a-z]{4})(?<!&#[0-9]{2})(?<!&#x[0-9a-f]{2})"
                            r"[.!?;](?=\s|$)", re.I)
ALPHA = 1 - CONFIDENCE
EQUIVALENCE_LEVEL, TEST_LEVEL = 100 * (1 - 2 * ALPHA), 100 * (1 - ALPHA)  # 90%, and 95% at least
LARGEST_FAMILY = 200  # the Holm steps a level is matched against: 1 - 2 alpha / j for j up to this
_TINY = 1e-9


@dataclass(frozen=True)
class Printed:
    """A verdict word as printed: the interval before it, the level beside that interval (when one
    is printed) and the p-value that is the word's own (name "p" or "Holm p", relation, figure)."""

    word: str
    lo: str
    hi: str
    level: str | None = None
    p: tuple[str, str, str] | None = None

    def describe(self) -> str:
        """"gain beside [+0.02, +0.17] (97.5%), Holm p = 0.01": what the flag quotes."""
        level = f" ({self.level}%)" if self.level else ""
        p = f", {self.p[0]} {self.p[1]} {self.p[2]}" if self.p else ""
        return f"{self.word} beside [{self.lo}, {self.hi}]{level}{p}"


def _figure(text: str) -> tuple[float, float, bool]:
    """A printed figure: its value, half a unit of its last digit, and whether it bears a minus."""
    plain = text.replace("−", "-").replace("∞", "inf")
    mantissa, _, exponent = plain.lower().partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    scale = 10.0 ** int(exponent) if exponent else 1.0
    return float(plain), 0.5 * 10.0 ** -decimals * scale, plain.startswith("-")


def _clear_of_zero(lo_text: str, hi_text: str) -> bool:
    """True when every value that rounds to the printed interval excludes 0."""
    (lo, lo_half, _), (hi, hi_half, _) = _figure(lo_text), _figure(hi_text)
    return lo >= 2 * lo_half - _TINY or hi <= -2 * hi_half + _TINY


def contradiction(word: str, lo_text: str, hi_text: str, margin: float) -> str | None:
    """Why a printed interval contradicts the word beside it, or None when it may agree."""
    (lo, lo_half, lo_minus), (hi, hi_half, hi_minus) = _figure(lo_text), _figure(hi_text)
    if word == "gain" and lo_minus:
        return "a gain beside an interval that reaches 0"
    if word == "loss" and not hi_minus:
        return "a loss beside an interval that reaches 0"
    if word == "equivalent" and (hi - hi_half >= margin - _TINY or lo + lo_half <= -margin + _TINY):
        return f"equivalent beside an interval that reaches past ±{margin:g}"
    if word == "cannot tell":
        if _clear_of_zero(lo_text, hi_text):
            return "cannot tell beside an interval clear of 0 (a gain or a loss at its level)"
        if lo - lo_half > -margin and hi + hi_half < margin:
            return f"cannot tell beside an interval inside ±{margin:g} (equivalent)"
    return None


def level_contradiction(word: str, level: str | None) -> str | None:
    """Why the level printed beside an interval cannot be the one its word was decided on.

    "equivalent" rests on the two one-sided tests' interval at their Holm step level, 1 - 2 alpha / j
    (90% judged alone), a gain or a loss on the test's own interval at its Holm step level (95% or
    more); "cannot tell" prints the test's or, widened, the higher of it and the equivalence
    interval's, so any level may stand beside it.
    """
    if level is None or word == "cannot tell":
        return None
    value, half, _ = _figure(level)
    steps = (100 * (1 - 2 * ALPHA / j) for j in range(1, LARGEST_FAMILY + 1))
    if word == "equivalent" and not any(abs(value - step) <= half + _TINY for step in steps):
        return (f"equivalent beside a {level}% interval (its interval is the two one-sided tests' at their "
                f"Holm step: {EQUIVALENCE_LEVEL:.3g}% alone, 1 − {2 * ALPHA:g}/j in a family)")
    if word in ("gain", "loss") and value + half < TEST_LEVEL - _TINY:
        return (f"a {word} beside a {level}% interval (a test's interval is at its Holm step level, "
                f"{TEST_LEVEL:.3g}% or more)")
    return None


def p_contradiction(word: str, lo: str, hi: str, p: tuple[str, str, str] | None) -> str | None:
    """Why the word's own p-value says otherwise: a gain or a loss whose test p is not below alpha,
    or "equivalent" / "cannot tell" beside a Holm p below alpha and an interval clear of 0."""
    if p is None:
        return None
    name, relation, figure = p
    value, half, _ = _figure(figure)
    bound = relation != "="  # "p < 0.001", "p ≤ 0.0002": at most the figure
    if word in ("gain", "loss"):
        if not bound and value - half >= ALPHA - _TINY:
            return f"a {word} beside {name} = {figure}, not below {ALPHA:.2g}"
        return None
    strict = relation in ("<", "&lt;")
    if bound:
        below = value < ALPHA - _TINY or (strict and value <= ALPHA + _TINY)
    else:
        below = value + half < ALPHA - _TINY
    if name == "Holm p" and below and _clear_of_zero(lo, hi):
        return f"{word} beside Holm p {relation} {figure}, below {ALPHA:.2g}, and an interval clear of 0"
    return None


def _matches(text: str, words: re.Pattern) -> list[tuple[re.Match, re.Match]]:
    """(interval, word) for each verdict word in `text` with the last interval printed before it."""
    found, last, taken = [], None, True
    events = sorted([(m.start(), "interval", m) for m in _INTERVAL.finditer(text)]
                    + [(m.start(), "word", m) for m in words.finditer(text)], key=lambda e: e[0])
    for _, kind, match in events:
        if kind == "interval":
            last, taken = match, False
        elif last is not None and not taken:
            found.append((last, match))
            taken = True
    return found


def _word(match: re.Match) -> str:
    """The verdict word a word pattern matched, whichever of its forms it was."""
    return match.group(match.lastindex)


def _pairs(text: str, words: re.Pattern) -> list[tuple[str, str, str]]:
    """(word, lo, hi) for each verdict word in `text` with the last interval printed before it."""
    return [(_word(word), interval.group(1), interval.group(2)) for interval, word in _matches(text, words)]


def _own_p(segment: str) -> tuple[str, str, str] | None:
    """The one test p-value in a word's row or sentence: its Holm p, else its plain p; a two
    one-sided tests' p is not the test's. None when there is none, or more than one to choose."""
    found, last = [], 0
    for match in _P.finditer(segment):
        if not _TOST.search(segment, last, match.start()):
            found.append(match)
        last = match.end()
    chosen = [m for m in found if m.group(1)] or found
    if len(chosen) != 1:
        return None
    return ("Holm p" if chosen[0].group(1) else "p", chosen[0].group(2), chosen[0].group(3))


def _segment(unit: str, pairs: list, index: int, *, sentences: bool) -> str:
    """The text that belongs to the `index`-th pair: from the word before it to the next interval,
    cut to the word's own sentence when `unit` is prose (a table row is one unit)."""
    interval, word = pairs[index]
    start = pairs[index - 1][1].end() if index else 0
    following = _INTERVAL.search(unit, word.end())
    end = following.start() if following else len(unit)
    if sentences:
        stops = [m.end() for m in _SENTENCE_STOP.finditer(unit, start, word.start())]
        after = _SENTENCE_STOP.search(unit, word.end(), end)
        start, end = (stops[-1] if stops else start), (after.start() if after else end)
    return unit[start:end]


def read_printed(unit: str, words: re.Pattern, *, sentences: bool = True) -> list[Printed]:
    """Every verdict word in one table row or line, with its interval, level and own p."""
    pairs, found = _matches(unit, words), []
    for index, (interval, word) in enumerate(pairs):
        level = _LEVEL.match(unit, interval.end())
        found.append(Printed(_word(word), interval.group(1), interval.group(2), level and level.group(1),
                             _own_p(_segment(unit, pairs, index, sentences=sentences))))
    return found


def problems(printed: Printed, margin: float) -> list[str]:
    """Every reason the interval, level or p-value printed beside a word says otherwise."""
    reasons = (contradiction(printed.word, printed.lo, printed.hi, margin),
               level_contradiction(printed.word, printed.level),
               p_contradiction(printed.word, printed.lo, printed.hi, printed.p))
    return [reason for reason in reasons if reason]


def _margin(text: str) -> float:
    """The equivalence margin a text names, else the course's."""
    margins = _MARGIN.findall(text)
    return float(margins[0]) if margins else EQUIVALENCE_MARGIN


def text_flags(text: str, *, name: str = "", cell: int = 0, unit: str = "cell",
               margin: float | None = None) -> list[Flag]:
    """Every verdict word in a printed or Markdown text whose interval, level or p says otherwise:
    HTML table rows with their `<b>word</b>` when the text has rows, else each line."""
    margin = _margin(text) if margin is None else margin
    rows = _ROW.findall(text)
    units = ([(row, _HTML_WORD, False) for row in rows]
             or [(line, _TEXT_WORD, True) for line in text.splitlines()])
    flags = []
    for part, words, sentences in units:
        for printed in read_printed(part, words, sentences=sentences):
            reasons = problems(printed, margin)
            if reasons:
                flags.append(Flag(name, cell, (printed.word,), printed.describe(), "; ".join(reasons), unit))
    return flags


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
    """Every printed verdict whose interval, level or p beside it contradicts its word (module doc)."""
    return [flag for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
            for text in _printed(cell) for flag in text_flags(text, name=name, cell=index)]


def markdown_flags(text: str, *, name: str = "") -> list[Flag]:
    """The interval, level and p check on a Markdown file (the README), flags named by line."""
    margin = _margin(text)
    return [flag for number, line in enumerate(text.splitlines(), start=1)
            for flag in text_flags(line, name=name, cell=number, unit="line", margin=margin)]


def check_paths(paths: list[Path], *, intervals: bool = False) -> dict[str, list[Flag]]:
    """Flags per path, for every notebook given; with `intervals`, printed verdicts too, and
    Markdown files (the README, whose verdicts `update_readme.py` renders) read for those alone."""
    results = {}
    for path in paths:
        if path.suffix.lower() == ".md":
            text = path.read_text(encoding="utf-8")
            results[str(path)] = markdown_flags(text, name=str(path)) if intervals else []
            continue
        notebook = nbformat.read(path, as_version=4)
        flags = flag_cells(notebook, name=str(path))
        results[str(path)] = flags + (interval_flags(notebook, name=str(path)) if intervals else [])
    return results


def default_paths(root: Path, *, intervals: bool) -> list[Path]:
    """Every lesson and solution notebook; with `intervals`, the README's rendered findings too."""
    notebooks = sorted((root / "notebooks").glob("**/*.ipynb"))
    readme = root / "README.md"
    return notebooks + ([readme] if intervals and readme.exists() else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="notebooks, or Markdown files")
    parser.add_argument("--count", action="store_true", help="print flagged cells per notebook, exit 0")
    parser.add_argument("--intervals", action="store_true",
                        help="also flag printed verdicts whose interval, level or p contradicts their word")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    paths = args.paths or default_paths(root, intervals=args.intervals)
    results = check_paths(paths, intervals=args.intervals)
    total = sum(len(flags) for flags in results.values())
    for path, flags in results.items():
        if args.count:
            print(f"{len(flags):4d}  {path}")
            continue
        for flag in flags:
            print(f"{path}: {flag.unit} {flag.cell}: {', '.join(flag.words)} ({flag.why}): {flag.line[:100]}")
    extra = " or print an interval, level or p that contradicts their word" if args.intervals else ""
    print(f"{total} cell(s) state a verdict with no rendered comparison or assertion beside them{extra}",
          file=sys.stderr)
    return 0 if args.count or total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
