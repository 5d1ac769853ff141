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
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared builder beside this script
import debian_corpus  # noqa: E402

PACKAGE = "python3.11-doc"
VERSION = "3.11.2-6+deb12u9"
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data"
ARCHIVE = DATA / "python-3.11-docs.tar.xz"
MANIFEST = DATA / "MANIFEST.sha256"
HTML_ROOT = Path("usr/share/doc/python3.11/html")


def page_list() -> list[str]:
    """The page paths this corpus ships (its pages.txt)."""
    return debian_corpus.page_list(DATA / "pages.txt")


def download_deb(folder: Path) -> Path:
    """Fetch this corpus's pinned .deb into folder."""
    return debian_corpus.download_deb(folder, PACKAGE, VERSION)


def corpus_files(html: Path) -> dict[str, bytes]:
    """Each page's HTML and its reST source, keyed by path inside the archive."""
    files: dict[str, bytes] = {}
    for page in page_list():
        files[page] = (html / page).read_bytes()
        source = Path("_sources") / (page.removesuffix(".html") + ".rst.txt")
        files[str(source)] = (html / source).read_bytes()
    return files


def write_archive(files: dict[str, bytes]) -> None:
    debian_corpus.write_archive(files, ARCHIVE)


def write_manifest(files: dict[str, bytes]) -> None:
    debian_corpus.write_manifest(files, MANIFEST)


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
