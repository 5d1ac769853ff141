"""What the PostgreSQL index costs as it grows, against exact NumPy search of the same vectors.

Lesson 11 and `benchmarks/bench_store.py` grow the real chunk vectors 10x (the benchmark 100x) by
perturbed copies, never re-embedding, load them into a bare table with binary COPY (psycopg, with
pgvector-python's binary vector dumper), build the HNSW index, and time top-k queries three ways:
HNSW, exact in PostgreSQL, exact in NumPy. Latencies are meant to be read as ratios against NumPy
measured in the same run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from pgvector.psycopg import register_vector
from threadpoolctl import threadpool_limits

from course_lib import settings

TABLE = "growth_vectors"


def perturbed_copies(vectors: np.ndarray, times: int, *, noise: float = settings.GROWTH_NOISE,
                     seed: int = settings.SEED) -> np.ndarray:
    """The vectors plus `times - 1` noisy copies of them, each row re-normalised to unit length.

    Copies sit near their original, as paraphrases of a page would, so the neighbourhoods an
    HNSW graph must navigate look like real ones; the first block is the original, unchanged.
    """
    base = np.asarray(vectors, dtype=np.float32)
    rng = np.random.default_rng(seed)
    scale = noise / np.sqrt(base.shape[1])
    copies = [base] + [base + rng.normal(0, scale, base.shape).astype(np.float32)
                       for _ in range(times - 1)]
    out = np.concatenate(copies)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


@dataclass
class GrowthPoint:
    """One size of the growth curve: build time, per-query latencies (seconds) and bytes."""

    n: int
    load_s: float
    build_s: float
    hnsw: np.ndarray
    exact_sql: np.ndarray
    numpy: np.ndarray
    numpy_bytes: int
    table_bytes: int
    hnsw_bytes: int

    def row(self) -> dict:
        """p50/p95 in milliseconds, ratios against NumPy's p50, sizes in MB."""
        ms = {name: np.percentile(getattr(self, name), [50, 95]) * 1000
              for name in ("hnsw", "exact_sql", "numpy")}
        return {"vectors": self.n, "build_s": round(self.build_s, 2),
                **{f"{name}_p50_ms": round(v[0], 2) for name, v in ms.items()},
                **{f"{name}_p95_ms": round(v[1], 2) for name, v in ms.items()},
                "hnsw_vs_numpy": round(ms["hnsw"][0] / ms["numpy"][0], 2),
                "exact_sql_vs_numpy": round(ms["exact_sql"][0] / ms["numpy"][0], 2),
                "numpy_MB": round(self.numpy_bytes / 1e6, 1),
                "table_MB": round(self.table_bytes / 1e6, 1),
                "hnsw_MB": round(self.hnsw_bytes / 1e6, 1)}


def measure_growth(conn, vectors: np.ndarray, queries: np.ndarray, *, k: int = settings.EVAL_DEPTH,
                   ef_search: int = settings.HNSW_EF_SEARCH,
                   maintenance_mem: str = settings.PG_BUILD_MEMORY) -> GrowthPoint:
    """Load `vectors` into a fresh table, build HNSW (timed), and time each query three ways.

    `maintenance_work_mem` must hold the graph while it is built, or pgvector spills to disk and
    the build slows several-fold (it says so in the server log).
    """
    dim = vectors.shape[1]
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # a fresh server has no store yet
    register_vector(conn)  # NumPy arrays in and out as pgvector's vector type
    conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
    conn.execute(f"CREATE TABLE {TABLE} (id int4 PRIMARY KEY, embedding vector({dim}) NOT NULL)")
    start = time.perf_counter()
    copy_sql = f"COPY {TABLE} (id, embedding) FROM STDIN WITH (FORMAT binary)"
    with conn.cursor().copy(copy_sql) as copy:
        copy.set_types(["int4", "vector"])  # binary rows: no text is formatted or parsed
        for row, vector in enumerate(np.asarray(vectors, dtype=np.float32)):
            copy.write_row((row, vector))
    load_s = time.perf_counter() - start
    conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (maintenance_mem,))
    start = time.perf_counter()
    conn.execute(f"CREATE INDEX {TABLE}_hnsw ON {TABLE} USING hnsw (embedding vector_cosine_ops)")
    build_s = time.perf_counter() - start
    conn.execute(f"ANALYZE {TABLE}")
    hnsw = _timed_sql(conn, queries, k, {"hnsw.ef_search": str(ef_search)})
    exact = _timed_sql(conn, queries, k, {"enable_indexscan": "off"})
    matrix = np.asarray(vectors, dtype=np.float32)
    numpy_s = []
    # One BLAS thread: a PostgreSQL backend answers a query on one core, and on a busy machine a
    # multi-threaded matrix-vector product waits for its threads (40 ms instead of 0.1 ms here).
    with threadpool_limits(limits=1):
        for q in queries:
            t = time.perf_counter()
            scores = matrix @ q
            np.argsort(-scores[np.argpartition(-scores, k)[:k]])
            numpy_s.append(time.perf_counter() - t)
    table, index = conn.execute(
        f"SELECT pg_table_size('{TABLE}'), pg_relation_size('{TABLE}_hnsw')").fetchone()
    return GrowthPoint(len(vectors), load_s, build_s, hnsw, exact, np.array(numpy_s), matrix.nbytes,
                       table, index)


def _timed_sql(conn, queries: np.ndarray, k: int, settings: dict[str, str]) -> np.ndarray:
    """Seconds per top-k query, each in its own transaction with the given settings."""
    sql = f"SELECT id FROM {TABLE} ORDER BY embedding <=> %s::vector LIMIT %s"  # noqa: S608 - TABLE is a module constant; values are bound parameters
    seconds = []
    for q in np.asarray(queries, dtype=np.float32):
        t = time.perf_counter()
        with conn.transaction():
            for name, value in settings.items():
                conn.execute("SELECT set_config(%s, %s, true)", (name, value))
            conn.execute(sql, (q, k)).fetchall()
        seconds.append(time.perf_counter() - t)
    return np.array(seconds)


def hnsw_recall(store, queries: list[str], *, ef_values=(10, 20, 40, 100),
                k: int = settings.EVAL_DEPTH) -> dict[int, float]:
    """Mean share of exact search's top k that HNSW also returns, per `ef_search`."""
    exact_flag, ef = store.exact, store.ef_search
    try:
        store.exact = True
        truth = [{h.index for h in store.dense(q, k=k)} for q in queries]
        store.exact = False
        out = {}
        for value in ef_values:
            store.ef_search = value
            found = [{h.index for h in store.dense(q, k=k)} for q in queries]
            shares = [len(f & t) / max(len(t), 1) for f, t in zip(found, truth, strict=True)]
            out[value] = float(np.mean(shares))
        return out
    finally:
        store.exact, store.ef_search = exact_flag, ef
