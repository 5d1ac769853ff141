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

Every command reports the pages it skipped or repaired (and why) before it builds anything, and
says on stderr what a long stage is doing. Bad input gets one line on stderr,
`error: <file>:<line>: <what> — <what to do>`, and an exit code per family: 2 usage, 3 corpus,
4 golden file, 5 parser, 6 model, 7 output file, 130 interrupted; `--debug` adds the traceback.
Whatever is printed passes through `safe_text.safe`: no terminal control sequence from a page,
no password from a URL. `--out` files are locked and written atomically (`files`).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from pathlib import Path

from course_lib.infra.errors import (
    INTERRUPTED,
    CorpusError,
    CourseError,
    GoldenError,
    OutputError,
    UsageError,
)
from course_lib.infra.files import atomic_write, claim_out
from course_lib.infra.models import estimating
from course_lib.infra.safe_text import safe
from course_lib.infra.terminal import debug_logging, progress, say, sigterm_as_interrupt
from course_lib.settings import ASK_SOURCES, FINAL_PIPELINE, GOLDEN_DRAFT_SIZE

_CANONICAL = re.compile(r"""<(?:link[^>]*rel=["']?canonical["']?[^>]*href|base[^>]*href)=["']?(https?://[^"'\s>]+)""",
                        re.I)
_HAS_WORD = re.compile(r"\w")


# --- checks that run before anything is built ------------------------------------------------

def _pipeline_name(name: str) -> str:
    from course_lib.core.pipeline import PIPELINES
    from course_lib.extras.peers import PEERS

    if name not in PIPELINES and name not in PEERS:
        raise UsageError(f"unknown pipeline {name!r}", hint=f"use one of {', '.join([*PIPELINES, *PEERS])}")
    return name


def _question(text: str) -> str:
    if not _HAS_WORD.search(text):
        raise UsageError("the question is empty or has no words", hint="ask a question in words")
    return text.strip()


def _positive(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if k < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {k}")
    return k


def _load(args: argparse.Namespace, *, parse: bool = True):
    """The corpus for a command, with its skipped, repaired and ignored files printed, and the
    parser's skips too."""
    from course_lib.core.load import describe_skips, load_corpus

    with progress("reading the pages"):
        loaded = load_corpus(args.corpus, include=args.include or ())
    for line in loaded.notes():
        say(line)
    if parse:
        from course_lib.core.pipeline import clean_corpus

        size = sum(len(page.html) for page in loaded.pages) / 1e6
        with progress(f"parsing {_pages(len(loaded.pages))} ({size:.1f} MB)"):
            blocks, skipped, _ = clean_corpus(loaded.pages)
        for path, reason in skipped:
            say(f"skipped {path}: {reason}")
        if not blocks:
            every = [*loaded.skipped, *skipped]
            raise CorpusError(f"no usable page: all {len(every)} were skipped: {describe_skips(every)}",
                              path=loaded.folder, hint="the lines above say why; add pages with real text")
    return loaded


def _pages(n: int) -> str:
    return f"{n} page" if n == 1 else f"{n} pages"


def _build(name: str, loaded, *, model: str | None):
    """A pipeline over the loaded pages, saying on stderr what it is doing if that takes long."""
    from course_lib.extras.peers import build_any

    with progress(f"building the {name!r} index over {_pages(len(loaded.pages))}"), estimating():
        return build_any(name, loaded.pages, model=model)


def _base_url(args: argparse.Namespace, loaded) -> str:
    """--base-url, else the corpus's own (a shipped corpus, or a canonical link / <base> in a
    page, minus the page's path), else "" so prompts cite page paths, never a made-up site."""
    if getattr(args, "base_url", None):
        return args.base_url if args.base_url.endswith("/") else args.base_url + "/"
    if loaded.base_url:
        return loaded.base_url
    for page in loaded.pages:
        match = _CANONICAL.search(page.html[:20_000])
        if match and match.group(1).endswith(page.path):
            return match.group(1)[: len(match.group(1)) - len(page.path)]
    return ""


# --- commands --------------------------------------------------------------------------------

def _check(args: argparse.Namespace) -> int:
    from course_lib.infra.check import format_results, run_checks

    results = run_checks()
    say(format_results(results))
    for result in results:
        if args.debug and result.error is not None:
            say("".join(traceback.format_exception(result.error)), error=True)
    return 0 if all(r.ok for r in results) else 1


def _validate(args: argparse.Namespace) -> int:
    from course_lib.evaluation.golden_checks import check_golden

    loaded = _load(args, parse=False)
    result = check_golden(args.file, loaded.folder, pages={p.path: p.html for p in loaded.pages})
    for message in result.messages():
        say(message)
    unreadable = len({line for line, qid, _ in result.problems if qid is None})
    say(f"{len(result.questions) + unreadable} questions, {len(result.problems)} errors")
    return 1 if result.problems else 0


def _pipelines(args: argparse.Namespace) -> int:
    from course_lib.core.pipeline import PIPELINES

    for name, (_, description) in PIPELINES.items():
        say(f"{name:<16} {description}")
    return 0


def _golden_questions(args: argparse.Namespace, loaded, golden: Path, split: str | None):
    """The golden questions checked against this corpus by the validate-golden judge; refuses
    on any problem unless --skip-invalid, which names what it leaves out."""
    from course_lib.evaluation.golden_checks import check_golden

    result = check_golden(golden, loaded.folder, pages={p.path: p.html for p in loaded.pages}, split=split)
    answerable = [q for q in result.questions if q.answerable]
    bad_ids = {qid for _, qid, _ in result.problems}
    if answerable and all(q.id in bad_ids for q in answerable) and args.golden is None:
        raise GoldenError("none of the shipped golden questions is about this corpus", path=golden,
                          hint="pass --golden with questions about your own pages")
    if result.problems and not args.skip_invalid:
        for message in result.messages()[:20]:
            say(f"  {message}", error=True)
        raise GoldenError(f"{len(result.problems)} problems with the golden file against {loaded.folder}",
                          path=golden, hint="fix them (see above) or pass --skip-invalid to leave them out")
    questions = [q for q in result.questions if q.id not in bad_ids]
    if result.problems:
        lines = sorted({line for line, _, _ in result.problems})
        say(f"skipped {len(lines)} invalid golden lines: "
            + ", ".join(f"{line} ({qid})" if qid else str(line)
                        for line, qid in sorted({(ln, q) for ln, q, _ in result.problems})))
    if not any(q.answerable for q in questions):
        raise GoldenError(f"no answerable question in split {args.split!r}", path=golden,
                          hint="use --split all, or add questions with a doc, section and evidence")
    return questions


def _evaluate(args: argparse.Namespace) -> int:
    from course_lib.evaluation.metrics import HEADLINE_METRICS, by_kind, evaluate_retriever, summary
    from course_lib.infra.paths import GOLDEN_FILE

    _pipeline_name(args.pipeline)
    golden = args.golden or GOLDEN_FILE
    out = args.out or Path(f"evaluation-{args.pipeline}-{args.split}.json")
    corpus_root = args.corpus
    if corpus_root is None:
        from course_lib.core.load import CORPUS_DIR

        corpus_root = CORPUS_DIR
    out = claim_out(out, force=args.force, corpus=corpus_root, inputs=[golden])  # locked; a symlink: its file
    loaded = _load(args)
    questions = _golden_questions(args, loaded, golden, None if args.split == "all" else args.split)
    retriever = _build(args.pipeline, loaded, model=args.model)
    run = evaluate_retriever(retriever, questions, name=args.pipeline)
    result = {**summary(run), "split": args.split, "by_kind": by_kind(run),
              "pages": len(loaded.pages), "chunks": len(retriever.chunks)}
    for key in HEADLINE_METRICS:
        lo, hi = result[f"{key}_ci"]
        say(f"{key:<10} {result[key]:.3f}  95% CI [{lo:.3f}, {hi:.3f}]")
    try:
        atomic_write(out, json.dumps(result, indent=2))
    except OSError as err:
        raise OutputError(f"cannot write ({err.strerror or err}); the old file, if any, is unchanged",
                          path=out, hint="the metrics are above") from err
    say(f"{result['n_answerable']} answerable, {result['n_unanswerable']} unanswerable questions; "
        f"{len(retriever.chunks)} chunks from {len(loaded.pages)} pages; written to {out}")
    return 0


def _golden_draft(args: argparse.Namespace) -> int:
    from course_lib.core.pipeline import clean_corpus
    from course_lib.extras.golden_draft import draft_golden, write_drafts

    args.out = claim_out(args.out, force=args.force, corpus=args.corpus, inputs=[])  # locked
    loaded = _load(args)
    drafts = draft_golden(clean_corpus(loaded.pages)[0], n=args.n)
    try:
        write_drafts(drafts, args.out)
    except OSError as err:
        raise OutputError(f"cannot write ({err.strerror or err}); the old file, if any, is unchanged",
                          path=args.out, hint="choose another --out") from err
    kinds = ", ".join(f"{k} {sum(d.kind == k for d in drafts)}" for k in sorted({d.kind for d in drafts}))
    say(f"{len(drafts)} drafted lines from {len({d.doc for d in drafts})} pages ({kinds}) written to "
        f"{args.out}; write each question, then run validate-golden {args.out} --corpus {args.corpus}")
    return 0


def _where(args: argparse.Namespace, chunks):
    """The --doc/--kinds filter, refusing a value that matches nothing in this index."""
    from course_lib.core.retrieve import make_filter

    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] if args.kinds else None
    if args.doc:
        docs = sorted({c.doc for c in chunks})
        if args.doc not in docs:
            raise UsageError(f"--doc {args.doc!r} matches no page", hint=f"try one of {', '.join(docs[:5])}")
    if kinds:
        known = sorted({k for c in chunks for k in c.kinds})
        unknown = [k for k in kinds if k not in known]
        if unknown:
            raise UsageError(f"--kinds {unknown[0]!r} matches no chunk",
                             hint=f"use some of {', '.join(known)}")
    return make_filter(doc=args.doc, kinds=kinds) if (args.doc or kinds) else None


def _ranked_lines(retriever, hits) -> list[str]:
    lines = []
    for rank, hit in enumerate(hits, 1):
        chunk = retriever.chunks[hit.index]
        where_in_page = " > ".join(chunk.heading_path[1:]) or "(no heading)"
        lines.append(f"  [{rank}] {hit.score:7.3f}  {chunk.doc}  {where_in_page}")
    return lines or ["  (no matching chunks)"]


def _ask(args: argparse.Namespace) -> int:
    from course_lib.core.serve import build_prompt

    _pipeline_name(args.pipeline)
    question = _question(args.question)
    loaded = _load(args)
    retriever = _build(args.pipeline, loaded, model=args.model)
    where = _where(args, retriever.chunks)
    with progress("searching and re-ranking"):
        hits = retriever.search(question, k=args.k, where=where)  # once: the prompt reuses these hits
    say(f"{args.pipeline}: {getattr(retriever, 'name', '')}")
    say("\n".join(_ranked_lines(retriever, hits)))
    if args.prompt:
        say("\n" + build_prompt(question, hits, retriever.chunks, base_url=_base_url(args, loaded)))
    return 0


def _compare(args: argparse.Namespace) -> int:
    from course_lib.core.pipeline import PIPELINES

    names = ("naive", _pipeline_name(args.against))
    question = _question(args.question)
    loaded = _load(args)
    for name in names:
        retriever = _build(name, loaded, model=args.model)
        with progress(f"searching with {name!r}"):
            hits = retriever.search(question, k=args.k)
        say(f"{PIPELINES[name][1]}")
        say("\n".join(_ranked_lines(retriever, hits)))
    return 0


# --- the parser and the one error path -------------------------------------------------------

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


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one sub-command per task, each with --debug."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show the traceback of an error")
    parser = _Parser(prog="python -m course_lib", description=__doc__, parents=[common],
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help_text, parents=[common])

    command("check", "environment self-check").set_defaults(func=_check)
    validate = command("validate-golden", "check a golden file against a corpus")
    validate.add_argument("file", type=Path)
    _corpus_options(validate, required=True)
    validate.set_defaults(func=_validate)
    command("pipelines", "list the pipelines").set_defaults(func=_pipelines)
    evaluate = command("evaluate", "score a pipeline on a golden file")
    _corpus_options(evaluate)
    evaluate.add_argument("--golden", type=Path, help="golden JSONL (default: data/golden/golden.jsonl)")
    evaluate.add_argument("--pipeline", default="naive", help="a name from `pipelines`")
    evaluate.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    evaluate.add_argument("--model", help="embedding model name or folder (default: bundled MiniLM)")
    evaluate.add_argument("--out", type=Path, help="JSON file to write (never overwritten without --force)")
    evaluate.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    evaluate.add_argument("--skip-invalid", action="store_true",
                          help="leave out (and name) golden questions that do not match the corpus")
    evaluate.set_defaults(func=_evaluate)
    draft = command("golden-draft", "draft golden lines (evidence, no question)")
    _corpus_options(draft, required=True)
    draft.add_argument("--out", type=Path, required=True,
                       help="JSONL to write (never overwritten without --force)")
    draft.add_argument("--n", type=_positive, default=GOLDEN_DRAFT_SIZE, help="how many lines to draft")
    draft.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    draft.set_defaults(func=_golden_draft)
    ask = command("ask", "ranked sources for a question")
    ask.add_argument("question")
    ask.add_argument("--pipeline", default=FINAL_PIPELINE)
    ask.add_argument("--doc", help="only this page (path inside the corpus)")
    ask.add_argument("--kinds", help="only chunks holding these block kinds, comma-separated")
    ask.add_argument("--prompt", action="store_true", help="also print the prompt with numbered sources")
    ask.add_argument("--base-url", help="site the prompt's sources link to (default: found in the corpus)")
    compare = command("compare", "naive and final pipeline side by side")
    compare.add_argument("question")
    compare.add_argument("--against", default=FINAL_PIPELINE)
    for each in (ask, compare):
        each.add_argument("--k", type=_positive, default=ASK_SOURCES, help="how many sources (at least 1)")
        _corpus_options(each)
        each.add_argument("--model", help="embedding model name or folder (default: bundled MiniLM)")
    ask.set_defaults(func=_ask)
    compare.set_defaults(func=_compare)
    return parser


def _one_line(err: CourseError) -> str:
    """The error's one line, whitespace collapsed, made safe to print."""
    return safe(" ".join(err.one_line().split()), one_line=True)


def main(argv: list[str] | None = None) -> int:
    """Run one command; a user-facing error (a CourseError) becomes one line and its family's exit
    code. Anything else is a bug and keeps its traceback. `--debug` prints the traceback of a
    user-facing error too (with the error it came from), and the traceback of each cache warning."""
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 must not crash a print
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = build_parser().parse_args(argv)
    debug_logging(args.debug)
    try:
        with sigterm_as_interrupt():  # a `kill` ends the command like Ctrl-C: one line, no temporary file
            return args.func(args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("error: interrupted — nothing was written", file=sys.stderr)
        return INTERRUPTED
    except CourseError as err:
        if args.debug:
            print(safe(traceback.format_exc()), file=sys.stderr, end="")
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
