"""The peer libraries as pipelines: registry kept apart, measured windows, nothing added, faithful offline stand-in."""
from dataclasses import replace

import pytest

from course_lib.core.pipeline import PIPELINES
from course_lib.extras import peer_chunkers, peers
from course_lib.records import Page

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


WINDOW = peers.Window(tokens=256, special=2, chars_per_token=3.0)  # a window for tests: no model loaded
# unstructured imports torch (its NLP stack), so its runs are `model` tests; the other peers load none.
UNSTRUCTURED = pytest.param("peer:unstructured", marks=pytest.mark.model)
CHONKIE = pytest.param("peer:chonkie", marks=pytest.mark.model)  # counts with the embedder's tokenizer
SMALL = peers.Window(tokens=42, special=2, chars_per_token=2.0)  # 40 content tokens, 80 characters


def test_peers_are_their_own_group_and_leave_the_lesson_pipelines_alone():
    assert set(peers.PEERS) == {"peer:langchain-header", "peer:langchain-semantic", "peer:unstructured",
                                "peer:docling", "peer:trafilatura", "peer:chonkie", "peer:llamaindex"}
    assert not set(peers.PEERS) & set(PIPELINES)


def test_unknown_peer_lists_the_known_ones():
    with pytest.raises(KeyError, match="peer:docling"):
        peers.peer("nope")
    assert peers.peer("docling") is peers.PEERS["peer:docling"]


@pytest.mark.model
def test_the_window_is_measured_on_the_corpus_with_the_embedders_tokenizer():
    from course_lib.core.chunking import blocks_to_text
    from course_lib.core.pipeline import clean_corpus
    from course_lib.core.tokens import chars_per_token, get_counter, low_chars_per_token
    from course_lib.infra import models

    pages = [Page("a.html", PAGE)]
    window = peers.measure_window(pages)
    counter = get_counter()
    texts = [blocks_to_text(b) for b in clean_corpus(pages)[0].values()]
    assert window.tokens == models.max_input_tokens() and window.special == counter.count("")
    assert window.chars_per_token == chars_per_token(texts, counter=counter)
    assert window.content_tokens == window.tokens - window.special
    low = low_chars_per_token(texts, tokens=window.content_tokens, counter=counter)
    assert window.low_chars_per_token == low  # the page is shorter than a window: the mean stands in
    assert window.chars == int(window.content_tokens * low)


def test_a_character_bound_is_set_at_the_low_rate_when_there_is_one():
    assert WINDOW.chars == 254 * 3  # no low rate measured: the mean stands in
    assert replace(WINDOW, low_chars_per_token=2.0).chars == 254 * 2


@pytest.mark.parametrize("name", ["peer:langchain-header", "peer:langchain-semantic", UNSTRUCTURED,
                                  "peer:trafilatura", CHONKIE, "peer:llamaindex"])
def test_each_peer_chunks_a_page_and_the_course_adds_nothing(name):
    run = peers.run_peer(name, [Page("a.html", PAGE)], window=WINDOW)
    assert run.chunks and not run.failures and run.window == WINDOW
    assert {c.doc for c in run.chunks} == {"a.html"}
    assert any("overlapping columns" in c.body for c in run.chunks)
    assert all(c.context == "" and c.text == c.body for c in run.chunks)  # no context line, no title
    assert run.pages == 1 and run.pages_per_second > 0


def test_a_cached_peer_run_hands_out_a_copy_of_its_chunks():
    first = peers.run_peer("peer:trafilatura", [Page("a.html", PAGE)], window=WINDOW)
    expected = list(first.chunks)
    first.chunks.clear()
    assert peers.run_peer("peer:trafilatura", [Page("a.html", PAGE)], window=WINDOW).chunks == expected


@pytest.mark.parametrize("name", ["peer:langchain-semantic", UNSTRUCTURED, "peer:trafilatura"])
def test_character_peers_are_bounded_by_the_windows_characters(name):
    bodies = [c.body for c in peers.run_peer(name, [Page("a.html", PAGE)], window=SMALL).chunks]
    assert len(bodies) > len(peers.run_peer(name, [Page("a.html", PAGE)], window=WINDOW).chunks)
    assert max(map(len, bodies)) <= SMALL.chars


def test_trafilatura_overlaps_by_lesson_01s_share_of_the_window():
    from course_lib import settings

    assert peer_chunkers.trafilatura_overlap(SMALL) == round(SMALL.chars * settings.NAIVE_OVERLAP_CHARS
                                                     / settings.NAIVE_CHUNK_CHARS)


@pytest.mark.model
def test_docling_embeds_its_contextualized_chunks_within_the_window():
    from course_lib.core.tokens import get_counter

    counter = get_counter()
    window = peers.Window(tokens=40, special=counter.count(""), chars_per_token=3.0)
    chunks = peers.run_peer("peer:docling", [Page("a.html", PAGE)], window=window).chunks
    assert len(chunks) > 1 and all(c.context == "" for c in chunks)
    assert any(c.body.startswith("pandas.DataFrame.join\n") for c in chunks)  # its headings, in the chunk
    assert max(counter.count(c.text) for c in chunks) <= window.tokens  # the bound counted all of it


def test_langchain_header_moves_inline_code_out_of_its_sentence():
    # the characteristic failure lesson 10 shows: inline elements become lines of their own
    bodies = " ".join(c.body for c in peers.run_peer("peer:langchain-header", [Page("a.html", PAGE)],
                                                      window=WINDOW).chunks)
    assert "Use how='left' to keep" not in bodies and "how='left'" in bodies


@pytest.mark.model
def test_chonkie_splits_a_table_by_rows_repeating_its_header():
    from course_lib.core.tokens import get_counter

    counter = get_counter()
    rows = "".join(f"<tr><td>key{i}</td><td>value number {i} of the long table</td></tr>" for i in range(40))
    html = f"<h1>T</h1><p>Before the table.</p><table><thead><tr><th>Key</th><th>Value</th></tr></thead>" \
           f"<tbody>{rows}</tbody></table><p>After the table.</p>"
    window = peers.Window(tokens=64, special=counter.special_tokens, chars_per_token=3.0)
    chunks = peer_chunkers.chonkie_chunks(html, window)
    tables = [c for c in chunks if c.startswith("<table>")]
    assert len(tables) > 1 and all("<th>Key</th>" in c for c in tables)  # HTML markup, header repeated
    assert all(f"key{i}<" in "".join(tables) for i in range(40))
    texts = [c for c in chunks if not c.startswith("<table>")]
    assert max(counter.count(c) for c in texts) <= window.tokens  # chonkie counts without special tokens
    # its table chunks can pass the window, counted on the whole chunk (lesson 10's "over" column)
    assert max(counter.count(c) for c in tables) > window.tokens
    assert "Before the table.\nAfter the table." in chunks[0]  # the rest is the page's text


def test_llamaindex_keeps_only_its_tags_so_tables_and_code_are_dropped():
    html = PAGE.replace("</div>", "<pre>df.join(other, how='left')</pre></div>")
    bodies = " ".join(peer_chunkers.llamaindex_chunks(html, WINDOW))
    assert "overlapping columns" in bodies and "Keys from the left frame only" not in bodies
    assert "df.join(other" not in bodies


def test_a_page_a_library_fails_on_is_reported_not_fatal(monkeypatch):
    def boom(html, window):
        if "bad" in html:
            raise ValueError("cannot read this")
        return ["fine text"]

    monkeypatch.setitem(peers.PEERS, "peer:test", peers.Peer("peer:test", "pytest", "boom()", "none", boom))
    run = peers.run_peer("peer:test", [Page("good.html", "<p>good</p>"), Page("bad.html", "<p>bad</p>")],
                         window=WINDOW)
    assert [c.doc for c in run.chunks] == ["good.html"]
    assert run.failures == (("bad.html", "ValueError: cannot read this"),)


@pytest.mark.model
def test_blank_spacy_stand_in_is_faithful_narrative_and_text_chunk_alike():
    as_narrative = peers.unstructured_chunks(PAGE, WINDOW, force="NarrativeText")
    as_text = peers.unstructured_chunks(PAGE, WINDOW, force="Text")
    assert as_narrative == as_text
    assert peers.unstructured_chunks(PAGE, WINDOW) == as_text


def test_settings_rows_name_the_pinned_versions_and_the_measured_window():
    rows = {r["peer"]: r for r in peers.settings_rows(SMALL)}
    assert rows["peer:docling"]["library"] == "docling-slim"
    assert "max_tokens=40" in rows["peer:docling"]["call"] and "= 42" in rows["peer:docling"]["bound"]
    assert "max_chunk_size=80," in rows["peer:langchain-semantic"]["call"]
    assert rows["peer:unstructured"]["bound"] == "80 characters"
    assert all(r["version"] != "not installed" for r in rows.values())


def test_the_chunkers_are_one_module_and_the_cache_is_keyed_by_its_code():
    """The peers' code is a whole module (`peer_chunkers`), hashed by the one `code_digest`."""
    assert {p.chunk_page.__module__ for p in peers.PEERS.values()} == {"course_lib.extras.peer_chunkers"}
    assert "course_lib.extras.peer_chunkers" in peers.CHUNKER_CODE
    assert not any(isinstance(s, str) and s == "course_lib.extras.peers" for s in peers.CHUNKER_CODE)


def counting_peer(monkeypatch, calls):
    def chunk_page(html, window):
        calls.append(html)
        return ["body of " + html[3:8]]

    monkeypatch.setitem(peers.PEERS, "peer:count", peers.Peer("peer:count", "pytest", "count()", "none", chunk_page))


def test_a_peer_run_is_read_back_from_disk_and_timing_is_always_fresh(monkeypatch, own_cache):
    calls = []
    counting_peer(monkeypatch, calls)
    pages = [Page("a.html", "<p>alpha</p>"), Page("b.html", "<p>bravo</p>")]
    first = peers.run_peer("peer:count", pages, window=WINDOW)
    assert not first.cached and len(calls) == 3  # the warm-up page, then each page
    peers._run_peer.cache_clear()  # a new process: only the disk is left
    again = peers.run_peer("peer:count", pages, window=WINDOW)
    assert again.cached and len(calls) == 3
    assert again.chunks == first.chunks and again.seconds == first.seconds and again.pages == 2
    assert [c.body for c in again.chunks] == ["body of alpha", "body of bravo"] and again.window == WINDOW
    assert peers.pages_per_second("peer:count", pages, window=WINDOW) > 0 and len(calls) == 6  # timed now
    assert list((own_cache / "peers").glob("*.partial")) == []


def test_edited_chunker_code_chunks_again(monkeypatch, own_cache):
    calls = []
    counting_peer(monkeypatch, calls)
    pages = [Page("a.html", "<p>alpha</p>")]
    peers.run_peer("peer:count", pages, window=WINDOW)
    peers._run_peer.cache_clear()
    assert peers.run_peer("peer:count", pages, window=WINDOW).cached
    peers._run_peer.cache_clear()
    monkeypatch.setattr(peers, "code_digest", lambda sources: "edited")
    assert not peers.run_peer("peer:count", pages, window=WINDOW).cached


def test_changed_pages_or_no_cache_chunk_again_and_a_corrupt_file_is_not_fatal(monkeypatch, own_cache):
    calls = []
    counting_peer(monkeypatch, calls)
    pages = [Page("a.html", "<p>alpha</p>")]
    peers.run_peer("peer:count", pages, window=WINDOW)
    assert not peers.run_peer("peer:count", [Page("a.html", "<p>other</p>")], window=WINDOW).cached
    assert not peers.run_peer("peer:count", pages, window=SMALL).cached  # another window: chunk again
    assert not peers.run_peer("peer:count", pages, window=WINDOW, use_cache=False).cached
    for stored in (own_cache / "peers").glob("count-*.json.gz"):
        stored.write_bytes(b"not gzip")
    peers._run_peer.cache_clear()
    rerun = peers.run_peer("peer:count", pages, window=WINDOW)
    assert not rerun.cached and [c.body for c in rerun.chunks] == ["body of alpha"]
