"""The bad-input contract: every case runs `python -m course_lib ...` in a subprocess and must end
with the expected exit code, one `error:` line matching a pattern (or a counted skip), and no
traceback. Exit codes: 2 usage, 3 corpus, 4 golden file, 6 model, 7 output file.

Issue 20's cases are here too: a shared cache never runs code and never ranks with a damaged
vector, `--out` survives a killed writer, no password and no terminal control sequence is ever
printed, decoding decides by evidence, and no page is left out without a word."""
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import diskcache
import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
GOOD_Q = {"id": "q1", "question": "Which directive gives the day of the month?", "doc": "library/datetime.html",
          "section": "format-codes", "evidence": "Day of the month as a zero-padded decimal number.",
          "kind": "table", "split": "dev"}


def run(*args, cwd=None, env_extra=None, timeout=600):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "course_lib", *map(str, args)], capture_output=True, check=False,
                          text=True, errors="replace", cwd=cwd, env=env, timeout=timeout)


def warnings_of(result) -> list[str]:
    """The cache's warning lines in a run's stderr (a progress bar may share a line with one)."""
    pieces = re.split(r"[\r\n]+", result.stderr)
    return [piece[piece.index("course_lib cache "):] for piece in pieces if "course_lib cache " in piece]


def fails(result, code: int, pattern: str) -> str:
    """Assert the exit code, exactly one error line matching `pattern`, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert len(errors) == 1, result.stderr
    assert __import__("re").search(pattern, errors[0]), errors[0]
    return errors[0]


@pytest.fixture
def site(tmp_path):
    target = tmp_path / "site"
    shutil.copytree(FIXTURES / "corpus", target)
    return target


def golden(tmp_path, *records, name="golden.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _private_cache(private_cache):
    return private_cache


# --- --out never destroys data ---------------------------------------------------------------

def test_out_refuses_to_overwrite_an_existing_file(tmp_path, site):
    out = tmp_path / "keep.json"
    out.write_text("precious")
    fails(run("evaluate", "--corpus", site, "--golden", FIXTURES / "golden.jsonl", "--out", out),
          7, r"keep\.json: the file exists — pass --force")
    assert out.read_text() == "precious"


def test_out_refuses_the_golden_file_it_reads(tmp_path, site):
    path = golden(tmp_path, GOOD_Q)
    fails(run("evaluate", "--corpus", site, "--golden", path, "--out", path, "--force"), 7, r"one of the inputs")
    assert json.loads(path.read_text())["id"] == "q1"


def test_out_refuses_a_path_inside_the_corpus(site):
    fails(run("evaluate", "--corpus", site, "--golden", FIXTURES / "golden.jsonl", "--out", site / "flat.html",
              "--force"), 7, r"inside the corpus")
    assert "Flat page" in (site / "flat.html").read_text()


def test_out_into_a_missing_folder_fails_before_the_run(tmp_path, site):
    result = run("evaluate", "--corpus", site, "--golden", FIXTURES / "golden.jsonl",
                 "--out", tmp_path / "nope" / "r.json")
    fails(result, 7, r"folder does not exist — create")
    assert "skipped" not in result.stdout and result.stdout == ""  # nothing was loaded or built


def test_out_refuses_a_hard_link_to_the_golden_file(tmp_path, site):
    path = golden(tmp_path, GOOD_Q)
    os.link(path, tmp_path / "link.json")
    fails(run("evaluate", "--corpus", site, "--golden", path, "--out", tmp_path / "link.json", "--force"),
          7, r"link\.json: --out is one of the inputs — write the result to another file")
    assert json.loads(path.read_text())["id"] == "q1"


def test_an_existing_read_only_out_is_refused_before_the_run(tmp_path, site):
    out = tmp_path / "locked.json"
    out.write_text("keep")
    out.chmod(0o444)
    result = run("evaluate", "--corpus", site, "--golden", FIXTURES / "golden.jsonl", "--out", out, "--force")
    fails(result, 7, r"locked\.json: the file is read-only — make it writable \(chmod u\+w\)")
    assert result.stdout == "" and out.read_text() == "keep"  # refused before anything was loaded


def _draft(site, out, *more):
    """golden-draft on the fixture site (no model: half a second), writing `out`."""
    return run("golden-draft", "--corpus", site, "--out", out, "--n", "3", *more)


def test_out_is_never_a_fifo_a_device_or_a_dangling_link_even_with_force(tmp_path, site):
    # Never the real /dev/null by name: only a link to it, which must be refused, never followed.
    fifo, dangling = tmp_path / "pipe", tmp_path / "dangling.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "to-pipe").symlink_to(fifo)
    (tmp_path / "to-null").symlink_to("/dev/null")
    dangling.symlink_to(tmp_path / "missing" / "target.jsonl")
    for out, pattern in ((fifo, r"pipe: --out is a FIFO \(named pipe\), not a regular file: never replaced, "
                                r"even with --force — give a regular file name"),
                         (tmp_path / "to-pipe", r"to-pipe: --out is a symlink to a FIFO \(named pipe\) "),
                         (tmp_path / "to-null", r"to-null: --out is a symlink to a character device \(/dev/null\)"),
                         (dangling, r"dangling\.jsonl: --out is a symlink to a file that does not exist — point")):
        result = _draft(site, out, "--force")
        fails(result, 7, pattern)
        assert result.stdout == ""  # refused before anything was read
        evaluated = run("evaluate", "--corpus", site, "--golden", FIXTURES / "golden.jsonl", "--out", out, "--force")
        fails(evaluated, 7, pattern)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert os.readlink(tmp_path / "to-null") == "/dev/null" and dangling.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.jsonl", "pipe", "site", "to-null",
                                                          "to-pipe"]


def test_a_symlink_out_writes_the_file_it_names_and_keeps_the_link(tmp_path, site):
    (tmp_path / "real").mkdir()
    target, link = tmp_path / "real" / "drafts.jsonl", tmp_path / "link.jsonl"
    target.write_text("old drafts\n")
    link.symlink_to(target)
    fails(_draft(site, link), 7, r"link\.jsonl: the file exists — pass --force")
    assert target.read_text() == "old drafts\n"
    result = _draft(site, link, "--force")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(target.read_text().splitlines()) == 3 and link.read_text() == target.read_text()
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["drafts.jsonl"]  # no partial left


# Runs the command line with the final fsync of the --out file's atomic write stalled: the new file
# is written but not yet renamed, which is where a SIGKILL (or a power cut) would find a plain write
# half done. Other writes (the caches') go through; only a file in --out's folder stalls.
STALLED_WRITE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from course_lib.app import cli

    started = Path(sys.argv[1])
    out_folder = Path(sys.argv[sys.argv.index("--out") + 1]).resolve().parent
    real_fsync = os.fsync

    def stall(fd):
        if Path(os.readlink(f"/proc/self/fd/{fd}")).parent != out_folder:
            return real_fsync(fd)
        started.touch()
        time.sleep(600)

    os.fsync = stall
    sys.exit(cli.main(sys.argv[2:]))
""")


def test_a_golden_draft_killed_while_writing_leaves_the_old_file_intact(tmp_path, site, kill_once_started):
    out, started = tmp_path / "drafts.jsonl", tmp_path / "started"
    out.write_text("my own questions\n")
    writer = subprocess.Popen([sys.executable, "-c", STALLED_WRITE, str(started), "golden-draft", "--corpus",
                               str(site), "--out", str(out), "--n", "3", "--force"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_once_started(writer, started)
    assert out.read_text() == "my own questions\n"
    partial = [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert len(partial) == 1 and partial[0].startswith(".drafts.jsonl.")


def test_a_second_writer_of_one_out_fails_at_once_and_nothing_is_lost(tmp_path, site):
    import time

    out, started = tmp_path / "drafts.jsonl", tmp_path / "started"
    out.write_text("my own questions\n")
    first = subprocess.Popen([sys.executable, "-c", STALLED_WRITE, str(started), "golden-draft", "--corpus",
                              str(site), "--out", str(out), "--n", "3", "--force"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not started.exists():  # the first writer holds the lock and is half-way through its write
            assert first.poll() is None and time.monotonic() < deadline, "the first writer never reached the write"
            time.sleep(0.05)
        second = _draft(site, out, "--force")
        fails(second, 7, rf"^error: another process is writing {re.escape(str(out))} — wait for it to finish")
        assert second.stdout == "" and out.read_text() == "my own questions\n"
        (tmp_path / "link.jsonl").symlink_to(out)  # the same file by another name is the same lock
        fails(_draft(site, tmp_path / "link.jsonl", "--force"), 7, r"another process is writing .*link\.jsonl")
    finally:
        first.kill()
        first.wait(timeout=60)
    third = _draft(site, out, "--force")  # a killed writer's lock is released with it
    assert third.returncode == 0, third.stderr
    assert len(out.read_text().splitlines()) == 3 and not (tmp_path / ".drafts.jsonl.lock").exists()


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGHUP"])  # a `kill`, or the terminal closed
def test_a_signal_while_writing_is_one_line_and_leaves_no_partial_or_lock_file(tmp_path, site, signal_name):
    import signal
    import time

    out, started = tmp_path / "drafts.jsonl", tmp_path / "started"
    out.write_text("my own questions\n")
    writer = subprocess.Popen([sys.executable, "-c", STALLED_WRITE, str(started), "golden-draft", "--corpus",
                               str(site), "--out", str(out), "--n", "3", "--force"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not started.exists():  # the new file is written, not yet renamed
            assert writer.poll() is None and time.monotonic() < deadline, "the writer never reached the write"
            time.sleep(0.05)
        writer.send_signal(getattr(signal, signal_name))
        _, stderr = writer.communicate(timeout=60)
    finally:
        writer.kill()
    assert writer.returncode == 130 and "Traceback" not in stderr, stderr
    assert stderr.splitlines() == ["error: interrupted — nothing was written"]
    assert out.read_text() == "my own questions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "drafts.jsonl", "site", "started"]


# --- the corpus ------------------------------------------------------------------------------

def test_a_nonexistent_corpus(tmp_path):
    fails(run("ask", "What is x?", "--corpus", tmp_path / "missing"), 3, r"missing: no such folder —")


def test_a_corpus_path_that_is_a_file(site):
    fails(run("ask", "What is x?", "--corpus", site / "flat.html"), 3, r"not a folder of HTML files —")


def test_an_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    fails(run("evaluate", "--corpus", tmp_path / "empty", "--golden", FIXTURES / "golden.jsonl"),
          3, r"no HTML file \(\.html, \.htm, \.xhtml, \.xht\) in this folder")


def test_a_folder_with_only_empty_and_binary_pages(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "empty.html").write_text("")
    (folder / "noise.html").write_bytes(bytes(range(1, 256)) * 20)
    fails(run("ask", "What is x?", "--corpus", folder), 3,
          r"no usable page in this folder: 2 skipped: 1 empty file \(empty\.html\); 1 binary file \(noise\.html\)")


def test_a_folder_of_stubs_is_an_error_after_the_reasons(tmp_path):
    folder = tmp_path / "stubs"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.html").write_text(f"<html><body><h1>{name}</h1><p>tiny</p></body></html>")
    (folder / "empty.htm").write_text("")
    result = run("ask", "What is x?", "--corpus", folder, "--pipeline", "bm25")
    fails(result, 3, r"no usable page: all 3 were skipped: 1 empty file \(empty\.htm\); 2 stub \(a\.html, \.\.\.\)")
    assert "skipped a.html: stub" in result.stdout


def test_binary_without_nul_bytes_a_link_out_and_a_folder_named_html_are_skipped(tmp_path, site):
    (site / "noise.html").write_bytes(bytes(range(1, 256)) * 20)
    secret = tmp_path / "secret.html"
    secret.write_text("<p>the secret text</p>")
    (site / "link.html").symlink_to(secret)
    (site / "dir.html").mkdir()
    result = run("validate-golden", FIXTURES / "golden.jsonl", "--corpus", site)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert "skipped noise.html: binary file" in result.stdout
    assert "skipped link.html: a link to a file outside the corpus folder: refused" in result.stdout
    assert "skipped dir.html: a folder, not a file" in result.stdout


def test_a_file_name_that_is_not_utf8_does_not_crash(site):
    with open(os.path.join(os.fsencode(site), b"caf\xe9.html"), "wb"):
        pass
    result = run("validate-golden", FIXTURES / "golden.jsonl", "--corpus", site)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert ".html: empty file" in result.stdout


def test_golden_draft_leaves_out_a_page_whose_name_is_not_utf8_in_one_line(tmp_path, site):
    page = (site / "library" / "datetime.html").read_text().replace("datetime", "cafetime")
    with open(os.path.join(os.fsencode(site), b"caf\xe9.html"), "w", encoding="utf-8") as handle:
        handle.write(page)  # quotable text of its own: it would be drafted from if it could be named
    out = tmp_path / "drafts.jsonl"
    result = _draft(site, out, "--n", "10")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines() == ["golden-draft: left out 1 page(s) whose file name is not UTF-8, which a "
                                          "golden file cannot name: caf\\xe9.html — rename them to UTF-8 to draft "
                                          "from them"]
    docs = {json.loads(line)["doc"] for line in out.read_text(encoding="utf-8").splitlines()}
    assert docs == {"library/datetime.html", "flat.html"}  # the other pages: nothing lost


def _cafe_golden(site, doc="cafe.html", evidence="Our Café serves coffee all day long"):
    return golden(site.parent, {"id": "c", "question": "What does the cafe serve?", "doc": doc, "section": "c",
                                "evidence": evidence, "kind": "exact"}, name=f"{Path(doc).stem}.jsonl")


CAFE_PAGE = ('<html><head><meta charset="utf-8"></head><body><h1>Menu</h1><section id="c"><p>Our Café '
             'serves coffee all day long, every day of the week, and tea in the afternoon.</p></section>'
             '</body></html>')


def test_a_mostly_utf8_page_with_a_few_bad_bytes_stays_utf8_and_is_reported(site):
    # One accented letter and three stray bytes: more bad bytes than evidence, but declared UTF-8.
    (site / "cafe.html").write_bytes(CAFE_PAGE.encode().replace(b"the week", b"the \xff\xfe\xfd week"))
    result = run("validate-golden", _cafe_golden(site), "--corpus", site)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
    assert "repaired cafe.html: 3 undecodable bytes (UTF-8) replaced" in result.stdout.splitlines()


def test_an_undeclared_page_with_one_utf8_letter_and_seven_stray_bytes_is_utf8_not_mojibake(site):
    # No charset declared: one "é" (two bytes) is the only evidence against seven stray bytes.
    page = CAFE_PAGE.replace('<meta charset="utf-8">', "").encode()
    (site / "cafe.html").write_bytes(page.replace(b"the week", b"the \x80\x82\x83 \xff\xfe\xfd\xfc week"))
    result = run("validate-golden", _cafe_golden(site), "--corpus", site)  # the evidence holds "Café"
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
    assert "repaired cafe.html: 7 undecodable bytes (UTF-8) replaced" in result.stdout.splitlines()
    assert "0 errors" in result.stdout.splitlines()[-1]


def test_a_page_is_never_skipped_for_a_charset_that_does_not_fit_it(site):
    (site / "bom.html").write_bytes(b"\xef\xbb\xbf" + CAFE_PAGE.encode().replace(b"the week", b"the \xff week"))
    utf16 = CAFE_PAGE.replace('charset="utf-8"', 'charset="utf-16"').replace("Café", "Cafe")
    (site / "utf16.html").write_bytes(utf16.encode("ascii") + b" " * (len(utf16) % 2))  # decodes as UTF-16 too
    result = run("validate-golden", _cafe_golden(site, "bom.html"), "--corpus", site)
    assert result.returncode == 0, result.stdout
    assert "skipped" not in result.stdout and "repaired bom.html: 1 undecodable byte (UTF-8) replaced" in result.stdout
    result = run("validate-golden", _cafe_golden(site, "utf16.html", "Our Cafe serves coffee all day long"),
                 "--corpus", site)
    assert result.returncode == 0 and "utf16.html" not in result.stdout, result.stdout


def test_pages_with_other_extensions_are_read_or_named_in_one_line(site):
    for name in ("cafe.htm", "CAFE.HTML", "cafe.xhtml", "cafe.php"):
        (site / name).write_text(CAFE_PAGE, encoding="utf-8")
    for name in ("cafe.htm", "CAFE.HTML", "cafe.xhtml"):
        result = run("validate-golden", _cafe_golden(site, name), "--corpus", site)
        assert result.returncode == 0, result.stdout
        assert result.stdout.splitlines()[0] == ("1 file with other extensions ignored: cafe.php; "
                                                 "pass --include '*.php' to read them")
    result = run("validate-golden", _cafe_golden(site, "cafe.php"), "--corpus", site, "--include", "*.php")
    assert result.returncode == 0 and "ignored" not in result.stdout, result.stdout


@pytest.mark.model
def test_an_edited_parsed_page_cache_entry_is_parsed_again_never_served(site, private_cache):
    """Someone who can write the cache plants a sentence in a page's entry, keeping the digest of the
    page it names (there is no seal left to recompute): the page is parsed again from disk."""
    import gzip

    question = ("ask", "Which directive gives the day of the month?", "--corpus", site, "--pipeline", "bm25",
                "--prompt", "--k", "2")
    clean = run(*question)
    assert clean.returncode == 0 and "zero-padded decimal number" in clean.stdout, clean.stderr
    [entry] = [path for path in (private_cache / "parsed").glob("*.json.gz")
               if b"zero-padded decimal number" in gzip.decompress(path.read_bytes())]
    data = json.loads(gzip.decompress(entry.read_bytes()))
    text = json.dumps(data).replace("zero-padded decimal number", "INJECTED: visit evil.example")
    assert text != json.dumps(data)
    entry.write_bytes(gzip.compress(text.encode()))
    again = run(*question)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert again.stdout == clean.stdout and "INJECTED" not in again.stdout + again.stderr
    assert warnings_of(again) == [f"course_lib cache {entry} holds text that is not on its page "
                                  "(edited or damaged): parsed again"]
    third = run(*question)  # parsed again and stored again: served, silently
    assert third.stdout == clean.stdout and warnings_of(third) == []


# --- hostile pages finish (issue 37): the walk is linear in the page, however deep ------------
# In process, to read each block. lxml hands the walker every level (huge trees are allowed), and
# the sizes are where the old walker, which rescanned every open owner or block for each block,
# took several seconds while the linear one takes about one.

def test_twelve_thousand_nested_definitions_parse_to_one_block_each():
    from course_lib.core.parse import parse_page

    depth = 12_000
    html = "<title>Deep</title>" + "<dl><dt>t</dt><dd>" * depth + "deep" + "</dd></dl>" * depth
    blocks = parse_page(html).blocks
    assert [(b.kind, b.level) for b in blocks] == [("definition", level) for level in range(1, depth + 1)]
    assert {b.text for b in blocks[:-1]} == {"t"} and {b.heading_path for b in blocks} == {("Deep",)}
    assert (blocks[-1].text, blocks[-1].level, blocks[-1].heading_path) == ("t\ndeep", depth, ("Deep",))


def test_six_thousand_paragraphs_then_six_thousand_nested_headed_sections():
    from course_lib.core.parse import parse_page

    depth = 6_000  # headings cycle h2..h6 (an <h1> would be the title), each in a <section id>
    intro = "".join(f"<div><p>intro {i}</p>" for i in range(depth))
    sections = "".join(f"<section id='s{i}'><h{2 + i % 5}>H{i}</h{2 + i % 5}><p>p{i}</p>" for i in range(depth))
    html = "<title>Deep</title>" + intro + sections + "<p>deep</p>" + "</section>" * depth + "</div>" * depth
    blocks = parse_page(html).blocks
    assert len(blocks) == 3 * depth + 1
    assert [b.text for b in blocks if b.kind == "heading"] == [f"H{i}" for i in range(depth)]
    last_h2 = (depth - 1) // 5 * 5  # the innermost <h2>: the deeper levels are the headings after it
    deepest = blocks[-1]
    assert (deepest.kind, deepest.text, deepest.section_id) == ("text", "deep", f"s{depth - 1}")
    assert deepest.heading_path == ("Deep", *(f"H{i}" for i in range(last_h2, depth)))
    assert blocks[depth - 1].heading_path == ("Deep",)  # the last intro paragraph: no heading yet


# --- the golden file -------------------------------------------------------------------------

def test_evaluate_refuses_a_golden_file_that_does_not_match_the_corpus(tmp_path, site):
    path = golden(tmp_path, GOOD_Q, {**GOOD_Q, "id": "q2", "doc": "library/nope.html"})
    result = run("evaluate", "--corpus", site, "--golden", path, "--pipeline", "bm25",
                 "--out", tmp_path / "r.json")
    fails(result, 4, r"golden\.jsonl: 1 problems with the golden file .* pass --skip-invalid")
    assert "golden.jsonl:2: doc 'library/nope.html' not found" in result.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.model
def test_skip_invalid_counts_and_names_what_it_left_out(tmp_path, site):
    path = golden(tmp_path, GOOD_Q, {**GOOD_Q, "id": "q2", "section": "no-such-id"})
    result = run("evaluate", "--corpus", site, "--golden", path, "--pipeline", "bm25", "--skip-invalid",
                 "--out", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert "skipped 1 invalid golden lines: 2 (q2)" in result.stdout
    assert json.loads((tmp_path / "r.json").read_text())["n_answerable"] == 1


def test_forgetting_golden_on_your_own_folder_does_not_score_the_shipped_questions(tmp_path, site):
    fails(run("evaluate", "--corpus", site, "--out", tmp_path / "r.json"), 4,
          r"none of the shipped golden questions is about this corpus — pass --golden")


def test_a_golden_file_with_no_answerable_question_in_the_split(tmp_path, site):
    path = golden(tmp_path, {**GOOD_Q, "split": "test"})
    fails(run("evaluate", "--corpus", site, "--golden", path, "--out", tmp_path / "r.json"),
          4, r"no answerable question in split 'dev'")


def test_a_utf16_golden_file(tmp_path, site):
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps(GOOD_Q) + "\n", encoding="utf-16")
    fails(run("validate-golden", path, "--corpus", site), 4, r"golden\.jsonl:1: UTF-16 or binary.* save the file as UTF-8")
    fails(run("evaluate", "--corpus", site, "--golden", path, "--out", tmp_path / "r.json"), 4, r"UTF-16")


def test_a_golden_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path, site):
    # Opening a FIFO that no one writes to waits for ever: refused by what it is, before it is opened.
    fifo, link = tmp_path / "golden.jsonl", tmp_path / "link.jsonl"
    os.mkfifo(fifo)
    link.symlink_to(fifo)  # a link is followed: to a FIFO, refused the same way
    for path in (fifo, link):
        pattern = rf"^error: {re.escape(str(path))}: not a regular file: a FIFO \(named pipe\) — give the \.jsonl file$"
        fails(run("validate-golden", path, "--corpus", site, timeout=120), 4, pattern)
        fails(run("evaluate", "--corpus", site, "--golden", path, "--pipeline", "bm25", "--out", tmp_path / "r.json",
                  timeout=120), 4, pattern)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and not (tmp_path / "r.json").exists()


def test_an_undecodable_golden_file(tmp_path, site):
    path = tmp_path / "golden.jsonl"
    path.write_bytes(json.dumps(GOOD_Q).encode() + b"\n" + b'{"id": "caf\xe9"}\n')
    fails(run("validate-golden", path, "--corpus", site), 4, r"golden\.jsonl:2: byte 0xe9 is not UTF-8")


def test_doc_paths_are_normalised_and_must_stay_inside_the_corpus(tmp_path, site):
    path = golden(tmp_path, {**GOOD_Q, "doc": "./library/datetime.html"},
                  {**GOOD_Q, "id": "q2", "doc": "library/../library/datetime.html"},
                  {**GOOD_Q, "id": "q3", "doc": str(site / "library" / "datetime.html")},
                  {**GOOD_Q, "id": "q4", "doc": "../outside.html"})
    result = run("validate-golden", path, "--corpus", site)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "golden.jsonl:4: doc '../outside.html' points outside the corpus " + str(site), "4 questions, 1 errors"]


@pytest.mark.model
def test_normalised_doc_paths_score_as_hits(tmp_path, site):
    path = golden(tmp_path, {**GOOD_Q, "doc": "./library/datetime.html"})
    result = run("evaluate", "--corpus", site, "--golden", path, "--pipeline", "bm25",
                 "--out", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["recall@20"] == 1.0


def test_evidence_inside_raw_markup_in_pre_is_its_visible_text(tmp_path, site):
    # The judge reads what a browser shows: inside <pre>, unescaped markup is parsed as tags.
    (site / "raw.html").write_text(
        "<html><body><h1>Raw</h1><section id=\"raw\"><h2>Embedding</h2><p>" + "Paste this snippet. " * 12
        + "</p><pre><div class=\"box\">Hello raw markup here</div></pre></section></body></html>")
    record = {"id": "r", "question": "What box markup?", "doc": "raw.html", "section": "raw",
              "evidence": "Hello raw markup here", "kind": "code"}
    result = run("validate-golden", golden(tmp_path, record), "--corpus", site)
    assert result.returncode == 0, result.stdout
    markup = golden(tmp_path, {**record, "evidence": '<div class="box">Hello raw markup here</div>'})
    result = run("validate-golden", markup, "--corpus", site)
    assert result.returncode == 1 and "evidence not found in section 'raw' of raw.html" in result.stdout


def test_a_huge_evidence_string(tmp_path, site):
    path = golden(tmp_path, {**GOOD_Q, "evidence": "Day of the " + "x" * 100_000})
    result = run("validate-golden", path, "--corpus", site)
    assert result.returncode == 1 and "evidence has 100011 characters" in result.stdout


@pytest.mark.model
def test_a_page_present_twice_stays_findable_under_both_paths(tmp_path, site):
    (site / "copy").mkdir()
    shutil.copy(site / "library" / "datetime.html", site / "copy" / "datetime.html")
    path = golden(tmp_path, {**GOOD_Q, "doc": "copy/datetime.html"})
    result = run("evaluate", "--corpus", site, "--golden", path, "--pipeline", "bm25",
                 "--out", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["recall@20"] == 1.0


# --- the question and its options ------------------------------------------------------------

@pytest.mark.parametrize("question", ["", "   ", "?!...", "\t\n"])
def test_an_empty_or_punctuation_only_question(site, question):
    fails(run("ask", question, "--corpus", site), 2, r"the question is empty or has no words")


@pytest.mark.parametrize("k", ["0", "-1", "two"])
def test_k_must_be_a_whole_number_of_at_least_one(site, k):
    fails(run("ask", "What is x?", "--corpus", site, "--k", k, "--pipeline", "bm25"), 2, r"argument --k")
    fails(run("compare", "What is x?", "--corpus", site, "--k", k), 2, r"argument --k")


def test_an_unknown_pipeline_is_rejected_before_anything_runs(site):
    fails(run("compare", "What is x?", "--corpus", site, "--against", "nope"), 2,
          r"unknown pipeline 'nope' — use one of naive, clean")
    fails(run("ask", "What is x?", "--corpus", site, "--pipeline", "nope"), 2, r"unknown pipeline 'nope'")
    fails(run("evaluate", "--corpus", site, "--pipeline", "nope"), 2, r"unknown pipeline 'nope'")


@pytest.mark.model
def test_a_doc_or_kind_filter_that_matches_nothing_says_which(site):
    fails(run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--doc", "nope.html"), 2,
          r"--doc 'nope.html' matches no page — try one of flat.html, library/datetime.html")
    fails(run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--kinds", "table,nope"), 2,
          r"--kinds 'nope' matches no chunk — use some of")


@pytest.mark.model
def test_prompts_cite_no_made_up_site(site):
    result = run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1")
    assert result.returncode == 0 and "docs.python.org" not in result.stdout
    assert "\nlibrary/datetime.html#" in result.stdout
    given = run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1",
                "--base-url", "https://example.org/docs")
    assert "\nhttps://example.org/docs/library/datetime.html#" in given.stdout


@pytest.mark.model
def test_a_base_url_is_taken_from_a_canonical_link(site):
    page = site / "flat.html"
    page.write_text(page.read_text().replace(
        "<head>", '<head><link rel="canonical" href="https://tool.example/v2/flat.html">'))
    result = run("ask", "setup file windows", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1")
    assert "\nhttps://tool.example/v2/flat.html#" in result.stdout


@pytest.mark.model
def test_a_model_that_cannot_load_offline_is_one_line(site):
    fails(run("ask", "What is x?", "--corpus", site, "--pipeline", "bm25", "--model", "no-such/model-xyz"), 6,
          r"Could not load model 'no-such/model-xyz'.*offline, pass a local folder")


def test_debug_shows_the_traceback(tmp_path):
    result = run("ask", "What is x?", "--corpus", tmp_path / "missing", "--debug")
    assert result.returncode == 3 and "Traceback" in result.stderr


# --- nothing printed that should not be: passwords, terminal control sequences -----------------

URL = "postgresql://alice:S3cretPass@db.example:5432/course"


def test_a_database_url_is_never_echoed_with_its_password(tmp_path, site):
    fails(run("ask", "What is x?", "--corpus", site, "--pipeline", URL), 2,
          r"unknown pipeline 'postgresql://alice:\*\*\*@db\.example:5432/course' — use one of")
    fails(run("ask", "What is x?", "--corpus", URL), 3, r"^error: postgresql:/alice:\*\*\*@db\.example:5432/course: no such folder")
    debug = run("ask", "What is x?", "--corpus", site, "--pipeline", URL, "--debug")
    assert debug.returncode == 2 and "Traceback" in debug.stderr
    assert "S3cretPass" not in debug.stdout + debug.stderr and "alice:***@db.example" in debug.stderr


def test_a_password_with_an_unencoded_at_sign_shows_neither_part(site):
    url = "postgresql://alice:Head@Tail@db.example:5432/course"
    for result, code, pattern in (
            (run("ask", "What is x?", "--corpus", site, "--pipeline", url), 2,
             r"unknown pipeline 'postgresql://alice:\*\*\*@db\.example:5432/course' — use one of"),
            (run("ask", "What is x?", "--corpus", url), 3,
             r"^error: postgresql:/alice:\*\*\*@db\.example:5432/course: no such folder")):
        fails(result, code, pattern)
        assert "Head" not in result.stdout + result.stderr and "Tail" not in result.stdout + result.stderr
    debug = run("ask", "What is x?", "--corpus", site, "--pipeline", url, "--debug")
    assert debug.returncode == 2 and "Traceback" in debug.stderr
    assert "Head" not in debug.stdout + debug.stderr and "Tail" not in debug.stdout + debug.stderr
    from course_lib.extras.postgres_server import DatabaseURL

    assert repr(DatabaseURL(url)) == "'postgresql://alice:***@db.example:5432/course'"


def test_a_database_url_in_a_notebook_or_an_error_shows_no_password(tmp_path):
    cell = textwrap.dedent("""
        from course_lib.extras.postgres_server import connect, embedded_server
        with embedded_server() as url:
            print(repr(url))  # what a notebook cell ending in `url` displays
            connect(url)
    """)
    result = subprocess.run([sys.executable, "-c", cell], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "DATABASE_URL": "postgresql://alice:S3cretPass@127.0.0.1:9/course"})
    assert result.returncode == 1 and "StoreError: no PostgreSQL server reachable at" in result.stderr
    assert "S3cretPass" not in result.stdout + result.stderr
    assert result.stdout == "'postgresql://alice:***@127.0.0.1:9/course'\n"


RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.model
def test_terminal_control_sequences_from_a_page_are_never_printed_raw(tmp_path, site):
    evil = "<html><head><title>T</title></head><body><h1>Evil \x1b]0;owned\x07 page</h1>" + \
           "<section id='s'><h2>Colours \u009b31m</h2><p>" + "Ordinary documentation text. " * 60 + \
           "Day of the month \x1b[2J with escapes &#27;[31m and bells \x07 inside. " * 8 + "</p></section></body></html>"
    (site / "evil\x1b[31m.html").write_text(evil, encoding="utf-8")
    for command in (("ask", "day of the month escapes", "--pipeline", "bm25", "--prompt", "--k", "3"),
                    ("compare", "day of the month escapes", "--against", "bm25", "--k", "3")):
        result = run(*command, "--corpus", site)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert not RAW_CONTROLS.search(result.stdout + result.stderr), repr(result.stdout)
        assert "evil\\x1b[31m.html" in result.stdout  # the file name, shown escaped
    assert "repaired evil\\x1b[31m.html: 19 control characters removed" in result.stdout.splitlines()
    ask = run("ask", "escapes", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1")
    assert "Day of the month [2J with escapes [31m and bells inside." in ask.stdout  # chunk text: removed
    fails(run("ask", "x y", "--corpus", tmp_path / "missing\x1b[2J\x07"), 3, r"missing\\x1b\[2J\\x07: no such folder")
    fails(run("ask", "x y", "--corpus", site, "--pipeline", "bm25", "--doc", "a\u009bb.html"), 2,
          r"--doc 'a\\x9bb\.html' matches no page")


# --- a shared cache: never runs code, never ranks with a damaged vector (these load the model) --

class _Planted:
    """Unpickling this creates `marker`: what a pickle planted in a shared cache could do."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _stores(cache: Path) -> dict[str, Path]:
    """The embedding and token-vector store folders under a cache root, by kind."""
    return {folder.parent.parent.name: folder.parent for folder in cache.rglob("cache.db")}


def _rewrite_values(folder: Path, new_value) -> int:
    """Replace every stored value (in its row or its file) by new_value(old bytes); return how many."""
    with sqlite3.connect(folder / "cache.db") as db:
        rows = db.execute("SELECT rowid, filename, value FROM Cache").fetchall()
        for rowid, filename, value in rows:
            if filename:
                (folder / filename).write_bytes(new_value((folder / filename).read_bytes()))
            else:
                db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (new_value(bytes(value)), rowid))
    return len(rows)


@pytest.mark.model
def test_a_pickle_planted_in_the_shared_cache_never_runs(tmp_path, site, private_cache):
    question = ("ask", "Which directive gives the day of the month?", "--corpus", site, "--k", "3")
    clean = run(*question)  # the final pipeline: embeddings, chunk and question token vectors, all cached
    assert clean.returncode == 0, clean.stderr
    stores, marker = _stores(private_cache), tmp_path / "owned"
    assert sorted(stores) == ["embeddings", "question_token_vectors", "token_vectors"]
    for folder in stores.values():
        planter = diskcache.Cache(str(folder))  # another user's plain diskcache pickles what it is given
        for key in list(planter.iterkeys()):
            planter.set(key, _Planted(marker))
        planter.close()
    again = run(*question)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert not marker.exists()
    assert again.stdout == clean.stdout  # every planted row was a miss, computed again
    assert sorted(warnings_of(again)) == sorted(
        f"course_lib cache {folder} holds values that are not raw vectors (pickled?): ignored, computed again"
        for folder in stores.values())


@pytest.mark.model
def test_damaged_cached_vectors_are_computed_again_not_ranked(tmp_path, site, private_cache):
    evaluate = ("evaluate", "--corpus", site, "--golden", FIXTURES / "golden.jsonl", "--pipeline", "reranked",
                "--split", "all")
    clean = run(*evaluate, "--out", tmp_path / "clean.json")
    assert clean.returncode == 0, clean.stderr
    stores = _stores(private_cache)

    def nan_or_wider(old: bytes) -> bytes:  # embeddings: every other row NaN, the others twice as wide
        nan_or_wider.n += 1
        return np.full(len(old) // 4, np.nan, np.float32).tobytes() if nan_or_wider.n % 2 else old * 2

    nan_or_wider.n = 0
    assert _rewrite_values(stores["embeddings"], nan_or_wider) >= 2
    assert _rewrite_values(stores["token_vectors"], lambda old: np.full(len(old) // 2, np.inf, np.float16).tobytes())
    again = run(*evaluate, "--out", tmp_path / "again.json")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    before, after = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("clean", "again"))
    assert [after[k] for k in ("recall@5", "recall@20", "mrr")] == [before[k] for k in ("recall@5", "recall@20", "mrr")]
    embeddings, tokens = stores["embeddings"], stores["token_vectors"]
    assert sorted(warnings_of(again)) == sorted([
        f"course_lib cache {embeddings} holds vectors that are not finite (NaN or infinity): ignored, computed again",
        f"course_lib cache {embeddings} holds vectors of the wrong dimension (expected 384 float32 values per row): "
        "ignored, computed again",
        f"course_lib cache {tokens} holds vectors that are not finite (NaN or infinity): ignored, computed again"])


def test_a_very_large_page_on_ask_gets_a_time_estimate_before_its_embedding(monkeypatch):
    """A 50 MB page is hours of embedding on a laptop: the command line builds every index inside
    `models.estimating()`, so an embedding of many new texts first prints how long it will take
    (the estimate itself: tests/test_models.py). Lessons build outside it and print nothing."""
    from types import SimpleNamespace

    from course_lib.app import inputs
    from course_lib.core import pipeline
    from course_lib.infra import models

    seen = []
    monkeypatch.setattr(pipeline, "build_pipeline",
                        lambda name, pages, *, model=None, query_encoder="torch": seen.append(models._ESTIMATING.get()))
    inputs.build_retriever("limited", SimpleNamespace(pages=[]), model=None)
    assert seen == [True] and models._ESTIMATING.get() is False


@pytest.mark.parametrize("change, problem", [
    ({"fragmets": ["%d"]}, "unknown field 'fragmets'"),   # a misspelled field would judge by the quote alone
    ({"section": "module-datetime"},                       # the quote's own section is format-codes
     "evidence lies in the inner section 'format-codes' of section 'module-datetime'"),
])
def test_a_misspelled_golden_field_or_an_outer_section_is_refused_before_anything_runs(tmp_path, site, change,
                                                                                         problem):
    line = {"id": "ok", "question": "Which directive gives the day?", "doc": "library/datetime.html",
            "section": "format-codes", "evidence": "Day of the month as a zero-padded decimal number.",
            "kind": "table", "split": "dev", **change}
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps(line) + "\n", encoding="utf-8")
    out = tmp_path / "run.json"
    result = run("evaluate", "--corpus", site, "--golden", golden, "--pipeline", "naive", "--out", out)
    fails(result, 4, r"1 problems with the golden file")
    assert problem in result.stderr and not out.exists()


# --- issue 37: no traceback from a closed pipe, a full disk or Ctrl-C; no password from a bad URL --

BIG_PAGE = ("<html><head><title>Big</title></head><body><main><h1>Big page</h1>"
            + "".join(f"<p>Paragraph {i} of a long page, with enough ordinary words to be kept.</p>"
                      for i in range(6000)) + "</main></body></html>")  # ~0.5 MB of output: more than a pipe holds
# How `course-lib` (the console script) starts: it imports cli before `main` can catch anything.
CONSOLE_SCRIPT = "import sys; from course_lib.app.cli import main; sys.exit(main())"


def _cli(form: str) -> list[str]:
    """The command line started as `python -m course_lib` ("module") or as the console script."""
    return [sys.executable, "-m", "course_lib"] if form == "module" else [sys.executable, "-c", CONSOLE_SCRIPT]


@pytest.mark.parametrize("form", ["module", "console script"])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly_with_141(tmp_path, form):
    (tmp_path / "big.html").write_text(BIG_PAGE, encoding="utf-8")
    proc = subprocess.Popen([*_cli(form), "extract", str(tmp_path / "big.html")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()  # `| head -1`: one line read, then the reader is gone
        proc.stdout.close()
        stderr = proc.stderr.read()
        proc.wait(timeout=120)
    finally:
        proc.kill()
    assert first == "Big page\n"
    assert (proc.returncode, stderr) == (141, "")  # no traceback, no "Exception ignored"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("command", [("extract", "big.html"), ("pipelines",), ("--help",)])
def test_standard_output_on_a_full_disk_is_one_line_and_exit_7(tmp_path, command):
    (tmp_path / "big.html").write_text(BIG_PAGE, encoding="utf-8")
    with open("/dev/full", "w") as full:
        result = subprocess.run([*_cli("module"), *command], stdout=full, stderr=subprocess.PIPE, text=True,
                                cwd=tmp_path, timeout=120, check=False)
    result.stdout = ""
    fails(result, 7, r"^error: cannot write standard output: No space left on device \(ENOSPC\) — the output is "
                     r"incomplete")
    assert len(result.stderr.splitlines()) == 1, result.stderr


# Raises KeyboardInterrupt, as Ctrl-C would, the moment the module named by argv[1] starts to be
# imported, then starts the command line the way argv[2] says: a Ctrl-C at a chosen instant.
CTRL_C_AT_IMPORT = textwrap.dedent("""
    import runpy, sys

    TARGET, FORM = sys.argv[1], sys.argv[2]

    class CtrlC:
        def find_spec(self, name, path=None, target=None):
            if name == TARGET:
                raise KeyboardInterrupt

    sys.meta_path.insert(0, CtrlC())
    sys.argv = ["course_lib", *sys.argv[3:]]
    if FORM == "module":
        runpy.run_module("course_lib", run_name="__main__", alter_sys=True)
    else:
        from course_lib.app.cli import main
        sys.exit(main())
""")


# The console script's own first line imports cli: a Ctrl-C before cli's first line runs is, like one
# during Python's start, out of any code's reach; `python -m` has __main__ to catch it.
@pytest.mark.parametrize("form, module", [
    ("module", "course_lib.app.cli"),
    *((form, module) for form in ("module", "console script")
      for module in ("numpy", "course_lib.app.commands", "course_lib.core.parse")),
])
def test_ctrl_c_while_importing_is_one_line_and_130(tmp_path, form, module):
    (tmp_path / "page.html").write_text(BIG_PAGE[:2000] + "</main></body></html>", encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", CTRL_C_AT_IMPORT, module, form, "extract",
                             str(tmp_path / "page.html")], capture_output=True, text=True, timeout=120, check=False)
    assert (result.returncode, result.stderr.splitlines()) == (130, ["error: interrupted — nothing was written"])


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc to see when numpy is loaded")
@pytest.mark.parametrize("delay_s", [0.0, 0.1, 0.3])
def test_a_real_sigint_once_the_library_loads_is_one_line_and_130(tmp_path, delay_s):
    import signal
    import time

    (tmp_path / "big.html").write_text(BIG_PAGE, encoding="utf-8")
    proc = subprocess.Popen([*_cli("module"), "extract", str(tmp_path / "big.html")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while "numpy" not in Path(f"/proc/{proc.pid}/maps").read_text():  # cli's imports are under way
            assert proc.poll() is None and time.monotonic() < deadline, "the command never loaded numpy"
            time.sleep(0.002)
        time.sleep(delay_s)  # still importing, or parsing the page: either way inside the guard
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, stderr.splitlines()) == (130, ["error: interrupted — nothing was written"])


# What a lesson 11 command would do, run through `cli.main`: open the store DATABASE_URL names.
STORE_COMMAND = textwrap.dedent("""
    import sys
    from types import SimpleNamespace
    from course_lib.app import cli
    from course_lib.extras.postgres_server import connect, embedded_server

    def store(args):
        with embedded_server() as url:
            connect(url)
        return 0

    parser = cli.build_parser()
    cli.build_parser = lambda: parser
    parser.parse_args = lambda argv: SimpleNamespace(func=store, debug="--debug" in argv)
    sys.exit(cli.main(sys.argv[1:]))
""")

SHOWN = r"postgresql://alice:\*\*\*@127\.0\.0\.1:9/course"
BAD_URLS = [  # (DATABASE_URL, pieces of its password, the one error line)
    ("postgresql://alice:S3cret Pa55@127.0.0.1:9/course", ["S3cret", "Pa55"],
     rf"the database URL {SHOWN} cannot be read \(unexpected spaces found in \"\*\*\*\"[^—]*— percent-encode"),
    ("postgresql://alice:S3cret%ZZPa55@127.0.0.1:9/course", ["S3cret", "Pa55"],
     rf"the database URL {SHOWN} cannot be read \(invalid percent-encoded token: \"\*\*\*\"\)"),
    ("mysql://alice:S3cretPa55@127.0.0.1:9/course", ["S3cret"],
     r"the database URL mysql://alice:\*\*\*@127\.0\.0\.1:9/course is not a PostgreSQL URL — one starts"),
    ("postgresql://alice:Head7@Tail7@127.0.0.1:9/course", ["Head7", "Tail7"],  # libpq reads host 'Tail7@...'
     rf"no PostgreSQL server reachable at {SHOWN} \(failed to resolve host '\*\*\*@127\.0\.0\.1'"),
    ("postgresql://alice:S3cretPa55@127.0.0.1:notaport/course", ["S3cret"],
     r"no PostgreSQL server reachable at \(unparseable URL, not shown\) \(libpq's message not shown"),
    ("postgresql://alice:S3cretPa55", ["S3cret"],  # no `@`: libpq reads the password as the port
     r"reachable at \(unparseable URL, not shown\) \(libpq's message not shown: it may quote the password\)"),
]


@pytest.mark.parametrize("url, secrets, pattern", BAD_URLS,
                         ids=["space", "bad-percent", "mysql", "unencoded-at", "letter-port", "no-at"])
def test_a_malformed_database_url_is_one_line_without_its_password(url, secrets, pattern):
    env = {**os.environ, "DATABASE_URL": url}
    for debug in ([], ["--debug"]):
        result = subprocess.run([sys.executable, "-c", STORE_COMMAND, *debug], capture_output=True, text=True,
                                env=env, timeout=120, check=False)
        assert not [s for s in secrets if s in result.stdout + result.stderr], result.stderr
        if not debug:
            fails(result, 8, pattern)
            assert len(result.stderr.splitlines()) == 1, result.stderr
        else:  # the traceback, but not the psycopg error behind it, which quotes the URL
            assert result.returncode == 8 and "Traceback" in result.stderr and "psycopg" not in result.stderr


@pytest.mark.parametrize("url, shown", [
    ("postgresql://alice:S3cret Pa55@db:5432/course", "postgresql://alice:***@db:5432/course"),
    ("postgresql://alice:Head7@Tail7@db/course?sslmode=require", "postgresql://alice:***@db/course?sslmode=require"),
    ("postgresql://alice:S3cret/Pa55@h1:5432,h2:5433/course", "postgresql://alice:***@h1:5432,h2:5433/course"),
    ("postgresql://postgres:@/postgres?host=/tmp/pg", "postgresql://postgres:***@/postgres?host=/tmp/pg"),
    ("postgresql://alice@db/course", "postgresql://alice@db/course"),
    ("postgresql://alice:S3cretPa55@db:port/course", "(unparseable URL, not shown)"),
    ("host=db password=S3cretPa55", "(unparseable URL, not shown)"),
    ("S3cretPa55", "(unparseable URL, not shown)"),
])
def test_a_database_url_is_shown_redacted_or_not_at_all(url, shown):
    from course_lib.extras.postgres_server import DatabaseURL, scrubbed, shown_url

    assert shown_url(url) == shown and repr(DatabaseURL(url)) == repr(shown)
    quoted = f'libpq: bad token "{url}" near "S3cret Pa55" and "Tail7@db" and "Pa55"'
    assert not [s for s in ("S3cret", "Pa55", "Head7", "Tail7") if s in scrubbed(quoted, url) and s in url]


# --- issue 37, the residue: links that loop, inputs that never end, nothing lost ----------------

def test_a_symlink_loop_as_out_its_folder_or_golden_is_one_line(tmp_path, site):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for out in (loop, loop / "drafts.jsonl"):
        pattern = rf"{re.escape(str(out))}: --out or a folder above it is a symlink loop — give a path"
        drafted = _draft(site, out, "--force")
        fails(drafted, 7, pattern)
        assert drafted.stdout == ""
        fails(run("evaluate", "--corpus", site, "--golden", FIXTURES / "golden.jsonl", "--out", out), 7, pattern)
    fails(run("evaluate", "--corpus", site, "--golden", loop, "--out", tmp_path / "result.json"), 4,
          r"loop: a symlink loop, not a file — point --golden at the \.jsonl file itself")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "loop", "site"]  # nothing written


def test_a_golden_line_nested_100000_deep_is_one_line(tmp_path, site):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    evaluated = run("evaluate", "--corpus", site, "--golden", path, "--out", tmp_path / "r.json")
    fails(evaluated, 4, r"deep\.jsonl: 1 problems with the golden file")
    assert "deep.jsonl:1: invalid JSON (nested too deep to read)" in evaluated.stdout + evaluated.stderr
    checked = run("validate-golden", path, "--corpus", site)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert "deep.jsonl:1: invalid JSON (nested too deep to read)" in checked.stdout + checked.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_golden_file_that_never_ends_or_is_huge_is_refused_unread(tmp_path, site):
    fails(run("evaluate", "--corpus", site, "--golden", "/dev/zero", "--out", tmp_path / "r.json"), 4,
          r"/dev/zero: not a regular file: a character device — give the \.jsonl file")
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as handle:  # sparse: 3 GB on paper, nothing on disk
        handle.truncate(3 * 10**9)
    fails(run("evaluate", "--corpus", site, "--golden", huge, "--out", tmp_path / "r.json"), 4,
          r"huge\.jsonl: larger than 200 MB: not a golden file")


def test_out_dev_stdout_redirected_to_a_file_never_replaces_that_file(tmp_path, site):
    target = tmp_path / "results.txt"
    target.write_text("earlier lines the user kept\n")
    with target.open("a") as stdout:
        result = subprocess.run([sys.executable, "-m", "course_lib", "golden-draft", "--corpus", str(site),
                                 "--out", "/dev/stdout", "--n", "3", "--force"], stdout=stdout,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 7 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "/dev/stdout: --out is this command's own standard output" in errors[0]
    assert target.read_text() == "earlier lines the user kept\n"


def test_out_force_over_a_private_file_keeps_it_private(tmp_path, site):
    out = tmp_path / "drafts.jsonl"
    out.write_text("my own questions\n")
    out.chmod(0o600)
    before = out.stat()
    result = _draft(site, out, "--force")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    after = out.stat()
    assert stat.S_IMODE(after.st_mode) == 0o600 and (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert len(out.read_text().splitlines()) == 3  # replaced atomically: a new inode, the same mode


def test_out_force_over_a_file_with_a_second_hard_link_is_refused_and_both_names_kept(tmp_path, site):
    """A replace would give --out a new inode and leave the other name with the old questions: the
    user could not tell which name holds what, so nothing is written (exit 7, one line)."""
    out, other = tmp_path / "drafts.jsonl", tmp_path / "backup.jsonl"
    out.write_text("my own questions\n")
    os.link(out, other)
    before = out.stat()
    fails(_draft(site, out, "--force"), 7, r"drafts\.jsonl: the file has 2 names \(hard links\): replacing it "
                                           r"here would leave the others holding the old contents")
    assert out.stat().st_ino == before.st_ino == other.stat().st_ino and out.stat().st_nlink == 2
    assert out.read_text() == other.read_text() == "my own questions\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no .partial, no .lock
    other.unlink()  # with one name left, --force replaces it
    assert _draft(site, out, "--force").returncode == 0 and len(out.read_text().splitlines()) == 3


@pytest.mark.model
def test_one_pages_base_href_does_not_move_every_pages_citations(site):
    page = site / "flat.html"
    page.write_text(page.read_text().replace("<head>", '<head><base href="https://evil.example/flat.html">'))
    result = run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1")
    assert result.returncode == 0 and "evil.example" not in result.stdout, result.stdout
    assert "\nlibrary/datetime.html#" in result.stdout  # the other page cites its own path
    own = run("ask", "setup file windows", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1")
    assert "\nhttps://evil.example/flat.html#" in own.stdout  # the page that names a site cites it


def test_a_cache_dir_that_is_a_file_is_one_line_and_the_command_still_runs(tmp_path, site):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    result = run("golden-draft", "--corpus", site, "--out", tmp_path / "d.jsonl", "--n", "3",
                 env_extra={"COURSE_CACHE_DIR": str(blocked)})
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert warnings_of(result) == [f"course_lib cache {blocked} is a file, not a folder (COURSE_CACHE_DIR): "
                                   "nothing is cached; point it at a folder, or unset it"]
    assert len((tmp_path / "d.jsonl").read_text().splitlines()) == 3


def test_a_store_that_cannot_be_created_says_so_not_delete_it(tmp_path, caplog, monkeypatch):
    from course_lib.infra import vector_cache

    monkeypatch.setattr(vector_cache, "_warned", set())
    (tmp_path / "file").write_text("")
    with caplog.at_level("WARNING", logger="course_lib.cache"):
        store = vector_cache.VectorStore(tmp_path / "file" / "store")
    assert not store.readable and not store.writable
    (line,) = [r.getMessage() for r in caplog.records]
    assert "store cannot be created: computing without caching (FileExistsError" in line or \
        "store cannot be created: computing without caching (NotADirectoryError" in line, line
    assert "delete it" not in line


def test_a_damaged_embedding_store_is_rebuilt_once_not_warned_about_every_run(tmp_path, caplog, monkeypatch):
    from course_lib.infra import vector_cache

    folder = tmp_path / "store"
    vector_cache.VectorStore(folder).put_many(["k"], [np.ones(4, np.float32)])
    vector_cache.close_all()
    for name in ("cache.db-wal", "cache.db-shm"):
        (folder / name).unlink(missing_ok=True)
    (folder / "cache.db").write_bytes(b"this is not a database" * 100)
    monkeypatch.setattr(vector_cache, "_warned", set())
    with caplog.at_level("WARNING", logger="course_lib.cache"):
        store = vector_cache.VectorStore(folder)
        assert store.writable and store.get("k") is None
        store.put_many(["k"], [np.full(4, 2.0, np.float32)])
        store.close()
        monkeypatch.setattr(vector_cache, "_warned", set())  # the next run
        again = vector_cache.VectorStore(folder)
    assert np.array_equal(again.get("k", width=4), np.full((1, 4), 2.0, np.float32))
    (line,) = [r.getMessage() for r in caplog.records]
    assert "held a damaged database (set aside as cache.db.damaged): rebuilt" in line
    assert (folder / "cache.db.damaged").read_bytes().startswith(b"this is not a database")


def test_a_2_gb_binary_file_is_skipped_from_its_first_8_kb_not_read_whole(tmp_path, site):
    huge = site / "dump.html"
    with huge.open("wb") as handle:  # sparse: NUL bytes on paper, nothing on disk
        handle.truncate(2 * 2**30)
    limit = 1200 * 2**20  # the command's whole address space: reading 2 GB could not fit in it
    script = (f"import resource, sys\nresource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
              "from course_lib.app import cli\nsys.exit(cli.main(sys.argv[1:]))\n")
    result = subprocess.run([sys.executable, "-c", script, "golden-draft", "--corpus", str(site), "--out",
                             str(tmp_path / "d.jsonl"), "--n", "3"], capture_output=True, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "OPENBLAS_NUM_THREADS": "1"})
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "skipped dump.html: binary file (NUL bytes): not an HTML file" in result.stdout + result.stderr


def test_a_long_golden_file_walks_each_section_once_not_once_per_question(tmp_path, site, monkeypatch):
    """50,000 lines took 293 s to validate: each question walked its page again. Now each page is
    parsed once and each section walked once per check, so the time grows with the lines' own work."""
    from course_lib.evaluation import golden_checks

    walks = {"blocks": 0, "ids": 0}
    blocks, ids = golden_checks._block_texts, golden_checks._first_ids
    monkeypatch.setattr(golden_checks, "_block_texts", lambda nodes: walks.__setitem__("blocks", walks["blocks"] + 1)
                        or blocks(nodes))
    monkeypatch.setattr(golden_checks, "_first_ids", lambda soup: walks.__setitem__("ids", walks["ids"] + 1)
                        or ids(soup))
    path = golden(tmp_path, *({**GOOD_Q, "id": f"q{i}"} for i in range(2000)))
    result = golden_checks.check_golden(path, site)
    assert len(result.questions) == 2000 and result.problems == []
    assert walks == {"blocks": 1, "ids": 1}  # one page, one section: walked once for 2,000 questions


def test_validate_golden_says_it_is_working_on_stderr(tmp_path, site):
    path = golden(tmp_path, *({**GOOD_Q, "id": f"q{i}"} for i in range(3000)))
    script = ("import sys\nfrom course_lib.infra import terminal\nterminal.PROGRESS_AFTER_S = 0.0\n"
              "from course_lib.app import cli\nsys.exit(cli.main(sys.argv[1:]))\n")
    result = subprocess.run([sys.executable, "-c", script, "validate-golden", str(path), "--corpus", str(site)],
                            capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0 and "3000 questions, 0 errors" in result.stdout, result.stderr
    assert re.search(rf"^\.\.\. checking {re.escape(str(path))} against \d+ pages: \d+ s$", result.stderr, re.M)
