"""Where lesson 11's PostgreSQL comes from: an embedded server, or any server by URL.

`embedded_server()` starts a real PostgreSQL 16 with pgvector (the PyPI package `pgserver`) in a
per-user folder and stops it on exit, or hands back `DATABASE_URL` when that names another server;
`connect()` opens a psycopg 3 connection with an error a learner can act on. `course_lib.extras.postgres`
builds the index on top; the errors of both live here.
"""
from __future__ import annotations

import getpass
import os
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
    """A per-user writable folder for the embedded server's data (`COURSE_PG_DIR` overrides it).

    Not the course cache: a classroom may share that read-only, and PostgreSQL needs to own and
    write its data folder. The index is rebuilt from the corpus, so a temp folder is enough.
    """
    override = os.environ.get("COURSE_PG_DIR")
    return Path(override) if override else Path(tempfile.gettempdir()) / f"course_lib-pg-{getpass.getuser()}"


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
