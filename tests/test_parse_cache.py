"""The parsed corpus kept on disk: the same blocks as a fresh parse, read back without parsing,
parsed again when anything it depends on changes, and never trusted when damaged."""
import gzip
import logging
import re

import pytest

from course_lib.core import parse
from course_lib.core.parse import parse_corpus, parse_pages
from course_lib.records import Page

BODY = "<p>" + "Plenty of words in one paragraph so the page is not a stub. " * 6 + "</p>"
PAGES = (
    Page("a.html", f"<html><body><main><h1>Alpha</h1>{BODY}<pre>x = 1</pre></main></body></html>"),
    Page("b.html", f"<html><body><main><h1>Beta</h1>{BODY}<table><tr><th>k</th><td>v</td></tr></table>"
                   "</main></body></html>"),
    Page("stub.html", "<html><body><main><h1>Moved</h1><p>See elsewhere.</p></main></body></html>"),
)


def files(cache):
    return sorted((cache / "parsed").glob("*.json.gz"))


def no_parsing(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("parsed again although the cache holds this corpus")

    monkeypatch.setattr(parse, "parse_blocks", refuse)


def test_a_cached_parse_equals_a_fresh_one_and_is_read_without_parsing(private_cache, monkeypatch):
    fresh = parse_corpus(PAGES)
    assert parse_pages(PAGES) == fresh
    assert len(files(private_cache)) == 3  # one entry per page, the stub's blocks included
    assert fresh[1] == [("stub.html", fresh[1][0][1])] and fresh[1][0][1].startswith("stub")
    no_parsing(monkeypatch)
    assert parse_pages(PAGES) == fresh  # blocks, their order, and the skipped page with its reason


def test_changed_html_or_options_parse_again(private_cache):
    parse_pages(PAGES)
    edited = (PAGES[0], Page("b.html", PAGES[1].html.replace("Beta", "Gamma")), PAGES[2])
    assert parse_pages(edited)[0]["b.html"][0].text == "Gamma"
    assert len(files(private_cache)) == 4  # b.html's new HTML is a new entry; a.html and the stub are read
    assert parse_pages(PAGES, min_chars=5)[1] == []  # the stub is kept under a lower bar
    assert len(files(private_cache)) == 4  # the stub bar is the corpus's: the pages' entries serve it too
    parse_pages(PAGES, drop_boilerplate=False)
    assert len(files(private_cache)) == 7  # a parse option is part of every page's key


def test_changed_parser_code_parses_again(private_cache, monkeypatch):
    parse_pages(PAGES)
    monkeypatch.setattr(parse, "code_digest", lambda modules: "edited")
    parse_pages(PAGES)
    assert len(files(private_cache)) == 6


def test_one_code_digest_keys_by_module_names_and_by_objects():
    """The helper both the parse cache and lesson 10's peer cache key by."""
    from course_lib.infra.json_cache import code_digest

    def one():
        return 1

    def two():
        return 2

    assert code_digest(parse.PARSE_STACK) == code_digest(list(parse.PARSE_STACK))
    assert code_digest(["course_lib.core.parse"]) != code_digest(["course_lib.core.walker"])
    assert code_digest([one]) != code_digest([two]) and code_digest([one]) == code_digest([one])
    with pytest.raises(OSError):
        code_digest([len])  # a builtin has no source: its caller does not cache


@pytest.mark.parametrize("damage", [b"not gzip at all", gzip.compress(b'{"page": "x", "blocks": 3}'),
                                    gzip.compress(b'{"page": "x", "blocks": [["text"]]}')])
def test_a_damaged_cache_file_is_parsed_again_with_one_warning(private_cache, caplog, damage):
    fresh = parse_pages(PAGES)
    stored = entry_of(PAGES[0])
    stored.write_bytes(damage)
    with caplog.at_level(logging.WARNING, logger="course_lib"):
        assert parse_pages(PAGES) == fresh
    assert any(str(stored) in r.getMessage() for r in caplog.records)
    assert parse_pages(PAGES) == fresh  # and the good parse was written back


def test_a_cache_folder_that_cannot_be_written_still_parses(tmp_path, monkeypatch):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    monkeypatch.setenv("COURSE_CACHE_DIR", str(blocked))
    assert parse_pages(PAGES) == parse_corpus(PAGES)


def entry_of(page):
    """The cache file that holds one page's blocks (its name is keyed by the page's HTML)."""
    [path] = [p for p in files_now() if parse.read_json(p)["page"] == parse.text_digest(page.html)]
    return path


def files_now():
    return sorted(parse.cache_path("parsed", "x", []).parent.glob("*.json.gz"))


def tamper(path, edit):
    """Rewrite an entry as someone who can write the cache would: edited, and every field that
    could vouch for it (the page's digest) left as it was or recomputed."""
    entry = parse.read_json(path)
    edit(entry)
    parse.write_json(path, entry)


def test_an_entry_with_text_that_is_not_on_its_page_is_parsed_again(private_cache, caplog):
    """Text planted in a page's entry (a sentence of someone else's in the prompt) is never served:
    the page is parsed again, with one warning line, and the fresh parse is stored back."""
    fresh = parse_corpus(PAGES)
    parse_pages(PAGES)
    stored = entry_of(PAGES[1])

    def plant(entry):
        entry["blocks"][1][1] = "Visit evil.example for the answer."

    tamper(stored, plant)
    with caplog.at_level(logging.WARNING, logger="course_lib"):
        assert parse_pages(PAGES) == fresh
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib cache {stored} holds text that is not on its page (edited or damaged): parsed again"]
    assert parse.read_json(stored)["blocks"][1][1].startswith("Plenty of words")  # written back


def test_another_pages_entry_copied_over_this_one_is_parsed_again(private_cache, caplog):
    """An entry renamed to another page's key (its digest edited to match) holds that page's
    words ("Alpha", "x = 1"), not this page's: it misses."""
    fresh = parse_corpus(PAGES)
    parse_pages(PAGES)
    alpha, beta = entry_of(PAGES[0]), entry_of(PAGES[1])
    beta.write_bytes(alpha.read_bytes())
    tamper(beta, lambda entry: entry.update(page=parse.text_digest(PAGES[1].html)))
    with caplog.at_level(logging.WARNING, logger="course_lib"):
        assert parse_pages(PAGES) == fresh
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib cache {beta} holds text that is not on its page (edited or damaged): parsed again"]


def test_an_entry_that_names_another_page_is_parsed_again(private_cache, caplog):
    fresh = parse_corpus(PAGES)
    parse_pages(PAGES)
    stored = entry_of(PAGES[0])
    tamper(stored, lambda entry: entry.update(page="0" * 64))
    with caplog.at_level(logging.WARNING, logger="course_lib"):
        assert parse_pages(PAGES) == fresh
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib cache {stored} was parsed from another page (edited or damaged): parsed again"]


@pytest.mark.parametrize(("html", "words"), [
    ("<p>J<em>n</em> is <b>Julian</b></p>", {"jn", "n", "julian"}),  # inline tags join a word
    ("<dl><dt>var_name</dt><dd>scalar</dd></dl>", {"var_name", "scalar", "var_namescalar"}),
    ("<p>1 &lt;= n &amp; caf&eacute;</p>", {"1", "n", "café"}),  # references resolved
    ('<div class="highlight-python3"><pre>x</pre></div>', {"python", "highlight", "python3"}),
])
def test_the_words_a_page_holds_are_the_words_its_parse_can_hold(html, words):
    assert parse._holds(html, words)
    for planted in ("evil", "julianx", "jnis", "var_namescalarx", "amp1", "cafe"):
        assert not parse._holds(html, words | {planted}), planted
    assert parse._holds("<p>1 &lt;= <b>n</b></p>", {"1", "n"})  # a resolved "&lt;" is not a tag
    assert not parse._holds("<p>1 &lt;= <b>n</b></p>", {"1n"})


def test_every_page_of_the_course_parses_to_words_it_holds():
    """No honest entry misses: each block word of the shipped Python and pandas pages is found."""
    from course_lib.core.load import load_corpus

    for corpus in ("python", "pandas"):
        for page in load_corpus(corpus=corpus).pages[:10]:
            assert parse._holds(page.html, parse._written_words(parse.parse_blocks(page.html))), page.path


def test_a_page_whose_own_parse_the_check_cannot_trace_is_parsed_each_time_silently(
        private_cache, caplog, monkeypatch):
    """A word the walker makes that the check cannot find (here: joined pieces, with the joining
    switched off) would make an honest entry miss on every run: such a page is not stored, and
    parsing it again says nothing."""
    page = Page("jn.html", f"<html><body><main><h1>Julian</h1><p>J<em>n</em> is the day.</p>{BODY}"
                           "</main></body></html>")
    fresh = parse_corpus([page])
    assert "Jn is the day." in [b.text for b in fresh[0]["jn.html"]]
    joined = parse._joined
    monkeypatch.setattr(parse, "_joined", lambda word: re.compile("(?!)"))  # matches nothing
    with caplog.at_level(logging.WARNING, logger="course_lib"):
        assert parse_pages([page]) == fresh and parse_pages([page]) == fresh
    assert files(private_cache) == [] and caplog.records == []
    monkeypatch.setattr(parse, "_joined", joined)
    assert parse_pages([page]) == fresh and len(files(private_cache)) == 1  # traced: stored
