"""Rebuild the shipped corpus from Debian's python3.11-doc package.

    python scripts/build_corpus.py            # downloads the .deb with apt-get (no install)
    python scripts/build_corpus.py --deb FILE # or uses a .deb you already have

Steps: `apt-get download python3.11-doc=VERSION`, `dpkg-deb -x`, copy the pages listed in
data/pages.txt byte for byte (and their reST sources, the oracle of the parser's code test) into
a reproducible tar.xz (sorted names, fixed mtime and owner), then write data/MANIFEST.sha256 with
one sha256 per file, and data/LICENSE-PSF.txt from the package's copyright file.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "python3.11-doc"
VERSION = "3.11.2-6+deb12u9"
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
ARCHIVE = DATA / "python-3.11-docs.tar.xz"
MANIFEST = DATA / "MANIFEST.sha256"
HTML_ROOT = Path("usr/share/doc/python3.11/html")


def page_list() -> list[str]:
    """The page paths named in data/pages.txt (comments and blank lines ignored)."""
    lines = (DATA / "pages.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def download_deb(folder: Path) -> Path:
    """Fetch the pinned .deb into folder with apt-get (needs `apt-get update` once)."""
    subprocess.run(["apt-get", "download", f"{PACKAGE}={VERSION}"], cwd=folder, check=True)
    return next(folder.glob(f"{PACKAGE}_*.deb"))


def corpus_files(html: Path) -> dict[str, bytes]:
    """Each page's HTML and its reST source, keyed by path inside the archive."""
    files: dict[str, bytes] = {}
    for page in page_list():
        files[page] = (html / page).read_bytes()
        source = Path("_sources") / (page.removesuffix(".html") + ".rst.txt")
        files[str(source)] = (html / source).read_bytes()
    return files


def write_archive(files: dict[str, bytes]) -> None:
    """A reproducible tar.xz: same input, same bytes."""
    with tarfile.open(ARCHIVE, "w:xz", preset=9) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(files[name]), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(files[name]))


def write_manifest(files: dict[str, bytes]) -> None:
    lines = [f"{hashlib.sha256(files[n]).hexdigest()}  {n}" for n in sorted(files)]
    MANIFEST.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deb", type=Path, help="an already downloaded python3.11-doc .deb")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        deb = args.deb or download_deb(Path(tmp))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(Path(tmp) / "x")], check=True)
        root = Path(tmp) / "x"
        files = corpus_files(root / HTML_ROOT)
        write_archive(files)
        write_manifest(files)
        copyright_file = root / "usr/share/doc/python3.11-doc/copyright"
        (DATA / "LICENSE-PSF.txt").write_bytes(copyright_file.read_bytes())
    pages = sum(1 for n in files if n.endswith(".html"))
    size = sum(len(b) for n, b in files.items() if n.endswith(".html"))
    print(f"{pages} pages, {size / 1e6:.1f} MB of HTML -> {ARCHIVE.name} ({ARCHIVE.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
