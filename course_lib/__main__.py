"""`python -m course_lib`: the command line of `course_lib.app.cli`.

An interrupt that lands while C code runs Python source (an import that calls `PyRun_String`) sets
CPython's "unhandled Ctrl-C" flag even after the library has caught it and printed its line; on a
normal exit the interpreter would then kill itself with SIGINT (status -2) instead of exiting 130.
So an interrupted command leaves with `os._exit` once its streams are flushed. The `course-lib`
console script calls the same `run`.
"""
import os
import sys

INTERRUPTED = 130  # course_lib.infra.errors.INTERRUPTED, not imported: Ctrl-C may land in that import


def _leave_interrupted() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said there
            pass
    os._exit(INTERRUPTED)


def run() -> None:
    """The command line, for `python -m course_lib` and the `course-lib` console script alike, so
    both leave an interrupted command the same way (exit 130, one line)."""
    try:
        from course_lib.app.cli import main
    except KeyboardInterrupt:  # Ctrl-C before cli's own guard of its imports: the same one line and 130
        print("error: interrupted — nothing was written", file=sys.stderr)
        _leave_interrupted()
    except SystemExit as stop:  # cli's own import guard caught Ctrl-C and said so
        if stop.code == INTERRUPTED:
            _leave_interrupted()
        raise
    code = main()
    if code == INTERRUPTED:
        _leave_interrupted()
    sys.exit(code)


if __name__ == "__main__":
    run()
