"""The command line: `python -m course_lib COMMAND`.

    check                               the environment self-check (OK/FAIL per requirement)
    validate-golden FILE --corpus DIR   check a golden file against a folder of HTML
    evaluate --corpus DIR --golden FILE [--pipeline NAME]   score a pipeline, write JSON
"""
from __future__ import annotations

import argparse
import sys


def _check(args: argparse.Namespace) -> int:
    from .check import format_results, run_checks

    results = run_checks()
    print(format_results(results))
    return 0 if all(r.ok for r in results) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m course_lib", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="environment self-check").set_defaults(func=_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
