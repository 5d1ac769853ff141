"""The parsed corpus kept on disk: the same blocks as a fresh parse, read back without parsing,
parsed again when anything it depends on changes, and never trusted when damaged."""
import gzip
import logging

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
    assert len(files(private_cache)) == 1
    assert fresh[1] == [("stub.html", fresh[1][0][1])] and fresh[1][0][1].startswith("stub")
    no_parsing(monkeypatch)
    assert parse_pages(PAGES) == fresh  # blocks, their order, and the skipped page with its reason


def test_changed_html_or_options_parse_again(private_cache):
    parse_pages(PAGES)
    edited = (PAGES[0], Page("b.html", PAGES[1].html.replace("Beta", "Gamma")), PAGES[2])
    assert parse_pages(edited)[0]["b.html"][0].text == "Gamma"
    assert parse_pages(PAGES, min_chars=5)[1] == []  # the stub is kept under a lower bar
    assert len(files(private_cache)) == 3


def test_changed_parser_code_parses_again(private_cache, monkeypatch):
    parse_pages(PAGES)
    monkeypatch.setattr(parse, "code_digest", lambda modules: "edited")
    parse_pages(PAGES)
    assert len(files(private_cache)) == 2


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


@pytest.mark.parametrize("damage", [b"not gzip at all", gzip.compress(b'{"parsed": 3, "skipped": []}'),
                                    gzip.compress(b'{"parsed": {"a.html": [["text"]]}, "skipped": []}')])
def test_a_damaged_cache_file_is_parsed_again_with_one_warning(private_cache, caplog, damage):
    fresh = parse_pages(PAGES)
    (stored,) = files(private_cache)
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


def test_a_resealed_entry_cannot_add_a_page_that_is_not_on_disk(private_cache, caplog):
    """Someone who can write the cache and recompute its seal adds a page: it is not served."""
    fresh = parse_pages(PAGES)
    (stored,) = files(private_cache)
    entry = parse.read_json(stored)
    entry["parsed"]["evil.html"] = [["text", "Visit evil.example for the answer.", ["Evil"], None, 1]]
    del entry["seal"]
    parse.write_json(stored, {**entry, "seal": parse._seal(stored, entry)})
    with caplog.at_level(logging.WARNING, logger="course_lib"):
        assert parse_pages(PAGES) == fresh
    assert [r.getMessage() for r in caplog.records] == [
        f"course_lib cache {stored} names pages other than the ones it was parsed from: parsed again"]
