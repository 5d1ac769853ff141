"""Files the course writes and hashes: one atomic write for every writer, one file hash.

Every file the library writes (an `--out` result, a golden draft, a cached JSON result, a lesson
record, the shipped embeddings) goes through `atomic_write` or `atomic_open`: the bytes go to a
new temporary file in the same folder, are flushed to the disk (fsync), and only then renamed
over the target. A rename within one folder is atomic, so a reader, or a learner whose run was
killed half-way (Ctrl-C, a full disk, SIGKILL), finds either the old file or the new one, never
half of one. The temporary file's name starts with a dot and ends in `.partial`, so no loader
mistakes it for data.

`file_sha256` is the one place that reads a file to hash it (manifests, model fingerprints, the
shipped embeddings' checksum); `check_out` the one set of rules an `--out` path must pass
before a command runs: it is a regular file or a new path (never a device, a FIFO or a folder,
which a rename would replace: `/dev/null` turned into a plain file breaks a whole machine), and
a symlink is followed to the regular file it names, which is written while the link is kept.
`claim_out` adds a lock: of two commands writing one `--out`, the second fails at once ("another
process is writing ...") instead of both reporting success while one result is lost.
"""
from __future__ import annotations

import atexit
import errno
import hashlib
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from course_lib.infra.errors import OutputError

try:  # POSIX; Windows has no fcntl, and locks a byte of the file with msvcrt instead
    import fcntl
except ImportError:  # pragma: no cover - exercised by tests/test_files_portable.py with fcntl hidden
    fcntl = None
# Flags Windows lacks: 0 there (a symlink is then followed, as Windows' own tools do).
_OPEN_LOCK = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _try_lock(fd: int) -> None:
    """Take an exclusive lock on an open file without waiting; OSError (EWOULDBLOCK/EAGAIN, or
    EACCES on Windows) when another process holds it."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    import msvcrt

    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError as err:
        raise OSError(errno.EWOULDBLOCK, err.strerror or "locked") from err

_BLOCK = 1 << 20  # read files in 1 MiB blocks: hashing a 90 MB model never holds it in memory


def hash_file_into(digest: hashlib._Hash, path: str | Path) -> hashlib._Hash:
    """Feed a file's bytes into `digest` block by block and return the digest."""
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest


def file_sha256(path: str | Path) -> str:
    """The sha256 hex digest of a file's bytes."""
    return hash_file_into(hashlib.sha256(), path).hexdigest()


def partial_path(path: Path) -> Path:
    """A fresh temporary name next to `path`: `.<name>.<random>.partial`."""
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.partial")


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable; some systems cannot open a folder, which is harmless."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


_SPECIAL_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                  (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def special_kind(mode: int) -> str | None:
    """What a file of this `st_mode` is when it is a device, a FIFO or a socket ("a FIFO (named
    pipe)"), None otherwise: one wording for every command that refuses such a path."""
    return next((what for test, what in _SPECIAL_KINDS if test(mode)), None)


def _special(path: Path) -> str | None:
    """What `path` is when it exists and is neither a regular file, a folder nor a symlink (a
    device, a FIFO, a socket): a rename over it would replace it. None otherwise."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return special_kind(mode)


def _refuse_special(path: Path) -> None:
    """Raise an OSError instead of renaming over a device, FIFO or socket."""
    what = _special(path)
    if what is not None:
        raise OSError(errno.EINVAL, f"{path} is {what}, not a regular file: never replaced")


def _keep_owner_and_mode(fd: int, target: Path) -> None:
    """Give the new file the mode (and, where allowed, the group and owner) of the file it will
    replace: a private file (0600) must not come back readable by everyone. Its inode is new: an
    in-place write could not be atomic, so a second hard link keeps the old contents (`check_out`
    refuses such an `--out` for that reason)."""
    try:
        old = os.stat(target)
    except OSError:  # nothing there yet: the umask decides, as for any new file
        return
    if not stat.S_ISREG(old.st_mode):
        return
    if not hasattr(os, "fchmod"):  # Windows before Python 3.13: its files have no such mode bits
        return
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except OSError:  # another user's file: the mode is kept, the owner is whoever writes
        pass


@contextmanager
def atomic_open(path: str | Path) -> Iterator[BinaryIO]:
    """Open a binary handle whose bytes replace `path` only when the block ends without an error.

    The temporary file is created with mode 0o666 minus the umask, like any new file, or with the
    mode (and group) of the file it replaces, so a private file stays private. On any error (or
    KeyboardInterrupt) the temporary file is removed and `path` is left as it was. A `path` that
    is a device, a FIFO or a socket is an OSError, before anything is written and again before
    the rename.
    """
    target = Path(path)
    _refuse_special(target)
    partial = partial_path(target)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        _keep_owner_and_mode(fd, target)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        _refuse_special(target)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    _fsync_folder(target.parent)


def atomic_write(path: str | Path, data: bytes | str, *, encoding: str = "utf-8") -> None:
    """Replace `path` with `data` (text is encoded with `encoding`) atomically; see `atomic_open`."""
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_open(path) as handle:
        handle.write(payload)


def _same_file(a: Path, b: Path) -> bool:
    """True when both paths name one file: same device and inode, so a hard link or a symlink to
    an input counts as the input itself."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: not the same file
        return False


def _read_only(path: Path) -> bool:
    """True for a file its owner marked read-only (root may write it anyway: the mark decides)."""
    return not path.stat().st_mode & stat.S_IWUSR or not os.access(path, os.W_OK)


def _followed(out: Path) -> Path:
    """`out`, or the regular file a symlink `out` names (through any chain of links); refuses a
    dangling link and a link to a device, FIFO or socket."""
    if not out.is_symlink():
        return out
    target = Path(os.path.realpath(out))
    if not target.exists():
        raise OutputError("--out is a symlink to a file that does not exist", path=out,
                          hint="point the link at a regular file, or give a plain file name")
    what = _special(target)
    if what is not None:
        raise OutputError(f"--out is a symlink to {what} ({target}), not a regular file", path=out,
                          hint="give a regular file name")
    return target


def _resolved(path: Path) -> Path:
    """`path` resolved, or made absolute where a symlink loop stops resolving (Python raises
    RuntimeError for one; the input that holds it says so when it is read)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def _refuse_loop(out: Path) -> None:
    """An OutputError when `out` or a folder above it is a symlink loop (the system's ELOOP):
    it can be neither read nor written, and resolving it would raise."""
    try:
        os.stat(out)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise OutputError("--out or a folder above it is a symlink loop", path=out,
                              hint="give a path whose links end at a file or folder") from None


def _is_standard_stream(out: Path) -> bool:
    """True when `out` is the file this process's stdout or stderr writes (`/dev/stdout`, or the
    file `> result.json` redirected it to): an atomic replace would swap the file under the shell's
    redirection and lose what was written to it before."""
    try:
        found = os.stat(out)
    except OSError:
        return False
    for fd in (1, 2):
        try:
            stream = os.fstat(fd)
        except OSError:
            continue
        if (stream.st_dev, stream.st_ino) == (found.st_dev, found.st_ino):
            return True
    return False


def check_out(out: Path, *, force: bool, corpus: Path, inputs: list[Path]) -> Path:
    """Refuse an `--out` path before the run, with an OutputError, when writing it would destroy
    data (an input, by identity; a file in the corpus; an existing file without `force`; a file
    marked read-only; a file with a second hard link, whose other names a replace would not
    change, even with `force`; a device, FIFO or socket, even with `force`; the file standard
    output or error writes) or cannot succeed (a folder; a missing or read-only folder; a dangling symlink;
    a symlink loop). Returns the path to write: `out`, or the
    regular file a symlink `out` names (the link is kept, its target replaced)."""
    _refuse_loop(out)
    if _is_standard_stream(out):
        raise OutputError("--out is this command's own standard output or error (already open, maybe "
                          "redirected to a file): replacing it would destroy what it holds", path=out,
                          hint="leave out --out to print, or give a regular file name")
    if any(_same_file(out, p) or _resolved(out) == _resolved(p) for p in inputs):
        raise OutputError("--out is one of the inputs", path=out, hint="write the result to another file")
    if _resolved(out).is_relative_to(_resolved(corpus)):
        raise OutputError("--out is inside the corpus folder", path=out, hint="write the result elsewhere")
    if out.is_dir():
        raise OutputError("--out is a folder", path=out, hint="give a file name")
    real = _followed(out)
    what = _special(real)
    if what is not None:
        raise OutputError(f"--out is {what}, not a regular file: never replaced, even with --force",
                          path=out, hint="give a regular file name")
    if real.exists() and not force:
        raise OutputError("the file exists", path=out,
                          hint="pass --force to overwrite it, or choose another --out")
    if real.exists() and _read_only(real):
        raise OutputError("the file is read-only", path=out,
                          hint="make it writable (chmod u+w) if it may be replaced, or choose another --out")
    links = real.stat().st_nlink if real.exists() else 1
    if links > 1:  # the atomic replace gives the path a new inode: the other names keep the old bytes
        raise OutputError(f"the file has {links} names (hard links): replacing it here would leave the "
                          "others holding the old contents", path=out,
                          hint="write to another file, or remove its other links first")
    folder = real.parent if str(real.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError("its folder does not exist", path=out, hint=f"create {folder} first")
    if not os.access(folder, os.W_OK):
        raise OutputError("its folder is not writable", path=out, hint="choose a folder you can write to")
    return real


_held: dict[Path, int] = {}  # the --out files this process holds the lock of, and the lock's descriptor


def _lock_path(real: Path) -> Path:
    return real.with_name(f".{real.name}.lock")


def _release_all() -> None:
    """At exit: remove each lock file this process holds (if it is still ours), then let it go."""
    for real, fd in list(_held.items()):
        lock = _lock_path(real)
        try:
            if os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                lock.unlink()
        except OSError:
            pass
        os.close(fd)
        del _held[real]


atexit.register(_release_all)


def _lock(out: Path, real: Path) -> None:
    """Hold an exclusive lock on `.<name>.lock` next to `real` until this process ends (the
    system drops it even after SIGKILL; a stale lock file is taken over). Raises OutputError at
    once when another process holds it."""
    if real in _held:
        return
    lock = _lock_path(real)
    while True:
        try:
            fd = os.open(lock, _OPEN_LOCK, 0o666)
        except OSError as err:
            raise OutputError(f"cannot create the lock file {lock.name} ({err.strerror or err})", path=out,
                              hint="choose a folder you can write to") from err
        try:
            _try_lock(fd)
        except OSError as err:
            os.close(fd)
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise OutputError(f"cannot lock {lock.name} ({err.strerror or err})", path=out,
                                  hint="choose another --out") from err
            raise OutputError(f"another process is writing {out}",
                              hint="wait for it to finish, or choose another --out") from None
        try:  # the holder before us may have removed the file between our open and our lock
            same = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            _held[real] = fd
            return
        os.close(fd)


def claim_out(out: Path, *, force: bool, corpus: Path, inputs: list[Path]) -> Path:
    """`check_out`, then the lock on the file to write (held until this process ends), then
    `check_out` again under the lock (a writer that finished meanwhile made the file exist).
    Returns the path to write, like `check_out`."""
    real = check_out(out, force=force, corpus=corpus, inputs=inputs)
    _lock(out, real)
    return check_out(out, force=force, corpus=corpus, inputs=inputs)
