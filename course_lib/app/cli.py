"""The command line: `python -m course_lib COMMAND`.

    check                                   the environment self-check (OK/FAIL per requirement)
    validate-golden FILE --corpus DIR       check a golden file against a folder of HTML
    evaluate [--corpus DIR] [--golden FILE] [--pipeline NAME] [--split dev|test|all] [--out FILE]
             [--force] [--skip-invalid]     score a pipeline on a golden file, write JSON
    pipelines                               list the pipelines evaluate can run
    ask "QUESTION" [--pipeline NAME] [--k 5] [--doc PAGE] [--kinds code,table] [--prompt] [--base-url URL]
                                            ranked sources with scores (default: the final pipeline)
    compare "QUESTION" [--against NAME]     the naive pipeline and the final one side by side
    golden-draft --corpus DIR --out FILE [--n 40] [--force]
                                            draft golden lines: sampled evidence, questions left blank
    extract PAGE.html [--why]               the text the parse stage keeps of one page; --why adds the
                                            main-content choice and each removed block with its rule

Every command reports the pages it skipped or repaired (and why) before it builds anything, and
says on stderr what a long stage is doing. Bad input gets one line on stderr,
`error: <file>:<line>: <what> — <what to do>`, and an exit code per family: 2 usage, 3 corpus,
4 golden file, 5 parser, 6 model, 7 output file (standard output too: a full disk), 130
interrupted (Ctrl-C or SIGTERM, from the first import on), 141 and nothing printed when the
reader of the output went away (`| head -1`); `--debug` adds the traceback.
Whatever is printed passes through `safe_text.safe`: no terminal control sequence from a page,
no password from a URL. `--out` files are locked and written atomically (`files`).
The commands themselves are in `commands`; what they read and check first, in `inputs`.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import TextIO

from course_lib.infra.errors import INTERRUPTED, CourseError, OutputError, UsageError

INTERRUPTED_LINE = "error: interrupted — nothing was written"
# 141 is 128 + SIGPIPE: what `cat` or `grep` killed by a closed pipe reports, so a script under
# `set -o pipefail` sees a cut-off listing as cut off, never as complete.
BROKEN_PIPE = 141

try:  # numpy and the library load here (a fifth of a second): Ctrl-C then is one line and 130 too
    from course_lib.app import commands
    from course_lib.app.inputs import positive
    from course_lib.infra.onnx_encoder import ENCODERS
    from course_lib.infra.safe_text import safe
    from course_lib.infra.terminal import (
        CheckedStdout,
        StdoutFailed,
        debug_logging,
        interrupted_line,
        sigterm_as_interrupt,
    )
    from course_lib.settings import ASK_SOURCES, FINAL_PIPELINE, GOLDEN_DRAFT_SIZE
except KeyboardInterrupt:  # `main` cannot catch it: `course-lib` imports this module before calling it
    print(INTERRUPTED_LINE, file=sys.stderr)
    raise SystemExit(INTERRUPTED) from None


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line in the same shape as every other error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(UsageError.exit_code, f"error: {safe(message, one_line=True)} — see `{self.prog} --help`\n")


def _corpus_options(command: argparse.ArgumentParser, *, required: bool = False) -> None:
    """--corpus and --include, the same for every command that reads a folder of pages."""
    command.add_argument("--corpus", type=Path, required=required,
                         help="folder of HTML" + ("" if required else " (default: the shipped corpus)"))
    command.add_argument("--include", action="append", metavar="GLOB",
                         help="also read files matching GLOB, e.g. '*.php' (.html, .htm, .xhtml are read)")


def _model_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--model", help="embedding model name or folder (default: bundled MiniLM)")


def _add_golden_commands(command) -> None:
    """validate-golden, evaluate and golden-draft: the commands that read or write a golden file."""
    validate = command("validate-golden", "check a golden file against a corpus", commands.validate_golden)
    validate.add_argument("file", type=Path)
    _corpus_options(validate, required=True)
    evaluate = command("evaluate", "score a pipeline on a golden file", commands.evaluate)
    _corpus_options(evaluate)
    evaluate.add_argument("--golden", type=Path, help="golden JSONL (default: data/golden/golden.jsonl)")
    evaluate.add_argument("--pipeline", default="naive", help="a name from `pipelines`")
    evaluate.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    _model_option(evaluate)
    evaluate.add_argument("--out", type=Path, help="JSON file to write (never overwritten without --force)")
    evaluate.add_argument("--force", action="store_true",
                          help="overwrite an existing --out file (keeping its mode; "
                               "never one with a second hard link)")
    evaluate.add_argument("--skip-invalid", action="store_true",
                          help="leave out (and name) golden questions that do not match the corpus")
    draft = command("golden-draft", "draft golden lines (evidence, no question)", commands.golden_draft)
    _corpus_options(draft, required=True)
    draft.add_argument("--out", type=Path, required=True,
                       help="JSONL to write (never overwritten without --force)")
    draft.add_argument("--n", type=positive, default=GOLDEN_DRAFT_SIZE, help="how many lines to draft")
    draft.add_argument("--force", action="store_true",
                       help="overwrite an existing --out file (keeping its mode; "
                            "never one with a second hard link)")


def _add_question_commands(command) -> None:
    """ask and compare: the commands that search a corpus for one question."""
    ask = command("ask", "ranked sources for a question", commands.ask)
    ask.add_argument("question")
    ask.add_argument("--pipeline", default=FINAL_PIPELINE)
    ask.add_argument("--doc", help="only this page (path inside the corpus)")
    ask.add_argument("--kinds", help="only chunks holding these block kinds, comma-separated")
    ask.add_argument("--prompt", action="store_true", help="also print the prompt with numbered sources")
    ask.add_argument("--base-url", help="site the prompt's sources link to (default: found in the corpus)")
    compare = command("compare", "naive and final pipeline side by side", commands.compare)
    compare.add_argument("question")
    compare.add_argument("--against", default=FINAL_PIPELINE)
    for each in (ask, compare):
        each.add_argument("--k", type=positive, default=ASK_SOURCES, help="how many sources (at least 1)")
        each.add_argument("--query-encoder", choices=ENCODERS, default=ENCODERS[0],
                          help="what embeds the question: torch (default), onnx (same vectors, ONNX "
                               "Runtime) or onnx-int8 (different vectors; lesson 08 judges them)")
        _corpus_options(each)
        _model_option(each)


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one sub-command per task, each with --debug."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show the traceback of an error")
    parser = _Parser(prog="python -m course_lib", description=__doc__, parents=[common],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, help_text: str, func) -> argparse.ArgumentParser:
        sub = subparsers.add_parser(name, help=help_text, parents=[common])
        sub.set_defaults(func=func)
        return sub

    command("check", "environment self-check", commands.check)
    command("pipelines", "list the pipelines", commands.list_pipelines)
    extract = command("extract", "the text the parse stage keeps of one page", commands.extract)
    extract.add_argument("page", type=Path, help="an HTML file")
    extract.add_argument("--why", action="store_true",
                         help="also show the main-content choice and each removed block with its rule")
    _add_golden_commands(command)
    _add_question_commands(command)
    return parser


def _one_line(err: CourseError) -> str:
    """The error's one line, whitespace collapsed, made safe to print."""
    return safe(" ".join(err.one_line().split()), one_line=True)


def main(argv: list[str] | None = None) -> int:
    """Run one command (`_run`) with standard output checked and flushed before returning, so a
    reader that went away (`| head -1`) ends the command quietly with 141, and a write that fails
    (`> /dev/full`) is one line and exit 7, never a traceback or Python's "Exception ignored"."""
    real = sys.stdout
    sys.stdout = CheckedStdout(real)
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # here, not at exit, where a failure could only be a traceback
    except StdoutFailed as failed:
        return _stdout_failed(failed, real)
    finally:
        sys.stdout = real


def _stdout_failed(failed: StdoutFailed, real: TextIO) -> int:
    """Point standard output at /dev/null (Python flushes what is left at exit, which would fail
    again, loudly) and end: silently for a closed pipe, like any Unix tool, else with one line."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, real.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture): nothing left to flush
        pass
    if failed.broken_pipe:
        return BROKEN_PIPE
    print(f"error: cannot write standard output: {failed} — the output is incomplete; send it to a file or "
          "disk with room", file=sys.stderr)
    return OutputError.exit_code


def _run(argv: list[str] | None) -> int:
    """Run one command; a user-facing error (a CourseError) becomes one line and its family's exit
    code, and Ctrl-C (or SIGTERM) one line and 130, from parsing the arguments on. Anything else
    is a bug and keeps its traceback. `--debug` prints the traceback of a user-facing error too
    (with the error it came from), and the traceback of each cache warning."""
    args = None
    try:
        for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 must not crash a print
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        args = build_parser().parse_args(argv)
        debug_logging(args.debug)
        with sigterm_as_interrupt():  # a `kill` ends the command like Ctrl-C: one line, no temporary file
            return args.func(args)
    except KeyboardInterrupt as interrupt:
        if getattr(args, "debug", False):
            raise
        print(interrupted_line(interrupt), file=sys.stderr)  # names the stage it stopped, if any
        return INTERRUPTED
    except CourseError as err:
        if getattr(args, "debug", False):
            print(safe(traceback.format_exc()), file=sys.stderr, end="")
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
