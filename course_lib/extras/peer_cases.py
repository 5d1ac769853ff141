"""The peers' own bug reports as test pages: lesson 10's pass / fail grid.

Each `Case` is one HTML failure that a peer library's users reported in its issue tracker, as a
few lines of HTML written for the course (tests/fixtures/peer_cases/NAME.html) and a precise pass
rule on the texts a chunker hands to the embedder. `grid` runs every case through every chunker
(the course's lesson 05 chunks and each peer at the measured window) and says, per cell, "pass",
"fail", or the library's own error. The rules read chunk texts as embedded, with the judge's
normalisation (`golden.normalize`: markup folded, whitespace removed) wherever words are matched,
so a peer is not failed for formatting; the code case alone compares characters, indentation
included, because indentation is what it tests.

The shapes come from the reports cited in each case (repository and issue or pull-request
number); a case with no report found names none and says so.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from course_lib.evaluation.golden import normalize

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "peer_cases"


class Counter(Protocol):
    """What a rule needs of a token counter: the window (`limit`) and a count of a text."""

    limit: int

    def count(self, text: str) -> int: ...


Rule = Callable[[Sequence[str], Counter], bool]


@dataclass(frozen=True)
class Report:
    """One public report: `repo` ("owner/name") and its issue or pull-request `number`."""

    repo: str
    number: int
    kind: str = "issues"  # or "pull"

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/{self.kind}/{self.number}"

    def __str__(self) -> str:
        return f"{self.repo}#{self.number}"


@dataclass(frozen=True)
class Case:
    """One reported failure: its page (`name`.html in FIXTURES), the shape in words, the reports
    it comes from, and the rule a chunking must meet to pass."""

    name: str
    shape: str
    reports: tuple[Report, ...]
    rule: Rule

    @property
    def html(self) -> str:
        return (FIXTURES / f"{self.name}.html").read_text(encoding="utf-8")

    def passes(self, texts: Sequence[str], counter: Counter) -> bool:
        """True when the chunk texts meet the case's rule."""
        return self.rule(list(texts), counter)


# --- the rules ----------------------------------------------------------------------------------

Unit = str | tuple[str, ...]  # words, or pieces one chunk must hold together (a row's cells)


def _pieces(unit: Unit) -> tuple[str, ...]:
    return (unit,) if isinstance(unit, str) else unit


def _holds(text: str, unit: Unit) -> bool:
    """The judge's match (`judging.holds_unit`): every piece, normalised, in the normalised text."""
    return all(normalize(piece) in text for piece in _pieces(unit))


def held(*units: Unit) -> Rule:
    """Every unit is held whole by some chunk (all of a tuple's pieces by the same chunk)."""
    return lambda texts, counter: all(any(_holds(t, u) for t in map(normalize, texts)) for u in units)


def held_with(units: Sequence[Unit], *context: str) -> Rule:
    """Every unit is held by a chunk that also holds every `context` string (a heading, a header)."""
    return held(*(_pieces(u) + context for u in units))


def within_window(*pieces: str) -> Rule:
    """No chunk past the embedder's window (counted on the whole embedded text), and every piece held."""
    return lambda texts, counter: (all(counter.count(t) <= counter.limit for t in texts)
                                   and held(*pieces)(texts, counter))


def exact(snippet: str) -> Rule:
    """Some chunk holds `snippet` character for character, leading spaces included."""
    return lambda texts, counter: any(snippet in t.replace("\r\n", "\n") for t in texts)


# --- the cases ----------------------------------------------------------------------------------

ROWS = [f"key{i:02d}" for i in range(1, 41)]
ITEMS = [f"Item {i:02d}: the reader accepts option number {i}" for i in range(1, 41)]
MANUALS = ("install", "upgrade", "backup", "restore", "migrate", "monitor")
SUITES = [f"suite{i:02d}" for i in range(1, 13)]
CODE = ("def area(width, height):\n    if width < 0 or height < 0:\n"
        "        raise ValueError(\"negative size\")\n    return width * height")

CASES: tuple[Case, ...] = (
    Case("h1_path", "an h1 lost from the heading path once an h2 appears",
         (Report("langchain-ai/langchain", 40408),),
         held_with(["Gzip input is decompressed on the fly"], "Reading compressed files", "Gzip input")),
    Case("list_past_limit", "a list kept whole past the size limit",
         (Report("langchain-ai/langchain", 34245, "pull"),),
         within_window(*ITEMS)),
    Case("inline_moved", "inline <b> / <code> moved out of its sentence",
         (Report("run-llama/llama_index", 23190),),
         held('To join on the index, call DataFrame.join with how="left" and every row of the caller '
              'is kept.')),
    Case("deep_nesting", "deeply nested layout (400 <div>s) returning nothing",
         (Report("Unstructured-IO/unstructured", 770), Report("adbar/trafilatura", 430)),
         held("The answer sits four hundred elements deep inside the page layout.")),
    Case("rows_without_header", "table rows without their header once the table is split",
         (Report("Unstructured-IO/unstructured", 3778), Report("docling-project/docling", 2975)),
         held_with(ROWS, "Setting", "Default", "Meaning")),
    Case("headings_after_counting", "a table chunk past the budget because headings are added after counting",
         (Report("docling-project/docling", 723),),
         within_window(*SUITES)),
    Case("long_heading", "a heading longer than the budget drops its section",
         (Report("docling-project/docling-core", 327),),
         held("The paragraph under the very long heading must survive chunking.")),
    Case("heading_inline", "a heading that is only inline markup (<code>, a pilcrow link) leaves no heading",
         (), held_with(["Merges two frames with a database-style join"], "DataFrame.merge")),
    Case("code_indent", "code indentation stripped",
         (Report("arc53/DocsGPT", 2793, "pull"),), exact(CODE)),
    Case("link_dense_table", "a table of links dropped as link-dense furniture",
         (Report("adbar/trafilatura", 76), Report("adbar/trafilatura", 901, "pull")),
         held(*((f"{n.title()} guide", f"{n}.pdf") for n in MANUALS))),
    Case("drops_tables_code", "a pipeline that silently drops tables and code",
         (Report("docling-project/docling", 4049),),
         held(("Size", "Seconds", "ten thousand rows", "0.42 seconds"),
              "elapsed = timeit.timeit(run_loop, number=100)")),
)


# --- running them -------------------------------------------------------------------------------

Chunker = Callable[[str], Sequence[str]]


def course_chunker(*, model: str | None = None) -> Chunker:
    """The course's lesson 05 chunks of one page (`structured_chunks`, the `limited` pipeline's),
    each as the embedder reads it: context line and body. `min_chars=0`: a case page is short by
    design, and the stub filter is a corpus's choice, not the chunker's."""
    from course_lib.core.pipeline import structured_chunks
    from course_lib.records import Page

    def chunk(html: str) -> list[str]:
        return [c.text for c in structured_chunks([Page("case.html", html)], model=model, min_chars=0)]

    return chunk


def peer_chunker(name: str, window) -> Chunker:
    """A peer's chunk texts of one page at `window` (`peers.measure_window`)."""
    from course_lib.extras.peer_chunkers import PEERS, PREFIX

    chunk_page = PEERS[name if name.startswith(PREFIX) else PREFIX + name].chunk_page
    return lambda html: chunk_page(html, window)


def verdict(case: Case, chunker: Chunker, counter: Counter) -> str:
    """"pass", "fail", or "error: <the library's one-line error>" for one case and one chunker."""
    try:
        with warnings.catch_warnings():  # docling warns with the whole dropped heading: the rule judges
            warnings.simplefilter("ignore")
            texts = chunker(case.html)
    except Exception as err:  # noqa: BLE001 - a library's failure on a page is a result to show
        return f"error: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"[:120]
    return "pass" if case.passes(texts, counter) else "fail"


def grid(chunkers: dict[str, Chunker], counter: Counter, *,
         cases: Sequence[Case] = CASES) -> list[dict[str, str]]:
    """One row per case: its shape, its reports, and each chunker's verdict."""
    return [{"case": case.name, "shape": case.shape,
             "reported in": ", ".join(map(str, case.reports)) or "no public report found",
             **{name: verdict(case, chunker, counter) for name, chunker in chunkers.items()}}
            for case in cases]
