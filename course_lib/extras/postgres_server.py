"""Where lesson 11's PostgreSQL comes from: an embedded server, or any server by URL.

`embedded_server()` starts a real PostgreSQL 16 with pgvector (the PyPI package `pgserver`) in a
private per-user folder and stops it on exit, or hands back `DATABASE_URL` when that names another server;
`connect()` opens a psycopg 3 connection with an error a learner can act on. `course_lib.extras.postgres`
builds the index on top; the errors of both live here.
"""
from __future__ import annotations

import getpass
import os
import re
import stat
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

from course_lib.infra.errors import CourseError
from course_lib.infra.safe_text import HIDDEN, redact

DOCKER_HINT = "docker run -d -p 5432:5432 -e POSTGRES_PASSWORD=pw pgvector/pgvector:pg16"


class DatabaseURL(str):
    """A database URL that works as the string it is but shows no password when displayed.

    A notebook cell that ends in `url`, a log of the repr, or an error that quotes it shows
    `postgresql://alice:***@host/db`; `connect(url)` still gets the real one.
    """

    def __repr__(self) -> str:
        return repr(shown_url(str(self)))

    def redacted(self) -> str:
        """The URL with its password replaced by *** (`shown_url`)."""
        return shown_url(str(self))


UNPARSEABLE = "(unparseable URL, not shown)"
URL_HINT = ("percent-encode the password's special characters in DATABASE_URL (@ as %40, a space as %20, "
            "% as %25, : as %3A, / as %2F), or unset it to use the embedded server")
_SCHEME = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)", re.S)
_USER = re.compile(r"[A-Za-z0-9._~%+-]*")
# One host or a comma-separated list (libpq's failover form), each a name or [IPv6], with a port
# of digits only: a "port" of letters is a password whose `@` was left out.
_HOSTS = re.compile(r"(?:(?:[A-Za-z0-9._~%-]+|\[[0-9A-Fa-f:.%]+\])(?::\d+)?(?:,(?!$)|$))*")
_TAIL = re.compile(r"(?:/[^\s?#]*)?(?:\?\S*)?")  # /db and ?options, no white space
_SHORTEST_HIDDEN = 4  # a shorter piece of a password cannot be cut out of a message: the message is withheld


def _split_url(url: str) -> tuple[str, str | None, str | None, str, str] | None:
    """(scheme, user, password, hosts, /db?options) of a URL as a learner may have typed it (user
    None without an `@`, password None without a `:`), or None when it cannot be read safely. The
    password runs to the LAST `@`, spaces, `/` and `@` included: libpq stops at the first, but
    everything before the last one may be the password."""
    match = _SCHEME.fullmatch(url.strip())
    if match is None:
        return None
    credentials, at, rest = match["rest"].rpartition("@")
    user, colon, password = credentials.partition(":")
    hosts, tail = re.match(r"([^/?]*)(.*)", rest, re.S).groups()
    if not (_USER.fullmatch(user) and _HOSTS.fullmatch(hosts) and _TAIL.fullmatch(tail)):
        return None
    return match["scheme"], user if at else None, password if colon else None, hosts, tail


def shown_url(url: str) -> str:
    """`scheme://user:***@host/db` for a database URL, its password hidden even when malformed (a
    space, a bad `%` escape, an unencoded `@`), or UNPARSEABLE when no part of it can be shown
    with certainty that it is not the password (an `@` left out makes the password the port)."""
    parts = _split_url(url)
    if parts is None:
        return UNPARSEABLE
    scheme, user, password, hosts, tail = parts
    credentials = "" if user is None else user + ("" if password is None else f":{HIDDEN}") + "@"
    return f"{scheme}://{credentials}{hosts}{redact(tail)}"


def scrubbed(message: str, url: str) -> str:
    """libpq's (or psycopg's) message about `url` with the password's text cut out: libpq quotes
    the token it chokes on ("S3cret Pass", or "Tail@host" of `Head@Tail@host`). Each piece of the
    password between `@`, `/`, `:` and spaces goes, raw and percent-decoded; when a piece too short to cut
    out safely appears, or the URL cannot be read, the message is withheld."""
    parts = _split_url(url)
    if parts is None:
        return "libpq's message not shown: it may quote the password"
    password = parts[2] or ""
    pieces = {password, unquote(password)} | set(re.split(r"[@\s/:?#]+", password + " " + unquote(password)))
    for piece in sorted(filter(None, pieces), key=len, reverse=True):
        if len(piece) < _SHORTEST_HIDDEN and piece in message:
            return "libpq's message not shown: it may quote the password"
        message = message.replace(piece, HIDDEN)
    return redact(message)


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
    """Open an autocommit psycopg 3 connection, with one line a learner can act on if it fails.

    A URL psycopg cannot read (a space or an `@` in the password, a bad `%` escape, another
    scheme) or a server it cannot reach is a `StoreError` naming the URL as `shown_url` shows it
    and libpq's first line with the password cut out (`scrubbed`): libpq quotes what it read.
    Raised `from None`: the psycopg error it replaces quotes the password."""
    import psycopg

    text, shown = str(url), shown_url(str(url))
    parts = _split_url(text)
    if parts is not None and parts[0] not in ("postgresql", "postgres"):
        raise StoreError(f"the database URL {shown} is not a PostgreSQL URL",
                         hint="one starts postgresql:// or postgres:// — fix DATABASE_URL, or unset it "
                              "to use the embedded server")
    try:
        return psycopg.connect(text, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as err:
        raise StoreError(f"no PostgreSQL server reachable at {shown} ({_first_line(err, text)})",
                         hint=f"unset DATABASE_URL to use the embedded server, or start one: {DOCKER_HINT}"
                         ) from None
    except (psycopg.ProgrammingError, ValueError) as err:  # psycopg's conninfo parsing
        raise StoreError(f"the database URL {shown} cannot be read ({_first_line(err, text)})",
                         hint=URL_HINT) from None


def _first_line(err: Exception, url: str) -> str:
    """The error's first line, password cut out (`scrubbed`), or its type when it has no text."""
    lines = str(err).strip().splitlines()
    return scrubbed(lines[0], url) if lines else type(err).__name__
