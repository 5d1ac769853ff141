"""Serving at the limit of a laptop CPU (issue 27): the ONNX query encoder, the int8 token index,
and a cold `ask`, each against a baseline measured in the same run.

    python benchmarks/bench_serving.py [--questions N] [--top-n 30] [--skip-cold]
        [--dims 128] [--residual-bits 1,2] [--residual-centroids N]

On the first N dev questions of the golden set:

(a) query embedding, p50/p95 per question: PyTorch (sentence-transformers, the baseline) against
    ONNX Runtime float32 and dynamic int8 (`course_lib.infra.onnx_encoder`), with one thread and
    with the runtimes' default threads; plus each variant's lowest cosine to PyTorch's vectors;
(b) cold start: `python -m course_lib ask "<question>"` in a fresh process, end to end, and a
    fresh process that times its stages one by one (imports, model load, index load, first
    answer; the ONNX encoder's load beside the model's);
(c) re-ranking the top N fused hits with token vectors read from disk, in a fresh process with
    the in-memory LRU off: float16 store (baseline) against the int8 memory-mapped index,
    beside the hybrid search alone; each re-ranker encodes the question with PyTorch, and then
    again on lesson 08's serving path, where one ONNX pass over the question gives the hybrid
    search its vector and the re-ranker its tokens (what a re-rank adds beyond the hybrid search);
(d) the token store of the default chunking: float16 against int8, and int8 after a projection
    onto the corpus's leading principal directions (`--dims`, default 128; `--dims ""`: none),
    and ColBERTv2-style centroid + residual indexes (`benchmarks/residual_index.py`), one per
    `--residual-bits` (default none; `--residual-centroids`, default ColBERTv2's rule), size and
    bytes per token;
(e) float16 against each compressed index on the dev questions: how many top 5s change, and MRR
    of both with `paired_comparison`'s verdict at the course's equivalence margin.

The int8 index of the default chunking is built on first use from the float16 store (a minute
when that store is warm; computing what it lacks when it is not); a residual index fits its
k-means centroids on a seeded sample of the tokens first (minutes on 2 cores).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from bench_latency import machine, percentiles
from residual_index import residual_token_index

from course_lib import settings
from course_lib.core.lexical import BM25Retriever
from course_lib.core.load import load_pages
from course_lib.core.pipeline import retriever_over, structured_chunks
from course_lib.core.rerank import MaxSimReranker, int8_token_index, rerank, token_store_size
from course_lib.core.retrieve import DenseRetriever, HybridRetriever
from course_lib.evaluation.compare import paired_comparison
from course_lib.evaluation.golden import load_golden
from course_lib.evaluation.metrics import evaluate_rankings
from course_lib.evaluation.verdicts import word
from course_lib.infra import models, onnx_encoder
from course_lib.infra.paths import GOLDEN_FILE, REPO_ROOT

HERE = Path(__file__).resolve()
SHARED, SHARED_RERANK = "hybrid, shared pass", " | shared pass"  # (c)'s condition names
RERANK_BEYOND_HYBRID_MS = 15  # issue 27's target for a re-rank from disk in a fresh process


def dev_questions(n: int) -> list:
    return load_golden(GOLDEN_FILE, split="dev")[:n or None]


def child(mode: str, n: int, top_n: int, dims: str = "", residual: str = "", centroids: str = "") -> dict:
    """Run this script in a fresh process in `mode` and return the JSON it prints last."""
    done = subprocess.run([sys.executable, str(HERE), "--child", mode, "--questions", str(n),
                           "--top-n", str(top_n), "--dims", dims, "--residual-bits", residual,
                           "--residual-centroids", centroids],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    if done.returncode:
        print(done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(done.returncode)
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- (a) query embedding ----------------------------------------------------------------------

def time_encoder(encode, queries: list[str]) -> tuple[list[float], np.ndarray]:
    """Seconds per query (one at a time, after one warm-up) and the vectors."""
    encode(["warm-up query"])
    seconds, rows = [], []
    for query in queries:
        start = time.perf_counter()
        rows.append(encode([query])[0])
        seconds.append(time.perf_counter() - start)
    return seconds, np.stack(rows)


def bench_encoders(queries: list[str]) -> None:
    """(a): PyTorch against ONNX float32 and int8, one thread and default threads."""
    import torch

    default_threads = torch.get_num_threads()
    st = models.load_embedder()
    start = time.perf_counter()
    for variant in ("onnx", "onnx-int8"):
        onnx_encoder.ensure_onnx(quantize="int8" if variant == "onnx-int8" else None)
    print(f"(a) query embedding, {len(queries)} dev questions, {machine()} "
          f"(ONNX export/quantisation ready in {time.perf_counter() - start:.1f} s)")
    print(f"  {'encoder':<22}{'threads':>8}{'p50 ms':>9}{'p95 ms':>9}{'p50 / torch':>13}{'min cos':>10}")
    for threads in (1, None):
        torch.set_num_threads(threads or default_threads)
        base, reference = time_encoder(lambda t: st.encode(t, normalize_embeddings=True), queries)
        rows = [("torch (baseline)", base, reference)]
        for variant in ("onnx", "onnx-int8"):
            encoder = onnx_encoder.OnnxEncoder(quantize="int8" if variant == "onnx-int8" else None,
                                               threads=threads)
            rows.append((variant, *time_encoder(lambda t, e=encoder: e.encode(t, normalize_embeddings=True),
                                                queries)))
        b50 = percentiles(base)[0]
        for name, seconds, vectors in rows:
            p50, p95 = percentiles(seconds)
            cosine = float((vectors * reference).sum(axis=1).min())
            print(f"  {name:<22}{threads or default_threads:>8}{p50:>9.2f}{p95:>9.2f}{p50 / b50:>12.2f}x"
                  f"{cosine:>10.5f}")
    torch.set_num_threads(default_threads)


# --- (b) cold start ---------------------------------------------------------------------------

def never_asked(question: str) -> str:
    """The question made new to every cache (the query-vector and question-token stores keep what
    was asked before): a cold start must embed its question."""
    return f"{question} (asked at {time.time_ns()})"


def cold_stages(question: str) -> dict:
    """In a fresh process: each stage of a first `ask` after the imports, timed on its own
    (this script has imported the pipeline modules already: `import_seconds` times that)."""
    from course_lib.core.pipeline import build_pipeline

    times, start = {}, time.perf_counter()
    models.load_embedder()
    times["model load (torch, sentence-transformers, MiniLM)"] = time.perf_counter() - start
    start = time.perf_counter()
    pipeline = build_pipeline(settings.FINAL_PIPELINE, load_pages())
    times["index load (pages, chunks, vectors, BM25, re-ranker)"] = time.perf_counter() - start
    start = time.perf_counter()
    pipeline.search(question, k=5)
    times["first answer (search + re-rank)"] = time.perf_counter() - start
    start = time.perf_counter()
    onnx_encoder.load_encoder(encoder="onnx").encode([question])
    times["ONNX encoder load + first query (cached export)"] = time.perf_counter() - start
    return times


IMPORTS = ("import time; start = time.perf_counter(); import course_lib.app.cli, "
           "course_lib.core.pipeline; print(time.perf_counter() - start)")


def import_seconds() -> float:
    """Seconds a fresh interpreter takes to import the CLI and the pipeline modules (no torch)."""
    done = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True,
                          cwd=REPO_ROOT, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def bench_cold(question: str, n: int, top_n: int) -> None:
    """(b): `python -m course_lib ask` end to end, then the stages in another fresh process."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "course_lib", "ask", question], capture_output=True,
                          text=True, cwd=REPO_ROOT)
    total = time.perf_counter() - start
    status = "ok" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-300:]}"
    print(f"\n(b) cold start, {machine()}")
    print(f"  python -m course_lib ask (fresh process, end to end): {total:8.2f} s ({status})")
    stages = {"import course_lib (CLI + pipeline, own process)": import_seconds(),
              **child("cold", n, top_n)}
    for name, seconds in stages.items():
        print(f"  {name:<56}{seconds:8.2f} s")
    print(f"  {'sum of the stages (without the ONNX line)':<56}"
          f"{sum(v for k, v in stages.items() if not k.startswith('ONNX')):8.2f} s")


# --- (c) re-ranking from disk, (d) sizes, (e) ranking changes -----------------------------------

def rerank_from_disk(queries: list[str], top_n: int, dims: list[int], residual: list[int],
                     centroids: int | None) -> dict:
    """In a fresh process: hybrid search alone, re-rank from the float16 store, from each index."""
    chunks = structured_chunks(load_pages())
    hybrid = HybridRetriever([DenseRetriever(chunks, cache_queries=False), BM25Retriever(chunks)])
    # Each re-ranker encodes the question, as a service must (the lessons' stored golden ones would hide it).
    half = MaxSimReranker(cache_size=0, persist_queries=False)
    rerankers = {"float16": half}
    for name, index in store_indexes(chunks, half, dims, residual, centroids, announce=False).items():
        rerankers[name] = MaxSimReranker(cache_size=0, persist_queries=False, index=index)
    # The serving path of lesson 08: one ONNX pass gives the dense vector and the re-ranker's tokens.
    encoder = onnx_encoder.load_encoder(None, encoder="onnx")
    hybrid.search("warm-up query", k=top_n)
    for query in queries[:2]:  # warm-up: the code paths, not the chunks (every query has its own)
        hits = hybrid.search(query, k=top_n)
        for reranker in rerankers.values():
            rerank(reranker, query, hits, chunks, top_n=top_n)
        encoder.encode_query(query)
    times = {"hybrid": []} | {name: [] for name in rerankers} | {SHARED: []}
    times |= {f"{name}{SHARED_RERANK}": [] for name in rerankers}
    for query in queries:
        start = time.perf_counter()
        hits = hybrid.search(query, k=top_n)
        times["hybrid"].append(time.perf_counter() - start)
        for name, reranker in rerankers.items():
            start = time.perf_counter()
            rerank(reranker, query, hits, chunks, top_n=top_n)
            times[name].append(time.perf_counter() - start)
        start = time.perf_counter()
        both = encoder.encode_query(query)
        hits = hybrid.search(query, k=top_n, vector=both.vector)
        times[SHARED].append(time.perf_counter() - start)
        for name, reranker in rerankers.items():
            start = time.perf_counter()
            with reranker.given_query(query, both.tokens):  # nothing is encoded by the re-ranker
                rerank(reranker, query, hits, chunks, top_n=top_n)
            times[f"{name}{SHARED_RERANK}"].append(time.perf_counter() - start)
    return times


def index_name(width: int | None) -> str:
    return "int8" if width is None else f"int8, {width} principal dims"


def store_indexes(chunks, half: MaxSimReranker, dims: list[int], residual: list[int],
                  centroids: int | None, *, announce: bool = True) -> dict:
    """The compressed indexes judged, by name: int8, int8 after each projection, each residual
    index (`residual_bits` bits a dimension); built if absent (saying how long it took), else reopened."""
    builders = {index_name(width): lambda w=width: int8_token_index(chunks, reranker=half, dims=w)
                for width in [None, *dims]}
    builders |= {f"residual {bits}-bit": lambda b=bits: residual_token_index(chunks, reranker=half, bits=b,
                                                                               centroids=centroids)
                 for bits in residual}
    indexes = {}
    for name, build in builders.items():
        start = time.perf_counter()
        index = build()
        if name.startswith("residual"):
            name = f"{name}, {len(index.centroids)} centroids"
        indexes[name] = index
        if announce:
            print(f"\n{name} index of the default chunking ready in {time.perf_counter() - start:.1f} s: "
                  f"{index.folder}")
    return indexes


def bench_rerank(queries: list[str], n: int, top_n: int, dims: list[int], residual: list[int],
                 centroids: int | None) -> None:
    """(c): the fresh process's figures, as ratios to the float16 store."""
    times = child("rerank", n, top_n, ",".join(map(str, dims)), ",".join(map(str, residual)),
                  str(centroids or ""))
    base = percentiles(times["float16"])[0]
    print(f"\n(c) re-rank of the top {top_n}, token vectors from disk, fresh process, "
          f"{len(queries)} questions, {machine()}")
    print(f"  {'condition':<52}{'p50 ms':>9}{'p95 ms':>9}{'p50 / float16':>15}")
    labels = {"hybrid": "hybrid search alone", "float16": "re-rank, float16 store (baseline)",
              SHARED: "hybrid search alone, ONNX shared pass"}
    for name in times:
        store = name.removesuffix(SHARED_RERANK)
        kind = "float16 store" if store == "float16" else f"{store} mmap index"
        label = labels.get(name, f"re-rank, {kind}")
        label += ", tokens from the pass" if name.endswith(SHARED_RERANK) else ""
        p50, p95 = percentiles(times[name])
        print(f"  {label:<52}{p50:>9.2f}{p95:>9.2f}{p50 / base:>14.2f}x")
    # A re-rank row times the re-rank alone, so its p50 is what it adds beyond the hybrid search.
    for name in (n for n in times if n.endswith(SHARED_RERANK)):
        beyond = percentiles(times[name])[0]
        verdict = "met" if beyond <= RERANK_BEYOND_HYBRID_MS else "not met"
        print(f"  {name.removesuffix(SHARED_RERANK)} re-rank beyond the hybrid search on the shared pass: "
              f"p50 {beyond:.2f} ms (target <= {RERANK_BEYOND_HYBRID_MS} ms: {verdict})")


def bench_sizes(chunks, half: MaxSimReranker, indexes: dict) -> None:
    """(d): the default chunking's token store, float16 against each compressed index."""
    size = token_store_size(chunks, reranker=half)
    print(f"\n(d) token store of the default chunking ({size.chunks:,} chunks, {size.tokens:,} tokens "
          f"x {size.width})")
    print(f"  {'store':<52}{'MB':>9}{'bytes/token':>13}{'/ float16':>11}")
    print(f"  {'float16 values (baseline)':<52}{size.bytes / 1e6:>9.1f}{2 * size.width:>13.1f}{1:>10.2f}x")
    for name, index in indexes.items():
        label = f"{name}{'' if name.startswith('residual') else ' + float32 scale'}, files on disk"
        print(f"  {label:<52}{index.size_bytes() / 1e6:>9.1f}"
              f"{index.bytes_per_token():>13.1f}{index.size_bytes() / size.bytes:>10.2f}x")
    print(f"  float16 store on disk now (every chunking it has seen): {size.stored_chunks:,} chunks, "
          f"{size.stored_bytes / 1e6:,.1f} MB")


def bench_rankings(questions: list, chunks, half: MaxSimReranker, indexes: dict, top_n: int) -> None:
    """(e): top-5 changes and MRR, float16 (A) against each compressed index (B), on the dev questions."""
    hybrid = retriever_over(chunks)
    rerankers = {"float16": half} | {name: MaxSimReranker(index=index) for name, index in indexes.items()}
    rankings: dict[str, list] = {name: [] for name in rerankers}
    changed = dict.fromkeys(indexes, 0)
    for q in questions:
        hits = hybrid.search(q.question, k=top_n)
        for name, reranker in rerankers.items():
            rankings[name].append(rerank(reranker, q.question, hits, chunks, top_n=top_n))
        top5 = {name: {h.index for h in found[-1][:5]} for name, found in rankings.items()}
        for name in indexes:
            changed[name] += top5["float16"] != top5[name]
    runs = {name: evaluate_rankings(questions, found, chunks, name=f"MaxSim {name}")
            for name, found in rankings.items()}
    print(f"\n(e) float16 against the compressed indexes, {len(questions)} dev questions, "
          f"top {top_n} re-ranked")
    for name in indexes:
        c = paired_comparison(runs["float16"], runs[name], metric="mrr")
        share = 1 - changed[name] / max(len(questions), 1)
        print(f"  {name}: top 5 unchanged for {len(questions) - changed[name]} of {len(questions)} "
              f"({share:.1%}; goal: at least 97%)")
        print(f"    MRR float16 {c.value_a:.3f}, {name} {c.value_b:.3f}, delta {c.delta:+.3f} "
              f"[{c.lo:+.3f}, {c.hi:+.3f}], {c.wins} up / {c.losses} down, p = {c.p_value:.3g}")
        e = c.equivalence
        print(f"    equivalence within +-{e.margin}: 90% interval [{e.lo:+.3f}, {e.hi:+.3f}], "
              f"TOST p = {e.p_value:.3g}; verdict: {word(c)}")


def bench_store(questions: list, top_n: int, dims: list[int], residual: list[int],
                centroids: int | None) -> None:
    """(c), (d) and (e): build the compressed indexes (if absent), then measure."""
    chunks = structured_chunks(load_pages())
    half = MaxSimReranker()
    indexes = store_indexes(chunks, half, dims, residual, centroids)
    hybrid = retriever_over(chunks)
    for q in questions:  # the float16 store holds every shortlisted chunk before the fresh process
        half.score(q.question, [chunks[h.index] for h in hybrid.search(q.question, k=top_n)])
    bench_rerank([q.question for q in questions], len(questions), top_n, dims, residual, centroids)
    bench_sizes(chunks, half, indexes)
    bench_rankings(questions, chunks, half, indexes, top_n)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=60, help="dev questions (default 60; 0: all)")
    parser.add_argument("--dims", default="128",
                        help='comma-separated projection widths for (d), (e) ("": none)')
    parser.add_argument("--residual-bits", default="", help="comma-separated bits a dimension of residual "
                                                             "indexes for (c), (d), (e) (default: none)")
    parser.add_argument("--residual-centroids", default="",
                        help="their k-means centroids (default: ColBERTv2's 2^floor(log2(16 sqrt(tokens))))")
    parser.add_argument("--top-n", type=int, default=settings.RERANK_TOP_N, help="shortlist re-ranked")
    parser.add_argument("--skip-encoders", action="store_true", help="skip (a)")
    parser.add_argument("--skip-cold", action="store_true", help="skip (b)")
    parser.add_argument("--skip-store", action="store_true", help="skip (c), (d) and (e)")
    parser.add_argument("--child", choices=("cold", "rerank"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    questions = dev_questions(args.questions)
    dims = [int(d) for d in args.dims.split(",") if d]
    residual = [int(b) for b in args.residual_bits.split(",") if b]
    centroids = int(args.residual_centroids) if args.residual_centroids else None
    texts = [q.question for q in questions]
    if args.child == "cold":
        print(json.dumps(cold_stages(never_asked(texts[0]))))
        return 0
    if args.child == "rerank":
        print(json.dumps(rerank_from_disk(texts, args.top_n, dims, residual, centroids)))
        return 0
    print(f"bench_serving: {len(questions)} dev questions, {machine()}\n")
    if not args.skip_encoders:
        bench_encoders(texts)
    if not args.skip_cold:
        bench_cold(never_asked(texts[0]), args.questions, args.top_n)
    if not args.skip_store:
        bench_store(questions, args.top_n, dims, residual, centroids)
    print(f"\nload at the end: {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
