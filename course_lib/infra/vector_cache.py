"""Arrays on disk that several processes share safely, that fail soft, and that never run code.

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
- values are the raw bytes of one dtype, reshaped to rows of the stored width, and nothing else:
  `RawBytesDisk` refuses to store anything but bytes and refuses to unpickle on reading. Anyone
  who can write a shared cache folder could plant a pickled row there, and unpickling runs
  whatever code the pickle names; such a row is a miss with one warning line, never executed.
- a value is checked before use: a width that does not fit, or a NaN or infinity, is a miss
  with one warning line, so a damaged or planted row costs a recomputation, never a ranking.

When the disk misbehaves (a read-only or full folder, a corrupt database) the store says so in
ONE warning line and the caller computes without caching: slower, never wrong. A read-only
folder is still read, so a read-only shared classroom cache keeps its value.
"""
from __future__ import annotations

import logging
import os
import sqlite3
import weakref
from collections.abc import Sequence
from pathlib import Path

import diskcache
import numpy as np
from diskcache.core import MODE_BINARY, MODE_RAW

log = logging.getLogger("course_lib.cache")

# diskcache keeps no size limit and evicts nothing: the course decides what to delete (`make clean-cache`).
SETTINGS = {"eviction_policy": "none", "size_limit": 2**62, "cull_limit": 0}
# What a disk can throw at a store: the OS, SQLite, and diskcache's lock timeout.
DISK_ERRORS = (OSError, sqlite3.Error, diskcache.Timeout)
# A unit row stored as float16 is off by well under 1% in squared length; a planted one by far more.
UNIT_ROW_TOLERANCE = 0.01
NOT_RAW = "holds values that are not raw vectors (pickled?): ignored, computed again"
_warned: set[tuple[str, str]] = set()
_silenced: set[Path] = set()
_open_stores: weakref.WeakSet = weakref.WeakSet()


def silence_under(root: Path, what: str) -> None:
    """Say `what` about `root` once, then nothing about any folder under it: a cache root that
    cannot hold folders (a file) is one line, not one per store that fails under it."""
    warn_once(root, what)
    _silenced.add(Path(root))


def warn_once(folder: Path, what: str, err: BaseException | None = None) -> None:
    """One line per folder and problem, however many calls hit it.

    The cause is named in the line; its traceback is added when the `course_lib` logger is at
    DEBUG (the command line's `--debug`), so the original error stays reachable.
    """
    if (str(folder), what) in _warned or any(Path(folder).is_relative_to(root) for root in _silenced):
        return
    _warned.add((str(folder), what))
    cause = f" ({type(err).__name__}: {err})" if err is not None else ""
    trace = err if err is not None and log.isEnabledFor(logging.DEBUG) else None
    log.warning("course_lib cache %s %s%s", folder, what, cause, exc_info=trace)


def _inside(folder: str | Path, filename: str) -> Path | None:
    """The path of a value file named by a row, or None when the name leaves the folder."""
    root = os.path.realpath(folder)
    path = os.path.realpath(os.path.join(root, filename))
    try:
        return Path(path) if os.path.commonpath([root, path]) == root and path != root else None
    except ValueError:  # another drive (Windows): certainly not inside
        return None


class RawBytesDisk(diskcache.Disk):
    """A diskcache Disk that stores and returns bytes only, and never unpickles.

    Keys must be str (stored as text); values must be bytes (in the row, or in a file of the
    folder). A row that holds anything else, a pickled key or value in particular, is read as
    absent, and a row that names a file outside the folder is neither read nor deleted.
    """

    def put(self, key: str) -> tuple[str, bool]:
        """A key as stored: text only (diskcache would pickle anything else)."""
        if type(key) is not str:
            raise TypeError(f"cache keys are str, not {type(key).__name__}")
        return super().put(key)

    def get(self, key: object, raw: bool) -> object:
        """A stored key; a pickled one is never unpickled: it lists as None, no key at all."""
        return super().get(key, raw) if raw else None

    def store(self, value: bytes, read: bool, key: object = diskcache.core.UNKNOWN) -> tuple:
        """A value as stored: bytes only (diskcache would pickle anything else)."""
        if type(value) is not bytes or read:
            raise TypeError(f"cache values are bytes, not {type(value).__name__}")
        return super().store(value, read, key=key)

    def fetch(self, mode: int, filename: str | None, value: object, read: bool) -> bytes | None:
        """A stored value's bytes, or None (one warning line) for a row of any other kind."""
        if mode == MODE_RAW and isinstance(value, bytes | sqlite3.Binary) and not read:
            return bytes(value)
        if mode == MODE_BINARY and filename and not read and _inside(self._directory, filename):
            return super().fetch(mode, filename, value, read)
        warn_once(Path(self._directory), NOT_RAW)
        return None

    def remove(self, file_path: str) -> None:
        """Delete a value file, never one outside the folder."""
        if _inside(self._directory, file_path):
            super().remove(file_path)


class _ReadOnlyCache:
    """Reads a diskcache folder that this process may not write (a read-only classroom share).

    diskcache opens its database for writing even to read, so a read-only folder is read here
    with plain SQLite in read-only mode, or in `immutable` mode where SQLite cannot even create
    its lock file (a read-only share: `make warm` closes the cache, so nothing waits in the
    write-ahead log). Keys are stored as text, small values in the row, large ones in the file
    the row names; any other row (pickled) is absent, as for `RawBytesDisk`.
    """

    def __init__(self, folder: Path):
        self.folder = folder
        error: sqlite3.Error | None = None
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
        row = self.db.execute("SELECT mode, filename, value FROM Cache WHERE key = ? AND raw = 1",
                              (key,)).fetchone()
        if row is None:
            return None
        mode, filename, value = row
        if mode == MODE_RAW and isinstance(value, bytes):
            return value
        path = _inside(self.folder, filename) if mode == MODE_BINARY and filename else None
        if path is None:
            warn_once(self.folder, NOT_RAW)
            return None
        return path.read_bytes()

    def keys(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT key FROM Cache WHERE raw = 1")]

    def __len__(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM Cache").fetchone()[0])

    def volume(self) -> int:
        return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())


def _damaged(err: BaseException) -> bool:
    """Whether SQLite refused the database itself ("file is not a database", "malformed"), not
    the folder's permissions or a lock (OperationalError)."""
    return isinstance(err, sqlite3.DatabaseError) and not isinstance(err, sqlite3.OperationalError)


class VectorStore:
    """Arrays of one dtype keyed by string, in a folder several processes may share.

    `get` returns a (rows, width) array or None; `put_many` stores several in one transaction.
    `writable` and `readable` say what still works after a disk problem.
    """

    def __init__(self, folder: Path, *, dtype: type = np.float32):
        self.folder = Path(folder)
        self.dtype = np.dtype(dtype)
        self.readable = self.writable = False
        self._cache: diskcache.Cache | _ReadOnlyCache | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._cache = diskcache.Cache(str(self.folder), disk=RawBytesDisk, **SETTINGS)
            self.readable = self.writable = True
            _open_stores.add(self)
        except Exception as err:  # noqa: BLE001 - whatever broke the folder, the advice is the same:
            self._open_read_only(err)  # read what can be read, else compute without caching

    def _open_read_only(self, err: BaseException) -> None:
        if not self.folder.is_dir():
            self._cache = None
            warn_once(self.folder, "cannot be created: computing without caching", err)
            return
        if _damaged(err) and os.access(self.folder, os.W_OK) and self._rebuild(err):
            return
        try:
            self._cache = _ReadOnlyCache(self.folder)
            self.readable = True
            warn_once(self.folder, "is read-only: reading it, but new vectors are not stored", err)
        except DISK_ERRORS:
            self._cache = None
            writable = os.access(self.folder, os.W_OK)
            warn_once(self.folder, "is damaged and cannot be rebuilt: computing without caching" if writable
                      else "cannot be read or written: computing without caching", err)

    def _rebuild(self, err: BaseException) -> bool:
        """Set a damaged database aside (`cache.db.damaged`, for whoever wants to look) and start an
        empty store in its place, so the next run reads and writes it instead of warning again.
        Value files the old database named are left: `make clean-cache` removes them."""
        try:
            for name in ("cache.db", "cache.db-wal", "cache.db-shm"):
                if (self.folder / name).exists():
                    os.replace(self.folder / name, self.folder / f"{name}.damaged")
            self._cache = diskcache.Cache(str(self.folder), disk=RawBytesDisk, **SETTINGS)
        except Exception:  # noqa: BLE001 - the folder misbehaves further: fall back to reading it
            return False
        self.readable = self.writable = True
        _open_stores.add(self)
        warn_once(self.folder, "held a damaged database (set aside as cache.db.damaged): rebuilt, "
                               "its vectors computed again", err)
        return True

    def get(self, key: str, *, width: int | None = None, rows: int | None = None,
            unit_rows: bool = False) -> np.ndarray | None:
        """The stored array as rows of `width` (one row if no width), or None: absent, unreadable,
        or not usable (a size that is not `rows` rows of `width`, a NaN or infinity, or with
        `unit_rows` a row that is not a unit vector, as a token scaled up to outweigh the others
        would be: one warning line per folder and problem)."""
        if not self.readable:
            return None
        try:
            raw = self._cache.get(key)
        except DISK_ERRORS as err:
            self.readable = self.writable = False
            warn_once(self.folder, "could not be read: computing without caching", err)
            return None
        if raw is None:
            return None
        count, rest = divmod(len(raw), self.dtype.itemsize)
        if rest or (width and (count % width or (rows and count != rows * width))):
            per_row = f"{width} {self.dtype} values per row" if width else f"whole {self.dtype} values"
            warn_once(self.folder, f"holds vectors of the wrong dimension (expected {per_row}): "
                                   "ignored, computed again")
            return None
        flat = np.frombuffer(raw, self.dtype)
        if not np.isfinite(flat).all():
            warn_once(self.folder, "holds vectors that are not finite (NaN or infinity): ignored, "
                                   "computed again")
            return None
        found = flat.reshape(-1, width) if width else flat[None]
        if unit_rows and len(found):
            lengths = np.einsum("ij,ij->i", found.astype(np.float32), found.astype(np.float32))
            if np.abs(lengths - 1.0).max() > UNIT_ROW_TOLERANCE:
                warn_once(self.folder, "holds vectors that are not unit length: ignored, computed again")
                return None
        return found

    def put_many(self, keys: Sequence[str], arrays: Sequence[np.ndarray]) -> None:
        """Store each array (cast to the store's dtype) under its key, all in one transaction."""
        if not self.writable or not len(keys):
            return
        try:
            with self._cache.transact():
                for key, array in zip(keys, arrays, strict=True):
                    self._cache.set(key, np.ascontiguousarray(array, self.dtype).tobytes())
        except DISK_ERRORS as err:  # a full disk must not stop a lesson
            self.writable = False
            warn_once(self.folder, "cannot be written (full or read-only?): new vectors are not stored",
                       err)

    def keys(self) -> list[str]:
        """Every key in the store (empty if it cannot be read)."""
        if not self.readable:
            return []
        try:
            if isinstance(self._cache, _ReadOnlyCache):
                return self._cache.keys()
            return [key for key in self._cache.iterkeys() if key is not None]
        except DISK_ERRORS:
            return []

    def __len__(self) -> int:
        try:
            return len(self._cache) if self.readable else 0
        except DISK_ERRORS:
            return 0

    def size_bytes(self) -> int:
        """Bytes the store takes on disk (database and value files)."""
        try:
            return int(self._cache.volume()) if self.readable else 0
        except DISK_ERRORS:
            return 0

    def close(self) -> None:
        if self._cache is not None and hasattr(self._cache, "close"):
            self._cache.close()


def close_all() -> None:
    """Close every store this process opened, so SQLite folds its log into the database and the
    folder is complete on disk (before copying a warm cache, or sharing it read-only)."""
    for store in list(_open_stores):
        store.close()
