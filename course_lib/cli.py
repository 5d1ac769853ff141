"""The command line: `python -m course_lib COMMAND`.

    check                                   the environment self-check (OK/FAIL per requirement)
    validate-golden FILE --corpus DIR       check a golden file against a folder of HTML
    evaluate [--corpus DIR] [--golden FILE] [--pipeline NAME] [--split dev|test|all] [--out FILE]
                                            score a pipeline on a golden file, write JSON
    pipelines                               list the pipelines evaluate can run
    ask "QUESTION" [--pipeline NAME] [--k 5] [--doc PAGE] [--kinds code,table] [--prompt]
                                            ranked sources with scores (default: the final pipeline)
    compare "QUESTION" [--against NAME]     the naive pipeline and the final one side by side
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _check(args: argparse.Namespace) -> int:
    from .check import format_results, run_checks

    results = run_checks()
    print(format_results(results))
    return 0 if all(r.ok for r in results) else 1


def _validate(args: argparse.Namespace) -> int:
    from .golden import validate_main

    return validate_main([str(args.file), "--corpus", str(args.corpus)])


def _pipelines(args: argparse.Namespace) -> int:
    from .pipelines import PIPELINES

    for name, (_, description) in PIPELINES.items():
        print(f"{name:<16} {description}")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from .corpus import load_pages
    from .evaluate import by_kind, evaluate_retriever, summary
    from .golden import load_golden
    from .paths import GOLDEN_FILE
    from .pipelines import build_pipeline, clean_corpus

    split = None if args.split == "all" else args.split
    questions = load_golden(args.golden or GOLDEN_FILE, split=split)
    pages = load_pages(args.corpus)
    retriever = build_pipeline(args.pipeline, pages, model=args.model)
    if args.pipeline != "naive":
        for path, reason in clean_corpus(pages)[1]:
            print(f"skipped {path}: {reason}")
    run = evaluate_retriever(retriever, questions, name=args.pipeline)
    result = {**summary(run), "split": args.split, "by_kind": by_kind(run),
              "pages": len(pages), "chunks": len(retriever.chunks)}
    out = args.out or Path(f"evaluation-{args.pipeline}-{args.split}.json")
    out.write_text(json.dumps(result, indent=2))
    for key in ("recall@5", "recall@20", "mrr"):
        lo, hi = result[f"{key}_ci"]
        print(f"{key:<10} {result[key]:.3f}  95% CI [{lo:.3f}, {hi:.3f}]")
    print(f"{result['n_answerable']} answerable, {result['n_unanswerable']} unanswerable questions; "
          f"{len(retriever.chunks)} chunks from {len(pages)} pages; written to {out}")
    return 0


FINAL_PIPELINE = "reranked"


def _ranked_lines(retriever, question: str, *, k: int, where=None) -> list[str]:
    lines = []
    for rank, hit in enumerate(retriever.search(question, k=k, where=where), 1):
        chunk = retriever.chunks[hit.index]
        where_in_page = " > ".join(chunk.heading_path[1:]) or "(no heading)"
        lines.append(f"  [{rank}] {hit.score:7.3f}  {chunk.doc}  {where_in_page}")
    return lines or ["  (no matching chunks)"]


def _ask(args: argparse.Namespace) -> int:
    from .corpus import load_pages
    from .pipelines import build_pipeline
    from .search import make_filter
    from .serve import build_prompt

    retriever = build_pipeline(args.pipeline, load_pages(args.corpus), model=args.model)
    kinds = args.kinds.split(",") if args.kinds else None
    where = make_filter(doc=args.doc, kinds=kinds) if (args.doc or kinds) else None
    print(f"{args.pipeline}: {getattr(retriever, 'name', '')}")
    print("\n".join(_ranked_lines(retriever, args.question, k=args.k, where=where)))
    if args.prompt:
        hits = retriever.search(args.question, k=args.k, where=where)
        print("\n" + build_prompt(args.question, hits, retriever.chunks))
    return 0


def _compare(args: argparse.Namespace) -> int:
    from .corpus import load_pages
    from .pipelines import PIPELINES, build_pipeline

    pages = load_pages(args.corpus)
    for name in ("naive", args.against):
        retriever = build_pipeline(name, pages, model=args.model)
        print(f"{PIPELINES[name][1]}")
        print("\n".join(_ranked_lines(retriever, args.question, k=args.k)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m course_lib", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="environment self-check").set_defaults(func=_check)
    validate = commands.add_parser("validate-golden", help="check a golden file against a corpus")
    validate.add_argument("file", type=Path)
    validate.add_argument("--corpus", type=Path, required=True)
    validate.set_defaults(func=_validate)
    commands.add_parser("pipelines", help="list the pipelines").set_defaults(func=_pipelines)
    evaluate = commands.add_parser("evaluate", help="score a pipeline on a golden file")
    evaluate.add_argument("--corpus", type=Path, help="folder of HTML (default: the shipped corpus)")
    evaluate.add_argument("--golden", type=Path, help="golden JSONL (default: data/golden/golden.jsonl)")
    evaluate.add_argument("--pipeline", default="naive", help="a name from `pipelines`")
    evaluate.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    evaluate.add_argument("--model", help="embedding model name or folder (default: bundled MiniLM)")
    evaluate.add_argument("--out", type=Path, help="JSON file to write")
    evaluate.set_defaults(func=_evaluate)
    ask = commands.add_parser("ask", help="ranked sources for a question")
    ask.add_argument("question")
    ask.add_argument("--pipeline", default=FINAL_PIPELINE)
    ask.add_argument("--k", type=int, default=5)
    ask.add_argument("--doc", help="only this page (path inside the corpus)")
    ask.add_argument("--kinds", help="only chunks holding these block kinds, comma-separated")
    ask.add_argument("--prompt", action="store_true", help="also print the prompt with numbered sources")
    compare = commands.add_parser("compare", help="naive and final pipeline side by side")
    compare.add_argument("question")
    compare.add_argument("--against", default=FINAL_PIPELINE)
    compare.add_argument("--k", type=int, default=5)
    for command in (ask, compare):
        command.add_argument("--corpus", type=Path, help="folder of HTML (default: the shipped corpus)")
        command.add_argument("--model", help="embedding model name or folder (default: bundled MiniLM)")
    ask.set_defaults(func=_ask)
    compare.set_defaults(func=_compare)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
