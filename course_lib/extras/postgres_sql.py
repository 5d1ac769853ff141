"""The SQL lesson 11 teaches, written out by hand: the schema, filters and lexemes as SQL, and the
searches (dense, BM25 from a postings table, `ts_rank`, RRF) as query text.

`postgres.Store` runs these; keeping the text here keeps the store about opening, indexing and
searching. The queries are assembled from fixed fragments: a filter's WHERE clause comes from
`where_sql`, which binds every value as a parameter, so nothing a user types is formatted into
the SQL (S608).
"""
from __future__ import annotations

from collections.abc import Sequence

from course_lib.core.retrieve import Filter

# ---------------------------------------------------------------------------------------------
# Filters and tsvectors as SQL


def where_sql(where: Filter | None) -> tuple[str, dict]:
    """The WHERE condition over `c` that keeps what `where` (the in-memory retrievers' `Filter`)
    keeps, and its parameters: values travel as parameters, never pasted into the SQL."""
    if where is not None and not isinstance(where, Filter):
        raise TypeError("Store.search needs where=Filter(...) (course_lib.core.retrieve): a Python "
                        "function cannot run inside PostgreSQL")
    where = where or Filter()
    parts = ["TRUE"]
    if where.doc is not None:
        parts.append("c.doc = %(f_doc)s")
    if where.path_prefix is not None:
        parts.append("starts_with(c.doc, %(f_prefix)s)")
    if where.kinds is not None:
        parts.append("c.kinds && %(f_kinds)s::text[]")
    return " AND ".join(parts), {"f_doc": where.doc, "f_prefix": where.path_prefix,
                                 "f_kinds": list(where.kinds or ())}


def _lexeme(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(terms: Sequence[str]) -> str:
    """A tsvector holding exactly these terms with their positions, bypassing PostgreSQL's parser.

    `to_tsvector('simple', 'os.path.join %Y')` would re-split the text its own way (and turn
    `%Y` into `y`); writing the lexemes ourselves keeps the course's code-aware terms, so full-text
    search matches the same terms as BM25. Positions stop at 16383, PostgreSQL's maximum.
    """
    positions: dict[str, list[int]] = {}
    for i, term in enumerate(terms, 1):
        if not term or len(term.encode()) >= 2046:  # PostgreSQL refuses longer lexemes
            continue
        positions.setdefault(term, []).append(min(i, 16383))
    return " ".join(f"{_lexeme(t)}:{','.join(map(str, p[:256]))}" for t, p in positions.items())


def tsquery_literal(terms: Sequence[str]) -> str:
    """An OR of the terms as a tsquery (like BM25, a chunk needs only one of them to match)."""
    return " | ".join(_lexeme(t) for t in dict.fromkeys(terms) if t and len(t.encode()) < 2046)


# ---------------------------------------------------------------------------------------------
# The store's tables: pages, chunks (vector, terms, tsvectors) and BM25 postings

SCHEMA = """
CREATE TABLE IF NOT EXISTS store_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    doc text PRIMARY KEY, content_hash text NOT NULL, n_chunks int NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id text PRIMARY KEY,
    doc text NOT NULL REFERENCES pages(doc) ON DELETE CASCADE,
    seq int NOT NULL, section_id text, heading_path text[] NOT NULL, kinds text[] NOT NULL,
    title text NOT NULL, context text NOT NULL, body text NOT NULL, embedded_text text NOT NULL,
    n_tokens int NOT NULL, content_hash text NOT NULL,
    embedding vector({dim}) NOT NULL, n_terms int NOT NULL, lexemes tsvector NOT NULL,
    fts_english tsvector GENERATED ALWAYS AS (to_tsvector('english', embedded_text)) STORED);
-- Keep each vector and the terms' tsvector in its row: the defaults let a row with a long body move
-- them out to the TOAST table, and exact search and ts_rank would then read every one back from there.
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN, ALTER COLUMN lexemes SET STORAGE MAIN;
-- Each posting carries its chunk's length, so BM25 scores a term from the postings alone.
CREATE TABLE IF NOT EXISTS postings (
    term text NOT NULL, chunk_id text NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    tf int NOT NULL, n_terms int NOT NULL);
"""

INDEXES = """
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc, seq);
-- BM25's scored chunks meet their page, order and kinds (filter, ties) in this index alone.
CREATE INDEX IF NOT EXISTS chunks_ties ON chunks (chunk_id) INCLUDE (doc, seq, kinds);
-- BM25's corpus statistics (count, mean length) read from this small index, not the wide rows.
CREATE INDEX IF NOT EXISTS chunks_n_terms ON chunks (n_terms);
-- A term's postings read from the index alone (an index-only scan), never from the table.
CREATE INDEX IF NOT EXISTS postings_term_bm25 ON postings (term) INCLUDE (chunk_id, tf, n_terms);
CREATE INDEX IF NOT EXISTS postings_chunk ON postings (chunk_id);
DROP INDEX IF EXISTS postings_term;  -- the hash index of earlier versions of the course
{hnsw_index};
CREATE INDEX IF NOT EXISTS chunks_lexemes ON chunks USING gin (lexemes);
CREATE INDEX IF NOT EXISTS chunks_english ON chunks USING gin (fts_english);
"""

HNSW_INDEX = "CREATE INDEX IF NOT EXISTS chunks_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)"
POSTING_COLUMNS = ("term", "chunk_id", "tf", "n_terms")
COLUMNS = ("chunk_id", "doc", "seq", "section_id", "heading_path", "kinds", "title", "context",
           "body", "embedded_text", "n_tokens", "content_hash", "embedding", "n_terms", "lexemes")
LEXICAL = ("bm25", "ts_rank", "english")


# ---------------------------------------------------------------------------------------------
# The searches

def distance_sql(*, exact: bool) -> str:
    """The cosine distance to the query vector. Exact search adds zero to it: an index answers an
    ORDER BY only on the expression it was built for, so PostgreSQL must scan every vector, while
    every other part of the query keeps its indexes (the BM25 postings' index-only scans), which a
    session-wide `enable_indexscan = off` would take away too. Adding zero changes no float."""
    distance = "c.embedding <=> %(vec)s::vector"
    return f"({distance}) + 0::float8" if exact else distance


def dense_sql(condition: str, *, exact: bool = False) -> str:
    """Dense search alone (HNSW, or exact), score = cosine similarity, the `%(k)s` nearest."""
    distance = distance_sql(exact=exact)
    return (f"SELECT c.chunk_id, 1 - ({distance}) FROM chunks c WHERE {condition} "  # noqa: S608
            f"ORDER BY {distance} LIMIT %(k)s")


def lexical_sql(lexical: str, condition: str) -> str:
    """The lexical side's SELECT (chunk_id, score, doc, seq), best first, `%(n)s` rows: the
    course's BM25, `ts_rank` over the course's terms, or `ts_rank` over PostgreSQL's English stems."""
    if lexical == "bm25":
        return bm25_sql(condition)
    if lexical == "ts_rank":
        doc, tsq = "c.lexemes", "%(tsq)s::tsquery"
    elif lexical == "english":
        # plainto_tsquery ANDs the words; OR them, as BM25 does, so partial matches count.
        doc = "c.fts_english"
        tsq = "replace(plainto_tsquery('english', %(text)s)::text, '&', '|')::tsquery"
    else:
        raise ValueError(f"lexical must be one of {', '.join(LEXICAL)}, not {lexical!r}")
    # ts_rank counts matches, divided (normalization 1) by 1 + log(length); it has no idf.
    return (f"SELECT c.chunk_id, ts_rank({doc}, {tsq}, 1) AS score, c.doc, c.seq FROM chunks c "  # noqa: S608
            f"WHERE {doc} @@ {tsq} AND {condition} ORDER BY score DESC, c.doc COLLATE \"C\", c.seq "
            f"LIMIT %(n)s")


def bm25_sql(condition: str) -> str:
    """`BM25Retriever`'s scores in SQL: Lucene's idf from live document frequencies, each query
    term's share added in the query's order (as the in-memory loop adds them), same floats.

    Scored from the postings alone (each carries its chunk's length), grouped by chunk id in
    byte order (the "C" collation: no locale-aware comparisons), and only the scored chunks are
    then joined to `chunks` for the filter and the tie order."""
    return f"""
        WITH q AS (SELECT term, pos FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS q(term, pos)),
        s AS MATERIALIZED (SELECT count(*)::float8 AS n, sum(n_terms)::float8 / count(*) AS avgdl
                           FROM chunks),
        idf AS MATERIALIZED (
            SELECT p.term, ln(1::float8 + (s.n - count(*)::float8 + 0.5::float8)
                                        / (count(*)::float8 + 0.5::float8)) AS idf
            FROM postings p CROSS JOIN s WHERE p.term = ANY(%(terms)s::text[]) GROUP BY p.term, s.n),
        scored AS MATERIALIZED (
            SELECT p.chunk_id COLLATE "C" AS chunk_id,
                   sum(idf.idf * (p.tf * (%(k1)s + 1)
                                  / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.n_terms / s.avgdl)))
                       ORDER BY q.pos) AS score
            FROM q JOIN postings p ON p.term = q.term JOIN idf ON idf.term = q.term CROSS JOIN s
            GROUP BY 1)
        SELECT c.chunk_id, sc.score, c.doc, c.seq FROM scored sc JOIN chunks c ON c.chunk_id = sc.chunk_id
        WHERE {condition} ORDER BY sc.score DESC, c.doc COLLATE "C", c.seq LIMIT %(n)s"""  # noqa: S608


def fused_sql(lexical: str, condition: str, *, exact: bool = False) -> str:
    """Dense and lexical top `%(n)s`, fused by RRF (`%(rrf_k)s`) in one query, the `%(k)s` best.
    In float8, as `retrieve.rrf` adds: the same ranks give the same fused scores, bit for bit."""
    return f"""
        WITH dense AS (
            SELECT chunk_id, doc, seq,
                   row_number() OVER (ORDER BY dist, doc COLLATE "C", seq) AS rank
            FROM (SELECT c.chunk_id, c.doc, c.seq, {distance_sql(exact=exact)} AS dist
                  FROM chunks c WHERE {condition}
                  ORDER BY {distance_sql(exact=exact)} LIMIT %(n)s) d),
        lexical AS (
            SELECT chunk_id, doc, seq,
                   row_number() OVER (ORDER BY score DESC, doc COLLATE "C", seq) AS rank
            FROM ({lexical_sql(lexical, condition)}) l),
        both_lists AS (SELECT * FROM dense UNION ALL SELECT * FROM lexical)
        SELECT chunk_id, sum(1::float8 / (%(rrf_k)s + rank)) AS score FROM both_lists
        GROUP BY chunk_id, doc, seq ORDER BY score DESC, doc COLLATE "C", seq LIMIT %(k)s"""  # noqa: S608
