"""The command line: `python -m course_lib COMMAND`.

    check                                   the environment self-check (OK/FAIL per requirement)
    validate-golden FILE --corpus DIR       check a golden file against a folder of HTML
    evaluate [--corpus DIR] [--golden FILE] [--pipeline NAME] [--split dev|test|all] [--out FILE]
                                            score a pipeline on a golden file, write JSON
    pipelines                               list the pipelines evaluate can run
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
    from .pipelines import build_pipeline

    split = None if args.split == "all" else args.split
    questions = load_golden(args.golden or GOLDEN_FILE, split=split)
    pages = load_pages(args.corpus)
    retriever = build_pipeline(args.pipeline, pages, model=args.model)
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
