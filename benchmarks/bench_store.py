"""The PostgreSQL + pgvector index as it grows 1x / 10x / 100x, against exact NumPy search.

    python benchmarks/bench_store.py [--times 1 10 100] [--queries N] [--ef-search 40]

The real chunk vectors (lesson 05's chunks, from the embedding cache) are grown by perturbed
copies, never re-embedded, loaded into a bare table with binary COPY, and indexed with HNSW (the
build is timed). Then the dev questions' top-20 queries are timed three ways: HNSW, exact search
in PostgreSQL, and exact NumPy search (one BLAS thread) of the same vectors in the same run; latencies are printed
as p50/p95 and as ratios against NumPy's p50. Uses the embedded server (pgserver) unless
DATABASE_URL is set; not part of `make test`.
"""
from __future__ import annotations

import argparse
import os
import sys

from course_lib.core.load import load_pages
from course_lib.core.pipeline import structured_chunks
from course_lib.evaluation.golden import load_golden
from course_lib.extras.postgres_growth import measure_growth, perturbed_copies
from course_lib.extras.postgres_server import connect, embedded_server
from course_lib.infra import models
from course_lib.infra.paths import GOLDEN_FILE

COLUMNS = ("vectors", "build_s", "hnsw_p50_ms", "hnsw_p95_ms", "exact_sql_p50_ms", "exact_sql_p95_ms",
           "numpy_p50_ms", "numpy_p95_ms", "hnsw_vs_numpy", "exact_sql_vs_numpy", "numpy_MB", "table_MB",
           "hnsw_MB")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--queries", type=int, default=50, help="dev questions to time")
    parser.add_argument("--ef-search", type=int, default=40)
    args = parser.parse_args(argv)
    chunks = structured_chunks(load_pages())
    vectors = models.embed([c.text for c in chunks], progress=False)
    questions = load_golden(GOLDEN_FILE, split="dev")[: args.queries]
    queries = models.embed([q.question for q in questions], progress=False)
    print(f"{len(chunks)} real vectors, {len(queries)} queries, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    print(" | ".join(COLUMNS), flush=True)
    with embedded_server() as url:
        conn = connect(url)
        for times in args.times:
            row = measure_growth(conn, perturbed_copies(vectors, times), queries, ef_search=args.ef_search).row()
            print(" | ".join(str(row[c]) for c in COLUMNS), flush=True)
        conn.execute("DROP TABLE IF EXISTS growth_vectors")
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
