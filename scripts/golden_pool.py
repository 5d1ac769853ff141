"""Pooled judgments for a golden set: every place that answers counts, as TREC pools do.

    python scripts/golden_pool.py build python --batches /tmp/pool-python
    python scripts/golden_pool.py pages python --batches /tmp/pool-python [--per-batch 20]
    python scripts/golden_pool.py apply python --batches /tmp/pool-python --verdicts DIR
    python scripts/golden_pool.py unique python

`build` runs every registered pipeline (lessons 01-07) and every peer library (lesson 10) on every
question of the set, both splits, keeps each one's top DEPTH chunks, and pools them per question:
one item per distinct (page, chunk body), with no record of which system retrieved it in what the
reader sees. Items whose body already holds the gold quote on the gold page need no reading: the
judge credits them anyway. Every other item is written out (`batch_*.jsonl`, item order shuffled
by a fixed seed). `pages` turns them into what a reader reads (`read_*.jsonl`): for each
question, one line per page its pooled items come from, holding every distinct sentence and line
of those items in page order, so text that several chunkers retrieved is read once. Readers write
a line for each place that answers the question in other words or on another page, with the
shortest verbatim quote (4-20 words, one block of that page's visible text) that carries it, and
one "done" line per question once all its pages are read.

`apply` validates every quote a reader gave (on its page, inside one block, not the gold block
itself) and writes the `also` places into the golden file, replacing earlier ones, and the pool
record (data/golden/pool/SET.json): which systems were pooled at what depth, how many items were
pooled, read and found to answer, per question. The judgments are data made once: they are not
re-made after tuning, and a question is never dropped here.

`unique` is the leave-one-system-out check of a finished pool: for each system, how many `also`
places come from a page that it alone pooled for that question, and on how many questions every
`also` place does. Those are the judgments the pool would lack without that system, so a system
with many of them is judged partly by places only it could find. (A replacement question of
data/golden/retired.jsonl is looked up under the id it replaced.)
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

from course_lib.core.load import load_pages
from course_lib.core.pipeline import PIPELINES
from course_lib.core.splitting import split_sentences
from course_lib.evaluation.golden import evidence_problem, load_golden, normalize
from course_lib.evaluation.golden_checks import in_gold_block, quote_problem, visible_soup
from course_lib.evaluation.judging import is_relevant
from course_lib.extras.peers import PEERS, build_any
from course_lib.infra.files import atomic_write
from course_lib.infra.paths import DATA_DIR
from course_lib.records import text_digest

DEPTH = 10  # each system's top 10, as the pooling protocol says
SETS = {"python": DATA_DIR / "golden" / "golden.jsonl", "pandas": DATA_DIR / "golden" / "pandas.jsonl"}
POOL_DIR = DATA_DIR / "golden" / "pool"
SEED = 20261201


def item_key(doc: str, body: str) -> str:
    """A pooled item's name: its page and a hash of its normalised body (texts are not stored)."""
    return f"{doc}#{text_digest(normalize(body))[:12]}"


def systems() -> list[str]:
    """Every registered lesson pipeline and every peer library, by the name `build_pipeline` takes."""
    return list(PIPELINES) + list(PEERS)


def head_commit() -> str | None:
    """The commit the systems were pooled at (None outside a git checkout): the record says which
    code retrieved what was read."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip() or None


def build(name: str, batches: Path, per_batch: int) -> None:
    """Run every system, pool the top DEPTH per question, write the reading batches and the record."""
    # Against the gold quote alone: `also` places written by an earlier apply must not decide what is
    # read, so a second build of the same set pools and batches exactly what the first did.
    questions = [replace(q, also=()) for q in load_golden(SETS[name]) if q.answerable]
    pages = load_pages(corpus=name)
    pooled: dict[str, dict[str, dict]] = defaultdict(dict)
    for system in systems():
        pipeline = build_any(system, pages)
        print(f"{system}: {len(pipeline.chunks)} chunks", flush=True)
        for q in questions:
            for hit in pipeline.search(q.question, k=DEPTH):
                chunk = pipeline.chunks[hit.index]
                key = item_key(chunk.doc, chunk.body)
                item = pooled[q.id].setdefault(key, {"doc": chunk.doc, "body": chunk.body, "systems": [],
                                                     "gold": is_relevant(chunk, q)})
                item["systems"].append(system)
    rng = random.Random(SEED)
    reading = []
    for q in questions:
        items = [(key, item) for key, item in pooled[q.id].items() if not item["gold"]]
        rng.shuffle(items)
        reading.append([{"question_id": q.id, "question": q.question, "gold_page": q.doc,
                         "gold_quote": q.evidence, "item": key, "page": item["doc"],
                         "text": item["body"]} for key, item in items])
    batches.mkdir(parents=True, exist_ok=True)
    # A batch holds whole questions: a reader sees every pooled item of a question together.
    for number, start in enumerate(range(0, len(reading), per_batch)):
        group_lines = reading[start:start + per_batch]
        lines = [json.dumps(r, ensure_ascii=False) + "\n" for group in group_lines for r in group]
        atomic_write(batches / f"batch_{number:03d}.jsonl", "".join(lines))
    record = {"set": name, "depth": DEPTH, "systems": systems(), "seed": SEED, "commit": head_commit(),
              "questions": {q.id: {key: {"systems": item["systems"], "gold": item["gold"]}
                                   for key, item in pooled[q.id].items()} for q in questions}}
    POOL_DIR.mkdir(parents=True, exist_ok=True)
    with gzip.open(POOL_DIR / f"{name}.pooled.json.gz", "wt", encoding="utf-8") as out:
        json.dump(record, out)
    counts = Counter(item["gold"] for q in questions for item in pooled[q.id].values())
    n_batches = len(range(0, len(reading), per_batch))
    print(f"{len(questions)} questions, {sum(counts.values())} pooled items: {counts[True]} hold the gold "
          f"quote, {counts[False]} to read in {n_batches} batches under {batches}")


def place_problem(verdict: dict, gold, soups: dict, texts: dict) -> str | None:
    """Why a reader's quote cannot be an `also` place, or None when it can."""
    doc, quote = verdict["page"], verdict.get("evidence") or ""
    problem = evidence_problem(quote) if quote else "no quote given"
    if problem:
        return problem
    if normalize(quote) not in normalize(texts[(verdict["question_id"], doc)]):
        return "the quote is not in the pooled text that was read for this page"
    problem = quote_problem(quote, [soups[doc]], doc)
    if problem:
        return problem
    if doc == gold.doc and in_gold_block(soups[doc], gold.evidence, quote):
        return "the quote lies in the gold block itself: that is the gold answer, not another place"
    return None


def pages(name: str, batches: Path, per_batch: int) -> None:
    """Group the pooled items into one reading line per (question, page): the distinct sentences
    and lines of that page's items in the order the page has them, whole questions per file."""
    items = [json.loads(line) for path in sorted(batches.glob("batch_*.jsonl"))
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    page_texts = {p.path: normalize(visible_soup(p.html).get_text()) for p in load_pages(corpus=name)}
    grouped: dict[tuple[str, str], dict] = {}
    for item in items:
        key = (item["question_id"], item["page"])
        fields = ("question_id", "question", "gold_page", "gold_quote", "page")
        entry = grouped.setdefault(key, {**{k: item[k] for k in fields}, "units": {}, "items": 0})
        entry["items"] += 1
        for line in item["text"].split("\n"):
            for unit in split_sentences(line):
                if len(normalize(unit)) > 3:
                    entry["units"].setdefault(normalize(unit), unit.strip())
    by_question: dict[str, list[dict]] = defaultdict(list)
    for (qid, page), entry in grouped.items():
        text = page_texts.get(page, "")
        ordered = sorted(entry["units"].items(), key=lambda kv: (text.find(kv[0]) % (len(text) + 1)))
        by_question[qid].append({**{k: v for k, v in entry.items() if k != "units"},
                                 "text": "\n".join(unit for _, unit in ordered)})
    questions = sorted(by_question)
    for number, start in enumerate(range(0, len(questions), per_batch)):
        lines = [json.dumps(line, ensure_ascii=False) + "\n"
                 for qid in questions[start:start + per_batch] for line in by_question[qid]]
        atomic_write(batches / f"read_{number:03d}.jsonl", "".join(lines))
    words = sum(len(line["text"].split()) for group in by_question.values() for line in group)
    print(f"{len(items)} items of {len(questions)} questions as {len(grouped)} question-page texts, "
          f"{words} words, in {len(range(0, len(questions), per_batch))} files under {batches}")


def apply(name: str, verdict_dir: Path, batches: Path) -> int:
    """Validate the readers' quotes, write the `also` places and the pool record.

    A quote that fails validation is not credited: it is printed with its reason and counted in the
    record (`rejected_places`), never silently dropped. Returns 1 when a question was not finished."""
    golden_path = SETS[name]
    questions = {q.id: q for q in load_golden(golden_path)}
    soups = {p.path: visible_soup(p.html) for p in load_pages(corpus=name)}
    texts = {(r["question_id"], r["page"]): r["text"] for path in sorted(batches.glob("read_*.jsonl"))
             for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    verdicts = [json.loads(line) for path in sorted(verdict_dir.glob("*.jsonl"))
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    done = {v["question_id"] for v in verdicts if v.get("done")}
    problems, places = [], defaultdict(dict)
    for v in verdicts:
        if not v.get("answers"):
            continue
        problem = place_problem(v, questions[v["question_id"]], soups, texts)
        if problem:
            problems.append(f"{v['question_id']} {v['page']}: {problem}")
            continue
        places[v["question_id"]].setdefault((v["page"], normalize(v["evidence"])),
                                            {"doc": v["page"], "evidence": v["evidence"]})
    missing = {qid for qid, _ in texts} - done
    for problem in problems:
        print(problem)
    if missing:
        print(f"{len(missing)} questions were not marked done (e.g. {sorted(missing)[:5]})")
    if missing:
        return 1
    lines = []
    for raw in golden_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        record.pop("also", None)
        found = list(places.get(record["id"], {}).values())
        lines.append(json.dumps({**record, **({"also": found} if found else {})}, ensure_ascii=False))
    atomic_write(golden_path, "\n".join(lines) + "\n")  # the golden file itself: never half written
    with gzip.open(POOL_DIR / f"{name}.pooled.json.gz", "rt", encoding="utf-8") as source:
        pooled = json.load(source)
    items = pooled["questions"]
    summary = {"set": name, "depth": pooled["depth"], "systems": pooled["systems"],
               "pooled_at": pooled.get("commit"), "questions": len(items),
               "pooled_items": sum(len(i) for i in items.values()),
               "holding_the_gold_quote": sum(x["gold"] for i in items.values() for x in i.values()),
               "read": sum(not x["gold"] for i in items.values() for x in i.values()),
               "question_page_texts_read": len(texts),
               "words_read": sum(len(t.split()) for t in texts.values()),
               "places_marked_answering": sum(1 for v in verdicts if v.get("answers")),
               "also_places": sum(len(p) for p in places.values()),
               "rejected_places": len(problems),
               "rejected_reasons": dict(Counter(p.split(": ", 1)[1] for p in problems)),
               "questions_with_also": len(places)}
    atomic_write(POOL_DIR / f"{name}.json", json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    return 0


def unique_contributions(name: str) -> dict[str, dict[str, int]]:
    """Per system: `also` places from a page only it pooled for the question, and questions all of
    whose `also` places are such pages (the leave-one-system-out check)."""
    with gzip.open(POOL_DIR / f"{name}.pooled.json.gz", "rt", encoding="utf-8") as handle:
        pooled = json.load(handle)
    retired = [json.loads(line) for line in (SETS[name].parent / "retired.jsonl").read_text().splitlines()]
    original = {r["replaced_by"]: r["id"] for r in retired}
    counts = {system: {"places": 0, "questions": 0} for system in pooled["systems"]}
    for q in load_golden(SETS[name]):
        items = pooled["questions"].get(original.get(q.id, q.id), {})
        only = []
        for place in q.also:
            pooled_by = {s for key, item in items.items() if key.split("#")[0] == place.doc for s in item["systems"]}
            only.append(next(iter(pooled_by)) if len(pooled_by) == 1 else None)
        for system in filter(None, only):
            counts[system]["places"] += 1
        if only and only[0] is not None and len(set(only)) == 1:
            counts[only[0]]["questions"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("verb", choices=["build", "pages", "apply", "unique"])
    parser.add_argument("set", choices=list(SETS))
    parser.add_argument("--batches", type=Path, help="folder of the reading batches (build, pages, apply)")
    parser.add_argument("--verdicts", type=Path, help="folder of the readers' verdict files (apply)")
    parser.add_argument("--per-batch", type=int, default=20, help="questions per reading file (pages)")
    args = parser.parse_args(argv)
    if args.verb == "unique":
        counts = unique_contributions(args.set)
        print("| system | also places only it pooled | questions all of whose also places only it pooled |")
        print("|---|---:|---:|")
        for system, c in counts.items():
            print(f"| {system} | {c['places']} | {c['questions']} |")
        return 0
    if args.batches is None:
        parser.error(f"{args.verb} needs --batches")
    if args.verb == "build":
        build(args.set, args.batches, args.per_batch)
        return 0
    if args.verb == "pages":
        pages(args.set, args.batches, args.per_batch)
        return 0
    return apply(args.set, args.verdicts or args.batches / "verdicts", args.batches)


if __name__ == "__main__":
    sys.exit(main())
