"""Answer units for table questions: propose each row's key cell as a fragment, then apply a reviewed list.

    python scripts/golden_units.py propose data/golden/golden.jsonl [--corpus data/corpus] > proposals.jsonl
    python scripts/golden_units.py apply data/golden/golden.jsonl proposals.jsonl [--corpus data/corpus]

A `table` question's quote is often the description cell of a row ("Day of the year as a
zero-padded decimal number."), while the name the question asks for (`%j`) sits in the row's first
cell. `propose` finds, for the gold place and every `also` place of each table question, the row
(`<tr>`) whose cell holds the quote and, when the quote is not in the row's first cell, prints that
cell's text as the proposed fragment: one JSON line per question, `{"id", "fragments",
"also_fragments", "row"}`, with the row's text so a reviewer reads what the key means. A reviewer
deletes the lines whose question does not ask for the key, then `apply` writes the fragments into
the golden file (atomically) and validates the result against the corpus; nothing else changes.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from bs4 import Tag

from course_lib.core.decode import decode_html
from course_lib.evaluation.golden import load_golden, normalize
from course_lib.evaluation.golden_checks import validate_golden, visible_soup
from course_lib.infra.files import atomic_write

ROOT = Path(__file__).resolve().parents[1]
# An API table's key cell is a signature, "DataFrame.nlargest (n, columns[, keep])": its name is the
# key a reader looks for, and the argument list is formatting that chunkers render differently.
_SIGNATURE = re.compile(r"^([\w.]+) \(")


def cell_text(cell: Tag) -> str:
    """A cell's visible text on one line, without the Sphinx pilcrow."""
    return " ".join(cell.get_text(" ").replace("¶", "").split())


def row_key(soup, quote: str) -> tuple[str | None, str | None]:
    """(key cell text, row text) for the row whose non-first cell holds the quote; (None, row
    text) when the quote is in the row's first cell; (None, None) when no row holds it."""
    wanted = normalize(quote)
    for row in soup.find_all("tr"):
        cells = row.find_all(["td", "th"], recursive=False)
        for index, cell in enumerate(cells):
            if wanted in normalize(cell.get_text(" ")):
                row_text, key = " | ".join(cell_text(c) for c in cells), cell_text(cells[0])
                signature = _SIGNATURE.match(key)
                key = signature.group(1) if signature else key
                return (key if index > 0 and key else None), row_text
    return None, None


def propose(golden: Path, corpus: Path) -> int:
    """Print one proposal per table question whose quote is not the key of its row."""
    soups: dict[str, object] = {}

    def soup_of(doc: str):
        if doc not in soups:
            soups[doc] = visible_soup(decode_html((corpus / doc).read_bytes()))
        return soups[doc]

    for q in load_golden(golden):
        if q.kind != "table" or not q.answerable:
            continue
        key, row = row_key(soup_of(q.doc), q.evidence)
        also = [row_key(soup_of(p.doc), p.evidence)[0] for p in q.also]
        if key or any(also):
            print(json.dumps({"id": q.id, "question": q.question, "fragments": [key] if key else [],
                              "also_fragments": [[k] if k else [] for k in also], "row": row},
                             ensure_ascii=False))
    return 0


def apply(golden: Path, proposals: Path, corpus: Path) -> int:
    """Write the reviewed fragments into the golden file and validate it against the corpus."""
    chosen = {p["id"]: p for p in map(json.loads, proposals.read_text(encoding="utf-8").splitlines()) if p}
    lines = []
    for line in golden.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        proposal = chosen.pop(record["id"], None)
        if proposal is None:
            lines.append(line)  # untouched lines stay byte for byte
            continue
        if proposal["fragments"]:
            record["fragments"] = proposal["fragments"]
        for place, fragments in zip(record.get("also", []), proposal["also_fragments"], strict=True):
            if fragments:
                place["fragments"] = fragments
        lines.append(json.dumps(record))
    if chosen:
        print(f"error: {proposals}: no question {', '.join(sorted(chosen))} in {golden}", file=sys.stderr)
        return 1
    atomic_write(golden, "\n".join(lines) + "\n")
    problems = validate_golden(golden, corpus)
    print("\n".join(problems) or f"{golden.name}: answer units applied, 0 problems")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("verb", choices=["propose", "apply"])
    parser.add_argument("golden", type=Path)
    parser.add_argument("proposals", type=Path, nargs="?", help="the reviewed proposals (apply)")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="default: data/corpus, or data/pandas/corpus for pandas.jsonl")
    args = parser.parse_args(argv)
    corpus = args.corpus or ROOT / "data" / ("pandas/corpus" if "pandas" in args.golden.name else "corpus")
    if args.verb == "propose":
        return propose(args.golden, corpus)
    if args.proposals is None:
        parser.error("apply needs the reviewed proposals file")
    return apply(args.golden, args.proposals, corpus)


if __name__ == "__main__":
    sys.exit(main())
