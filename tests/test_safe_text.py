"""Text safe to show: no terminal control sequence from a page, no password from a URL."""
import pytest

from course_lib.core.parse import parse_blocks
from course_lib.infra.safe_text import printable, redact, safe, without_controls


def test_printable_escapes_what_a_terminal_acts_on_and_keeps_tab_and_newline():
    assert printable("a\x1b[2Jb\x07c\x9bd\te\nf\r\x7f") == "a\\x1b[2Jb\\x07c\\x9bd\te\nf\\x0d\\x7f"
    assert printable("two\nlines", one_line=True) == "two\\x0alines"
    assert printable("Café – “ok” 日本") == "Café – “ok” 日本"


def test_without_controls_removes_c0_c1_and_del_but_not_html_white_space():
    assert without_controls("a\x00b\x1bc\x85d\x9fe\x7ff\tg\nh\x0ci\rj") == ("abcdef\tg\nh\x0ci\rj", 5)


@pytest.mark.parametrize("text, shown", [
    ("no server at postgresql://alice:S3cretPass@db.example:5432/course (refused)",
     "no server at postgresql://alice:***@db.example:5432/course (refused)"),
    ("postgresql:/alice:S3cretPass@db.example/course: no such folder",  # a URL passed as a path
     "postgresql:/alice:***@db.example/course: no such folder"),
    ("postgresql://alice:S3cret@Pass@db.example/course", "postgresql://alice:***@db.example/course"),
    ("at postgresql://alice:S3cret@P/a@ss@db:5/c, then x", "at postgresql://alice:***@db:5/c, then x"),
    ("host=db user=alice password=S3cretPass dbname=x", "host=db user=alice password=*** dbname=x"),
    ("password='S3cret Pass' host=db", "password=*** host=db"),
    ("postgresql://alice@db/course and https://example.org:8080/docs", None),  # nothing to hide
])
def test_redact_hides_every_password(text, shown):
    assert redact(text) == (text if shown is None else shown)
    assert "S3cret" not in safe(text)


def test_chunk_text_keeps_no_control_characters_from_bytes_or_references():
    html = ("<h1>Title\x1b[2J</h1><p>red &#27;[31m text &#x9b;31m raw \x9b and bell &#7;\x07 done</p>"
            "<pre>code\x1b[0m here</pre>")
    blocks = parse_blocks(html)
    everything = "".join(b.text + "".join(b.heading_path) for b in blocks)
    assert not [ch for ch in everything if ord(ch) < 32 and ch not in "\t\n" or 0x7f <= ord(ch) <= 0x9f]
    assert [b.text for b in blocks] == ["Title[2J", "red [31m text ›31m raw  and bell  done",
                                        "```\ncode[0m here\n```"]
    assert {b.heading_path for b in blocks} == {("Title[2J",)}


def test_naive_chunks_keep_no_control_characters_either():
    from course_lib.core.naive import naive_chunks
    from course_lib.records import Page

    chunks = naive_chunks([Page("a.html", "<p>a&#x81;b&#27;c&#x9b;d&#x8d;e</p>")])
    assert [c.text for c in chunks] == ["abc›de"]


def test_a_database_url_displays_without_its_password_but_connects_with_it():
    from course_lib.extras.postgres_server import DatabaseURL

    url = DatabaseURL("postgresql://alice:S3cretPass@db.example:5432/course")
    assert repr(url) == "'postgresql://alice:***@db.example:5432/course'" and repr([url]) == f"[{url!r}]"
    assert str(url) == "postgresql://alice:S3cretPass@db.example:5432/course"  # what psycopg is given
