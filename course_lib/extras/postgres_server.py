"""Where lesson 11's PostgreSQL comes from: an embedded server, or any server by URL.

`embedded_server()` starts a real PostgreSQL 16 with pgvector (the PyPI package `pgserver`) in a
private per-user folder and stops it on exit, or hands back `DATABASE_URL` when that names another server;
`connect()` opens a psycopg 3 connection with an error a learner can act on. `course_lib.extras.postgres`
builds the index on top; the errors of both live here.
"""
from __future__ import annotations

import getpass
import os
import stat
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from course_lib.infra.errors import CourseError
from course_lib.infra.safe_text import redact

DOCKER_HINT = "docker run -d -p 5432:5432 -e POSTGRES_PASSWORD=pw pgvector/pgvector:pg16"


class DatabaseURL(str):
    """A database URL that works as the string it is but shows no password when displayed.

    A notebook cell that ends in `url`, a log of the repr, or an error that quotes it shows
    `postgresql://alice:***@host/db`; `connect(url)` still gets the real one.
    """

    def __repr__(self) -> str:
        return repr(redact(str(self)))

    def redacted(self) -> str:
        """The URL with its password replaced by ***."""
        return redact(str(self))


class StoreError(CourseError):
    """The PostgreSQL store cannot be used as it is: no server, no pgvector, a stale index.

    A `CourseError` like every user-facing error of the library, in its own family (exit code 8,
    the database), with one line: what is wrong — what to do. Both parts pass through `redact`,
    so a database URL in either never shows its password.
    """

    exit_code = 8

    def __init__(self, what: str, *, hint: str = "") -> None:
        super().__init__(redact(what), hint=redact(hint))


class StaleIndexError(StoreError):
    """The index was built with another embedding model (or dimension) than the one asked for."""

    def __init__(self, what: str) -> None:
        super().__init__(what, hint="open the store with rebuild=True to re-index with this model")


# ---------------------------------------------------------------------------------------------
# The server


def default_data_dir() -> Path:
    """A private per-user folder for the embedded server's data (`COURSE_PG_DIR` overrides it).

    `<course cache>/postgres-<user>/data`, its parent created 0700 and refused when another user
    owns it or can write to it (a predictable folder under /tmp could be pre-created by anyone).
    When the cache is a read-only share, a fresh `tempfile.mkdtemp` folder instead: the index is
    rebuilt from the corpus, so losing it costs time, not data.
    """
    override = os.environ.get("COURSE_PG_DIR")
    if override:
        return Path(override)
    from course_lib.infra.paths import cache_dir

    try:
        return private_folder(cache_dir() / f"postgres-{getpass.getuser()}") / "data"
    except OSError:  # a read-only or missing cache folder; a foreign one is a StoreError
        return Path(tempfile.mkdtemp(prefix="course_lib-pg-")) / "data"


def private_folder(folder: Path) -> Path:
    """`folder`, created with mode 0700, or an existing one that only this user owns and can write.

    Raises `StoreError` for a symlink, a file, or a folder owned by (or writable for) someone
    else: PostgreSQL would run on data another user controls.
    """
    try:
        folder.mkdir(mode=0o700)
        return folder
    except FileExistsError:
        pass
    info = folder.lstat()
    foreign = stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()
    if foreign or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise StoreError(f"the embedded server's folder {folder} is not private to this user",
                         hint="remove it, or set COURSE_PG_DIR to a folder of your own")
    return folder


@contextmanager
def embedded_server(data_dir: str | Path | None = None, *, use_env: bool = True) -> Iterator[str]:
    """Yield a PostgreSQL URL: `DATABASE_URL` if set, else an embedded server stopped on exit.

    `use_env=False` always starts the embedded one (the tests do, so they never drop tables on
    a server a learner pointed DATABASE_URL at).
    """
    url = os.environ.get("DATABASE_URL") if use_env else None
    if url:
        yield DatabaseURL(url)
        return
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); pgserver copes.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pgserver

        server = pgserver.get_server(Path(data_dir or default_data_dir()), cleanup_mode="stop")
    try:
        yield DatabaseURL(server.get_uri())
    finally:
        server.cleanup()


def connect(url: str):
    """Open an autocommit psycopg 3 connection, with a message a learner can act on if it fails.

    The message names the URL without its password (`postgresql://alice:***@host/db`); so does
    psycopg's own first line, which quotes connection settings.
    """
    import psycopg

    try:
        return psycopg.connect(str(url), autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise StoreError(f"no PostgreSQL server reachable at {url} ({first})",
                         hint=f"unset DATABASE_URL to use the embedded server, or start one: {DOCKER_HINT}"
                         ) from err
