"""The package imports, and an output file is claimed and locked, on a system without fcntl (native
Windows, which the README's conda route offers): issue 37."""
from __future__ import annotations

import subprocess
import sys
import textwrap


def test_the_package_imports_and_locks_an_output_without_fcntl(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.modules["fcntl"] = None  # import fcntl now raises ImportError, as on Windows
        import course_lib.core.load, course_lib.infra.files as files
        assert files.fcntl is None
        calls = []
        files._try_lock = lambda fd: calls.append(fd)  # msvcrt exists on Windows only
        out = files.claim_out(__import__("pathlib").Path({str(tmp_path / "out.json")!r}), force=False,
                              corpus=__import__("pathlib").Path({str(tmp_path / "corpus")!r}), inputs=[])
        print(out.name, len(calls))
    """)
    (tmp_path / "corpus").mkdir()
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["out.json", "1"]
