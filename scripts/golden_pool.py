"""Pooled judgments for a golden set: every place that answers counts, as TREC pools do.

    python scripts/golden_pool.py build python --batches /tmp/pool-python
    python scripts/golden_pool.py pages python --batches /tmp/pool-python [--per-batch 20]
    python scripts/golden_pool.py apply python --batches /tmp/pool-python --verdicts DIR
    python scripts/golden_pool.py unique python
    python scripts/golden_pool.py repool python --batches /tmp/repool-python
    python scripts/golden_pool.py apply python --batches /tmp/repool-python --verdicts DIR --add

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

`repool` pools again after the systems or the judge changed (same depth, every question) and writes
for reading only what no earlier reading of that question and page held: the distinct sentences of
newly pooled items that were not among the sentences read then (known by rebuilding the earlier
bounded peers' chunks; the record stores no text). `apply --add` then adds the places found to the
ones already in the golden file, and the record keeps both readings' counts.

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
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from course_lib.core.load import load_pages
from course_lib.core.pipeline import PIPELINES
from course_lib.core.splitting import split_sentences
from course_lib.evaluation.golden import evidence_problem, load_golden, normalize
from course_lib.evaluation.golden_checks import in_gold_block, quote_problem, visible_soup
from course_lib.evaluation.judging import is_relevant
from course_lib.extras.peers import PEERS, build_any, measure_window, run_peer
from course_lib.infra.files import atomic_write
from course_lib.infra.paths import DATA_DIR
from course_lib.records import text_digest

DEPTH = 10  # each system's top 10, as the pooling protocol says
SETS = {"python": DATA_DIR / "golden" / "golden.jsonl", "pandas": DATA_DIR / "golden" / "pandas.jsonl"}
POOL_DIR = DATA_DIR / "golden" / "pool"
SEED = 20261201


def item_key(doc: str, body: str, *, fold_markup: bool = True) -> str:
    """A pooled item's name: its page and a hash of its normalised body (texts are not stored).
    `fold_markup=False`: the name the first pools gave it, before `normalize` folded markup."""
    return f"{doc}#{text_digest(normalize(body, fold_markup=fold_markup))[:12]}"


KEYS_FOLD_MARKUP = "keys_fold_markup"  # a pool record's flag: its item keys were made with markup folded


def earlier_key(record: dict) -> Callable[[str, str], str]:
    """The item key function a pool record was written with (records before the flag: unfolded)."""
    return partial(item_key, fold_markup=record.get(KEYS_FOLD_MARKUP, False))


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


def pool_systems(name: str, questions: list) -> dict[str, dict[str, dict]]:
    """Every system's top DEPTH chunks for every question, pooled per question: one item per
    distinct (page, body), with the systems that retrieved it and whether the judge credits it."""
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
    return pooled


def build(name: str, batches: Path, per_batch: int) -> None:
    """Run every system, pool the top DEPTH per question, write the reading batches and the record."""
    # Against the gold quote alone: `also` places written by an earlier apply must not decide what is
    # read, so a second build of the same set pools and batches exactly what the first did.
    questions = [replace(q, also=()) for q in load_golden(SETS[name]) if q.answerable]
    pooled = pool_systems(name, questions)
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
              KEYS_FOLD_MARKUP: True, "questions": {q.id: {key: {"systems": item["systems"], "gold": item["gold"]}
                                   for key, item in pooled[q.id].items()} for q in questions}}
    POOL_DIR.mkdir(parents=True, exist_ok=True)
    with gzip.open(POOL_DIR / f"{name}.pooled.json.gz", "wt", encoding="utf-8") as out:
        json.dump(record, out)
    counts = Counter(item["gold"] for q in questions for item in pooled[q.id].values())
    n_batches = len(range(0, len(reading), per_batch))
    print(f"{len(questions)} questions, {sum(counts.values())} pooled items: {counts[True]} hold the gold "
          f"quote, {counts[False]} to read in {n_batches} batches under {batches}")


def reading_units(body: str) -> dict[str, str]:
    """A pooled body's distinct sentences and lines, normalised -> as written: what a reader reads."""
    units: dict[str, str] = {}
    for line in body.split("\n"):
        for unit in split_sentences(line):
            if len(normalize(unit)) > 3:
                units.setdefault(normalize(unit), unit.strip())
    return units


def read_pooled(name: str) -> dict:
    """The pool record `build` (or `repool`) wrote: systems, depth and items per question."""
    with gzip.open(POOL_DIR / f"{name}.pooled.json.gz", "rt", encoding="utf-8") as handle:
        return json.load(handle)


def original_ids(name: str) -> dict[str, str]:
    """A replacement question's id -> the id it replaced (data/golden/retired.jsonl): its pool's key."""
    path = SETS[name].parent / "retired.jsonl"
    return {r["replaced_by"]: r["id"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def earlier_bodies(name: str, key: Callable[[str, str], str]) -> dict[str, str]:
    """Item key -> body of the chunks the character-counting peers made at the bound the first pools
    used (the corpus's mean characters per token, before lesson 10 set it at the densest spans), so
    the sentences read then are known without storing any text."""
    pages = load_pages(corpus=name)
    earlier = replace(measure_window(pages), low_chars_per_token=None)
    bodies = {}
    for peer_name, entry in PEERS.items():
        if "{chars}" not in entry.bound:
            continue  # its chunks do not depend on the rate: today's are the earlier ones
        for chunk in run_peer(peer_name, pages, window=earlier).chunks:
            bodies[key(chunk.doc, chunk.body)] = chunk.body
    return bodies


def unread(before: dict[str, dict], items: dict[str, dict], bodies: dict[str, str],
           counts: Counter) -> dict[str, tuple[dict[str, str], int]]:
    """Page -> (the sentences of one question's newly pooled items that its earlier reading of that
    page did not hold, how many new items brought them). `before`: the earlier pool's items of the
    question (key -> gold flag); `items`: today's (key -> doc, body, gold, and `then`, its key as the
    earlier pool named it); `bodies`: the text of every known earlier key. Each item's fate is
    counted in `counts`. A sentence counts as read when an earlier read body of the page holds it
    whole: a chunker that now cuts elsewhere brings pieces of sentences that were read, not new text."""
    read_then: dict[str, list[str]] = defaultdict(list)
    for key, item in before.items():
        if item["gold"]:
            continue
        if key not in bodies:
            counts["items read before whose text is not known now"] += 1
            continue
        read_then[key.split("#")[0]].append(normalize(bodies[key]))
    pages: dict[str, tuple[dict[str, str], int]] = {}
    for item in items.values():
        counts["pooled items"] += 1
        if item["gold"]:
            counts["holding the answer unit"] += 1
        elif item["then"] in before:
            was_gold = before[item["then"]]["gold"]
            counts["held the quote, lack a fragment now" if was_gold else "read before"] += 1
        else:
            fresh = {k: v for k, v in reading_units(item["body"]).items()
                     if not any(k in text for text in read_then[item["doc"]])}
            counts["new items with unread sentences" if fresh else "new items whose sentences were all read"] += 1
            if fresh:
                units, n_items = pages.get(item["doc"], ({}, 0))
                pages[item["doc"]] = ({**units, **fresh}, n_items + 1)
    return pages


def repool(name: str, batches: Path, per_batch: int, *, earlier_files: tuple[Path, ...] = ()) -> None:
    """Pool again with today's systems and judge, and write for reading only what no earlier reading
    of that question and page held: the sentences of newly pooled items not among those read then.

    Judgments already made stay made (they are data); an item that held the gold quote before but
    lacks a fragment of its answer unit now is not read (it holds the quote without its key: not an
    answer by the unit rule) and is counted. A replacement question is pooled under the id it
    replaced, whose earlier reading sought the same answer. `earlier_files`: {item name: body} made
    with the code the earlier pool ran (scripts/golden_pool_bodies.py), for chunks today's code no
    longer makes."""
    earlier = read_pooled(name)
    original = original_ids(name)
    questions = [replace(q, also=()) for q in load_golden(SETS[name]) if q.answerable]
    pooled = pool_systems(name, questions)
    key_then = earlier_key(earlier)
    for items in pooled.values():
        for item in items.values():
            item["then"] = key_then(item["doc"], item["body"])
    bodies = {item["then"]: item["body"] for items in pooled.values() for item in items.values()}
    bodies.update(earlier_bodies(name, key_then))
    for path in earlier_files:
        bodies.update(json.loads(path.read_text(encoding="utf-8")))
    counts: Counter = Counter()
    reading: dict[tuple[str, str], dict] = {}
    for q in questions:
        before = earlier["questions"].get(original.get(q.id, q.id), {})
        for page, (units, n_items) in unread(before, pooled[q.id], bodies, counts).items():
            reading[(q.id, page)] = {"question_id": q.id, "question": q.question, "gold_page": q.doc,
                                     "gold_quote": q.evidence, "gold_fragments": list(q.fragments),
                                     "page": page, "items": n_items, "units": units}
    write_reading(name, reading, batches, per_batch)
    record = {"set": name, "depth": DEPTH, "systems": systems(), "seed": SEED, "commit": head_commit(),
              KEYS_FOLD_MARKUP: True, "repooled_from": earlier.get("commit"), "repool": dict(counts),
              "questions": {original.get(q.id, q.id): {key: {"systems": item["systems"], "gold": item["gold"]}
                                                       for key, item in pooled[q.id].items()}
                            for q in questions}}
    with gzip.open(POOL_DIR / f"{name}.pooled.json.gz", "wt", encoding="utf-8") as out:
        json.dump(record, out)
    print(json.dumps(dict(counts), indent=1))


def write_reading(name: str, reading: dict[tuple[str, str], dict], batches: Path, per_batch: int) -> None:
    """The question-page texts to read (`read_*.jsonl`), each one's units in page order, whole
    questions per file."""
    page_texts = {p.path: normalize(visible_soup(p.html).get_text()) for p in load_pages(corpus=name)}
    by_question: dict[str, list[dict]] = defaultdict(list)
    for (qid, page), entry in reading.items():
        text = page_texts.get(page, "")
        ordered = sorted(entry["units"].items(), key=lambda kv: (text.find(kv[0]) % (len(text) + 1)))
        by_question[qid].append({**{k: v for k, v in entry.items() if k != "units"},
                                 "text": "\n".join(unit for _, unit in ordered)})
    batches.mkdir(parents=True, exist_ok=True)
    questions = sorted(by_question)
    for number, start in enumerate(range(0, len(questions), per_batch)):
        lines = [json.dumps(line, ensure_ascii=False) + "\n"
                 for qid in questions[start:start + per_batch] for line in by_question[qid]]
        atomic_write(batches / f"read_{number:03d}.jsonl", "".join(lines))
    words = sum(len(line["text"].split()) for group in by_question.values() for line in group)
    print(f"{len(reading)} question-page texts of {len(questions)} questions, {words} words, "
          f"in {len(range(0, len(questions), per_batch))} files under {batches}")


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
    grouped: dict[tuple[str, str], dict] = {}
    for item in items:
        key = (item["question_id"], item["page"])
        fields = ("question_id", "question", "gold_page", "gold_quote", "page")
        entry = grouped.setdefault(key, {**{k: item[k] for k in fields}, "units": {}, "items": 0})
        entry["items"] += 1
        for unit, written in reading_units(item["text"]).items():
            entry["units"].setdefault(unit, written)
    write_reading(name, grouped, batches, per_batch)


def apply(name: str, verdict_dir: Path, batches: Path, *, add: bool = False) -> int:
    """Validate the readers' quotes, write the `also` places and the pool record.

    A quote that fails validation is not credited: it is printed with its reason and counted in the
    record (`rejected_places`), never silently dropped. Returns 1 when a question was not finished.
    With `add` (after `repool`), the places already in the golden file stay and the new ones join
    them; the record keeps its earlier counts and adds the re-pool's."""
    golden_path = SETS[name]
    questions = {q.id: q for q in load_golden(golden_path)}
    soups = {p.path: visible_soup(p.html) for p in load_pages(corpus=name)}
    texts: dict[tuple[str, str], str] = {}
    for path in sorted(batches.glob("read_*.jsonl")):
        for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
            key = (r["question_id"], r["page"])  # a page read twice (a review line) was read in full
            texts[key] = f"{texts[key]}\n{r['text']}" if key in texts else r["text"]
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
        earlier = record.pop("also", [])
        kept = earlier if add else []  # without `add`, this reading's places replace the earlier ones
        known = {(p["doc"], normalize(p["evidence"])) for p in kept}
        found = kept + [p for key, p in places.get(record["id"], {}).items() if key not in known]
        lines.append(json.dumps({**record, **({"also": found} if found else {})}, ensure_ascii=False))
    atomic_write(golden_path, "\n".join(lines) + "\n")  # the golden file itself: never half written
    pooled = read_pooled(name)
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
    if add:
        summary = added_to_record(name, summary, pooled)
    atomic_write(POOL_DIR / f"{name}.json", json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    return 0


def added_to_record(name: str, reading: dict, pooled: dict) -> dict:
    """The earlier pool record with a re-pool's reading added: its counts under `repool`, and the
    totals (places, rejections, questions with `also`) over both readings."""
    record = json.loads((POOL_DIR / f"{name}.json").read_text(encoding="utf-8"))
    questions = load_golden(SETS[name])
    repooled = {**pooled.get("repool", {}), "pooled_at": pooled.get("commit"),
                **{k: reading[k] for k in ("question_page_texts_read", "words_read",
                                           "places_marked_answering", "rejected_places")},
                "also_places_added": sum(len(q.also) for q in questions) - record["also_places"]}
    # a place a reader marked again (the same quote on the same page) is credited once
    repooled["places_already_credited"] = (repooled["places_marked_answering"] - repooled["rejected_places"]
                                           - repooled["also_places_added"])
    reasons = Counter(record["rejected_reasons"]) + Counter(reading["rejected_reasons"])
    return {**record, "places_marked_answering": record["places_marked_answering"]
            + reading["places_marked_answering"],
            "also_places": sum(len(q.also) for q in questions), "rejected_places": sum(reasons.values()),
            "rejected_reasons": dict(reasons), "questions_with_also": sum(bool(q.also) for q in questions),
            "places_already_credited": record.get("places_already_credited", 0)
            + repooled["places_already_credited"],
            "repool": repooled}


def unique_contributions(name: str) -> dict[str, dict[str, int]]:
    """Per system: `also` places from a page only it pooled for the question, and questions all of
    whose `also` places are such pages (the leave-one-system-out check)."""
    pooled = read_pooled(name)
    original = original_ids(name)
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
    parser.add_argument("verb", choices=["build", "pages", "repool", "apply", "unique"])
    parser.add_argument("set", choices=list(SETS))
    parser.add_argument("--batches", type=Path, help="folder of the reading batches (build, pages, apply)")
    parser.add_argument("--verdicts", type=Path, help="folder of the readers' verdict files (apply)")
    parser.add_argument("--per-batch", type=int, default=20, help="questions per reading file (pages, repool)")
    parser.add_argument("--earlier-bodies", type=Path, nargs="*", default=[],
                        help="repool: {item name: body} files made at the earlier pool's commit "
                             "(scripts/golden_pool_bodies.py)")
    parser.add_argument("--add", action="store_true",
                        help="apply after repool: keep the also places already in the golden file")
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
    if args.verb == "repool":
        repool(args.set, args.batches, args.per_batch, earlier_files=tuple(args.earlier_bodies))
        return 0
    return apply(args.set, args.verdicts or args.batches / "verdicts", args.batches, add=args.add)


if __name__ == "__main__":
    sys.exit(main())
