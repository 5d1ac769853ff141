"""`ask` on a huge page (issue 38): it says which stage it is in as each one starts, and Ctrl-C in
any stage is exit 130 and one line naming that stage, no traceback, no half-written file. The
pages are the benchmark's own (benchmarks/bench_page_size.py), small enough to run in seconds:
a 2,000-reply nested thread and a 1 MB documentation page."""
import os
import re
import signal
import subprocess
import sys
import time

import bench_page_size as bench  # benchmarks/ is on the path (tests/conftest.py)
import pytest

BEAT = re.compile(r": \d+ s$")  # a long stage's heartbeat, which a loaded machine may add anywhere


def _ask(corpus, *args) -> list[str]:
    return [sys.executable, "-m", "course_lib", "ask", "which version works", "--corpus", str(corpus), "--k", "2",
            *args]


def _env() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _site(tmp_path, html: str):
    site = tmp_path / "site"
    site.mkdir()
    (site / "page.html").write_text(html, encoding="utf-8")
    return site


def _stages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("... ") and not BEAT.search(line)]


@pytest.mark.model  # chunking counts tokens with the bundled model's tokenizer
def test_ask_on_a_deep_thread_says_each_stage_as_it_starts(tmp_path, private_cache):
    html = bench.thread(2000)
    result = subprocess.run(_ask(_site(tmp_path, html), "--pipeline", "bm25"), capture_output=True, text=True,
                            env=_env(), timeout=600, check=False)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    stages = _stages(result.stderr)
    indexed = re.fullmatch(r"\.\.\. indexing ([\d,]+) chunks for BM25", stages[4])
    assert stages == ["... reading the pages", f"... parsing 1 page ({len(html) / 1e6:.1f} MB)",
                      "... building the 'bm25' index over 1 page", "... chunking 1 page", stages[4],
                      "... searching and re-ranking"]
    assert indexed and int(indexed[1].replace(",", "")) > 1
    assert re.search(r"^  \[1\] .* page\.html", result.stdout, re.M)


@pytest.mark.model  # embeds the page's chunks with the bundled model
def test_ask_with_a_dense_stage_says_how_many_chunks_it_embeds(tmp_path, private_cache):
    result = subprocess.run(_ask(_site(tmp_path, bench.documentation(20_000)), "--pipeline", "hybrid"),
                            capture_output=True, text=True, env=_env(), timeout=600, check=False)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    stages = _stages(result.stderr)
    chunking = stages.index("... chunking 1 page")
    embedding = re.fullmatch(r"\.\.\. embedding ([\d,]+) chunks", stages[chunking + 1])
    assert embedding, stages
    assert stages[chunking + 2:] == [f"... indexing {embedding[1]} chunks for BM25", "... searching and re-ranking"]


@pytest.mark.model
@pytest.mark.parametrize("stage", ["parsing 1 page (1.0 MB)", "chunking 1 page"])
def test_ctrl_c_in_a_stage_is_one_line_naming_it_and_130(tmp_path, private_cache, stage):
    site = _site(tmp_path, bench.documentation(1_000_000))
    proc = subprocess.Popen(_ask(site, "--pipeline", "bm25"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())
    said = []
    try:
        deadline = time.monotonic() + 300
        while not said or said[-1] != f"... {stage}\n":  # the stage has started: interrupt it as Ctrl-C would
            line = proc.stderr.readline()
            assert line and time.monotonic() < deadline, f"never reached {stage!r}: {said}"
            said.append(line)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    lines = [line for line in stderr.splitlines() if not BEAT.search(line)]
    assert (proc.returncode, lines) == (130, [f"error: interrupted while {stage} — nothing was written"]), stderr
    assert stdout == ""
    left = [str(p) for p in tmp_path.rglob("*") if p.name.endswith((".partial", ".lock", ".tmp"))]
    assert left == []


# --- the helpers in course_lib/infra/terminal.py, in this process -------------------------------

def test_a_stage_is_silent_outside_announcing_and_a_ctrl_c_names_the_innermost(capsys):
    from course_lib.infra.terminal import interrupted_line, progress, stage

    with pytest.raises(KeyboardInterrupt) as caught:
        with progress("building the index", after_s=60), stage("chunking 3 pages"):
            raise KeyboardInterrupt
    assert interrupted_line(caught.value) == "error: interrupted while chunking 3 pages — nothing was written"
    assert interrupted_line(KeyboardInterrupt()) == "error: interrupted — nothing was written"
    assert capsys.readouterr().err == ""  # a lesson calling the library sees nothing


def test_announcing_says_each_stage_and_only_the_innermost_beats(capsys):
    from course_lib.infra.terminal import announcing, progress, stage

    with announcing(), progress("building the index", after_s=0.05, every_s=0.05):
        with stage("embedding 9 chunks"):  # beats after 10 s: the outer one must stay quiet meanwhile
            time.sleep(0.5)
        time.sleep(0.3)
    with stage("after announcing"):
        pass
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == ["... building the index", "... embedding 9 chunks"]
    beats = lines[2:]
    assert beats and all(re.fullmatch(r"\.\.\. building the index: [01] s", line) for line in beats), lines
    assert len(beats) <= 0.3 / 0.05 + 1  # none of them while the inner stage ran
