"""The index in PostgreSQL with pgvector: incremental indexing and hybrid search in one SQL query.

Lesson 11 moves lesson 07's pipeline out of one Python process, into the server that
`postgres_server.embedded_server()` starts (the PyPI package `pgserver`) or `DATABASE_URL` names.
`Store.index(chunks)` writes pages, chunks and their BM25 postings incrementally (one
transaction per changed page); `Store.search(query)` fuses exact (or HNSW) dense search with the
course's BM25 by RRF in a single query, filters with `WHERE`, then re-ranks in Python the
shortlist `Pipeline.search` would: the in-memory final pipeline, stage for stage. `lexical="ts_rank"`
swaps BM25 for PostgreSQL's own full-text ranking (lesson 11's second step). The SQL (BM25 from a
postings table, HNSW, full-text, RRF) is written out by hand in `postgres_sql`: it is what the
lesson teaches; this module opens the store, indexes pages and runs the searches.
Vectors travel through pgvector-python (`register_vector`), not as hand-made literals.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from course_lib import settings
from course_lib.core.lexical import code_aware_tokens
from course_lib.core.rerank import Reranker, rerank, shortlist_size
from course_lib.core.retrieve import Configured, Filter, SearchConfig, search_config
from course_lib.core.tokens import get_counter
from course_lib.extras.postgres_server import StaleIndexError, StoreError
from course_lib.extras.postgres_sql import (
    COLUMNS,
    HNSW_INDEX,
    INDEXES,
    POSTING_COLUMNS,
    SCHEMA,
    dense_sql,
    fused_sql,
    lexical_sql,
    tsquery_literal,
    tsvector_literal,
    where_sql,
)
from course_lib.infra import models
from course_lib.records import Chunk, Hit, text_digest


class ModelEmbedder:
    """What turns text into vectors (`models.embed`, disk-cached) and names the model the index was
    built with (`key`, `dim`); the model's shared `TokenCounter` (`get_counter`) counts tokens."""

    def __init__(self, model: str | None = None):
        self.model = model
        self.key = models.model_id(model)
        self.dim = int(models.load_embedder(model).get_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return models.embed(list(texts), model=self.model, progress=False)

    def count(self, texts: Sequence[str]) -> list[int]:
        return list(get_counter(self.model).count_many(texts))


def page_hash(chunks: Sequence[Chunk]) -> str:
    """What a page contributes to the index, hashed: its chunks' embedded texts, in order (the
    `text_digest` of their digests, one a line; `verify` recomputes it inside the database's rows)."""
    return text_digest("\n".join(c.content_hash for c in chunks))


@dataclass
class IndexReport:
    """What one `Store.index` call did, page by page, and how long it took."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    chunks_written: int = 0
    seconds: float = 0.0


class Store(Configured):
    """Pages and chunks in PostgreSQL; a retriever with `.chunks`, `.name` and `.search`.

    Opening checks the extension, creates the schema for the embedder's dimension, and refuses an
    index built with another model (`StaleIndexError`: pass `rebuild=True`). `exact=True` searches
    without the HNSW index (for parity with NumPy); `ef_search` sets `hnsw.ef_search` per query.
    `lexical` is "bm25" (the course's BM25 over its code-aware terms, as in memory), "ts_rank"
    (PostgreSQL's ranking over the same terms) or "english" (`ts_rank` over PostgreSQL's English
    stems). The search knobs are a `SearchConfig` (`config`, keywords on top), the in-memory
    pipeline's: `candidates` per side, `rrf_k`, and with a `reranker` the shortlist `top_n`
    re-ordered in `batch_size` pairs as in lesson 07. Fusion is RRF, in SQL: a config asking for
    weighted fusion is refused, and `parallel` has nothing to run in threads (one query).
    """

    def __init__(self, conn, *, embedder=None, model: str | None = None, rebuild: bool = False,
                 reranker: Reranker | None = None, exact: bool = False,
                 ef_search: int = settings.HNSW_EF_SEARCH,
                 lexical: Literal["bm25", "ts_rank", "english"] = "bm25",
                 config: SearchConfig | None = None, k1: float = settings.BM25_K1, b: float = settings.BM25_B,
                 **knobs: object):
        self.config = search_config(config, **knobs)
        if self.config.fusion != "rrf":
            raise ValueError(f"Store fuses by RRF in one SQL query, not {self.config.fusion!r}: "
                             "use an in-memory Pipeline for weighted fusion")
        self.conn = conn
        self.embedder = embedder or ModelEmbedder(model)
        self.reranker, self.exact, self.ef_search, self.lexical = reranker, exact, ef_search, lexical
        self.k1, self.b = k1, b
        self._ensure_extension()
        if rebuild:
            self.drop()
        self._ensure_schema()
        self.chunks: list[Chunk] = []
        self._positions: dict[str, int] = {}
        self.refresh()

    @property
    def name(self) -> str:
        dense = "exact" if self.exact else f"hnsw(ef_search={self.ef_search})"
        tail = f" + {self.reranker.name}" if self.reranker is not None else ""
        return f"postgres: {dense} + {self.lexical} (rrf){tail}"

    # --- schema and model checks ---------------------------------------------------------

    def _ensure_extension(self) -> None:
        """Create pgvector if needed, then let this connection send NumPy arrays as vectors."""
        import psycopg
        from pgvector.psycopg import register_vector

        try:
            self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as err:
            raise StoreError(f"the pgvector extension is not available on this server ({type(err).__name__})",
                             hint="install pgvector there, use the image pgvector/pgvector:pg16, or "
                                  "unset DATABASE_URL for the embedded server") from None
        register_vector(self.conn)

    def drop(self) -> None:
        """Delete the store's tables (the next open recreates them empty)."""
        self.conn.execute("DROP TABLE IF EXISTS postings, chunks, pages, store_meta")

    def _ensure_schema(self) -> None:
        dim, key = self.embedder.dim, self.embedder.key
        with self.conn.transaction():
            self.conn.execute(SCHEMA.format(dim=int(dim)))
            chunk_columns, posting_columns = self._columns("chunks"), self._columns("postings")
            found = chunk_columns["embedding"]
            if found != f"vector({dim})":
                raise StaleIndexError(f"the chunks table holds {found} but the model gives vector({dim})")
            for table, wanted, columns in (("chunks", COLUMNS, chunk_columns),
                                           ("postings", POSTING_COLUMNS, posting_columns)):
                if missing := sorted(set(wanted) - set(columns)):  # written by an earlier course
                    raise StaleIndexError(f"the {table} table has no {', '.join(missing)}")
            self.conn.execute(INDEXES.format(hnsw_index=HNSW_INDEX))
            self.conn.execute("INSERT INTO store_meta VALUES ('model', %s), ('dim', %s) "
                              "ON CONFLICT (key) DO NOTHING", (key, str(dim)))
            stored = self.conn.execute("SELECT value FROM store_meta WHERE key = 'model'").fetchone()[0]
        if stored != key:
            raise StaleIndexError(f"the index was built with {stored!r}, not {key!r}")

    def _columns(self, table: str) -> dict[str, str]:
        """A table's columns and their SQL types, as PostgreSQL reports them."""
        return dict(self.conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped", (table,)).fetchall())

    # --- indexing ------------------------------------------------------------------------

    def index(self, chunks: Sequence[Chunk], *,
              inside_page: Callable[[str], None] | None = None) -> IndexReport:
        """Bring the index in line with `chunks`: new and changed pages written, removed ones deleted.

        Idempotent and incremental: a page whose hash (`page_hash`) is stored unchanged is not
        touched, so nothing of it is embedded again. Each changed page is deleted and rewritten in
        ONE transaction (chunks, vectors, BM25 postings), so a crash leaves every page either as it
        was or as it is now; BM25's idf and average length are computed by each query, never stale.
        Into an empty store the pages are loaded first and the HNSW index is built once after them
        (pgvector's advice for a bulk load; a crash before that leaves it to the next open).
        `inside_page(doc)` runs inside that transaction just before it commits (tests kill there).
        """
        start = time.perf_counter()
        by_doc: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_doc.setdefault(chunk.doc, []).append(chunk)
        stored = dict(self.conn.execute("SELECT doc, content_hash FROM pages").fetchall())
        report = IndexReport()
        bulk = not stored and len(by_doc) > 1  # an empty store: load every page, then build HNSW once
        if bulk:  # inserting row by row into the graph is several times slower than one build
            self.conn.execute("DROP INDEX IF EXISTS chunks_hnsw")
        for doc, page_chunks in by_doc.items():
            digest = page_hash(page_chunks)
            if stored.get(doc) == digest:
                report.unchanged += 1
                continue
            (report.changed if doc in stored else report.added).append(doc)
            self._write_page(doc, page_chunks, digest, inside_page)
            report.chunks_written += len(page_chunks)
        for doc in sorted(set(stored) - set(by_doc)):
            self.conn.execute("DELETE FROM pages WHERE doc = %s", (doc,))  # chunks cascade
            report.removed.append(doc)
        if bulk:  # the graph over every vector at once, and the planner's statistics of the new rows
            self.conn.execute(HNSW_INDEX)
            self.conn.execute("VACUUM (ANALYZE) chunks, postings" if self.conn.autocommit
                              else "ANALYZE chunks, postings")
        self.refresh()
        report.seconds = time.perf_counter() - start
        return report

    def _write_page(self, doc: str, chunks: list[Chunk], digest: str,
                    inside_page: Callable[[str], None] | None) -> None:
        # Embedded before the transaction, to keep it short; float32 rows go through pgvector.
        vectors = np.asarray(self.embedder.embed([c.text for c in chunks]), dtype=np.float32)
        # Counted by the embedder's counter, the one memo of token counts: the chunker counted
        # these texts through it, so nothing is tokenized again, and `n_tokens` is always the
        # count of the embedded text (a chunk's meta["tokens"] may count its body alone).
        counts = self.embedder.count([c.text for c in chunks])
        terms = [code_aware_tokens(c.text) for c in chunks]  # BM25's terms, as in memory
        rows = [(c.id, c.doc, seq, c.section_id, list(c.heading_path), list(c.kinds), c.title,
                 c.context, c.body, c.text, int(n), c.content_hash, v, len(t), tsvector_literal(t))
                for seq, (c, v, n, t) in enumerate(zip(chunks, vectors, counts, terms, strict=True))]
        with self.conn.transaction():
            self.conn.execute("DELETE FROM pages WHERE doc = %s", (doc,))  # chunks, postings cascade
            self.conn.execute("INSERT INTO pages (doc, content_hash, n_chunks) VALUES (%s, %s, %s)",
                              (doc, digest, len(chunks)))
            # Text COPY: psycopg has no binary form of tsvector (pgvector dumps the vectors).
            cursor = self.conn.cursor()
            with cursor.copy(f"COPY chunks ({', '.join(COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            with cursor.copy(f"COPY postings ({', '.join(POSTING_COLUMNS)}) FROM STDIN") as copy:
                for chunk, chunk_terms in zip(chunks, terms, strict=True):
                    for term, tf in Counter(chunk_terms).items():
                        copy.write_row((term, chunk.id, tf, len(chunk_terms)))
            if inside_page is not None:
                inside_page(doc)

    def refresh(self) -> None:
        """Reload the chunk list that Hits index into, in page-path then chunk order."""
        rows = self.conn.execute(
            "SELECT chunk_id, doc, body, title, heading_path, section_id, kinds, context, n_tokens "
            "FROM chunks ORDER BY doc COLLATE \"C\", seq").fetchall()
        self.chunks = [Chunk(id=r[0], doc=r[1], body=r[2], title=r[3], heading_path=tuple(r[4]),
                             section_id=r[5], kinds=tuple(r[6]), context=r[7], meta={"tokens": r[8]})
                       for r in rows]
        self._positions = {c.id: i for i, c in enumerate(self.chunks)}

    def verify(self) -> list[str]:
        """Pages whose stored chunks do not hash to the page's recorded hash (should be none)."""
        rows = self.conn.execute(
            "SELECT p.doc, p.content_hash, array_agg(c.content_hash ORDER BY c.seq) FILTER "
            "(WHERE c.chunk_id IS NOT NULL) FROM pages p LEFT JOIN chunks c ON c.doc = p.doc "
            "GROUP BY p.doc, p.content_hash").fetchall()
        return [doc for doc, digest, hashes in rows
                if text_digest("\n".join(hashes or [])) != digest]

    # --- search --------------------------------------------------------------------------

    def _settings(self) -> None:
        """Per-transaction planner settings: `hnsw.ef_search` for approximate search (exact
        search needs none: its SQL leaves the HNSW index no query it can answer)."""
        if not self.exact:
            self.conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(self.ef_search),))

    def _query_params(self, query: str, where: Filter | None,
                      vector: np.ndarray | None = None) -> tuple[str, dict]:
        condition, params = where_sql(where)
        if vector is None:
            vector = self.embedder.embed([query])[0]
        params["vec"] = np.asarray(vector, dtype=np.float32)  # pgvector
        terms = code_aware_tokens(query)
        params["terms"] = terms  # BM25: every query term, repeats included, in order
        params["tsq"] = tsquery_literal(terms) or None  # ts_rank: NULL matches nothing
        params.update(text=query, k1=float(self.k1), b=float(self.b))
        return condition, params

    def dense(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Filter | None = None,
              vector: np.ndarray | None = None) -> list[Hit]:
        """Dense search alone (HNSW, or exact), score = cosine similarity."""
        condition, params = self._query_params(query, where, vector)
        return self._run(dense_sql(condition, exact=self.exact), {**params, "k": k})

    def lexical_search(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Filter | None = None,
                       lexical: Literal["bm25", "ts_rank", "english"] | None = None) -> list[Hit]:
        """The lexical side alone (the store's own, or `lexical`), ties by page and order."""
        condition, params = self._query_params(query, where)
        sql = lexical_sql(lexical or self.lexical, condition)
        return self._run(f"SELECT chunk_id, score FROM ({sql}) l", {**params, "n": k})  # noqa: S608

    def fused(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Filter | None = None,
              vector: np.ndarray | None = None) -> list[Hit]:
        """Dense and lexical top `candidates`, fused by RRF in one SQL query (no re-ranking). In
        float8, as `retrieve.rrf` adds: the same ranks give the same fused scores, bit for bit."""
        condition, params = self._query_params(query, where, vector)
        return self._run(fused_sql(self.lexical, condition, exact=self.exact),
                         {**params, "n": max(k, self.candidates), "rrf_k": self.rrf_k, "k": k})

    def _run(self, sql: str, params: dict) -> list[Hit]:
        with self.conn.transaction():
            self._settings()
            rows = self.conn.execute(sql, params).fetchall()
        hits = [Hit(self._positions[cid], float(score)) for cid, score in rows]
        return sorted(hits, key=lambda h: (-h.score, h.index))  # the course's tie rule

    def search(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Filter | None = None,
               vector: np.ndarray | None = None) -> list[Hit]:
        """The pipeline: fused SQL search, then with a re-ranker the shortlist `Pipeline.search`
        re-ranks (`shortlist_size`), re-ranked in Python; the k best. `vector` is the question's
        embedding when the caller has it (else the store's embedder computes it)."""
        if self.reranker is None:
            return self.fused(query, k=k, where=where, vector=vector)
        depth = shortlist_size(k, top_n=self.top_n)
        hits = self.fused(query, k=depth, where=where, vector=vector)
        return rerank(self.reranker, query, hits, self.chunks, top_n=depth, batch_size=self.batch_size)[:k]
