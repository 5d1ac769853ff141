"""course_lib.extras.postgres against a real PostgreSQL + pgvector (the embedded pgserver, or DATABASE_URL).

A hashing embedder stands in for the model so the tests need no weights and run in seconds; the
lesson runs the same code with the real MiniLM.
"""
from __future__ import annotations

import getpass
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("psycopg")
pytest.importorskip("pgserver")

from course_lib.core.lexical import BM25Retriever, code_aware_tokens
from course_lib.core.retrieve import DenseRetriever, Filter, HybridRetriever, rrf
from course_lib.extras import postgres as st
from course_lib.extras import postgres_server as server
from course_lib.extras import postgres_sql as sql
from course_lib.infra import errors
from course_lib.records import Chunk


class HashEmbedder:
    """Bag of code-aware terms hashed into `dim` buckets, unit length: similar words, similar vectors."""

    def __init__(self, dim: int = 16, key: str = "hash-embedder"):
        self.dim, self.key = dim, key

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for term in code_aware_tokens(text) or ["empty"]:
                out[row, int(hashlib.sha256(term.encode()).hexdigest(), 16) % self.dim] += 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def count(self, texts):
        return [len(t.split()) + 2 for t in texts]


def page(doc: str, *bodies: str, kinds=("text",)) -> list[Chunk]:
    return [Chunk(id=f"{doc}#{i}", doc=doc, body=b, title=doc, heading_path=(doc, "Section"),
                  section_id=f"s{i}", kinds=kinds, context=f"{doc} > Section") for i, b in enumerate(bodies)]


CORPUS = (page("library/os.html", "Use os.path.join to build paths.", "os.getcwd returns the directory.")
          + page("library/datetime.html", "The %Y directive is the year with century.",
                 "%y is the year without century.", kinds=("table",))
          + page("tutorial/intro.html", "Python is an easy to learn language.", "Run python3 -X dev."))


@pytest.fixture(scope="module")
def url():
    # Not pytest's tmp_path: as root, pgserver runs PostgreSQL as its own user, which must be able
    # to traverse the folder, and pytest keeps its temp root private (0700).
    folder = Path(tempfile.mkdtemp(prefix="course_lib-pg-test-"))
    try:
        with server.embedded_server(folder / "data", use_env=False) as address:
            yield address
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def store(url):
    conn = server.connect(url)
    s = st.Store(conn, embedder=HashEmbedder(), rebuild=True)
    s.index(CORPUS)
    yield s
    conn.close()


def test_index_is_idempotent(store):
    again = store.index(CORPUS)
    assert (again.unchanged, again.chunks_written, again.added, again.changed) == (3, 0, [], [])
    assert len(store.chunks) == len(CORPUS)
    assert [c.id for c in store.chunks] == sorted((c.id for c in CORPUS), key=lambda i: (i.split("#")[0], i))


def test_n_tokens_is_the_counters_count_of_the_embedded_text_not_a_chunks_meta(store):
    """One memo of token counts: the store asks the embedder's counter, whatever meta a chunk carries."""
    odd = Chunk("x.html#0", "x.html", "four words of body", title="x.html", heading_path=("x.html",),
                context="x.html > Section", meta={"tokens": 1})
    store.index([*CORPUS, odd])
    stored = dict(store.conn.execute("SELECT chunk_id, n_tokens FROM chunks").fetchall())
    assert stored == {c.id: HashEmbedder().count([c.text])[0] for c in [*CORPUS, odd]}


def test_changed_page_replaced_and_removed_page_deleted(store):
    new = [c for c in CORPUS if c.doc == "library/os.html"] + page("tutorial/intro.html", "Rewritten.")
    report = store.index(new)
    assert report.changed == ["tutorial/intro.html"] and report.removed == ["library/datetime.html"]
    assert report.unchanged == 1 and report.chunks_written == 1
    assert [c.body for c in store.chunks if c.doc == "tutorial/intro.html"] == ["Rewritten."]
    assert store.conn.execute("SELECT count(*) FROM chunks WHERE doc = 'library/datetime.html'").fetchone()[0] == 0
    assert store.verify() == []


CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from test_store import HashEmbedder, page
    from course_lib.extras import postgres as st, postgres_server as server
    s = st.Store(server.connect({url!r}), embedder=HashEmbedder())
    new = [page(f"p{{i}}.html", f"new text {{i}}", f"more new text {{i}}") for i in range(4)]
    seen = []
    def inside(doc):
        seen.append(doc)
        if len(seen) == 2:  # one page committed, the second inside its transaction
            print("inside", doc, flush=True)
            time.sleep(60)
    s.index([c for p in new for c in p], inside_page=inside)
""")


def test_sigkill_inside_a_page_transaction_leaves_every_page_old_or_new(url):
    conn = server.connect(url)
    s = st.Store(conn, embedder=HashEmbedder(), rebuild=True)
    old = [page(f"p{i}.html", f"old text {i}") for i in range(4)]
    s.index([c for p in old for c in p])
    old_hash = {p[0].doc: st.page_hash(p) for p in old}
    new_hash = {f"p{i}.html": st.page_hash(page(f"p{i}.html", f"new text {i}", f"more new text {i}"))
                for i in range(4)}
    script = CHILD.format(tests=str(Path(__file__).parent), url=url)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().startswith("inside p1.html")
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        child.kill()
    stored = dict(conn.execute("SELECT doc, content_hash FROM pages").fetchall())
    assert stored["p0.html"] == new_hash["p0.html"]  # committed before the kill
    assert all(stored[d] in (old_hash[d], new_hash[d]) for d in old_hash)
    assert stored["p1.html"] == old_hash["p1.html"]
    assert s.verify() == []
    assert s.index([c for i in range(4) for c in page(f"p{i}.html", f"new text {i}", f"more new text {i}")]
                   ).changed == ["p1.html", "p2.html", "p3.html"]
    conn.close()


def test_a_page_hash_is_the_digest_of_its_chunks_digests_as_stored_before():
    """The pages table holds these values: the one text digest must leave them as they were."""
    chunks = [Chunk("a#0", "a", "alpha"), Chunk("a#1", "a", "beta", context="A > B")]
    expected = hashlib.sha256("\n".join(hashlib.sha256(c.text.encode()).hexdigest() for c in chunks)
                              .encode()).hexdigest()
    assert st.page_hash(chunks) == expected


def test_sql_in_the_question_is_only_text(store):
    before = store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    for query in ("'); DROP TABLE chunks; --", "x' OR '1'='1", "a & b | !c :* \\'"):
        for lexical in sql.LEXICAL:
            store.lexical = lexical
            assert isinstance(store.search(query, k=5), list)
    store.conn.execute("SELECT 1 FROM chunks LIMIT 1")
    assert store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == before


def test_exact_dense_search_matches_numpy(store):
    store.exact = True
    query = "year with century"
    scores = HashEmbedder().embed([c.text for c in store.chunks]) @ HashEmbedder().embed([query])[0]
    hits = store.dense(query, k=4)
    assert np.allclose([h.score for h in hits], np.sort(scores)[::-1][:4], atol=1e-6)
    assert all(np.isclose(scores[h.index], h.score, atol=1e-6) for h in hits)


def _plan(store, sql: str, params: dict) -> str:
    """The plan PostgreSQL picks when every other way is dearer than an index (seq scans off)."""
    with store.conn.transaction():
        store.conn.execute("SELECT set_config('enable_seqscan', 'off', true)")
        store._settings()
        return "\n".join(row[0] for row in store.conn.execute(f"EXPLAIN {sql}", params))


@pytest.mark.parametrize("exact", [True, False])
def test_exact_search_leaves_hnsw_unused_and_keeps_the_other_indexes(store, exact):
    store.exact = exact
    condition, params = store._query_params("year with century", None)
    dense = _plan(store, sql.dense_sql(condition, exact=exact), {**params, "k": 4})
    fused = _plan(store, sql.fused_sql("bm25", condition, exact=exact),
                  {**params, "n": 10, "rrf_k": store.rrf_k, "k": 4})
    assert ("chunks_hnsw" in dense) is not exact and ("chunks_hnsw" in fused) is not exact
    assert "Index Only Scan using postings_term_bm25" in fused  # BM25's postings: no session-wide switch


@pytest.mark.parametrize("lexical", ["bm25", "ts_rank"])
def test_lexical_uses_code_aware_terms(store, lexical):
    hits = store.lexical_search("os.path.join", k=5, lexical=lexical)  # whole name first; "os" alone matches
    assert store.chunks[hits[0].index].body == "Use os.path.join to build paths."
    assert hits[0].score > hits[1].score
    assert [store.chunks[h.index].body for h in store.lexical_search("%Y", k=5, lexical=lexical)] == [
        "The %Y directive is the year with century."]
    assert [store.chunks[h.index].body for h in store.lexical_search("-X", k=5, lexical=lexical)] == [
        "Run python3 -X dev."]


QUERIES = ("os.path.join", "year year century", "python -X dev directory", "%Y %y", "Python is the year",
           "nothing-matches-this", "")


def test_sql_bm25_is_the_in_memory_bm25_float_for_float(store):
    memory = BM25Retriever(store.chunks)
    for query in QUERIES:
        for where in (None, Filter(path_prefix="library/")):
            expected = memory.search(query, k=10, where=where) if query else []
            assert store.lexical_search(query, k=10, where=where) == expected, query


def test_sql_bm25_statistics_follow_an_incremental_update(store):
    new = [c for c in CORPUS if c.doc != "tutorial/intro.html"] + page(
        "tutorial/intro.html", "Python python python.", "The year of Python.", "Run python3 -X dev.")
    store.index(new)
    memory = BM25Retriever(store.chunks)  # rebuilt from scratch: idf and average length changed
    for query in QUERIES[:-2]:
        assert store.lexical_search(query, k=10) == memory.search(query, k=10), query


def test_exact_sql_pipeline_is_the_in_memory_pipeline(store):
    store.exact, store.reranker, store.config = True, ByLength(), store.config.replace(top_n=3)
    vectors = HashEmbedder().embed([c.text for c in store.chunks])
    hybrid = HybridRetriever([DenseRetriever(store.chunks, vectors=vectors), BM25Retriever(store.chunks)],
                             parallel=False)

    class Query:  # the in-memory dense side needs the query's vector from the same embedder
        def search(self, q, *, k=20, where=None, vector=None):
            return hybrid.search(q, k=k, where=where, vector=HashEmbedder().embed([q])[0])

    from course_lib.core.pipeline import Pipeline

    fixed = Query()
    fixed.chunks, fixed.name = store.chunks, "memory"
    pipeline = Pipeline([fixed], reranker=ByLength(), top_n=3)
    for query in QUERIES[:-2]:
        assert store.fused(query, k=6) == fixed.search(query, k=6), query
        assert store.search(query, k=4) == pipeline.search(query, k=4), query


def test_sql_rrf_equals_the_python_rrf(store):
    store.exact = True
    query = "year of python directory"
    dense = [h.index for h in store.dense(query, k=50)]
    lexical = [h.index for h in store.lexical_search(query, k=50)]
    expected = rrf([dense, lexical], k=60)
    assert [(h.index, round(h.score, 12)) for h in store.fused(query, k=6)] == [
        (i, round(s, 12)) for i, s in expected[:6]]


def test_filters_are_where_clauses(store):
    for where in (Filter(doc="library/os.html"), Filter(path_prefix="library/"),
                  Filter(kinds=("table",)), Filter(path_prefix="%"), Filter(kinds=())):
        hits = store.search("year python os", k=10, where=where)
        assert all(where(store.chunks[h.index]) for h in hits)
        assert len(hits) == sum(map(where, store.chunks))  # every passing chunk matches some term
    assert sql.where_sql(None) == ("TRUE", {"f_doc": None, "f_prefix": None, "f_kinds": []})
    with pytest.raises(TypeError, match="Filter"):
        store.search("x", where=lambda chunk: True)


class ByLength:
    """A re-ranker that prefers long chunks: deterministic, no model."""

    name = "length"

    def score(self, query, chunks, *, batch_size=32):
        return np.array([len(c.body) for c in chunks], float)


def test_the_store_reranks_the_same_shortlist_as_the_pipeline(store):
    from course_lib.core.pipeline import Pipeline
    from course_lib.core.rerank import rerank, shortlist_size

    store.exact, store.reranker, store.config = True, ByLength(), store.config.replace(top_n=2)
    query = "year python os directory"
    for k in (1, 2, 4, 6):  # k <= top_n and k > top_n: shortlist_size(k, top_n=2) hits re-ranked
        depth = shortlist_size(k, top_n=2)
        expected = rerank(ByLength(), query, store.fused(query, k=depth), store.chunks, top_n=depth)[:k]
        assert store.search(query, k=k) == expected
    assert len(store.search(query, k=6)) == 6  # more than top_n, as Pipeline.search returns
    assert [store.chunks[h.index].body for h in store.search(query, k=1)] == [
        max((store.chunks[h.index].body for h in store.fused(query, k=2)), key=len)]
    fused = store.fused(query, k=6)

    class Fixed:  # the store's fused ranking, as one retriever of a Pipeline
        name, chunks = "sql", store.chunks

        def search(self, q, *, k=20, where=None, vector=None):
            return fused[:k]

    pipeline = Pipeline([Fixed()], reranker=ByLength(), top_n=2)
    for k in (1, 2, 4, 6):
        assert pipeline.search(query, k=k) == store.search(query, k=k)


def test_a_store_and_a_pipeline_built_from_one_config_rank_alike(store, url):
    from course_lib.core.pipeline import Pipeline
    from course_lib.core.retrieve import SearchConfig

    config = SearchConfig(rrf_k=5, candidates=3, top_n=3, batch_size=2)
    conn = server.connect(url)
    try:
        sql_store = st.Store(conn, embedder=HashEmbedder(), exact=True, reranker=ByLength(), config=config)
        assert (sql_store.rrf_k, sql_store.candidates, sql_store.top_n) == (5, 3, 3)
        vectors = HashEmbedder().embed([c.text for c in sql_store.chunks])
        memory = Pipeline([DenseRetriever(sql_store.chunks, vectors=vectors), BM25Retriever(sql_store.chunks)],
                          reranker=ByLength(), config=config)
        for query in QUERIES[:-2]:
            vector = HashEmbedder().embed([query])[0]  # every retriever takes a ready vector, the store too
            assert sql_store.search(query, k=4, vector=vector) == memory.search(query, k=4, vector=vector), query
            assert sql_store.search(query, k=4) == memory.search(query, k=4, vector=vector), query
        assert st.Store(conn, embedder=HashEmbedder(), top_n=7).config == SearchConfig(top_n=7)
        with pytest.raises(ValueError, match="Store fuses by RRF in one SQL query, not 'weighted'"):
            st.Store(conn, embedder=HashEmbedder(), fusion="weighted")
    finally:
        conn.close()


def test_stale_model_and_dimension_mismatch_say_what_to_do(store, url):
    conn = server.connect(url)
    with pytest.raises(server.StaleIndexError, match="rebuild=True"):
        st.Store(conn, embedder=HashEmbedder(key="another-model"))
    with pytest.raises(server.StaleIndexError, match=r"vector\(16\).*vector\(8\).*rebuild=True"):
        st.Store(conn, embedder=HashEmbedder(dim=8))
    assert st.Store(conn, embedder=HashEmbedder(dim=8), rebuild=True).chunks == []
    conn.close()


def test_store_errors_are_course_errors_with_their_own_exit_code_and_no_password():
    assert issubclass(server.StaleIndexError, server.StoreError)
    assert issubclass(server.StoreError, errors.CourseError)
    families = {cls.exit_code for cls in (errors.UsageError, errors.CorpusError, errors.GoldenError,
                                          errors.ParseError, errors.ModelLoadError, errors.OutputError)}
    assert server.StoreError.exit_code not in families | {errors.CourseError.exit_code, errors.INTERRUPTED}
    err = server.StoreError("no server at postgresql://alice:S3cretPass@db:5432/x",
                            hint="check postgresql://alice:S3cretPass@db:5432/x")
    assert "S3cretPass" not in str(err) and "S3cretPass" not in err.one_line() and "S3cretPass" not in err.hint
    assert str(err) == "no server at postgresql://alice:***@db:5432/x — check postgresql://alice:***@db:5432/x"
    stale = server.StaleIndexError("the index was built with 'a', not 'b'")
    assert stale.what == "the index was built with 'a', not 'b'" and "rebuild=True" in stale.hint


def test_the_command_line_turns_a_store_error_into_one_line_and_its_exit_code(monkeypatch, capsys):
    from course_lib.app import cli

    def broken(args):
        server.connect("postgresql://alice:S3cretPass@127.0.0.1:9/course")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_args", lambda argv: SimpleNamespace(func=broken, debug=False))
    assert cli.main(["pipelines"]) == server.StoreError.exit_code
    err = capsys.readouterr().err
    assert err.startswith("error: no PostgreSQL server reachable at postgresql://alice:***@127.0.0.1:9/course")
    assert "DATABASE_URL" in err and "S3cretPass" not in err and err.count("\n") == 1


def test_an_index_written_by_an_earlier_version_says_what_to_do(url):
    conn = server.connect(url)
    st.Store(conn, embedder=HashEmbedder(), rebuild=True)
    conn.execute("ALTER TABLE chunks DROP COLUMN n_terms")
    with pytest.raises(server.StaleIndexError, match="no n_terms — open the store with rebuild=True"):
        st.Store(conn, embedder=HashEmbedder())
    assert st.Store(conn, embedder=HashEmbedder(), rebuild=True).chunks == []
    conn.close()


def test_postings_without_their_chunk_length_are_an_earlier_store_to_rebuild(url):
    conn = server.connect(url)
    st.Store(conn, embedder=HashEmbedder(), rebuild=True)
    conn.execute("ALTER TABLE postings DROP COLUMN n_terms")  # the postings of stop 32's course
    with pytest.raises(server.StaleIndexError, match="the postings table has no n_terms"):
        st.Store(conn, embedder=HashEmbedder())
    store = st.Store(conn, embedder=HashEmbedder(), rebuild=True)
    indexes = {row[0] for row in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'postings'")}
    assert "postings_term_bm25" in indexes and store.chunks == []
    conn.close()


def test_no_server_is_one_line_with_advice():
    with pytest.raises(server.StoreError) as err:
        server.connect("postgresql://postgres@127.0.0.1:9/postgres")
    assert "\n" not in str(err.value) and "DATABASE_URL" in str(err.value)


def test_missing_extension_is_one_line_with_advice():
    import psycopg

    class NoVector:
        def execute(self, sql, *args):
            raise psycopg.errors.FeatureNotSupported('extension "vector" is not available')

    with pytest.raises(server.StoreError, match="pgvector") as err:
        st.Store(NoVector(), embedder=HashEmbedder())
    assert "\n" not in str(err.value)


def test_embedded_server_data_dir_is_per_user_and_private(monkeypatch, tmp_path):
    monkeypatch.delenv("COURSE_PG_DIR", raising=False)
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    folder = server.default_data_dir()
    assert folder == tmp_path / "cache" / f"postgres-{getpass.getuser()}" / "data"
    assert not str(folder).startswith(tempfile.gettempdir() + "/course_lib-pg-")
    assert folder.parent.stat().st_mode & 0o777 == 0o700 and folder.parent.stat().st_uid == os.geteuid()
    assert server.default_data_dir() == folder  # the same private folder again
    monkeypatch.setenv("COURSE_PG_DIR", str(tmp_path))
    assert server.default_data_dir() == tmp_path
    monkeypatch.setenv("DATABASE_URL", "postgresql://elsewhere/db")
    with server.embedded_server() as address:
        assert address == "postgresql://elsewhere/db"


def test_growth_copies_and_binary_load_match_numpy(url):
    from course_lib.extras.postgres_growth import measure_growth, perturbed_copies

    base = HashEmbedder(dim=16).embed([c.text for c in CORPUS])
    grown = perturbed_copies(base, 3, noise=0.1)
    assert grown.shape == (3 * len(base), 16) and np.allclose(grown[: len(base)], base, atol=1e-6)
    assert np.allclose(np.linalg.norm(grown, axis=1), 1, atol=1e-5)
    conn = server.connect(url)
    point = measure_growth(conn, grown, base[:2], k=5)
    stored = conn.execute("SELECT embedding::text FROM growth_vectors WHERE id = 7").fetchone()[0]
    assert np.allclose(np.array(stored.strip("[]").split(","), float), grown[7], atol=1e-6)
    assert point.n == len(grown) and len(point.hnsw) == len(point.exact_sql) == len(point.numpy) == 2
    assert point.row()["vectors"] == len(grown)
    conn.close()


def test_private_folder_refuses_what_another_user_could_control(tmp_path, monkeypatch):
    open_to_all = tmp_path / "shared"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    for folder in (open_to_all, link):
        with pytest.raises(server.StoreError, match="not private"):
            server.private_folder(folder)
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    someone_else = os.geteuid() + 1
    monkeypatch.setattr(server.os, "geteuid", lambda: someone_else)  # as if another user made it
    with pytest.raises(server.StoreError, match="COURSE_PG_DIR"):
        server.private_folder(mine)


def test_read_only_cache_falls_back_to_a_fresh_temp_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("COURSE_PG_DIR", raising=False)
    monkeypatch.setattr(server, "private_folder", lambda folder: (_ for _ in ()).throw(PermissionError(folder)))
    first, second = server.default_data_dir(), server.default_data_dir()
    try:
        assert first != second and first.parent.stat().st_mode & 0o777 == 0o700
    finally:
        for folder in (first, second):
            shutil.rmtree(folder.parent, ignore_errors=True)
