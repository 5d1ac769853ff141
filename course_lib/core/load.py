"""Load a shipped corpus (verified against its manifest) or any folder of HTML, page by page.

A shipped corpus comes compressed with a manifest (`CORPORA`: "python" is the Python 3.11 docs
in data/python-3.11-docs.tar.xz, "pandas" the pandas 1.5.3 docs under data/pandas/). On first
use it is extracted next to its archive; every load checks each file's sha256, so a missing or
edited page fails loudly with its name instead of quietly changing every number in the course.

A learner's own folder is read one file at a time: a page that cannot be read, is binary, empty
or undecodable, or is reached through a link that leaves the folder is skipped with its reason
(`load_corpus(...).skipped`), never allowed to stop the others; a folder with no usable page at
all is a `CorpusError`.

Decoding the bytes of a page is the one place that decides between a byte order mark, a declared
charset, UTF-8 and cp1252, the way a browser does (`sniff_encoding`, `decode_html`).
"""
from __future__ import annotations

import lzma
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from course_lib.infra.errors import CorpusError
from course_lib.infra.files import file_sha256
from course_lib.infra.paths import DATA_DIR
from course_lib.records import Page


class Shipped(NamedTuple):
    """Where a shipped corpus lives: its archive, its manifest, the folder it extracts to, and
    the site its pages were published at (what a prompt cites)."""

    archive: Path
    manifest: Path
    folder: Path
    base_url: str


CORPORA: dict[str, Shipped] = {
    "python": Shipped(DATA_DIR / "python-3.11-docs.tar.xz", DATA_DIR / "MANIFEST.sha256",
                      DATA_DIR / "corpus", "https://docs.python.org/3.11/"),
    "pandas": Shipped(DATA_DIR / "pandas" / "pandas-1.5.3-docs.tar.xz", DATA_DIR / "pandas" / "MANIFEST.sha256",
                      DATA_DIR / "pandas" / "corpus", "https://pandas.pydata.org/pandas-docs/version/1.5.3/"),
}
ARCHIVE, MANIFEST, CORPUS_DIR, _ = CORPORA["python"]

BINARY_SHARE = 0.02  # more control characters than this in a sample: not text
_SAMPLE = 8192


def _shipped(corpus: str) -> Shipped:
    if corpus not in CORPORA:
        raise CorpusError(f"unknown corpus {corpus!r}", hint=f"use one of {', '.join(CORPORA)}")
    return CORPORA[corpus]


def read_manifest(path: Path = MANIFEST) -> dict[str, str]:
    """The manifest as {relative path: sha256}."""
    if not path.is_file():
        raise CorpusError("manifest missing", path=path, hint="restore it with `git checkout -- data/`")
    entries = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise CorpusError(f"expected '<sha256>  <path>', got {line!r}", path=path, line=number,
                              hint="restore the manifest with `git checkout -- data/`")
        entries[name] = digest
    return entries


def _member_filter(member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo:
    """tarfile's `data` filter (nothing outside the target, no devices, no links leaving it, no
    special permissions), and stricter still: only regular files and folders, no absolute names."""
    if not (member.isfile() or member.isdir()) or PurePosixPath(member.name).is_absolute():
        raise tarfile.FilterError(f"{member.name!r} is not a regular file with a relative name")
    return tarfile.data_filter(member, destination)


def extract(archive: Path = ARCHIVE, target: Path = CORPUS_DIR) -> None:
    """Extract a shipped archive into target with tarfile's `data` filter (see `_member_filter`).

    An unsafe member or a damaged archive is a CorpusError; a half-done extraction fails
    `verify`, and `ensure_corpus` extracts again."""
    restore = "restore it with `git checkout -- data/` (or build it with its script)"
    if not archive.exists():
        raise CorpusError("the corpus archive is missing", path=archive, hint=restore)
    try:
        with tarfile.open(archive, "r:xz") as tar:
            tar.extractall(target, filter=_member_filter)
    except tarfile.FilterError as err:
        raise CorpusError(f"refusing unsafe archive member: {err}", path=archive.name, hint=restore) from err
    except (tarfile.TarError, lzma.LZMAError, EOFError) as err:
        raise CorpusError(f"the archive is damaged ({type(err).__name__}: {err})", path=archive,
                          hint=restore) from err


def verify(target: Path = CORPUS_DIR, manifest: Path = MANIFEST) -> list[str]:
    """Problems with the extracted corpus, one message per missing or corrupt file."""
    problems = []
    for name, digest in read_manifest(manifest).items():
        path = target / name
        if not path.exists():
            problems.append(f"{path}: missing")
        elif file_sha256(path) != digest:
            problems.append(f"{path}: corrupt (sha256 differs from {manifest.name})")
    return problems


def ensure_corpus(target: Path | None = None, *, corpus: str = "python") -> Path:
    """Extract a shipped corpus if needed and verify it; return its folder.

    A damaged extraction is repaired once by extracting again; if the archive itself is
    damaged, the error names every file that does not match the manifest.
    """
    shipped = _shipped(corpus)
    target = shipped.folder if target is None else Path(target)
    if not shipped.archive.exists() and not target.exists():
        extract(shipped.archive, target)  # raises the one-line "archive is missing"
    if not target.exists() or verify(target, shipped.manifest):
        extract(shipped.archive, target)
    problems = verify(target, shipped.manifest)
    if problems:
        raise CorpusError(f"the shipped corpus does not match its manifest ({len(problems)} files: "
                          + "; ".join(problems[:3]) + (" ..." if len(problems) > 3 else "") + ")",
                          path=shipped.archive, hint="restore data/ with `git checkout -- data/`")
    return target


def sniff_binary(raw: bytes) -> str | None:
    """Why these bytes are not a text file, or None when they look like text.

    NUL bytes (outside UTF-16 with a byte order mark); more than `BINARY_SHARE` of the first
    8 KB being control characters (random or compressed data has about one in ten even without
    a single NUL; text has none but tab and newline); or a sample that is mostly not UTF-8 and
    still holds control characters. A legacy-encoded page (cp1251, cp1252) has many non-UTF-8
    bytes but no control characters, so it is kept.
    """
    sample = raw[:_SAMPLE]
    if not sample or sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    if b"\x00" in sample:
        return "binary file (NUL bytes): not an HTML file"
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13)) + sample.count(127)
    undecodable = sample.decode("utf-8", "replace").count("\ufffd")
    if controls / len(sample) > BINARY_SHARE or (controls and undecodable / len(sample) > 0.3):
        return (f"binary file ({controls} control and {undecodable} undecodable bytes "
                f"in the first {len(sample)}): not an HTML file")
    return None


@dataclass
class LoadedCorpus:
    """What `load_corpus` found: the usable pages, the skipped files with their reasons, the
    folder they came from, and the base URL its pages were published at ("" when unknown)."""

    pages: list[Page]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    folder: Path | None = None
    base_url: str = ""


def _read_page(path: Path, folder: Path) -> tuple[Page | None, str]:
    """One file as a Page, or (None, the reason it was skipped)."""
    name = path.relative_to(folder).as_posix()
    if path.is_dir():
        return None, "a folder, not a file"
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return None, "a link that cannot be resolved"
    if not inside:
        return None, "a link to a file outside the corpus folder: refused"
    if not path.is_file():
        return None, "not a regular file"
    try:
        raw = path.read_bytes()
    except PermissionError:
        return None, "cannot read: permission denied"
    except OSError as err:
        return None, f"cannot read: {err.strerror or err}"
    if not raw.strip():
        return None, "empty file"
    reason = sniff_binary(raw)
    if reason:
        return None, reason
    try:
        text = decode_html(raw)
    except (UnicodeDecodeError, LookupError) as err:
        return None, f"undecodable: {err}"
    return Page(path=name, html=text), ""


def load_corpus(root: str | Path | None = None, *, corpus: str = "python",
                pattern: str = "**/*.html") -> LoadedCorpus:
    """Every HTML page under root (default: the verified shipped corpus), with what was skipped.

    Each file is read on its own (see the module docstring for the skip reasons); pages are
    sorted by path. Raises CorpusError for a missing folder, a path that is a file, or a folder
    with no usable page.
    """
    if root is None:
        folder, base_url = ensure_corpus(corpus=corpus), _shipped(corpus).base_url
    else:
        folder, base_url = Path(root), ""
    if not folder.exists():
        raise CorpusError("no such folder", path=folder, hint="give --corpus a folder of .html files")
    if not folder.is_dir():
        raise CorpusError("not a folder of HTML files", path=folder,
                          hint="give --corpus the folder that holds the pages, not one file")
    pages, skipped = [], []
    for path in sorted(folder.glob(pattern)):
        page, reason = _read_page(path, folder)
        if page is None:
            skipped.append((path.relative_to(folder).as_posix(), reason))
        else:
            pages.append(page)
    if not pages:
        what = "no usable page" if skipped else f"no {pattern} file"
        raise CorpusError(f"{what} in this folder" + (f" ({len(skipped)} skipped: {skipped[0][0]}: "
                                                       f"{skipped[0][1]}, ...)" if skipped else ""),
                          path=folder, hint="point --corpus at a folder of .html pages")
    return LoadedCorpus(pages, skipped, folder, base_url)


def load_pages(root: str | Path | None = None, *, pattern: str = "**/*.html", corpus: str = "python") -> list[Page]:
    """The usable pages of a corpus (see `load_corpus`, which also returns what was skipped).

    Bytes are decoded by `decode_html` (BOM, declared charset, UTF-8, ...), so a learner's folder
    with mixed encodings loads; what cannot be parsed is skipped later, by the parser.
    """
    return load_corpus(root, corpus=corpus, pattern=pattern).pages


_META = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([-\w.:]+)|<\?xml[^>]*encoding=["']([-\w.:]+)""",
                   re.I)
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def sniff_encoding(raw: bytes) -> tuple[str, str]:
    """Choose the encoding of an HTML file and say why: BOM, then <meta charset>, then UTF-8, then
    UTF-8 with the stray bytes replaced ("utf-8-replace") when the text is mostly UTF-8, then cp1252.

    Browsers read "iso-8859-1" and "ascii" as windows-1252, so we do too. A declared encoding
    that does not decode the bytes is ignored (a page saved by another tool keeps its old meta
    tag), and undeclared bytes that are not UTF-8 are read as cp1252, the usual culprit.
    """
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, f"byte order mark ({name})"
    match = _META.search(raw[:4096])
    if match:
        declared = (match.group(1) or match.group(2)).decode("ascii", "replace").lower()
        name = "cp1252" if declared in ("iso-8859-1", "latin-1", "latin1", "ascii", "us-ascii") else declared
        try:
            raw.decode(name)
            return name, f"declared charset {declared}"
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        raw.decode("utf-8")
        return "utf-8", "valid UTF-8" + (" (declared charset did not decode)" if match else "")
    except UnicodeDecodeError as err:
        first_bad = f"byte {raw[err.start]:#04x} at {err.start}"
    if _mostly_utf8(raw):
        return "utf-8-replace", f"mostly valid UTF-8 ({first_bad}): stray bytes replaced"
    return "cp1252", f"not valid UTF-8 ({first_bad}): read as cp1252"


def _mostly_utf8(raw: bytes) -> bool:
    """True when the bytes hold at least as many valid multi-byte UTF-8 characters as invalid bytes: a UTF-8
    page with one stray byte (keep its "Café", lose one character) rather than a legacy page,
    whose accented letters are all invalid UTF-8 and which has no valid multi-byte character."""
    text = raw.decode("utf-8", "replace")
    replaced = text.count("\ufffd") - raw.count("\ufffd".encode())
    multibyte = sum(1 for ch in text if ord(ch) > 127) - replaced
    return 0 < replaced <= multibyte


# cp1252 leaves five bytes undefined; a browser shows them as the same code points as latin-1.
_CP1252 = {i: bytes([i]).decode("cp1252") for i in range(0x80, 0xA0)
           if i not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)}


def decode_html(raw: bytes) -> str:
    """Decode the bytes of an HTML file to text, choosing the encoding with `sniff_encoding`."""
    name, _ = sniff_encoding(raw)
    if name == "utf-8-replace":
        return raw.decode("utf-8", "replace").lstrip("\ufeff")
    if name == "cp1252":
        return raw.decode("latin-1").translate(_CP1252)
    return raw.decode(name).lstrip("\ufeff")
