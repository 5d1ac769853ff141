"""The one atomic write, the one file hash and the `--out` rules (course_lib.infra.files)."""
import hashlib
import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from course_lib.infra import files
from course_lib.infra.errors import OutputError

# Writes half of the new content, says so, then hangs before the rename, as a run killed by
# SIGKILL (or a power cut) half-way through writing would.
HALF_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from course_lib.infra.files import atomic_open

    target, started = Path(sys.argv[1]), Path(sys.argv[2])
    with atomic_open(target) as handle:
        handle.write(b"NEW" * 100_000)
        handle.flush()
        started.touch()
        time.sleep(600)
        handle.write(b"END")
""")


def test_a_writer_killed_mid_write_leaves_the_old_file_intact(tmp_path, kill_once_started):
    target, started = tmp_path / "result.json", tmp_path / "started"
    target.write_text("old and precious")
    writer = subprocess.Popen([sys.executable, "-c", HALF_WRITER, str(target), str(started)])
    assert kill_once_started(writer, started, within_s=120) == -signal.SIGKILL
    assert target.read_text() == "old and precious"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("result.json", "started")]
    assert len(leftovers) == 1 and leftovers[0].startswith(".result.json.") and leftovers[0].endswith(".partial")


def test_an_error_while_writing_keeps_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "out.jsonl"
    target.write_text("old")

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        files.atomic_write(target, "new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_an_atomic_write_replaces_the_file_with_a_plain_files_permissions(tmp_path):
    target = tmp_path / "out.txt"
    files.atomic_write(target, "première\n")
    assert target.read_bytes() == "première\n".encode()
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask
    files.atomic_write(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_the_file_hash_is_the_sha256_of_the_bytes(tmp_path):
    path = tmp_path / "big.bin"
    data = os.urandom(3 * 1024 * 1024 + 17)  # more than one read block
    path.write_bytes(data)
    assert files.file_sha256(path) == hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256(b"prefix")
    assert files.hash_file_into(digest, path).hexdigest() == hashlib.sha256(b"prefix" + data).hexdigest()


# --- the --out rules ---------------------------------------------------------------------------

def _refused(out, *, force=True, inputs=(), corpus=None):
    with pytest.raises(OutputError) as info:
        files.check_out(out, force=force, corpus=corpus or out.parent / "corpus", inputs=list(inputs))
    return info.value.what


def test_a_hard_link_or_a_symlink_to_an_input_is_the_input(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text("{}\n")
    os.link(golden, tmp_path / "hard.jsonl")
    (tmp_path / "soft.jsonl").symlink_to(golden)
    for out in (golden, tmp_path / "hard.jsonl", tmp_path / "soft.jsonl", tmp_path / "sub" / ".." / "golden.jsonl"):
        assert _refused(out, inputs=[golden]) == "--out is one of the inputs"
    files.check_out(tmp_path / "other.json", force=True, corpus=tmp_path / "corpus", inputs=[golden])


def test_an_existing_read_only_out_is_refused_even_with_force(tmp_path):
    out = tmp_path / "locked.json"
    out.write_text("keep")
    out.chmod(0o444)
    assert _refused(out) == "the file is read-only"
    assert _refused(out, force=False) == "the file exists"
    out.chmod(0o644)
    files.check_out(out, force=True, corpus=tmp_path / "corpus", inputs=[])


def test_an_atomic_write_never_renames_over_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="is a FIFO"):
        files.atomic_write(fifo, "data")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and [p.name for p in tmp_path.iterdir()] == ["pipe"]
