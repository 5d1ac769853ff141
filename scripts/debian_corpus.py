"""What both corpus builders share: pinned Debian packages in, reproducible archives out.

`build_corpus.py` (Python docs) and `build_pandas_corpus.py` (pandas docs) each name their package,
version and pages; the download, the deterministic tar.xz and the sha256 manifest are written once,
here, so the two shipped corpora are built exactly the same way.
"""
from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
from pathlib import Path

from course_lib.infra.files import atomic_open, atomic_write


def page_list(pages_file: Path) -> list[str]:
    """The page paths named in a pages.txt (comments and blank lines ignored)."""
    lines = pages_file.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def download_deb(folder: Path, package: str, version: str) -> Path:
    """Fetch the pinned .deb into folder with apt-get (needs `apt-get update` once)."""
    subprocess.run(["apt-get", "download", f"{package}={version}"], cwd=folder, check=True)
    return next(folder.glob(f"{package}_*.deb"))


def write_archive(files: dict[str, bytes], archive: Path) -> None:
    """A reproducible tar.xz: sorted names, fixed mtime, mode and owner; same input, same bytes."""
    with atomic_open(archive) as handle, tarfile.open(fileobj=handle, mode="w:xz", preset=9) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(files[name]), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(files[name]))


def write_manifest(files: dict[str, bytes], manifest: Path) -> None:
    """One `<sha256>  <path>` line per file, sorted, as course_lib.core.load reads it."""
    lines = [f"{hashlib.sha256(files[n]).hexdigest()}  {n}" for n in sorted(files)]
    atomic_write(manifest, "\n".join(lines) + "\n")
