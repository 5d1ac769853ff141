"""Load the shipped corpus (verified against its manifest) or any folder of HTML.

The corpus ships compressed as data/python-3.11-docs.tar.xz with data/MANIFEST.sha256. On first
use it is extracted to data/corpus/; every load checks each file's sha256, so a missing or edited
page fails loudly with its name instead of quietly changing every number in the course.
"""
from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path, PurePosixPath

from .parse import decode_html
from .paths import DATA_DIR
from .records import Page

ARCHIVE = DATA_DIR / "python-3.11-docs.tar.xz"
MANIFEST = DATA_DIR / "MANIFEST.sha256"
CORPUS_DIR = DATA_DIR / "corpus"


class CorpusError(RuntimeError):
    """The corpus is missing, corrupt or unsafe; the message names the file and the problem."""


def read_manifest(path: Path = MANIFEST) -> dict[str, str]:
    """The manifest as {relative path: sha256}."""
    entries = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise CorpusError(f"{path}:{number}: expected '<sha256>  <path>', got {line!r}")
        entries[name] = digest
    return entries


def _safe_member(member: tarfile.TarInfo, target: Path) -> Path:
    """Where a tar member would land, refusing anything that could escape the target folder."""
    name = PurePosixPath(member.name)
    if not member.isfile() or name.is_absolute() or ".." in name.parts:
        raise CorpusError(f"{ARCHIVE.name}: refusing unsafe archive member {member.name!r}")
    destination = (target / name).resolve()
    if not destination.is_relative_to(target.resolve()):
        raise CorpusError(f"{ARCHIVE.name}: member {member.name!r} would escape {target}")
    return destination


def extract(archive: Path = ARCHIVE, target: Path = CORPUS_DIR) -> None:
    """Extract the archive member by member, only regular files, never outside target."""
    if not archive.exists():
        raise CorpusError(f"The corpus archive {archive} is missing: restore it with `git checkout -- data/`.")
    with tarfile.open(archive, "r:xz") as tar:
        for member in tar.getmembers():
            destination = _safe_member(member, target)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(tar.extractfile(member).read())


def verify(target: Path = CORPUS_DIR, manifest: Path = MANIFEST) -> list[str]:
    """Problems with the extracted corpus, one message per missing or corrupt file."""
    problems = []
    for name, digest in read_manifest(manifest).items():
        path = target / name
        if not path.exists():
            problems.append(f"{path}: missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            problems.append(f"{path}: corrupt (sha256 differs from {manifest.name})")
    return problems


def ensure_corpus(target: Path = CORPUS_DIR) -> Path:
    """Extract the shipped corpus if needed and verify it; return its folder.

    A damaged extraction is repaired once by extracting again; if the archive itself is
    damaged, the error lists every file that does not match the manifest.
    """
    if not target.exists() or verify(target):
        extract(target=target)
    problems = verify(target)
    if problems:
        raise CorpusError("The shipped corpus does not match its manifest:\n  " + "\n  ".join(problems))
    return target


def load_pages(root: Path | None = None, *, pattern: str = "**/*.html") -> list[Page]:
    """Every HTML page under root (default: the verified shipped corpus), sorted by path.

    Bytes are decoded by `parse.decode_html` (BOM, declared charset, else UTF-8 or cp1252), so
    a learner's folder with mixed encodings loads; what cannot be parsed is skipped later, by
    the parser, with its reason.
    """
    folder = ensure_corpus() if root is None else Path(root)
    if not folder.is_dir():
        raise CorpusError(f"{folder}: not a folder of HTML files")
    paths = sorted(p for p in folder.glob(pattern) if p.is_file())
    return [Page(path=p.relative_to(folder).as_posix(), html=decode_html(p.read_bytes())) for p in paths]
