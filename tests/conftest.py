"""Shared test setup: offline model hub, a private cache folder, a writer killed mid-write, and
the guard that a test not marked `model` loads no model, in its own process or a subprocess."""
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# The scripts and benchmarks are imported as the modules they are (`import update_readme`), with
# the folders on the path as `python scripts/x.py` puts its own: they import their neighbours so.
ROOT = Path(__file__).resolve().parent.parent
for _folder in ("scripts", "benchmarks"):
    if str(ROOT / _folder) not in sys.path:
        sys.path.append(str(ROOT / _folder))

# Every Python a test starts imports tests/model_guard/sitecustomize.py, which writes each import
# of torch, transformers or sentence-transformers into this log; so does this process.
GUARD = Path(__file__).parent / "model_guard"
MODEL_IMPORT_LOG = Path(tempfile.mkdtemp(prefix="course_lib-model-guard-")) / "imports.log"
os.environ["COURSE_MODEL_IMPORT_LOG"] = str(MODEL_IMPORT_LOG)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD), os.environ.get("PYTHONPATH")]))
_spec = importlib.util.spec_from_file_location("course_model_guard", GUARD / "sitecustomize.py")
model_guard = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_guard)
model_guard.install(str(MODEL_IMPORT_LOG))


def pytest_collection_finish(session):
    """Imports made while collecting belong to no test: start the guard's log empty."""
    MODEL_IMPORT_LOG.unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def loads_no_model_unless_marked(request):
    """Fail a test not marked `model` that imported torch, transformers or sentence-transformers,
    here or in a subprocess (here only the first import is seen: run `-m "not model"`, as
    `make unit-fast` does, to see them all). The log is cleared after each test and after
    collection, never before a test: a module-scoped fixture is set up before this one, and what it
    imports belongs to the test that asked for it."""
    yield
    found = MODEL_IMPORT_LOG.read_text(encoding="utf-8").split("\n") if MODEL_IMPORT_LOG.exists() else []
    MODEL_IMPORT_LOG.unlink(missing_ok=True)
    if any(found) and request.node.get_closest_marker("model") is None:
        pytest.fail(f"not marked @pytest.mark.model but loaded a model library: {sorted(set(filter(None, found)))}")


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
