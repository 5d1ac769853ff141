"""What the command line prints: lines safe for a terminal, word of a long stage, --debug logs.

Page text, file names and messages come from anywhere, so every line goes through
`safe_text.safe` (no terminal control sequence, no password). A stage that takes long (parsing a
25 MB page, chunking and embedding it) says so on stderr every so often instead of leaving a
learner with minutes of silence; a quick one prints nothing. Within `announcing` (the `ask`
command) every stage also says its name as it starts, so a 15 MB page shows parsing, chunking,
embedding and searching one after the other; and whatever the command, Ctrl-C names the stage it
stopped (`interrupted_line`). `sigterm_as_interrupt` makes a `kill` (a container stop, a CI
timeout) end a command the way Ctrl-C does: one line, no temporary file left. `CheckedStdout`
turns a failed write of standard output (a reader that went away, `| head -1`; a full disk,
`> /dev/full`) into `StdoutFailed`, which the command line ends on instead of a traceback.
"""
from __future__ import annotations

import errno
import logging
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TextIO

from course_lib.infra.safe_text import safe

PROGRESS_AFTER_S = 10.0  # a stage that runs longer than this says so on stderr ...
PROGRESS_EVERY_S = 30.0  # ... and again this often


def say(text: str = "", *, error: bool = False) -> None:
    """Print a line (stdout, or stderr for `error`) with nothing a terminal would act on and no
    password."""
    print(safe(text), file=sys.stderr if error else sys.stdout)


# The same line as cli.INTERRUPTED_LINE, which cli defines itself: it says it before this module is imported.
INTERRUPTED_LINE = "error: interrupted — nothing was written"
_ANNOUNCE: ContextVar[bool] = ContextVar("announce stages", default=False)


@contextmanager
def announcing() -> Iterator[None]:
    """Within the block, each `progress` or `stage` says `... <what>` on stderr as it starts (and
    beats as `progress` does): a command over a huge page says which stage it is in. Lessons never
    enable it, so library code they call stays quiet."""
    token = _ANNOUNCE.set(True)
    try:
        yield
    finally:
        _ANNOUNCE.reset(token)


@contextmanager
def stage(what: str) -> Iterator[None]:
    """A stage of the library's own work (chunking, embedding): named for `interrupted_line`, and
    said on stderr like a `progress` only within `announcing`; elsewhere it costs nothing."""
    if _ANNOUNCE.get():
        with progress(what):
            yield
        return
    with _named(what):
        yield


@contextmanager
def _named(what: str) -> Iterator[None]:
    """Mark a Ctrl-C (or a SIGTERM turned into one) that leaves through this block with `what`;
    the innermost block it leaves is the stage the command was in. Kept on the exception, not in
    a global, so an interrupt caught and forgotten elsewhere names nothing later."""
    try:
        yield
    except KeyboardInterrupt as interrupt:
        if getattr(interrupt, "stage", None) is None:
            interrupt.stage = what  # type: ignore[attr-defined]
        raise


def interrupted_line(interrupt: BaseException | None = None) -> str:
    """The one line an interrupted command ends with, naming the stage `interrupt` stopped if a
    `progress` or `stage` marked it (`error: interrupted while chunking 1 page — nothing was
    written`)."""
    what = getattr(interrupt, "stage", None)
    if not what:
        return INTERRUPTED_LINE
    return INTERRUPTED_LINE.replace("interrupted", f"interrupted while {safe(what, one_line=True)}", 1)


@contextmanager
def progress(what: str, *, after_s: float | None = None, every_s: float | None = None) -> Iterator[None]:
    """Say on stderr `... <what>: <seconds> s` once the block has run `after_s` seconds (default
    PROGRESS_AFTER_S), then every `every_s` (default PROGRESS_EVERY_S), until it ends; within
    `announcing`, `... <what>` as it starts too. A Ctrl-C inside names `what` (`interrupted_line`)."""
    done, start, me = threading.Event(), time.monotonic(), object()
    first = PROGRESS_AFTER_S if after_s is None else after_s
    then = PROGRESS_EVERY_S if every_s is None else every_s

    def beat() -> None:
        wait = first
        while not done.wait(wait):
            if _running[-1:] == [me]:  # a stage inside this one speaks for it (building > chunking)
                _tell(f"... {safe(what, one_line=True)}: {time.monotonic() - start:.0f} s")
            wait = then

    _running.append(me)
    thread = threading.Thread(target=beat, daemon=True, name=f"progress: {what}")
    try:
        with _named(what):  # from before its line: a Ctrl-C the moment the line shows names this stage
            thread.start()
            if _ANNOUNCE.get():
                _tell(f"... {safe(what, one_line=True)}")
            yield
    finally:
        done.set()
        if thread.ident is not None:  # a Ctrl-C inside `start` may leave it never started
            thread.join()
        _running.remove(me)


_running: list[object] = []  # the progress blocks under way, innermost last
_TELL = threading.Lock()


def _tell(line: str) -> None:
    """One whole line on stderr: two beats at the same second never share a line."""
    with _TELL:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise KeyboardInterrupt like Ctrl-C: an atomic write
    removes its `.partial` file, an `--out` lock is let go, and the command line prints its one
    "interrupted" line instead of dying silently. The previous handler is restored after; in a
    thread other than the main one (where no handler can be set) the block runs unchanged."""
    def interrupt(signum, frame) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # SIGHUP too: a closed terminal or a dropped ssh session must not leave .partial or .lock files.
    caught = [sig for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if sig is not None]
    previous = {sig: signal.signal(sig, interrupt) for sig in caught}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class StdoutFailed(Exception):
    """Writing standard output failed: its reader went away (`broken_pipe`) or the write itself
    failed (a full disk, /dev/full, an I/O error). Deliberately not an OSError, so that no
    `except OSError` meant for a page or an `--out` file takes it for a failure of its own."""

    def __init__(self, err: OSError) -> None:
        self.errno, self.broken_pipe = err.errno, isinstance(err, BrokenPipeError)
        self.reason = err.strerror or type(err).__name__
        name = errno.errorcode.get(err.errno or 0)
        super().__init__(f"{self.reason} ({name})" if name else self.reason)


class CheckedStdout:
    """A stand-in for `sys.stdout` whose failed `write` or `flush` raises `StdoutFailed`; every
    other attribute is the real stream's. Only this wrapper knows that the failure was standard
    output's: an OSError caught later could have come from any file."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as err:
            raise StdoutFailed(err) from err

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as err:
            raise StdoutFailed(err) from err

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


class _SafeStderr(logging.Handler):
    """Log lines (and their tracebacks) on the current stderr, made safe like every other line."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(safe(self.format(record)), file=sys.stderr)
        except (OSError, ValueError):  # a closed stream: the line is lost, the command goes on
            self.handleError(record)


def debug_logging(on: bool) -> None:
    """For --debug (`on`): the library's DEBUG records (a skipped page's parser traceback) and
    the tracebacks of its warnings reach stderr. Off: back to warnings alone, one line each."""
    logger = logging.getLogger("course_lib")
    for handler in [h for h in logger.handlers if isinstance(h, _SafeStderr)]:
        logger.removeHandler(handler)
    logger.setLevel(logging.DEBUG if on else logging.NOTSET)
    if on:
        logger.addHandler(_SafeStderr())
