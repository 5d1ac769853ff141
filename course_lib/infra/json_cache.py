"""Results kept on disk as gzip-compressed JSON, keyed by everything they depend on.

For results that are slow to compute and not arrays (lesson 10's peer chunkings: docling takes
a minute per corpus): the file name is a digest of the inputs, so a changed input is a new
file and a stale result is never read. Files are written atomically (`infra.files.atomic_write`),
so a reader in another process never meets half of one, and a disk that misbehaves costs one
warning line (the embedding store's, once per folder and problem), never the result: the caller
computes again.
"""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import inspect
import json
from collections.abc import Iterable
from pathlib import Path

from course_lib.infra.files import atomic_write
from course_lib.infra.paths import cache_dir
from course_lib.infra.vector_cache import warn_once


def cache_path(folder: str, name: str, parts: Iterable[str]) -> Path:
    """`<cache>/<folder>/<name>-<digest of parts>.json.gz`; each part is separated, so no two
    different lists of parts share a digest by running together."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "replace") + b"\0")
    return cache_dir() / folder / f"{name}-{digest.hexdigest()[:32]}.json.gz"


def code_digest(sources: Iterable[str | object]) -> str:
    """A digest of the code that produced a cached result: part of its key, so an edited stage
    computes again instead of serving what the old code produced. The one way the course keys a
    cache by code (the parse cache, lesson 10's peer cache).

    Each source is a module's dotted name (its whole source file; "missing" when it cannot be
    found) or a function, class or module object (its source as `inspect` reads it, which also
    works for one defined in a notebook cell). An object whose source cannot be read raises
    OSError: its caller computes without caching rather than key a result by nothing.
    """
    digest = hashlib.sha256()
    for source in sources:
        name, code = _named_source(source)
        digest.update(name.encode() + b"\0" + code + b"\0")
    return digest.hexdigest()


def _named_source(source: str | object) -> tuple[str, bytes]:
    """A source's name and code, as `code_digest` hashes them."""
    if isinstance(source, str):
        spec = importlib.util.find_spec(source)
        origin = spec.origin if spec else None
        return source, Path(origin).read_bytes() if origin else b"missing"
    qualname = getattr(source, "__qualname__", getattr(source, "__name__", ""))
    name = f"{getattr(source, '__module__', '')}.{qualname}"
    try:
        return name, inspect.getsource(source).encode("utf-8", "surrogatepass")
    except TypeError as err:  # a builtin or an instance: no source of its own to key by
        raise OSError(f"no source code for {source!r}") from err


def read_json(path: Path):
    """The stored value, or None when the file is absent or unreadable (one warning line)."""
    try:
        return json.loads(gzip.decompress(path.read_bytes()))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as err:
        warn_once(path, "unreadable, computing again", err)
        return None


def write_json(path: Path, value) -> None:
    """Store a JSON-able value atomically; a folder that cannot be written costs one warning line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, gzip.compress(json.dumps(value).encode("utf-8")))
    except OSError as err:
        warn_once(path.parent, "not written, computing without caching", err)
