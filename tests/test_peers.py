"""The peer libraries as pipelines: registry kept apart, same judge, faithful offline stand-in."""
import pytest

from course_lib.core.pipeline import PIPELINES
from course_lib.evaluation.golden import Question
from course_lib.extras import peers
from course_lib.records import Chunk, Page

PAGE = """<html><body><nav><a href="/">Home</a> <a href="/api">API</a></nav>
<div role="main"><h1>pandas.DataFrame.join</h1>
<p>Join columns of another DataFrame on the index. Use <code>how='left'</code> to keep every row of the
caller, which is the default behaviour here.</p>
<h2>Parameters</h2><p>The <a href="x.html">suffix</a> to use from the left frame's overlapping columns.</p>
<table><tr><th>Method</th><th>Description</th></tr><tr><td>left</td><td>Keys from the left frame only</td></tr></table>
<h2>Notes</h2><p>Changed in version 1.5.0: the sort argument now orders the result lexicographically.</p>
</div></body></html>"""


@pytest.fixture(autouse=True)
def own_cache(private_cache):
    """Every test here chunks into a temporary cache: peer runs are kept on disk."""
    peers._run_peer.cache_clear()
    return private_cache


def q(evidence, doc="a.html", kind="exact", qid="t1"):
    return Question(id=qid, question="q?", doc=doc, section="s", evidence=evidence, kind=kind, split="dev")


def test_peers_are_their_own_group_and_leave_the_lesson_pipelines_alone():
    assert set(peers.PEERS) == {"peer:langchain-header", "peer:langchain-semantic", "peer:unstructured",
                                "peer:docling", "peer:trafilatura"}
    assert not set(peers.PEERS) & set(PIPELINES)


def test_unknown_peer_lists_the_known_ones():
    with pytest.raises(KeyError, match="peer:docling"):
        peers.peer("nope")
    assert peers.peer("docling") is peers.PEERS["peer:docling"]


def test_strip_markup_removes_what_peers_add():
    assert peers.strip_markup("Use **`how='left'`** or [merge](x.html#m) a \\| b") == "Use how='left' or merge a | b"


def test_evidence_kept_is_strict_on_markup_and_lenient_diagnostic_is_not():
    chunks = [Chunk(id="c", doc="a.html", body="Use `how='left'` to keep every row"),
              Chunk(id="d", doc="b.html", body="the suffix to use from the left frame")]
    questions = [q("Use how='left' to keep every row"), q("the suffix to use from the left frame", qid="t2"),
                 Question(id="u", question="q?", doc=None, section=None, evidence=None, kind="unanswerable",
                          split="dev")]
    assert peers.evidence_kept(questions, chunks) == 0.0  # backticks break it; the other is on another page
    assert peers.evidence_kept(questions, chunks, lenient=True) == 0.5


def test_over_window_counts_chunks_past_the_limit():
    class Words:
        def count_many(self, texts):
            return [len(t.split()) for t in texts]

        def over_limit(self, texts, *, limit=None):
            return [i for i, n in enumerate(self.count_many(texts)) if n > limit]

    chunks = [Chunk(id="a", doc="d", body="one two three"), Chunk(id="b", doc="d", body="one", context="x y z")]
    assert peers.over_window(chunks, counter=Words(), limit=2) == 2
    assert peers.over_window(chunks, counter=Words(), limit=3) == 1


@pytest.mark.parametrize("name", ["peer:langchain-header", "peer:langchain-semantic", "peer:unstructured",
                                  "peer:trafilatura"])
def test_each_peer_chunks_a_page_and_keeps_the_page_path(name):
    run = peers.run_peer(name, [Page("a.html", PAGE)])
    assert run.chunks and not run.failures
    assert {c.doc for c in run.chunks} == {"a.html"}
    assert any("overlapping columns" in c.body for c in run.chunks)
    assert run.pages == 1 and run.pages_per_second > 0


def test_langchain_header_moves_inline_code_out_of_its_sentence():
    # the characteristic failure lesson 10 shows: inline elements become lines of their own
    bodies = " ".join(c.body for c in peers.peer_chunks("peer:langchain-header", [Page("a.html", PAGE)]))
    assert "Use how='left' to keep" not in bodies and "how='left'" in bodies


def test_a_page_a_library_fails_on_is_reported_not_fatal(monkeypatch):
    def boom(html):
        if "bad" in html:
            raise ValueError("cannot read this")
        return [("", "fine text")]

    monkeypatch.setitem(peers.PEERS, "peer:test", peers.Peer("peer:test", "pytest", "boom()", "none", boom))
    run = peers.run_peer("peer:test", [Page("good.html", "<p>good</p>"), Page("bad.html", "<p>bad</p>")])
    assert [c.doc for c in run.chunks] == ["good.html"]
    assert run.failures == (("bad.html", "ValueError: cannot read this"),)


def test_blank_spacy_stand_in_is_faithful_narrative_and_text_chunk_alike():
    as_narrative = peers.unstructured_chunks(PAGE, force="NarrativeText")
    as_text = peers.unstructured_chunks(PAGE, force="Text")
    assert as_narrative == as_text
    assert peers.unstructured_chunks(PAGE) == as_text


def test_settings_rows_name_the_pinned_versions():
    rows = {r["peer"]: r for r in peers.settings_rows()}
    assert rows["peer:docling"]["library"] == "docling-slim"
    assert str(peers.WINDOW_TOKENS) in rows["peer:docling"]["window"]
    assert all(r["version"] != "not installed" for r in rows.values())


def counting_peer(monkeypatch, calls):
    def chunk_page(html):
        calls.append(html)
        return [("Heading", "body of " + html[3:8])]

    monkeypatch.setitem(peers.PEERS, "peer:count", peers.Peer("peer:count", "pytest", "count()", "none", chunk_page))


def test_a_peer_run_is_read_back_from_disk_and_timing_is_always_fresh(monkeypatch, own_cache):
    calls = []
    counting_peer(monkeypatch, calls)
    pages = [Page("a.html", "<p>alpha</p>"), Page("b.html", "<p>bravo</p>")]
    first = peers.run_peer("peer:count", pages)
    assert not first.cached and len(calls) == 3  # the warm-up page, then each page
    peers._run_peer.cache_clear()  # a new process: only the disk is left
    again = peers.run_peer("peer:count", pages)
    assert again.cached and len(calls) == 3
    assert again.chunks == first.chunks and again.seconds == first.seconds and again.pages == 2
    assert [c.body for c in again.chunks] == ["body of alpha", "body of bravo"]
    assert peers.pages_per_second("peer:count", pages) > 0 and len(calls) == 6  # timed now, not read back
    assert list((own_cache / "peers").glob("*.partial")) == []


def test_changed_pages_or_no_cache_chunk_again_and_a_corrupt_file_is_not_fatal(monkeypatch, own_cache):
    calls = []
    counting_peer(monkeypatch, calls)
    pages = [Page("a.html", "<p>alpha</p>")]
    peers.run_peer("peer:count", pages)
    assert not peers.run_peer("peer:count", [Page("a.html", "<p>other</p>")]).cached
    assert not peers.run_peer("peer:count", pages, use_cache=False).cached
    for stored in (own_cache / "peers").glob("count-*.json.gz"):
        stored.write_bytes(b"not gzip")
    peers._run_peer.cache_clear()
    rerun = peers.run_peer("peer:count", pages)
    assert not rerun.cached and [c.body for c in rerun.chunks] == ["body of alpha"]
