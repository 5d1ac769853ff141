"""The golden set: questions with a known answer location, read from one JSON object per line.

A golden question names the page, the section and a short verbatim evidence quote that answers
it, optionally `fragments`: further pieces of the same answer unit that a reader also needs (the
key cell of the table row whose other cell is the quote; the other lines of the code that answers),
and optionally `also`: further places (page, quote and fragments) that answer it in other words,
found by pooling every system's top results (data/golden/README.md). Every lesson judges retrieval
against these same questions. `normalize` is the one canonical form in which quotes are both
validated and judged; `golden_checks` validates a file against its corpus.
"""
from __future__ import annotations

import errno
import html
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from course_lib.infra.errors import GoldenError
from course_lib.infra.files import special_kind

KINDS = ("paraphrase", "exact", "table", "code", "context", "unanswerable")
SPLITS = ("dev", "test")
MIN_EVIDENCE_WORDS, MAX_EVIDENCE_WORDS = 4, 20
MAX_EVIDENCE_CHARS = 400  # a 20-word quote is never longer; a huge "word" is a paste error
_OPTIONAL = ("split", "also", "fragments")
_PLACE_FIELDS = ("doc", "evidence", "fragments")
_REQUIRED = {"id": str, "question": str, "doc": (str, type(None)),
             "section": (str, type(None)), "evidence": (str, type(None)), "kind": str}
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Place:
    """A further place that answers a question: a page, a verbatim quote on it and the further
    fragments of the same answer unit (`also`)."""

    doc: str
    evidence: str
    fragments: tuple[str, ...] = ()

    @property
    def unit(self) -> tuple[str, ...]:
        """Every piece a chunk must hold to answer from this place: the quote, then its fragments."""
        return (self.evidence, *self.fragments)


@dataclass(frozen=True)
class Question:
    """One golden question and where its answer lives in the corpus.

    `doc` is the page path relative to the corpus root, `section` the `id` of the innermost
    section or heading that contains the answer, `evidence` a verbatim quote of 4-20 words.
    All three are None for an unanswerable question, which the corpus does not answer at all.
    `fragments` are the further pieces of the answer unit (a table row's key cell, the other lines
    of the answering code): a chunk answers only when it holds the quote AND every fragment, so a
    chunk that kept a description but lost the name the question asks for is not an answer.
    `also` lists further places that answer it, each credited by the same rule.
    """

    id: str
    question: str
    doc: str | None
    section: str | None
    evidence: str | None
    kind: str
    split: str | None = None
    also: tuple[Place, ...] = ()
    fragments: tuple[str, ...] = ()

    @property
    def unit(self) -> tuple[str, ...]:
        """Every piece a chunk must hold to answer from the gold place: the quote, then its fragments."""
        return () if self.evidence is None else (self.evidence, *self.fragments)

    @property
    def answerable(self) -> bool:
        """True when the corpus holds the answer (the question names a page)."""
        return self.doc is not None


# Typographic punctuation folded to ASCII on both sides: one extractor (or a peer library) keeps
# the page's curly quotes, another writes straight ones; the answer is the same text.
_TYPOGRAPHIC = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u2212": "-", "\u2026": "...",
})


# Markup a library adds around the same words (Markdown from peers, escapes), folded on both
# sides: `[text](url)` -> text, `\\_` -> `_`, then backticks, `*`, `__` and table pipes dropped.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)\s]*\)")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")
_MARKUP = re.compile(r"\*|__|`|\|")


def strip_markup(text: str) -> str:
    """The text without the markup a library adds: links to their text, backslash escapes, then
    backticks, emphasis (`*`, `**`, `__`) and table pipes dropped.

    Applied to quotes and chunks alike (inside `normalize`), so it can only make the same words
    match: docling's `` `read_csv` `` and the page's read_csv are one answer, not a miss."""
    return _MARKUP.sub("", _LINK.sub(r"\1", _ESCAPED.sub(r"\1", text)))


def normalize(text: str, *, fold_markup: bool = True) -> str:
    """Return the one canonical form used both to validate evidence and to judge chunks.

    It unescapes HTML entities, folds Markdown markup (`strip_markup`), applies Unicode NFKC (so a
    no-break space or a ligature reads as its plain form), case-folds, folds typographic quotes,
    apostrophes, dashes, the minus sign and the ellipsis to ASCII, drops the Sphinx pilcrow "¶"
    and removes ALL whitespace.
    Removing whitespace means that text a naive regex stripper spaced differently ("os . path"
    against "os.path", a cell break against a space) still matches its quote; folding quotes
    means a chunker that writes straight quotes where the page has curly ones is not penalised:
    the judge measures whether the right text was retrieved, not how it was formatted. Markup is
    folded for the same reason, for every system alike. (`fold_markup=False` gives the form before
    markup was folded, which the first pools' item keys were made with: data/golden/pool.)
    """
    text = html.unescape(text)
    text = unicodedata.normalize("NFKC", strip_markup(text) if fold_markup else text)
    text = text.casefold().translate(_TYPOGRAPHIC)
    return _WHITESPACE.sub("", text.replace("¶", ""))


def _parse_record(line: str) -> Question:
    """Turn one JSONL line into a Question, raising ValueError with the bare problem."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON ({err.msg})") from None
    except RecursionError:  # a value nested thousands deep: no question looks like that
        raise ValueError("invalid JSON (nested too deep to read)") from None
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    for name, types in _REQUIRED.items():
        if name not in record:
            raise ValueError(f"missing field '{name}'")
        if not isinstance(record[name], types):
            raise ValueError(f"field '{name}' has the wrong type ({type(record[name]).__name__})")
    unknown = sorted(set(record) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        # A misspelled "fragmets" would otherwise judge a table question by its quote alone.
        raise ValueError(f"unknown field '{unknown[0]}' (known: {', '.join([*_REQUIRED, *_OPTIONAL])})")
    if record["kind"] not in KINDS:
        raise ValueError(f"kind '{record['kind']}' is not one of {', '.join(KINDS)}")
    split = record.get("split")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split '{split}' is not one of {', '.join(SPLITS)}")
    return Question(**{name: record[name] for name in _REQUIRED}, split=split,
                    also=_parse_also(record.get("also", [])),
                    fragments=_parse_fragments(record.get("fragments", []), "fragments"))


def _parse_fragments(value: object, field: str) -> tuple[str, ...]:
    """An optional list of non-empty strings: the further pieces of an answer unit."""
    if not (isinstance(value, list) and all(isinstance(f, str) and f.strip() for f in value)):
        raise ValueError(f"field '{field}' must be a list of non-empty strings")
    return tuple(value)


def _parse_also(value: object) -> tuple[Place, ...]:
    """The optional `also` field: a list of {"doc": str, "evidence": str[, "fragments": [str]]}."""
    if not isinstance(value, list):
        raise ValueError("field 'also' must be a list of {\"doc\", \"evidence\"} objects")
    places = []
    for item in value:
        if not (isinstance(item, dict) and {"doc", "evidence"} <= set(item) <= {*_PLACE_FIELDS}
                and all(isinstance(item[k], str) for k in ("doc", "evidence"))):
            raise ValueError("each 'also' entry must be {\"doc\": str, \"evidence\": str} "
                             "with optional \"fragments\": [str]")
        places.append(Place(item["doc"], item["evidence"],
                            _parse_fragments(item.get("fragments", []), "also: fragments")))
    return tuple(places)


def fragment_problem(fragment: str) -> str | None:
    """Why a fragment cannot be part of an answer unit (too long or too many words), or None.
    A fragment may be one word: a table row's key cell is often just `%j` or `std`."""
    if len(fragment) > MAX_EVIDENCE_CHARS or len(fragment.split()) > MAX_EVIDENCE_WORDS:
        return f"fragment has more than {MAX_EVIDENCE_WORDS} words or {MAX_EVIDENCE_CHARS} characters"
    return None


def evidence_problem(evidence: str) -> str | None:
    """Why a quote cannot be evidence (too long, too few or too many words), or None."""
    if len(evidence) > MAX_EVIDENCE_CHARS:
        return f"evidence has {len(evidence)} characters; it must have at most {MAX_EVIDENCE_CHARS}"
    words = len(evidence.split())
    if not MIN_EVIDENCE_WORDS <= words <= MAX_EVIDENCE_WORDS:
        return f"evidence has {words} words; it must have {MIN_EVIDENCE_WORDS}-{MAX_EVIDENCE_WORDS}"
    return None


def _check_question(q: Question) -> list[str]:
    """Problems in one question that need no corpus: a question in words, nulls that must
    agree, quote length. A drafted line (`golden-draft`) whose question is still empty fails."""
    if not q.question.strip():
        return ["the question is empty — write the question a user would ask (golden-draft leaves it blank)"]
    located = (q.doc, q.section, q.evidence)
    if q.kind == "unanswerable":
        return [] if located == (None, None, None) and not q.also and not q.fragments else [
            "an unanswerable question must have doc, section and evidence all null, "
            "and no 'also' or 'fragments'"]
    if None in located:
        return [f"a '{q.kind}' question needs doc, section and evidence (none may be null)"]
    problems = [evidence_problem(q.evidence)] + [fragment_problem(f) for f in q.fragments]
    also = [problem for p in q.also
            for problem in (evidence_problem(p.evidence), *map(fragment_problem, p.fragments))]
    return [p for p in problems if p] + [f"also: {p}" for p in also if p]


# A golden file's largest size: 50,000 questions take about 15 MB; more is not a golden file.
GOLDEN_MAX_BYTES = 200 * 10**6


def _refuse_special(path: Path) -> None:
    """A GoldenError for a device, FIFO or socket (a symlink is followed), before it is opened:
    opening a FIFO no one writes to waits for ever, and a device may never end (issue 37)."""
    try:
        mode = path.stat().st_mode
    except OSError:  # missing or unreadable: reading it says which, in its own words
        return
    what = special_kind(mode)
    if what is not None:
        raise GoldenError(f"not a regular file: {what}", path=path, hint="give the .jsonl file")


def _read_text(path: Path) -> str:
    """A golden file's text: UTF-8 (a BOM is allowed), or a one-line GoldenError saying how to fix it."""
    _refuse_special(path)
    try:
        with path.open("rb") as handle:  # bounded: a file that never ends (a /proc file) is refused
            too_large = os.fstat(handle.fileno()).st_size > GOLDEN_MAX_BYTES
            raw = b"" if too_large else handle.read(GOLDEN_MAX_BYTES + 1)
    except FileNotFoundError:
        raise GoldenError("no such file", path=path, hint="check the --golden path") from None
    except IsADirectoryError:
        raise GoldenError("a folder, not a golden file", path=path, hint="give the .jsonl file") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise GoldenError("a symlink loop, not a file", path=path,
                              hint="point --golden at the .jsonl file itself") from None
        raise GoldenError(f"cannot read ({err.strerror or err})", path=path,
                          hint="check its permissions") from None
    if too_large or len(raw) > GOLDEN_MAX_BYTES:
        raise GoldenError(f"larger than {GOLDEN_MAX_BYTES // 10**6} MB: not a golden file", path=path,
                          hint="give the .jsonl file (one question a line)")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4096]:
        raise GoldenError("UTF-16 or binary, not UTF-8 text", path=path, line=1,
                          hint="save the file as UTF-8 (one JSON object per line)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise GoldenError(f"byte {raw[err.start]:#04x} is not UTF-8", path=path, line=line,
                          hint="save the file as UTF-8") from None


def _numbered_lines(path: Path):
    """Yield (line number, text) for the non-blank lines of a JSONL file."""
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        if line.strip():
            yield number, line


def load_golden(path: str | Path, *, split: str | None = None) -> list[Question]:
    """Read a golden JSONL file, optionally keeping one split ("dev" or "test").

    A malformed line raises GoldenError naming the file, the line number and the problem, so a
    typo fails loudly instead of quietly dropping a question. Questions without a split belong
    to every split: a learner's own golden file need not be divided at all.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)} or None, not {split!r}")
    path, questions, seen = Path(path), [], set()
    for number, line in _numbered_lines(path):
        try:
            q = _parse_record(line)
            problems = _check_question(q) + (["duplicate id"] if q.id in seen else [])
            if problems:
                raise ValueError(problems[0])
        except ValueError as err:
            raise GoldenError(str(err), path=path.name, line=number,
                              hint="fix that line (see `validate-golden`)") from None
        seen.add(q.id)
        questions.append(q)
    return [q for q in questions if split is None or q.split in (None, split)]
