"""The command line on a learner's own folder of HTML and golden file."""
from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from course_lib.app.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "eval"


def _own_site(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "corpus", site)
    (site / "broken.html").write_bytes(b"\x00\x01\x02 binary \xff\xfe")
    return site


def test_the_inputs_take_named_values_not_the_parsed_command_line(tmp_path, capsys):
    """What a command reads is in each input function's signature: no argparse namespace is built."""
    from course_lib.app import inputs
    from course_lib.core.retrieve import Filter
    from course_lib.infra.errors import UsageError
    from course_lib.records import Chunk

    site = _own_site(tmp_path)
    (site / "page.php").write_bytes((site / "flat.html").read_bytes())
    assert len(inputs.read_corpus(site).pages) == 2
    loaded = inputs.read_corpus(site, include=["*.php"])  # --include's globs reach the loader
    assert "skipped broken.html" in capsys.readouterr().out
    assert sorted(p.path for p in loaded.pages) == ["flat.html", "library/datetime.html", "page.php"]
    assert inputs.base_url(loaded, given="https://example.org/docs") == "https://example.org/docs/"
    assert inputs.base_url(loaded) == {}  # no page names its site: each cites its path
    chunks = [Chunk("a#0", "a.html", "x", kinds=("code",)), Chunk("b#0", "b.html", "y", kinds=("table",))]
    assert inputs.where(chunks) is None
    assert inputs.where(chunks, doc="a.html", kinds=" code, ") == Filter(doc="a.html", kinds=("code",))
    with pytest.raises(UsageError, match="--kinds 'prose' matches no chunk"):
        inputs.where(chunks, kinds="code,prose")
    with pytest.raises(UsageError, match="--doc 'c.html' matches no page"):
        inputs.where(chunks, doc="c.html")


def test_validate_golden_reports_zero_errors(capsys):
    assert main(["validate-golden", str(FIXTURES / "golden.jsonl"), "--corpus", str(FIXTURES / "corpus")]) == 0
    assert capsys.readouterr().out.strip().endswith("5 questions, 0 errors")


@pytest.mark.model
def test_evaluate_runs_on_any_folder_and_writes_json(tmp_path, capsys, private_cache):
    out = tmp_path / "result.json"
    code = main(["evaluate", "--corpus", str(_own_site(tmp_path)), "--golden", str(FIXTURES / "golden.jsonl"),
                 "--pipeline", "bm25", "--split", "all", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "skipped broken.html" in printed
    result = json.loads(out.read_text())
    assert (result["pages"], result["chunks"], result["n_answerable"], result["n_unanswerable"]) == (2, 7, 4, 1)
    # BM25 ranks the evidence first for each of the 4 answerable questions (7 chunks to choose from)
    assert (result["recall@5"], result["mrr"]) == (1.0, 1.0)
    assert result["by_kind"]["table"]["hit@5"] == 1 and result["by_kind"]["unanswerable"]["recall@5"] is None


@pytest.mark.model
def test_ask_prints_ranked_sources_and_the_prompt(tmp_path, capsys, private_cache):
    code = main(["ask", "Which directive gives the day of the month?", "--corpus", str(_own_site(tmp_path)), "--pipeline", "bm25",
                 "--k", "2", "--prompt"])
    printed = capsys.readouterr().out
    assert code == 0 and "  [1] " in printed and "Question: Which directive gives the day of the month?" in printed
    assert "Day of the month" in printed


@pytest.mark.model
def test_ask_with_the_onnx_query_encoder_gives_the_torch_ranking(tmp_path, capsys, private_cache):
    site = str(_own_site(tmp_path))
    question = "Which directive gives the day of the month?"
    rankings = {}
    for encoder in ("torch", "onnx"):
        assert main(["ask", question, "--corpus", site, "--pipeline", "hybrid", "--k", "3",
                     "--query-encoder", encoder]) == 0
        rankings[encoder] = [line.split()[2] for line in capsys.readouterr().out.splitlines()
                             if line.startswith("  [")]
    assert len(rankings["torch"]) == 3 and rankings["onnx"] == rankings["torch"]


@pytest.mark.model
def test_query_encoder_on_a_pipeline_without_dense_search_is_a_usage_error(tmp_path, capsys, private_cache):
    code = main(["ask", "day of the month", "--corpus", str(_own_site(tmp_path)), "--pipeline", "bm25",
                 "--query-encoder", "onnx"])
    err = capsys.readouterr().err
    assert code == 2 and "no dense stage" in err and "Traceback" not in err


def test_an_unknown_query_encoder_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["ask", "q", "--query-encoder", "tensorflow"])
    assert exit_.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_pipelines_lists_every_lesson(capsys):
    assert main(["pipelines"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "naive", "clean", "structured", "context", "limited", "bm25", "hybrid", "reranked"]


@pytest.mark.model
def test_ask_says_so_when_nothing_matches(tmp_path, capsys, private_cache):
    assert main(["ask", "zzzqqq", "--corpus", str(_own_site(tmp_path)), "--pipeline", "bm25"]) == 0
    assert "(no matching chunks)" in capsys.readouterr().out


def test_ctrl_c_is_one_line_and_exit_130_and_debug_keeps_the_traceback(monkeypatch, capsys):
    from course_lib.app import commands

    def interrupted(args):
        raise KeyboardInterrupt  # what Python raises on SIGINT, wherever the command is

    monkeypatch.setattr(commands, "validate_golden", interrupted)
    golden, corpus = str(FIXTURES / "golden.jsonl"), str(FIXTURES / "corpus")
    assert main(["validate-golden", golden, "--corpus", corpus]) == 130
    assert capsys.readouterr().err == "error: interrupted — nothing was written\n"
    with pytest.raises(KeyboardInterrupt):
        main(["validate-golden", golden, "--corpus", corpus, "--debug"])


class FakeClock:
    """`time.monotonic` and `threading.Event` for `terminal.progress`, in fake seconds: a stage lasts
    what `run_stage` says, the progress thread's waits move the clock instead of sleeping, and a wait
    that would outlast the stage blocks until the stage ends. No real time passes."""

    def __init__(self) -> None:
        self.now = 0.0
        self.stage_end: float | None = None
        self.condition = threading.Condition()
        self.past_the_end = threading.Event()  # the progress thread waits beyond the stage's end

    def monotonic(self) -> float:
        return self.now

    def run_stage(self, seconds: float) -> None:
        with self.condition:
            self.stage_end = self.now + seconds
            self.condition.notify_all()
        assert self.past_the_end.wait(10), "the progress thread never waited past the stage"
        with self.condition:
            self.now = self.stage_end

    def Event(self) -> FakeEvent:  # noqa: N802 (stands in for threading.Event)
        return FakeEvent(self)


class FakeEvent:
    def __init__(self, clock: FakeClock) -> None:
        self.clock, self.flag = clock, False

    def set(self) -> None:
        with self.clock.condition:
            self.flag = True
            self.clock.condition.notify_all()

    def wait(self, timeout: float) -> bool:
        clock = self.clock
        with clock.condition:
            while not self.flag:
                if clock.stage_end is not None and clock.now + timeout <= clock.stage_end:
                    clock.now += timeout
                    return False
                if clock.stage_end is not None:
                    clock.past_the_end.set()
                clock.condition.wait()
            return True


def test_a_long_stage_says_what_it_is_doing(tmp_path, monkeypatch, capsys):
    from course_lib.core import pipeline
    from course_lib.infra import terminal
    from course_lib.infra.errors import UsageError

    clock = FakeClock()

    def slow(*args, **kwargs):
        clock.run_stage(75.0)  # as chunking and embedding a 25 MB page would
        raise UsageError("stop here")

    monkeypatch.setattr(terminal, "time", SimpleNamespace(monotonic=clock.monotonic))
    monkeypatch.setattr(terminal, "threading", SimpleNamespace(**{**vars(threading), "Event": clock.Event}))
    monkeypatch.setattr(terminal, "PROGRESS_AFTER_S", 10.0)
    monkeypatch.setattr(terminal, "PROGRESS_EVERY_S", 30.0)
    monkeypatch.setattr(pipeline, "build_pipeline", slow)
    assert main(["ask", "day of the month", "--corpus", str(_own_site(tmp_path)), "--pipeline", "bm25"]) == 2
    err = capsys.readouterr().err.splitlines()
    stage = "... building the 'bm25' index over 2 pages"
    # `ask` names each stage as it starts; then a beat after 10 s and every 30 s, for a 75 s stage
    assert err[:2] == ["... reading the pages", "... parsing 2 pages (0.0 MB)"]
    assert err[2:] == [stage, f"{stage}: 10 s", f"{stage}: 40 s", f"{stage}: 70 s", "error: stop here"]


def test_a_quick_stage_prints_nothing(capsys):
    from course_lib.infra.terminal import progress

    with progress("quick", after_s=5):
        pass
    assert capsys.readouterr().err == ""


@pytest.mark.model
def test_debug_keeps_the_cause_of_an_output_error(tmp_path, monkeypatch, capsys):
    from course_lib.infra import files

    def full(fd):
        raise OSError(28, "No space left on device")

    out = tmp_path / "result.json"
    out.write_text("old")
    monkeypatch.setattr(files.os, "fsync", full)
    argv = ["evaluate", "--corpus", str(FIXTURES / "corpus"), "--golden", str(FIXTURES / "golden.jsonl"),
            "--pipeline", "bm25", "--split", "all", "--out", str(out), "--force"]
    assert main(argv) == 7
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.endswith(
        f"error: {out}: cannot write (No space left on device); the old file, if any, is unchanged — "
        "the metrics are above\n")
    assert main([*argv, "--debug"]) == 7
    err = capsys.readouterr().err
    assert "OSError: [Errno 28] No space left on device" in err
    assert "The above exception was the direct cause of the following exception" in err
    assert out.read_text() == "old"


def test_debug_shows_the_traceback_behind_a_failed_check(monkeypatch, capsys):
    from course_lib.app import check

    def broken():
        raise RuntimeError("the cache folder is gone")

    monkeypatch.setattr(check, "CHECKS", {"cache": broken})
    assert main(["check"]) == 1
    out, err = capsys.readouterr()
    assert out == "FAIL  cache                  RuntimeError: the cache folder is gone\n" and err == ""
    assert main(["check", "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and 'raise RuntimeError("the cache folder is gone")' in err


def test_check_warns_when_the_corpus_is_mostly_not_english_without_failing(monkeypatch, capsys):
    from course_lib.app import check
    from course_lib.core import load
    from course_lib.records import Page

    german = "<html><body><p>Der Vertrag wird mit der Unterschrift beider Parteien wirksam und gilt ein Jahr.</p></body></html>"
    monkeypatch.setattr(load, "load_pages", lambda: [Page("a.html", german), Page("b.html", german)])
    monkeypatch.setattr(check, "CHECKS", {"corpus language": check.CHECKS["corpus language"]})
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK    corpus language        0 of 2 pages read as English")
    assert "reads English only" in out and "multilingual-e5-small" in out


@pytest.mark.model
def test_debug_shows_why_the_parser_skipped_a_page(tmp_path, parser_failing_on, capsys):
    parser_failing_on("odd page", RecursionError("a parser bug"))
    site = _own_site(tmp_path)
    (site / "odd.html").write_text(f"<html><body><h1>An odd page</h1><p>{'Words. ' * 60}</p></body></html>")
    argv = ["ask", "day of the month", "--corpus", str(site), "--pipeline", "bm25", "--k", "1"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "skipped odd.html: parser failed: RecursionError: a parser bug" in captured.out
    assert "Traceback" not in captured.err
    (site / "odd.html").write_text((site / "odd.html").read_text() + " ")  # not the page parsed above
    assert main([*argv, "--debug"]) == 0
    err = capsys.readouterr().err
    assert "skipped odd.html: the parser failed\nTraceback" in err and "RecursionError: a parser bug" in err
