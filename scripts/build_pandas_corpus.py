"""Rebuild the course's second corpus, a subset of the pandas 1.5.3 docs, from Debian's python-pandas-doc.

    python scripts/build_pandas_corpus.py              # downloads the .deb with apt-get (no install)
    python scripts/build_pandas_corpus.py --deb FILE   # or uses a .deb you already have
    python scripts/build_pandas_corpus.py --furniture  # measure site furniture in the shipped pages

Steps: `apt-get download python-pandas-doc=VERSION`, `dpkg-deb -x`, copy the pages listed in
data/pandas/pages.txt byte for byte into a reproducible tar.xz (sorted names, fixed mtime and
owner), then write data/pandas/MANIFEST.sha256 with one sha256 per file, and
data/pandas/LICENSE-pandas.txt from the package's copyright file.

`--furniture` reports, per page and overall, the share of the visible text that is site furniture
(navigation, sidebars, search box, in-page table of contents, footer): what the course parser
removes by structure, and what `frequency.drop_frequent_blocks` removes on top of that.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared builder beside this script
import debian_corpus  # noqa: E402

PACKAGE = "python-pandas-doc"
VERSION = "1.5.3+dfsg-2"
REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "data" / "pandas"
ARCHIVE = DATA / "pandas-1.5.3-docs.tar.xz"
MANIFEST = DATA / "MANIFEST.sha256"
LICENSE = DATA / "LICENSE-pandas.txt"
HTML_ROOT = Path("usr/share/doc/python-pandas-doc/html")
COPYRIGHT = Path("usr/share/doc/python-pandas-doc/copyright")


def page_list() -> list[str]:
    """The page paths this corpus ships (its pages.txt)."""
    return debian_corpus.page_list(DATA / "pages.txt")


def download_deb(folder: Path) -> Path:
    """Fetch this corpus's pinned .deb into folder."""
    return debian_corpus.download_deb(folder, PACKAGE, VERSION)


def corpus_files(html: Path) -> dict[str, bytes]:
    """Each listed page's HTML, byte for byte, keyed by its path inside the archive."""
    return {page: (html / page).read_bytes() for page in page_list()}


def write_archive(files: dict[str, bytes]) -> None:
    debian_corpus.write_archive(files, ARCHIVE)


def write_manifest(files: dict[str, bytes]) -> None:
    debian_corpus.write_manifest(files, MANIFEST)


def build(deb: Path | None) -> None:
    """Download (unless given) and unpack the .deb, then write archive, manifest and licence."""
    with tempfile.TemporaryDirectory() as tmp:
        deb = deb or download_deb(Path(tmp))
        root = Path(tmp) / "x"
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        files = corpus_files(root / HTML_ROOT)
        write_archive(files)
        write_manifest(files)
        LICENSE.write_bytes((root / COPYRIGHT).read_bytes())
    size = sum(len(b) for b in files.values())
    print(f"{len(files)} pages, {size / 1e6:.1f} MB of HTML -> {ARCHIVE.name} "
          f"({ARCHIVE.stat().st_size / 1e6:.2f} MB)")


def _chars(text: str) -> int:
    """Characters of visible text, whitespace excluded, so markup layout does not count."""
    return sum(1 for c in text if not c.isspace())


def structural_share(html: str) -> tuple[int, int]:
    """(visible characters of the page, of them what the parser keeps after removing furniture).

    Counted on the DOM rather than on the parser's blocks, because blocks re-render tables as
    `header: value` rows and fence code, which would inflate the kept side. The kept side is the
    parser's main-content element after its furniture rules, exactly as `parse_page` selects it;
    decoration (pilcrows, copy buttons) is not furniture and counts as kept.
    """
    from course_lib.core import boilerplate, main_content, parse

    soup = parse.make_soup(html)
    for tag in soup.select(", ".join(boilerplate.NEVER_CONTENT)):
        tag.decompose()
    body = soup.body or soup
    total = _chars(body.get_text(" "))
    boilerplate.remove_furniture(body)
    root = main_content.choose_main(body).element
    return total, _chars(root.get_text(" "))


def furniture_report(folder: Path) -> None:
    """Print each page's furniture share (by structure, then by frequency), min/median/max, overall."""
    from course_lib import settings
    from course_lib.core import frequency, parse
    from course_lib.core import load as corpus

    pages = corpus.load_pages(folder)
    totals = {p.path: structural_share(p.html) for p in pages}
    parsed, _ = parse.parse_corpus(pages, skip_stubs=False)
    kept, removed = frequency.drop_frequent_blocks(parsed, max_share=settings.BOILERPLATE_MAX_PAGE_SHARE)
    by_freq = {doc: sum(_chars(b.text) for b in blocks) - sum(_chars(b.text) for b in kept[doc])
               for doc, blocks in parsed.items()}
    shares, structural, frequency = [], 0, 0
    print(f"{'structure':>9} {'frequency':>9} {'visible':>8}  page")
    for doc, (total, content) in totals.items():
        share, freq = 1 - content / total, by_freq.get(doc, 0) / total
        shares.append(share)
        structural += total - content
        frequency += by_freq.get(doc, 0)
        print(f"{share:9.1%} {freq:9.1%} {total:8d}  {doc}")
    visible = sum(total for total, _ in totals.values())
    print(f"per page, by structure: min {min(shares):.1%}, median {statistics.median(shares):.1%}, "
          f"max {max(shares):.1%}")
    print(f"overall: {structural / visible:.1%} of {visible:,} visible characters removed by structure, "
          f"{frequency / visible:.1%} more by frequency (max_share={settings.BOILERPLATE_MAX_PAGE_SHARE}; "
          f"{len(removed)} distinct blocks)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deb", type=Path, help="an already downloaded python-pandas-doc .deb")
    parser.add_argument("--furniture", action="store_true",
                        help="measure site furniture in the extracted corpus instead of building")
    args = parser.parse_args()
    if args.furniture:
        folder = DATA / "corpus"
        with tarfile.open(ARCHIVE, "r:xz") as tar:
            tar.extractall(folder, filter="data")  # refuses links and paths outside folder
        furniture_report(folder)
    else:
        build(args.deb)


if __name__ == "__main__":
    main()
