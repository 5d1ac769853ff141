"""Load a shipped corpus (verified against its manifest) or any folder of HTML, page by page.

A shipped corpus comes compressed with a manifest (`CORPORA`: "python" is the Python 3.11 docs
in data/python-3.11-docs.tar.xz, "pandas" the pandas 1.5.3 docs under data/pandas/). On first
use it is extracted next to its archive; every load checks each file's sha256, so a missing or
edited page fails loudly with its name instead of quietly changing every number in the course.

A learner's own folder is read one file at a time: a page that cannot be read, is binary, empty
or undecodable, or is reached through a link that leaves the folder is skipped with its reason
(`load_corpus(...).skipped`), never allowed to stop the others; a folder with no usable page at
all is a `CorpusError`.

Whether a file is text, and in which encoding, is decided in `decode` (`sniff_binary`,
`decode_page`); what decoding had to repair is reported, not hidden (`load_corpus(...).repaired`).
"""
from __future__ import annotations

import lzma
import re
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from course_lib.core.decode import SNIFF_BYTES, decode_page, sniff_binary
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
    "pandas": Shipped(DATA_DIR / "pandas" / "pandas-1.5.3-docs.tar.xz",
                      DATA_DIR / "pandas" / "MANIFEST.sha256", DATA_DIR / "pandas" / "corpus",
                      "https://pandas.pydata.org/pandas-docs/version/1.5.3/"),
}
ARCHIVE, MANIFEST, CORPUS_DIR, _ = CORPORA["python"]

HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".xht")  # read in any case (.HTML too)
# Pages saved under a server's extension: not read unless asked (`include`), but never left
# out without a word (`LoadedCorpus.ignored`).
OTHER_PAGE_SUFFIXES = (".shtml", ".php", ".asp", ".aspx", ".jsp", ".cfm")


def _shipped(corpus: str) -> Shipped:
    """The record of a shipped corpus by name."""
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
            tar.extractall(target, filter=_member_filter)  # noqa: S202 - every member goes through the data filter
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


@dataclass
class LoadedCorpus:
    """What `load_corpus` found: the pages; the files skipped and why; the pages repaired while
    decoding and how; the files of other page extensions left out (`notes` prints all three);
    the folder, and the base URL its pages were published at ("" when unknown)."""

    pages: list[Page]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    folder: Path | None = None
    base_url: str = ""
    repaired: list[tuple[str, str]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """One line per skipped and per repaired file, and one for the files left out."""
        lines = [f"skipped {path}: {reason}" for path, reason in self.skipped]
        lines += [f"repaired {path}: {what}" for path, what in self.repaired]
        if (n := len(self.ignored)):
            more = f" and {n - 10} more" if n > 10 else ""
            flags = " ".join(sorted({f"--include '*{Path(p).suffix.lower()}'" for p in self.ignored}))
            lines.append(f"{n} {'file' if n == 1 else 'files'} with other extensions ignored: "
                         f"{', '.join(self.ignored[:10])}{more}; pass {flags} to read them")
        return lines


def describe_skips(skipped: list[tuple[str, str]]) -> str:
    """Every distinct reason in a list of skips, with its count and a first file: "2 empty file
    (a.html, ...); 1 binary file (b.html)". A reason's family is its text before ":" or "("."""
    families: dict[str, list[str]] = {}
    for path, reason in skipped:
        families.setdefault(re.split(r"[:(]", reason, maxsplit=1)[0].strip(), []).append(path)
    return "; ".join(f"{len(paths)} {family} ({paths[0]}{', ...' if len(paths) > 1 else ''})"
                     for family, paths in families.items())


def _read_page(path: Path, folder: Path) -> tuple[Page | None, str]:
    """One file as a Page and what was repaired in it ("" if nothing), or (None, why it was skipped)."""
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
        with path.open("rb") as handle:
            # The first 8 KB decide whether it is text: a 2 GB binary file is skipped unread.
            raw = handle.read(SNIFF_BYTES)
            reason = sniff_binary(raw)
            if reason:
                return None, reason
            raw += handle.read()
    except PermissionError:
        return None, "cannot read: permission denied"
    except OSError as err:
        return None, f"cannot read: {err.strerror or err}"
    if not raw.strip():
        return None, "empty file"
    text, repaired = decode_page(raw)
    return Page(path=path.relative_to(folder).as_posix(), html=text), repaired


def _selected(folder: Path, include: Sequence[str]) -> tuple[list[Path], list[Path]]:
    """The files to read (an `HTML_SUFFIXES` suffix, or matching an `include` glob, in any case)
    and the files of `OTHER_PAGE_SUFFIXES` left out, both sorted."""
    read, left_out = [], []
    for path in sorted(folder.glob("**/*")):
        relative = PurePosixPath(path.relative_to(folder).as_posix().lower())
        suffix = path.suffix.lower()
        if suffix in HTML_SUFFIXES or any(relative.match(pattern.lower()) for pattern in include):
            read.append(path)
        elif suffix in OTHER_PAGE_SUFFIXES and path.is_file():
            left_out.append(path)
    return read, left_out


def load_corpus(root: str | Path | None = None, *, corpus: str = "python",
                include: Sequence[str] = ()) -> LoadedCorpus:
    """Every HTML page under root (default: the verified shipped corpus), with what was skipped.

    Pages are the files whose suffix is one of `HTML_SUFFIXES` in any case (.html, .HTM, ...),
    plus those matching an `include` glob (`"*.php"`); files with another page extension
    (`OTHER_PAGE_SUFFIXES`) are listed in `.ignored`. Each file is read on its own (see the
    module docstring for the skip reasons); pages are sorted by path. Raises CorpusError for a
    missing folder, a path that is a file, or a folder with no usable page (naming every reason).
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
    files, left = _selected(folder, include)
    loaded = LoadedCorpus([], [], folder, base_url, ignored=[p.relative_to(folder).as_posix() for p in left])
    for path in files:
        page, note = _read_page(path, folder)
        if page is None:
            loaded.skipped.append((path.relative_to(folder).as_posix(), note))
            continue
        loaded.pages.append(page)
        if note:
            loaded.repaired.append((page.path, note))
    if not loaded.pages:
        skips = loaded.skipped
        what = (f"no usable page in this folder: {len(skips)} skipped: {describe_skips(skips)}" if skips
                else f"no HTML file ({', '.join(HTML_SUFFIXES)}) in this folder")
        hint = loaded.notes()[-1] if loaded.ignored else "point --corpus at a folder of .html pages"
        raise CorpusError(what, path=folder, hint=hint)
    return loaded


def load_pages(root: str | Path | None = None, *, include: Sequence[str] = (),
               corpus: str = "python") -> list[Page]:
    """The usable pages of a corpus (see `load_corpus`, which also returns what was skipped).

    Bytes are decoded by `decode.decode_page` (BOM, declared charset, UTF-8, ...), so a learner's folder
    with mixed encodings loads; what cannot be parsed is skipped later, by the parser.
    """
    return load_corpus(root, corpus=corpus, include=include).pages
