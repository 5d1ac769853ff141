"""End-to-end query latency of the final pipeline against the naive one, in the same run.

    python benchmarks/bench_latency.py [--questions N] [--reranker maxsim|NAME]

Measured over the golden questions, on whatever machine runs it:

- naive: lesson 01's dense search (query embedded, one dot product), the baseline;
- final, first ask: hybrid (BM25 || dense, RRF) + re-ranking of the top 30, caches empty
  except the chunk embeddings on disk;
- final, warm: the same questions again with the result and query caches emptied, so each
  query is embedded again as a new one would be (models loaded, the re-ranker's chunk token
  vectors in memory: the steady state of a running service);
- final, cached repeat: the same questions again, served from the result cache.

Prints p50/p95 per condition and per stage, each as a ratio to the naive baseline, and the
memory held by the loaded indexes. The course's goals: warm p50 <= 100 ms, cached <= 1 ms.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from course_lib.corpus import load_pages
from course_lib.golden import load_golden
from course_lib.naive import naive_chunks
from course_lib.paths import GOLDEN_FILE
from course_lib.pipelines import structured_chunks
from course_lib.rerank import load_reranker
from course_lib.search import DenseRetriever
from course_lib.serve import STAGES, SearchService


def percentiles(seconds: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    return tuple(float(np.percentile(np.array(seconds) * 1000, q)) for q in (50, 95))


def time_naive(chunks, queries: list[str]) -> list[float]:
    dense = DenseRetriever(chunks, cache_queries=False)
    dense.search("warm-up", k=5)
    out = []
    for query in queries:
        start = time.perf_counter()
        dense.search(query, k=5)
        out.append(time.perf_counter() - start)
    return out


def time_service(service: SearchService, queries: list[str]) -> tuple[list[float], dict[str, list[float]]]:
    totals, stages = [], {stage: [] for stage in STAGES}
    for query in queries:
        answer = service.search(query, k=5)
        totals.append(answer.timings["total"])
        for stage in STAGES:
            if stage in answer.timings:
                stages[stage].append(answer.timings[stage])
    return totals, stages


def index_memory(service: SearchService) -> dict[str, float]:
    """Megabytes held by the dense vectors, the BM25 postings and the chunk texts."""
    postings = sum(docs.nbytes + tfs.nbytes for docs, tfs in service.bm25.postings.values())
    texts = sum(len(c.text.encode("utf-8")) for c in service.chunks)
    return {"dense vectors": service.vectors.nbytes / 1e6, "bm25 postings": postings / 1e6,
            "chunk texts": texts / 1e6}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--reranker", default=None, help="default: cross-encoder if cached, else MaxSim")
    args = parser.parse_args()
    pages = load_pages()
    queries = [q.question for q in load_golden(GOLDEN_FILE)][: args.questions]
    naive = time_naive(naive_chunks(pages), queries)
    service = SearchService(structured_chunks(pages), reranker=load_reranker(args.reranker))
    first, first_stages = time_service(service, queries)
    service.results.ttl = 0.0  # expire everything: the warm pass recomputes, with warm inner caches
    service.query_vectors = type(service.query_vectors)(4096)
    warm, warm_stages = time_service(service, queries)
    service.results.ttl = 300.0
    time_service(service, queries)
    cached, _ = time_service(service, queries)
    base50, base95 = percentiles(naive)
    print(f"{len(queries)} questions; re-ranker: {service.reranker.name}")
    print(f"{'condition':<28}{'p50 ms':>9}{'p95 ms':>9}{'p50 / naive':>13}")
    for name, values in (("naive (baseline)", naive), ("final, first ask", first),
                         ("final, warm", warm), ("final, cached repeat", cached)):
        p50, p95 = percentiles(values)
        print(f"{name:<28}{p50:>9.3f}{p95:>9.3f}{p50 / base50:>12.3f}x")
    print("\nwarm pass, per stage:")
    for stage in STAGES:
        p50, p95 = percentiles(warm_stages[stage])
        print(f"  {stage:<26}{p50:>9.2f}{p95:>9.2f}")
    print("\nmemory of the loaded indexes (MB):")
    for name, megabytes in index_memory(service).items():
        print(f"  {name:<26}{megabytes:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
