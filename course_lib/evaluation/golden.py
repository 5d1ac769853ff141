"""The golden set: questions with a known answer location, and the checks that keep it honest.

A golden question names the page, the section and a short verbatim evidence quote that answers
it. Every lesson judges retrieval against these same questions, so this module also validates the
file against the corpus: a quote that is not where the file says it is would silently turn a
correct retrieval into a miss.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path

from bs4 import BeautifulSoup, Tag
from bs4.element import Comment

from course_lib.core.html_parts import HEADING_TAGS
from course_lib.infra.errors import GoldenError

KINDS = ("paraphrase", "exact", "table", "code", "context", "unanswerable")
SPLITS = ("dev", "test")
MIN_EVIDENCE_WORDS, MAX_EVIDENCE_WORDS = 4, 20
_REQUIRED = {"id": str, "question": str, "doc": (str, type(None)),
             "section": (str, type(None)), "evidence": (str, type(None)), "kind": str}
_HEADINGS = {tag: level for level, tag in enumerate(HEADING_TAGS, start=1)}
_WHITESPACE = re.compile(r"\s+")


MAX_EVIDENCE_CHARS = 400  # a 20-word quote is never longer; a huge "word" is a paste error


@dataclass(frozen=True)
class Question:
    """One golden question and where its answer lives in the corpus.

    `doc` is the page path relative to the corpus root, `section` the `id` of the innermost
    section or heading that contains the answer, `evidence` a verbatim quote of 4-20 words.
    All three are None for an unanswerable question, which the corpus does not answer at all.
    """

    id: str
    question: str
    doc: str | None
    section: str | None
    evidence: str | None
    kind: str
    split: str | None = None

    @property
    def answerable(self) -> bool:
        """True when the corpus holds the answer (the question names a page)."""
        return self.doc is not None


def normalize(text: str) -> str:
    """Return the one canonical form used both to validate evidence and to judge chunks.

    It unescapes HTML entities, applies Unicode NFKC (so a no-break space or a ligature reads as
    its plain form), case-folds, drops the Sphinx pilcrow "¶" and removes ALL whitespace.
    Removing whitespace means that text a naive regex stripper spaced differently ("os . path"
    against "os.path", a cell break against a space) still matches its quote: the judge measures
    whether the right text was retrieved, not how it was formatted.
    """
    text = unicodedata.normalize("NFKC", html.unescape(text)).casefold()
    return _WHITESPACE.sub("", text.replace("¶", ""))


def _parse_record(line: str) -> Question:
    """Turn one JSONL line into a Question, raising ValueError with the bare problem."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON ({err.msg})") from None
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    for name, types in _REQUIRED.items():
        if name not in record:
            raise ValueError(f"missing field '{name}'")
        if not isinstance(record[name], types):
            raise ValueError(f"field '{name}' has the wrong type ({type(record[name]).__name__})")
    if record["kind"] not in KINDS:
        raise ValueError(f"kind '{record['kind']}' is not one of {', '.join(KINDS)}")
    split = record.get("split")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split '{split}' is not one of {', '.join(SPLITS)}")
    return Question(**{name: record[name] for name in _REQUIRED}, split=split)


def _check_question(q: Question) -> list[str]:
    """Problems in one question that need no corpus: a question in words, nulls that must
    agree, quote length. A drafted line (`golden-draft`) whose question is still empty fails."""
    if not q.question.strip():
        return ["the question is empty — write the question a user would ask (golden-draft leaves it blank)"]
    located = (q.doc, q.section, q.evidence)
    if q.kind == "unanswerable":
        return [] if located == (None, None, None) else [
            "an unanswerable question must have doc, section and evidence all null"]
    if None in located:
        return [f"a '{q.kind}' question needs doc, section and evidence (none may be null)"]
    if len(q.evidence) > MAX_EVIDENCE_CHARS:
        return [f"evidence has {len(q.evidence)} characters; it must have at most {MAX_EVIDENCE_CHARS}"]
    words = len(q.evidence.split())
    if not MIN_EVIDENCE_WORDS <= words <= MAX_EVIDENCE_WORDS:
        return [f"evidence has {words} words; it must have "
                f"{MIN_EVIDENCE_WORDS}-{MAX_EVIDENCE_WORDS}"]
    return []


def _read_text(path: Path) -> str:
    """A golden file's text: UTF-8 (a BOM is allowed), or a one-line GoldenError saying how to fix it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise GoldenError("no such file", path=path, hint="check the --golden path") from None
    except IsADirectoryError:
        raise GoldenError("a folder, not a golden file", path=path, hint="give the .jsonl file") from None
    except OSError as err:
        raise GoldenError(f"cannot read ({err.strerror or err})", path=path, hint="check its permissions") from None
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


def _load_soup(path: Path, html: str | None = None) -> BeautifulSoup:
    """Parse a page (decoded like the pipelines decode it) and drop script and style, whose
    text no reader ever sees."""
    from course_lib.core.load import decode_html

    soup = BeautifulSoup(html if html is not None else decode_html(path.read_bytes()), "lxml")
    for tag in soup(["script", "style"]):
        tag.decompose()
    return soup


def _text_of(node) -> str:
    """Visible text of a tag or a bare string; comments are not visible."""
    if isinstance(node, Tag):
        return node.get_text(" ")
    return "" if isinstance(node, Comment) else str(node)


def section_text(soup: BeautifulSoup, section_id: str) -> str | None:
    """Return the visible text of the section with this id, or None when no element has it.

    An id on a heading stands for the section the heading opens: its parent <section> if it
    has one, else the heading and its following siblings up to the next heading of the same
    or a higher level (older HTML has flat headings, not nested sections).
    """
    element = soup.find(id=section_id)
    if element is None:
        return None
    level = _HEADINGS.get(element.name)
    if level is None:
        return _text_of(element)
    if element.parent is not None and element.parent.name == "section":
        return _text_of(element.parent)
    parts = [_text_of(element)]
    for sibling in element.next_siblings:
        if isinstance(sibling, Tag) and _HEADINGS.get(sibling.name, 99) <= level:
            break
        parts.append(_text_of(sibling))
    return " ".join(parts)


def normalize_doc(doc: str, corpus_dir: Path) -> str:
    """A golden `doc` as the page path the pipelines use (relative to the corpus, POSIX), or
    ValueError when it leaves the corpus. "./x.html", "a/../x.html" and an absolute path inside
    the corpus all name "x.html"; "../x.html" or an absolute path elsewhere is refused."""
    root = Path(os.path.abspath(corpus_dir))
    target = Path(os.path.abspath(doc if os.path.isabs(doc) else root / doc))
    if not target.is_relative_to(root) or target == root:
        raise ValueError(f"doc '{doc}' points outside the corpus {corpus_dir}")
    return target.relative_to(root).as_posix()


def _section_ids(soup: BeautifulSoup, section_id: str) -> set[str]:
    """The id of a section and of every element inside it (the parser tags each block with its
    innermost section, so a block of a subsection carries the subsection's id)."""
    element = soup.find(id=section_id)
    if element is None:
        return set()
    if element.name in _HEADINGS and element.parent is not None and element.parent.name == "section":
        element = element.parent
    nodes = [element] + ([s for s in element.next_siblings if isinstance(s, Tag)]
                         if element.name in _HEADINGS else [])
    ids = {section_id}
    for node in nodes:
        if node is not element and _HEADINGS.get(node.name, 99) <= _HEADINGS.get(element.name, 0):
            break
        ids |= {t["id"] for t in node.find_all(id=True)} | ({node["id"]} if node.get("id") else set())
    return ids


class _Page:
    """One page as the validator sees it: the soup (raw section text) and, on demand, the blocks
    the course's parser makes of it (what the pipelines index)."""

    def __init__(self, path: Path, html: str | None) -> None:
        self.html = html
        self.soup = _load_soup(path) if html is None else _load_soup(path, html)
        self._blocks = None

    def parser_text(self, section_id: str) -> str:
        from course_lib.core.parse import parse_blocks

        if self._blocks is None:
            self._blocks = parse_blocks(self.html if self.html is not None else str(self.soup))
        ids = _section_ids(self.soup, section_id)
        return "\n".join(b.text for b in self._blocks if b.section_id in ids)


def _check_in_corpus(q: Question, corpus_dir: Path, soups: dict, pages: dict[str, str] | None = None) -> list[str]:
    """Problems with where a question says its answer is: page, section id, quote.

    The quote may match the section's visible text or the text the course's parser keeps for
    it (a quote of raw markup inside <pre> is text to the parser, a tag to a plain soup)."""
    if q.doc not in soups:
        page = corpus_dir / q.doc
        if pages is not None:
            soups[q.doc] = _Page(page, pages[q.doc]) if q.doc in pages else None
        else:
            soups[q.doc] = _Page(page, None) if page.is_file() else None  # pragma: no cover
    if soups[q.doc] is None:
        return [f"doc '{q.doc}' not found under {corpus_dir}"]
    page = soups[q.doc]
    text = section_text(page.soup, q.section)
    if text is None:
        return [f"no element with id '{q.section}' in {q.doc}"]
    evidence = normalize(q.evidence)
    if evidence not in normalize(text) and evidence not in normalize(page.parser_text(q.section)):
        return [f"evidence not found in section '{q.section}' of {q.doc}"]
    return []


@dataclass(frozen=True)
class GoldenCheck:
    """A golden file checked against a corpus: its questions (doc paths normalised), and each
    problem as (line, question id or None, message)."""

    questions: list[Question]
    problems: list[tuple[int, str | None, str]]
    path: Path

    def messages(self) -> list[str]:
        return [f"{self.path.name}:{line}: {message}" for line, _, message in self.problems]


def check_golden(path: str | Path, corpus_dir: str | Path, *, pages: dict[str, str] | None = None,
                 split: str | None = None) -> GoldenCheck:
    """Check a golden file against a corpus: the one judge `validate-golden` and `evaluate` share.

    `pages` maps page path to decoded HTML (what the pipelines load); without it, pages are
    read from `corpus_dir` with the same decoder. Questions of other splits are checked too
    but only those of `split` are returned.
    """
    path, corpus_dir = Path(path), Path(corpus_dir)
    if pages is None:
        from course_lib.core.load import load_corpus

        pages = {page.path: page.html for page in load_corpus(corpus_dir).pages}
    problems, questions, seen, soups = [], [], set(), {}
    for number, line in _numbered_lines(path):
        try:
            q = _parse_record(line)
        except ValueError as err:
            problems.append((number, None, str(err)))
            continue
        found = [f"duplicate id '{q.id}'"] if q.id in seen else []
        seen.add(q.id)
        found += _check_question(q)
        if not found and q.answerable:
            try:
                q = replace(q, doc=normalize_doc(q.doc, corpus_dir))
            except ValueError as err:
                found = [str(err)]
            else:
                found = _check_in_corpus(q, corpus_dir, soups, pages)
        problems += [(number, q.id, message) for message in found]
        if split is None or q.split in (None, split):
            questions.append(q)
    return GoldenCheck(questions, problems, path)


def validate_golden(path: str | Path, corpus_dir: str | Path) -> list[str]:
    """Check a golden file against the corpus and return one message per problem found.

    Checks each line for valid JSON, required fields and types, a known kind and split, a
    unique id, a 4-20 word quote, nulls that agree with the kind, a doc path that stays inside
    the corpus, and that the quote occurs (after `normalize`) in the visible text of the named
    section of the named page, or in the text the course's parser keeps for that section.
    Messages read "golden.jsonl:17: evidence not found in section 'x' of y.html"; an empty list
    means the file is valid. Pages are parsed once per call.
    """
    return check_golden(path, corpus_dir).messages()


def validate_main(argv: list[str] | None = None) -> int:
    """Command `python -m course_lib validate-golden FILE --corpus DIR`; exit 1 on any error."""
    parser = argparse.ArgumentParser(
        prog="python -m course_lib validate-golden",
        description="Check a golden-set JSONL file against an HTML corpus.")
    parser.add_argument("file", type=Path, help="golden-set JSONL file")
    parser.add_argument("--corpus", type=Path, required=True, help="corpus root folder")
    args = parser.parse_args(argv)
    if not args.file.is_file():
        print(f"{args.file}: no such file", file=sys.stderr)
        return 2
    errors = validate_golden(args.file, args.corpus)
    for error in errors:
        print(error)
    count = sum(1 for _ in _numbered_lines(args.file))
    print(f"{count} questions, {len(errors)} errors")
    return 1 if errors else 0
