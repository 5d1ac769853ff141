"""Arrays on disk that several processes share safely, and that fail soft.

Embeddings (one row per text) and late-interaction token vectors (one matrix per chunk) are
kept across runs in a `VectorStore`. A classroom may point every learner at one shared,
pre-warmed COURSE_CACHE_DIR, and two notebooks may run at once, so the store is built on
`diskcache` (SQLite in WAL mode, plus one file per large value) rather than files we name
ourselves:

- a large value is written to a new file with a random name and only becomes visible when the
  SQLite row that names it commits, so a reader never meets a half-written value, and there is
  no temporary file a loader could mistake for data;
- nothing is compacted or rewritten behind another process's back; two writers take turns on
  SQLite's lock;
- values are the raw bytes of one dtype (no pickle), reshaped to rows of the stored width.

When the disk misbehaves (a read-only or full folder, a corrupt database) the store says so in
ONE warning line and the caller computes without caching: slower, never wrong. A read-only
folder is still read, so a read-only shared classroom cache keeps its value.
"""
from __future__ import annotations

import logging
import sqlite3
import weakref
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger("course_lib.cache")

# diskcache keeps no size limit and evicts nothing: the course decides what to delete (`make clean-cache`).
SETTINGS = {"eviction_policy": "none", "size_limit": 2**62, "cull_limit": 0}
_warned: set[tuple[str, str]] = set()
_open_stores: weakref.WeakSet = weakref.WeakSet()


def warn_once(folder: Path, what: str, err: BaseException | None = None) -> None:
    """One line per folder and problem, however many calls hit it."""
    if (str(folder), what) in _warned:
        return
    _warned.add((str(folder), what))
    cause = f" ({type(err).__name__}: {err})" if err is not None else ""
    log.warning("course_lib cache %s %s%s", folder, what, cause)


class _ReadOnlyCache:
    """Reads a diskcache folder that this process may not write (a read-only classroom share).

    diskcache opens its database for writing even to read, so a read-only folder is read here
    with plain SQLite in read-only mode, or in `immutable` mode where SQLite cannot even create
    its lock file (a read-only share: `make warm` closes the cache, so nothing waits in the
    write-ahead log). Keys are stored as text, small values in the row, large ones in the file
    the row names.
    """

    def __init__(self, folder: Path):
        self.folder = folder
        error: Exception | None = None
        for mode in ("mode=ro", "immutable=1"):
            try:
                self.db = sqlite3.connect(f"file:{folder / 'cache.db'}?{mode}", uri=True,
                                          check_same_thread=False)
                self.db.execute("SELECT count(*) FROM Cache").fetchone()  # fails if unreadable
                return
            except sqlite3.Error as err:
                error = err
        raise error

    def get(self, key: str) -> bytes | None:
        row = self.db.execute("SELECT filename, value FROM Cache WHERE key = ? AND raw = 1",
                              (key,)).fetchone()
        if row is None:
            return None
        filename, value = row
        return (self.folder / filename).read_bytes() if filename else bytes(value)

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM Cache").fetchone()[0])

    def volume(self) -> int:
        return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())


class VectorStore:
    """Arrays of one dtype keyed by string, in a folder several processes may share.

    `get` returns a (rows, width) array or None; `put_many` stores several in one transaction.
    `writable` and `readable` say what still works after a disk problem.
    """

    def __init__(self, folder: Path, *, dtype: type = np.float32):
        self.folder = Path(folder)
        self.dtype = np.dtype(dtype)
        self.readable = self.writable = False
        self._cache = None
        try:
            import diskcache

            self.folder.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(str(self.folder), **SETTINGS)
            self.readable = self.writable = True
            _open_stores.add(self)
        except Exception as err:  # any disk problem: fall back, never fail
            self._open_read_only(err)

    def _open_read_only(self, err: BaseException) -> None:
        try:
            self._cache = _ReadOnlyCache(self.folder)
            self.readable = True
            warn_once(self.folder, "is read-only: reading it, but new vectors are not stored", err)
        except Exception:
            self._cache = None
            warn_once(self.folder, "is unusable (delete it to rebuild): computing without caching",
                       err)

    def _decode(self, raw: bytes) -> np.ndarray | None:
        if len(raw) % self.dtype.itemsize:
            return None
        return np.frombuffer(raw, self.dtype)

    def get(self, key: str, *, width: int | None = None) -> np.ndarray | None:
        """The stored array (rows of `width`; one row if no width), or None if absent or unreadable."""
        if not self.readable:
            return None
        try:
            raw = self._cache.get(key)
        except Exception as err:
            self.readable = self.writable = False
            warn_once(self.folder, "could not be read: computing without caching", err)
            return None
        if raw is None:
            return None
        flat = self._decode(bytes(raw))
        if flat is None or (width and len(flat) % width):
            return None  # a damaged value is a miss: it is computed again
        return flat.reshape(-1, width) if width else flat.reshape(1, -1)

    def put_many(self, keys: Sequence[str], arrays: Sequence[np.ndarray]) -> None:
        """Store each array (cast to the store's dtype) under its key, all in one transaction."""
        if not self.writable or not len(keys):
            return
        try:
            with self._cache.transact():
                for key, array in zip(keys, arrays, strict=True):
                    self._cache.set(key, np.ascontiguousarray(array, self.dtype).tobytes())
        except Exception as err:  # a full disk must not stop a lesson
            self.writable = False
            warn_once(self.folder, "cannot be written (full or read-only?): new vectors are not stored",
                       err)

    def keys(self) -> list[str]:
        """Every key in the store (empty if it cannot be read)."""
        try:
            if not self.readable:
                return []
            if isinstance(self._cache, _ReadOnlyCache):
                return [row[0] for row in self._cache.db.execute("SELECT key FROM Cache")]
            return list(self._cache.iterkeys())
        except Exception:
            return []

    def __len__(self) -> int:
        try:
            return len(self._cache) if self.readable else 0
        except Exception:
            return 0

    def size_bytes(self) -> int:
        """Bytes the store takes on disk (database and value files)."""
        try:
            return int(self._cache.volume()) if self.readable else 0
        except Exception:
            return 0

    def close(self) -> None:
        if self._cache is not None and hasattr(self._cache, "close"):
            self._cache.close()


def close_all() -> None:
    """Close every store this process opened, so SQLite folds its log into the database and the
    folder is complete on disk (before copying a warm cache, or sharing it read-only)."""
    for store in list(_open_stores):
        store.close()
