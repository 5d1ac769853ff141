"""The library's user-facing errors: what went wrong, where, and what to do about it.

Every error a learner can cause with their own input (a folder, a golden file, a question, an
output path, a model name) is a `CourseError`. The command line catches exactly these and prints
one line, `error: <file>:<line>: <what> — <what to do>`, with an exit code per family, so a
script can tell a bad corpus from a bad golden file; anything else is a bug and keeps its
traceback.
"""
from __future__ import annotations

from pathlib import Path


class CourseError(Exception):
    """Base of every user-facing error; `exit_code` is the command line's exit status for it."""

    exit_code = 1

    def __init__(self, what: str, *, path: str | Path | None = None, line: int | None = None,
                 hint: str = "") -> None:
        self.what, self.path, self.line, self.hint = what, path, line, hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """`<file>:<line>: <what> — <hint>`, leaving out the parts that are not known."""
        where = "" if self.path is None else f"{self.path}:" + ("" if self.line is None else f"{self.line}:")
        text = f"{where} {self.what}" if where else self.what
        return f"{text} — {self.hint}" if self.hint else text


class UsageError(CourseError):
    """A command-line value that cannot work: an empty question, `--k 0`, an unknown pipeline."""

    exit_code = 2  # argparse uses 2 for its own usage errors


class CorpusError(CourseError):
    """The corpus is missing, corrupt, unsafe or has no usable page."""

    exit_code = 3


class GoldenError(CourseError, ValueError):
    """A golden file that cannot be read or does not match the corpus."""

    exit_code = 4


class ParseError(CourseError):
    """A page that cannot be parsed as HTML; `reason` is what is wrong with it (no path)."""

    exit_code = 5

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(reason, path=str(path))
        self.reason = reason


class ParserFailures(ParseError):
    """Too many pages broke the parser itself: a bug or a wrong option, not a few odd pages."""

    def __init__(self, what: str) -> None:
        CourseError.__init__(self, what, hint="run with --debug and report the traceback")
        self.reason = what


class ModelLoadError(CourseError):
    """A model that cannot be loaded (offline, missing package, wrong folder)."""

    exit_code = 6


class OutputError(CourseError):
    """An output path that would overwrite data or cannot be written."""

    exit_code = 7


INTERRUPTED = 130  # the shell's convention for Ctrl-C
