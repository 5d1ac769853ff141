"""Does evaluating a golden set stay within memory as the file grows? Peak memory at 1k, 10k, 50k.

    python benchmarks/bench_evaluate_memory.py [--sizes 1000 10000 50000]

Builds a synthetic run of N answerable questions (each ranking 20 chunks, the first hit at a
random rank or missing), then does what `python -m course_lib evaluate` does after searching:
judges the rankings (`evaluate_rankings`), computes the headline summary with its intervals
(`summary`: Wilson for recall, scipy's BCa bootstrap for MRR, resampled in blocks of
`settings.RESAMPLE_BLOCK` values) and the per-kind table, and compares two such runs as a lesson
does (`paired_comparison` on MRR: a permutation test, also in blocks). It prints the peak memory
traced by Python for each size, and each peak's ratio to the smallest size's next to the ratio of
the sizes: memory should grow no faster than the file (ratio of peaks <= ratio of sizes). Before
the blocks, a 50,000-line file peaked at 7.4 GB in the bootstrap's index matrix.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc

import numpy as np

from course_lib.evaluation.compare import paired_comparison
from course_lib.evaluation.golden import Question
from course_lib.evaluation.metrics import by_kind, evaluate_rankings, summary
from course_lib.records import Chunk, Hit

KINDS = ("paraphrase", "exact", "table", "code", "context")


def synthetic(n: int, seed: int) -> tuple[list[Question], list[list[Hit]], list[Chunk]]:
    """n questions over one shared pool of chunks; question i's evidence is chunk i % 500's text."""
    rng = np.random.default_rng(seed)
    chunks = [Chunk(f"c{i}", f"p{i % 50}.html", f"evidence words number {i} here") for i in range(500)]
    questions = [Question(f"q{i}", f"question {i}", chunks[i % 500].doc, "s", chunks[i % 500].body,
                          KINDS[i % len(KINDS)], "dev") for i in range(n)]
    rankings = []
    for i in range(n):
        others = rng.choice(500, size=20, replace=False).tolist()
        others = [o for o in others if o != i % 500][:19]
        rank = rng.integers(0, 25)  # 20..24: no hit in the top 20
        order = others[:rank] + [i % 500] + others[rank:] if rank < 20 else others + [others[0]]
        rankings.append([Hit(index, 1.0 - pos / 100) for pos, index in enumerate(order[:20])])
    return questions, rankings, chunks


def peak_bytes(n: int) -> tuple[int, float]:
    """Peak traced bytes and seconds for judging, summarising and comparing runs of n questions."""
    questions, rankings_a, chunks = synthetic(n, seed=1)
    _, rankings_b, _ = synthetic(n, seed=2)
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    run_a = evaluate_rankings(questions, rankings_a, chunks, name="a")
    run_b = evaluate_rankings(questions, rankings_b, chunks, name="b")
    summary(run_a, budget=None)
    by_kind(run_a)
    paired_comparison(run_a, run_b, metric="mrr")
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 50_000])
    args = parser.parse_args(argv)
    results = [(n, *peak_bytes(n)) for n in sorted(args.sizes)]
    base_n, base_peak, _ = results[0]
    print(f"{'questions':>10} {'peak MB':>9} {'seconds':>8} {'size ratio':>11} {'memory ratio':>13}")
    for n, peak, seconds in results:
        print(f"{n:>10,} {peak / 2**20:>9.1f} {seconds:>8.1f} {n / base_n:>11.1f} {peak / base_peak:>13.1f}")
    grows_slower = all(peak / base_peak <= n / base_n for n, peak, _ in results)
    print("memory grows no faster than the golden file" if grows_slower
          else "memory grows FASTER than the golden file")
    return 0 if grows_slower else 1


if __name__ == "__main__":
    sys.exit(main())
