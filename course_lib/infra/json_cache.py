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


def code_digest(modules: Iterable[str]) -> str:
    """A digest of these modules' source files: part of a cache key, so an edited stage computes
    again instead of serving what the old code produced."""
    digest = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec else None
        digest.update(name.encode() + b"\0" + (Path(origin).read_bytes() if origin else b"missing") + b"\0")
    return digest.hexdigest()


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
