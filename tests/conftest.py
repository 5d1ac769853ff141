"""Shared test setup: offline model hub, a private cache folder, and a writer killed mid-write."""
import os
import signal
import subprocess
import time

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """Point the course cache at a temporary folder so a test starts cold."""
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def kill_once_started():
    """Kill a writer process with SIGKILL as soon as it has created its `started` marker file:
    the crash a write must survive. Fails when the writer exits or stalls before the marker."""

    def kill(writer: subprocess.Popen, started, *, within_s: float = 300) -> int:
        try:
            deadline = time.monotonic() + within_s
            while not started.exists():
                assert writer.poll() is None and time.monotonic() < deadline, "the writer never reached the write"
                time.sleep(0.05)
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=60)
        finally:
            writer.kill()
        return writer.returncode

    return kill


@pytest.fixture
def parser_failing_on(monkeypatch):
    """Make the block parser raise `error` on any page whose HTML contains `marker` (a parser bug
    on one page), and parse every other page as usual."""
    from course_lib.core import parse

    def install(marker: str, error: Exception) -> None:
        real = parse.parse_blocks

        def failing(html, **kwargs):
            if marker in html:
                raise error
            return real(html, **kwargs)

        monkeypatch.setattr(parse, "parse_blocks", failing)

    return install
