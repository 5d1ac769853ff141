"""The bad-input contract: every case runs `python -m course_lib ...` in a subprocess and must end
with the expected exit code, one `error:` line matching a pattern (or a counted skip), and no
traceback. Exit codes: 2 usage, 3 corpus, 4 golden file, 6 model, 7 output file."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
GOOD_Q = {"id": "q1", "question": "Which directive gives the day of the month?", "doc": "library/datetime.html",
          "section": "format-codes", "evidence": "Day of the month as a zero-padded decimal number.",
          "kind": "table", "split": "dev"}


def run(*args, cwd=None, env_extra=None):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "course_lib", *map(str, args)], capture_output=True, check=False,
                          text=True, errors="replace", cwd=cwd, env=env, timeout=600)


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
    fails(run("ask", "What is x?", "--corpus", folder), 3, r"no usable page")


def test_a_folder_of_stubs_is_an_error_after_the_reasons(tmp_path):
    folder = tmp_path / "stubs"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.html").write_text(f"<html><body><h1>{name}</h1><p>tiny</p></body></html>")
    result = run("ask", "What is x?", "--corpus", folder, "--pipeline", "bm25")
    fails(result, 3, r"no usable page: all 2 were skipped")
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


def test_a_page_with_one_stray_byte_keeps_its_utf8(site):
    (site / "cafe.html").write_bytes("<html><body><h1>Menu</h1><section id=\"c\"><p>Our Café serves coffee "
                                     "all day long, \xff every day.</p></section></body></html>"
                                     .encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff"))
    path = golden(site.parent, {"id": "c", "question": "What does the cafe serve?", "doc": "cafe.html",
                                "section": "c", "evidence": "Our Café serves coffee", "kind": "exact"})
    result = run("validate-golden", path, "--corpus", site)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the golden file -------------------------------------------------------------------------

def test_evaluate_refuses_a_golden_file_that_does_not_match_the_corpus(tmp_path, site):
    path = golden(tmp_path, GOOD_Q, {**GOOD_Q, "id": "q2", "doc": "library/nope.html"})
    result = run("evaluate", "--corpus", site, "--golden", path, "--pipeline", "bm25",
                 "--out", tmp_path / "r.json")
    fails(result, 4, r"golden\.jsonl: 1 problems with the golden file .* pass --skip-invalid")
    assert "golden.jsonl:2: doc 'library/nope.html' not found" in result.stderr
    assert not (tmp_path / "r.json").exists()


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


def test_normalised_doc_paths_score_as_hits(tmp_path, site):
    path = golden(tmp_path, {**GOOD_Q, "doc": "./library/datetime.html"})
    result = run("evaluate", "--corpus", site, "--golden", path, "--pipeline", "bm25",
                 "--out", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["recall@20"] == 1.0


def test_evidence_of_raw_markup_inside_pre_is_accepted(tmp_path, site):
    (site / "raw.html").write_text(
        "<html><body><h1>Raw</h1><section id=\"raw\"><h2>Embedding</h2><p>" + "Paste this snippet. " * 12
        + "</p><pre><div class=\"box\">Hello raw markup here</div></pre></section></body></html>")
    path = golden(tmp_path, {"id": "r", "question": "What box markup?", "doc": "raw.html", "section": "raw",
                             "evidence": '<div class="box">Hello raw markup here</div>', "kind": "code"})
    result = run("validate-golden", path, "--corpus", site)
    assert result.returncode == 0, result.stdout


def test_a_huge_evidence_string(tmp_path, site):
    path = golden(tmp_path, {**GOOD_Q, "evidence": "Day of the " + "x" * 100_000})
    result = run("validate-golden", path, "--corpus", site)
    assert result.returncode == 1 and "evidence has 100011 characters" in result.stdout


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


def test_a_doc_or_kind_filter_that_matches_nothing_says_which(site):
    fails(run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--doc", "nope.html"), 2,
          r"--doc 'nope.html' matches no page — try one of flat.html, library/datetime.html")
    fails(run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--kinds", "table,nope"), 2,
          r"--kinds 'nope' matches no chunk — use some of")


def test_prompts_cite_no_made_up_site(site):
    result = run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1")
    assert result.returncode == 0 and "docs.python.org" not in result.stdout
    assert "\nlibrary/datetime.html#" in result.stdout
    given = run("ask", "day of the month", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1",
                "--base-url", "https://example.org/docs")
    assert "\nhttps://example.org/docs/library/datetime.html#" in given.stdout


def test_a_base_url_is_taken_from_a_canonical_link(site):
    page = site / "flat.html"
    page.write_text(page.read_text().replace(
        "<head>", '<head><link rel="canonical" href="https://tool.example/v2/flat.html">'))
    result = run("ask", "setup file windows", "--corpus", site, "--pipeline", "bm25", "--prompt", "--k", "1")
    assert "\nhttps://tool.example/v2/flat.html#" in result.stdout


def test_a_model_that_cannot_load_offline_is_one_line(site):
    fails(run("ask", "What is x?", "--corpus", site, "--pipeline", "bm25", "--model", "no-such/model-xyz"), 6,
          r"Could not load model 'no-such/model-xyz'.*offline, pass a local folder")


def test_debug_shows_the_traceback(tmp_path):
    result = run("ask", "What is x?", "--corpus", tmp_path / "missing", "--debug")
    assert result.returncode == 3 and "Traceback" in result.stderr
