"""Append reviewed golden questions to a shipped golden file: new ids, splits by a fixed rule.

    python scripts/golden_add.py data/golden/golden.jsonl reviewed/*.jsonl [--prefix q]

Each reviewed file holds questions that passed `scripts/golden_authoring.py check` and a second,
independent read (data/golden/README.md, "How the questions were written"). They are appended in
the order given, with the next free ids, and the `answer` hint of the draft is dropped (the judge
uses `evidence` only).

The split rule is stated before any pipeline runs and uses no result: within each kind, in file
order, a new question goes to the split that holds fewer questions of that kind so far (counting
the shipped ones), and to `test` on a tie. So both splits end with about the same number of each
kind, whatever the shares were before. Existing lines are never changed.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

FIELDS = ("id", "question", "doc", "section", "evidence", "kind", "split")


def next_split(counts: Counter, kind: str) -> str:
    """The split with fewer questions of this kind so far; `test` on a tie."""
    return "dev" if counts[kind, "dev"] < counts[kind, "test"] else "test"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("golden", type=Path)
    parser.add_argument("reviewed", type=Path, nargs="+")
    args = parser.parse_args(argv)
    text = args.golden.read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    prefix, width = re.fullmatch(r"([a-z]+)(\d+)", lines[-1]["id"]).groups(), None
    prefix, width = prefix[0], len(prefix[1])
    number = max(int(q["id"][len(prefix):]) for q in lines)
    counts = Counter((q["kind"], q["split"]) for q in lines)
    added = []
    for path in args.reviewed:
        for raw in path.read_text(encoding="utf-8").splitlines():
            if not raw.strip():
                continue
            draft = json.loads(raw)
            number += 1
            split = next_split(counts, draft["kind"])
            counts[draft["kind"], split] += 1
            question = {**{k: draft[k] for k in FIELDS[1:6]}, "split": split}
            added.append({"id": f"{prefix}{number:0{width}d}", **question})
    with args.golden.open("a", encoding="utf-8") as out:
        for q in added:
            out.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(added)} questions added to {args.golden} ({added[0]['id']}..{added[-1]['id']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
