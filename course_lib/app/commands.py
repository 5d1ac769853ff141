"""The commands of `python -m course_lib`, one function each: it takes the parsed arguments,
prints what it found, and returns the exit code (a user-facing error is raised as a CourseError
and turned into one line by `cli.main`).
"""
from __future__ import annotations

import argparse
import json
import traceback
from pathlib import Path

from course_lib.app import inputs
from course_lib.infra.errors import GoldenError, OutputError
from course_lib.infra.files import atomic_write, claim_out
from course_lib.infra.terminal import announcing, progress, say


def check(args: argparse.Namespace) -> int:
    """The environment self-check; --debug adds the traceback behind each failed line."""
    from course_lib.app.check import format_results, run_checks

    results = run_checks()
    say(format_results(results))
    for result in results:
        if args.debug and result.error is not None:
            say("".join(traceback.format_exception(result.error)), error=True)
    return 0 if all(r.ok for r in results) else 1


def validate_golden(args: argparse.Namespace) -> int:
    """Each problem of a golden file against a corpus, one line each; exit 1 if there is any."""
    from course_lib.evaluation.golden_checks import check_golden

    loaded = inputs.read_corpus(args.corpus, include=args.include, parse=False)
    # A 50,000-line file takes minutes on a laptop: say that it is working.
    with progress(f"checking {args.file} against {inputs.pages(len(loaded.pages))}"):
        result = check_golden(args.file, loaded.folder, pages={p.path: p.html for p in loaded.pages})
    for message in result.messages():
        say(message)
    unreadable = len({line for line, qid, _ in result.problems if qid is None})
    say(f"{len(result.questions) + unreadable} questions, {len(result.problems)} errors")
    return 1 if result.problems else 0


def extract(args: argparse.Namespace) -> int:
    """The kept text of one page; with --why, what was chosen as its main text and each block
    removed, with the rule that removed it, so a learner sees what their own site loses."""
    from course_lib.core.chunking import blocks_to_text
    from course_lib.core.parse import parse_page_file

    parsed = parse_page_file(args.page, explain=args.why)
    say(blocks_to_text(parsed.blocks))
    if args.why:
        main = parsed.main
        say(f"\n--- why: main content {main.label} ({main.reason}; "
            f"{main.share:.0%} of the page's reading text)")
        for rule in parsed.furniture.held_back:
            say(f"held back: rule '{rule}' would have removed nearly all of the page's text: not applied")
        for removed in (r for r in parsed.furniture.removed if r.text):  # empty holders are only counted
            text = removed.text if len(removed.text) <= _WHY_CHARS else removed.text[:_WHY_CHARS] + " …"
            say(f"removed by '{removed.rule}' ({removed.element}): {text}")
        counts = ", ".join(f"{rule} {n}" for rule, n in parsed.furniture.counts.most_common())
        say(f"--- {len(parsed.blocks)} blocks kept; removed: {counts or 'nothing'}")
    return 0


_WHY_CHARS = 160  # a removed block is shown by its first characters


def list_pipelines(args: argparse.Namespace) -> int:
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


def _claim_evaluation_out(args: argparse.Namespace, golden: Path) -> Path:
    """--out (default: a name from the pipeline and split), locked; a symlink stands for its file."""
    out = args.out or Path(f"evaluation-{args.pipeline}-{args.split}.json")
    corpus_root = args.corpus
    if corpus_root is None:
        from course_lib.core.load import CORPUS_DIR

        corpus_root = CORPUS_DIR
    return claim_out(out, force=args.force, corpus=corpus_root, inputs=[golden])


def evaluate(args: argparse.Namespace) -> int:
    """Score a pipeline on the golden questions; print the headline metrics, write them as JSON."""
    from course_lib.evaluation.metrics import HEADLINE_METRICS, by_kind, evaluate_retriever, summary
    from course_lib.infra.paths import GOLDEN_FILE

    inputs.pipeline_name(args.pipeline)
    golden = args.golden or GOLDEN_FILE
    out = _claim_evaluation_out(args, golden)
    loaded = inputs.read_corpus(args.corpus, include=args.include)
    questions = _golden_questions(args, loaded, golden, None if args.split == "all" else args.split)
    retriever = inputs.build_retriever(args.pipeline, loaded, model=args.model)
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


def golden_draft(args: argparse.Namespace) -> int:
    """Draft golden lines (sampled evidence, questions left blank) for a person to finish."""
    from course_lib.core.pipeline import clean_corpus
    from course_lib.extras.golden_draft import draft_golden, write_drafts

    args.out = claim_out(args.out, force=args.force, corpus=args.corpus, inputs=[])  # locked
    loaded = inputs.read_corpus(args.corpus, include=args.include)
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


def ranked_lines(retriever, hits) -> list[str]:
    """The lines `search` and `compare` print for a ranking: rank, score, page, heading path.
    Public because lesson 04 shows `compare`'s output side by side with these very lines."""
    lines = []
    for rank, hit in enumerate(hits, 1):
        chunk = retriever.chunks[hit.index]
        where_in_page = " > ".join(chunk.heading_path[1:]) or "(no heading)"
        lines.append(f"  [{rank}] {hit.score:7.3f}  {chunk.doc}  {where_in_page}")
    return lines or ["  (no matching chunks)"]


def ask(args: argparse.Namespace) -> int:
    """The ranked sources for one question, and with --prompt the prompt that cites them. Each
    stage says its name on stderr as it starts: a 15 MB page is minutes of parsing, chunking and
    embedding, and Ctrl-C then names the stage it stopped."""
    from course_lib.core.serve import build_prompt

    inputs.pipeline_name(args.pipeline)
    question = inputs.question(args.question)
    with announcing():
        loaded = inputs.read_corpus(args.corpus, include=args.include)
        retriever = inputs.build_retriever(args.pipeline, loaded, model=args.model,
                                           query_encoder=args.query_encoder)
        where = inputs.where(retriever.chunks, doc=args.doc, kinds=args.kinds)
        with progress("searching and re-ranking"):
            hits = retriever.search(question, k=args.k, where=where)  # once: the prompt reuses these hits
    say(f"{args.pipeline}: {getattr(retriever, 'name', '')}")
    say("\n".join(ranked_lines(retriever, hits)))
    if args.prompt:
        site = inputs.base_url(loaded, given=args.base_url)
        say("\n" + build_prompt(question, hits, retriever.chunks, base_url=site))
    return 0


def compare(args: argparse.Namespace) -> int:
    """The naive pipeline's sources and another's (default: the final one), one after the other."""
    names = ("naive", inputs.pipeline_name(args.against))
    question = inputs.question(args.question)
    loaded = inputs.read_corpus(args.corpus, include=args.include)
    for name in names:
        retriever = inputs.build_retriever(name, loaded, model=args.model, query_encoder=args.query_encoder)
        with progress(f"searching with {name!r}"):
            hits = retriever.search(question, k=args.k)
        say(inputs.describe_pipeline(name))
        say("\n".join(ranked_lines(retriever, hits)))
    return 0
