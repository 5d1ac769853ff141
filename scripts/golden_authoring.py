"""Authoring tools for golden questions: read a page as a writer should, check a draft before review.

    python scripts/golden_authoring.py show library/threading.html [--corpus data/corpus]
    python scripts/golden_authoring.py find "releases the lock" [--corpus data/corpus]
    python scripts/golden_authoring.py check drafts.jsonl [--corpus DIR] [--against data/golden/golden.jsonl]
    python scripts/golden_authoring.py place PAGE "a quote" --gold q123 [--corpus DIR]

`show` prints a page's visible text block by block, each section opened by its id (`§ id`), so a
writer reads the rendered page and copies the id and a verbatim quote. `find` names every page
whose visible text contains a phrase (after the judge's normalisation): a quote must be on its own
page only, and an unanswerable question's key words should be checked against every page.
`check` applies the protocol of data/golden/README.md to a draft file: the fields, a 4-20 word
quote found in the named section's visible text, inside ONE block (a paragraph, list item, table
cell, definition, heading or code block, never across two), on that page only, and no quote or
question repeated from the shipped set. It runs no pipeline: questions are written and checked
before any retriever sees them. `place` checks one further place that answers a shipped question
(pooled judgments, scripts/golden_pool.py): the quote on that page, inside one block, and not the
gold answer's own block.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

from bs4 import BeautifulSoup, Tag

from course_lib.core.decode import decode_html
from course_lib.evaluation.golden import KINDS, evidence_problem, load_golden, normalize
from course_lib.evaluation.golden_checks import (
    QUOTE_BLOCKS,
    in_gold_block,
    quote_problem,
    section_nodes,
    visible_soup,
)
from course_lib.infra.files import atomic_write
from course_lib.records import text_digest

ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=16)
def page_soup(corpus: Path, doc: str) -> BeautifulSoup:
    """The page as a reader sees it: decoded like the pipelines decode it, scripts removed."""
    return visible_soup(decode_html((corpus / doc).read_bytes()))


def innermost_blocks(root: Tag) -> list[Tag]:
    """Block elements that hold no other block element: what `show` prints, one per line."""
    return [b for b in root.find_all(QUOTE_BLOCKS) if b.name == "pre" or not b.find(QUOTE_BLOCKS)]


def show(corpus: Path, doc: str) -> None:
    """Print the page block by block with the id of each section it enters."""
    soup = page_soup(corpus, doc)
    root = soup.find(attrs={"role": "main"}) or soup.find("main") or soup.body or soup
    current = None
    for block in innermost_blocks(root):
        section = block.find_parent("section")
        sid = section.get("id") if section else None
        if sid != current:
            print(f"\n§ {sid}")
            current = sid
        text = block.get_text() if block.name == "pre" else " ".join(block.get_text(" ").split())
        if text.strip():
            print(f"[{block.name}] {text.replace('¶', '').rstrip()}")


def all_pages(corpus: Path) -> dict[str, str]:
    """Normalised visible text of every page of the corpus, kept in .cache/ after the first call
    (keyed by each page's size and modification time), so repeated checks take seconds."""
    files = sorted(corpus.rglob("*.html"))
    stamp = "".join(f"{f}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)
    key = text_digest(stamp)
    cache = ROOT / ".cache" / "golden_authoring" / f"{key[:16]}.json"
    if cache.is_file():
        return json.loads(cache.read_text(encoding="utf-8"))
    paths = [f.relative_to(corpus).as_posix() for f in files]
    texts = {path: normalize(page_soup(corpus, path).get_text()) for path in paths}
    cache.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(cache, json.dumps(texts))
    return texts


def check_line(record: dict, corpus: Path, texts: dict[str, str], seen: dict[str, str]) -> list[str]:
    """Problems of one drafted question under the protocol (empty when it may go to review)."""
    missing = [f for f in ("question", "doc", "section", "evidence", "kind") if f not in record]
    if missing:
        return [f"missing field(s) {', '.join(missing)}"]
    if record["kind"] not in KINDS:
        return [f"kind {record['kind']!r} is not one of {', '.join(KINDS)}"]
    if not str(record["question"]).strip():
        return ["empty question"]
    problems = []
    key = normalize(record["question"])
    if key in seen:
        problems.append(f"question repeats {seen[key]}")
    if record["kind"] == "unanswerable":
        return problems + ([] if (record["doc"], record["section"], record["evidence"]) == (None, None, None)
                           else ["unanswerable needs doc, section, evidence null"])
    doc, section, evidence = record["doc"], record["section"], record["evidence"]
    if doc not in texts:
        return problems + [f"no page {doc}"]
    problems += [p for p in [evidence_problem(evidence)] if p]
    quote = normalize(evidence)
    if quote in seen:
        problems.append(f"evidence repeats {seen[quote]}")
    nodes = section_nodes(page_soup(corpus, doc), section)
    if nodes is None:
        return problems + [f"no id {section!r} in {doc}"]
    problems += [p for p in [quote_problem(evidence, nodes, f"section {section!r}")] if p]
    others = [page for page, body in texts.items() if page != doc and quote in body]
    if others:
        problems.append(f"evidence also occurs on {', '.join(others[:3])}")
    return problems


def check(path: Path, corpus: Path, against: list[Path]) -> int:
    """Check every line of a draft; print one verdict a line and a total; exit 1 on any problem."""
    texts = all_pages(corpus)
    seen: dict[str, str] = {}
    for other in against:
        for line in other.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                seen[normalize(q["question"])] = q["id"]
                if q.get("evidence"):
                    seen[normalize(q["evidence"])] = q["id"]
    bad = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            print(f"{path.name}:{number}: invalid JSON ({err.msg})")
            bad += 1
            continue
        problems = check_line(record, corpus, texts, seen)
        label = f"{path.name}:{number}"
        seen[normalize(record.get("question", ""))] = label
        if record.get("evidence"):
            seen[normalize(record["evidence"])] = label
        print(f"{label}: " + ("; ".join(problems) if problems else "ok"))
        bad += bool(problems)
    print(f"{bad} line(s) with problems")
    return 1 if bad else 0


def place(corpus: Path, doc: str, quote: str, gold_id: str) -> int:
    """Check one `also` place for a shipped question; print ok or the problem."""
    golden = ROOT / "data" / "golden" / ("pandas.jsonl" if "pandas" in str(corpus) else "golden.jsonl")
    gold = next((q for q in load_golden(golden) if q.id == gold_id), None)
    if gold is None or not gold.answerable:
        print(f"no answerable question {gold_id} in {golden.name}")
        return 1
    if not (corpus / doc).is_file():
        print(f"no page {doc}")
        return 1
    soup = page_soup(corpus, doc)
    problem = evidence_problem(quote) or quote_problem(quote, [soup], doc)
    if not problem and doc == gold.doc and in_gold_block(soup, gold.evidence, quote):
        problem = "the quote lies in the gold answer's own block: that is the gold answer, not another place"
    print(problem or "ok")
    return 1 if problem else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("verb", choices=["show", "find", "check", "place"])
    parser.add_argument("target", help="a page path (show, place), a phrase (find) or a draft file (check)")
    parser.add_argument("quote", nargs="?", help="the quote of a further place (place)")
    parser.add_argument("--gold", help="the id of the question a further place answers (place)")
    parser.add_argument("--corpus", type=Path, default=ROOT / "data" / "corpus")
    parser.add_argument("--against", type=Path, action="append",
                        help="shipped golden files whose questions and quotes must not repeat")
    args = parser.parse_args(argv)
    if args.verb == "show":
        show(args.corpus, args.target)
        return 0
    if args.verb == "find":
        phrase = normalize(args.target)
        hits = [page for page, body in all_pages(args.corpus).items() if phrase in body]
        print("\n".join(hits) if hits else "(no page)")
        return 0
    if args.verb == "place":
        if not args.quote or not args.gold:
            parser.error("place needs PAGE, a quote and --gold ID")
        return place(args.corpus, args.target, args.quote, args.gold)
    return check(Path(args.target), args.corpus, args.against or [])


if __name__ == "__main__":
    sys.exit(main())
