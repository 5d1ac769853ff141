"""How much the quote alone and section credit move each lesson pipeline: recall@5 / recall@20 / MRR.

    python scripts/judge_sensitivity.py [--pipelines naive,clean,...] [--out FILE]

Each pipeline is searched ONCE over every golden question; the same rankings are then judged by
the course's judge (the whole answer unit), by the quote alone (the earlier rule) and by section
credit (`metrics.rejudge`), and split into
dev and test. Slow the first time: chunk embeddings are cached in .cache/, but the re-ranked
pipeline encodes token vectors for its shortlists. Prints a Markdown table and writes the
figures as JSON (default .cache/judge_sensitivity.json).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from course_lib.core.load import load_pages
from course_lib.core.pipeline import build_pipeline
from course_lib.evaluation.budget import recall_within_budget
from course_lib.evaluation.golden import load_golden
from course_lib.evaluation.metrics import evaluate_retriever, sensitivity
from course_lib.evaluation.results import RunResult
from course_lib.infra.files import atomic_write
from course_lib.infra.paths import GOLDEN_FILE, cache_dir

LESSON_PIPELINES = ("naive", "clean", "structured", "context", "limited", "bm25", "hybrid",
                    "reranked")
METRICS = ("recall@5", "recall@20", "mrr")


def split_run(run: RunResult, split: str) -> RunResult:
    """The part of a run over one split of the golden set."""
    part = [r for r in run.results if r.question.split == split]
    return RunResult(run.name, part, k=run.k, judge=run.judge)


def markdown(rows: list[dict]) -> str:
    """One line per pipeline and split: each metric under the judge, the quote alone and section credit."""
    columns = " | ".join(f"{m} judge | {m} quote alone | {m} section" for m in METRICS)
    head = f"| pipeline | split | n | {columns} | recall@budget (judge) |"
    lines = [head, "|" + "---|" * (4 + 3 * len(METRICS))]
    for row in rows:
        cells = [f"{row['evidence'][m]:.3f} | {row['quote'][m]:.3f} | {row['section'][m]:.3f}"
                 for m in METRICS]
        lines.append(f"| {row['pipeline']} | {row['split']} | {row['n']} | " + " | ".join(cells)
                     + f" | {row['recall@budget']:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipelines", default=",".join(LESSON_PIPELINES))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    questions, pages = load_golden(GOLDEN_FILE), load_pages()
    out = args.out or cache_dir() / "judge_sensitivity.json"
    rows = []
    for name in args.pipelines.split(","):
        start = time.perf_counter()
        run = evaluate_retriever(build_pipeline(name, pages), questions, name=name, progress=False)
        for split in ("dev", "test"):
            part = split_run(run, split)
            row = sensitivity([part])[0]
            rows.append({**row, "split": split, "recall@budget": recall_within_budget(part)})
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        # Written after every pipeline: an interrupted run keeps what it measured.
        atomic_write(out, json.dumps({"rows": rows, "markdown": markdown(rows)}, indent=2))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
