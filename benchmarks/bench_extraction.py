"""The course's parse stage against trafilatura on real web pages of many kinds, by the benchmark's metric.

    python benchmarks/bench_extraction.py DATA [--half even|odd] [--kinds article,forum] [--limit N]
                                               [--course-options JSON] [--save PREDICTIONS.json]
                                               [--reuse-trafilatura PREDICTIONS.json]

DATA is a folder laid out like `../shared/wcxb-dev/` (WCXB's development split: `dev/html/NNNN.html.gz`,
`dev/ground-truth/NNNN.json`, `metadata.json`, `evaluate.py`). Every page goes through the course's
parse stage (`course_lib.extras.web_pages.course_texts`: the main content chosen by evidence, the
furniture rules, frequency over the pages of each site) and through `trafilatura.extract()` with its default
settings, in the same process. Printed, per kind and overall: word precision / recall / F1 as the
benchmark's own `evaluate.py` computes them, the share of `with` snippets found and of `without`
(boilerplate) snippets leaked, empty outputs, the pages where a rule was held back because it would
have emptied the page, the preservation of tables and code on the pages that have them in their main
text (share of table cells kept; share of `<pre>` blocks kept byte for byte), and the median
milliseconds per page, each as a ratio to trafilatura's figure measured in the same run.

`--half even` keeps the pages with an even number, `--half odd` the others: rules were developed on
the even half and checked on the odd half, so a rule fitted to single pages would show there.
`--reuse-trafilatura` takes trafilatura's texts from an earlier `--save` instead of extracting
again (its output does not change with the course's rules): quicker while developing, but then
the time ratio is not printed, since it is only fair when both ran in the same run on the same load.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from course_lib import settings
from course_lib.extras.web_pages import WebPage, course_texts, kept_parts, load_web_pages, parts_to_keep

KINDS = ("article", "forum", "product", "collection", "listing", "documentation", "service")


def load_evaluate(data: Path):
    """The benchmark's own scoring module, from the data folder (so the score is theirs, not ours)."""
    spec = importlib.util.spec_from_file_location("wcxb_evaluate", data / "evaluate.py")
    if spec is None or spec.loader is None or not (data / "evaluate.py").is_file():
        raise SystemExit(f"{data / 'evaluate.py'}: not found; DATA must be laid out like wcxb-dev")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def select(pages: list[WebPage], *, half: str | None, kinds: set[str] | None,
           limit: int | None) -> list[WebPage]:
    """The pages of one half (even or odd ids) and of the kinds asked for, at most `limit`."""
    chosen = [p for p in pages if (not half or (int(p.id) % 2 == 0) == (half == "even"))
              and (not kinds or p.kind in kinds)]
    return chosen[:limit] if limit else chosen


def run_trafilatura(pages: list[WebPage]) -> tuple[dict[str, str], list[float]]:
    """trafilatura.extract() with its defaults on every page, and the milliseconds each took."""
    import logging

    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    out, times = {}, []
    for page in pages:
        start = time.perf_counter()
        out[page.id] = trafilatura.extract(page.html) or ""
        times.append((time.perf_counter() - start) * 1000)
    return out, times


def reused_trafilatura(path: Path, pages: list[WebPage]) -> tuple[dict[str, str], list[float]]:
    """trafilatura's texts saved by an earlier `--save`, for every page selected; no times."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))["trafilatura"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SystemExit(f"{path}: not a --save file with trafilatura's texts ({err})") from None
    missing = [page.id for page in pages if page.id not in saved]
    if missing:
        raise SystemExit(f"{path}: no trafilatura text for {len(missing)} selected page(s), "
                         f"e.g. {missing[0]}")
    return {page.id: saved[page.id] for page in pages}, []


def run_course(pages: list[WebPage], options: dict, *, min_pages: int, max_share: float,
               ) -> tuple[dict[str, str], list[float], dict[str, list[str]]]:
    """The course's parse stage (`web_pages.course_texts`), each page's parse timed, and the rules
    held back on each page."""
    times: list[float] = []
    texts, parsed = course_texts(pages, min_pages=min_pages, max_share=max_share, times=times, **options)
    return texts, times, {page_id: p.furniture.held_back for page_id, p in parsed.items()}


def score(evaluate, pages: list[WebPage], texts: dict[str, str], parts: dict) -> dict[str, dict]:
    """Per page: the benchmark's P/R/F1 and snippet rates, plus emptiness and preservation."""
    rows = {}
    for page in pages:
        text = texts.get(page.id, "")
        p, r, f1 = evaluate.word_f1(text, page.main_content)
        cell_share, code_share = kept_parts(text, *parts[page.id])
        rows[page.id] = {"p": p, "r": r, "f1": f1, "kind": page.kind,
                         "with": evaluate.snippet_check(text, list(page.with_snippets)),
                         "without": evaluate.snippet_check(text, list(page.without_snippets)),
                         "empty": not text.strip(), "cells": cell_share, "codes": code_share}
    return rows


def summary(rows: list[dict]) -> dict[str, float]:
    """Means over the pages given (preservation over the pages that have the part)."""
    def mean(key, where=lambda r: True):
        values = [r[key] for r in rows if where(r) and r[key] is not None]
        return sum(values) / len(values) if values else float("nan")

    return {"n": len(rows), "p": mean("p"), "r": mean("r"), "f1": mean("f1"), "with": mean("with"),
            "without": mean("without"), "empty": sum(r["empty"] for r in rows),
            "cells": mean("cells"), "codes": mean("codes"),
            "n_cells": sum(r["cells"] is not None for r in rows),
            "n_codes": sum(r["codes"] is not None for r in rows)}


def print_table(course: dict[str, dict], traf: dict[str, dict]) -> None:
    """One row per kind and overall: the course's figures, trafilatura's, and their ratio."""
    print(f"\n{'kind':<14}{'pages':>6} | {'course P / R / F1':>20} | {'trafilatura P / R / F1':>22} | "
          f"{'F1 ratio':>8} | {'leaked c / t':>13} | {'empty c / t':>11}")
    groups = [(k, [i for i in course if course[i]["kind"] == k]) for k in KINDS] + [("overall", list(course))]
    for name, ids in groups:
        if not ids:
            continue
        c, t = summary([course[i] for i in ids]), summary([traf[i] for i in ids])
        ratio = c["f1"] / t["f1"] if t["f1"] else float("nan")
        print(f"{name:<14}{len(ids):>6} | {c['p']:.3f} / {c['r']:.3f} / {c['f1']:.3f}  | "
              f"  {t['p']:.3f} / {t['r']:.3f} / {t['f1']:.3f}  | {ratio:>8.3f} | "
              f"{c['without']:>5.1%} / {t['without']:>5.1%} | {c['empty']:>4} / {t['empty']:>4}")
    c, t = summary(list(course.values())), summary(list(traf.values()))
    print(f"\nwith snippets found: course {c['with']:.1%}, trafilatura {t['with']:.1%}")
    print(f"tables ({c['n_cells']} pages with cells in their main text): cells kept, "
          f"course {c['cells']:.1%}, "
          f"trafilatura {t['cells']:.1%}")
    print(f"code ({c['n_codes']} pages with <pre> in their main text): blocks kept byte for byte, course "
          f"{c['codes']:.1%}, trafilatura {t['codes']:.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a folder laid out like ../shared/wcxb-dev/")
    parser.add_argument("--half", choices=("even", "odd"), help="only the even- or odd-numbered pages")
    parser.add_argument("--kinds", help="comma-separated page kinds (default: all)")
    parser.add_argument("--limit", type=int, help="at most this many pages")
    parser.add_argument("--course-options", default="{}", help="JSON of parse_page keywords to change")
    parser.add_argument("--min-pages", type=int, default=settings.BOILERPLATE_MIN_PAGES,
                        help="frequency: a block must be on at least this many pages of its site")
    parser.add_argument("--max-share", type=float, default=settings.BOILERPLATE_MAX_PAGE_SHARE,
                        help="frequency: ... and on more than this share of them")
    parser.add_argument("--save", type=Path, help="write both systems' texts and per-page scores here")
    parser.add_argument("--reuse-trafilatura", type=Path, metavar="PREDICTIONS.json",
                        help="trafilatura's texts from an earlier --save (no time ratio then)")
    args = parser.parse_args(argv)
    evaluate = load_evaluate(args.data)
    options = json.loads(args.course_options)
    pages = select(load_web_pages(args.data / "dev"), half=args.half,
                   kinds=set(args.kinds.split(",")) if args.kinds else None, limit=args.limit)
    if not pages:
        raise SystemExit(f"{args.data}: no pages selected")
    parts = {page.id: parts_to_keep(page.html, page.main_content) for page in pages}
    print(f"{len(pages)} pages from {args.data} ({args.half or 'both'} half); load {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores; parse_page options {options}, frequency on >= {args.min_pages} pages "
          f"and > {args.max_share:.0%} of a site's pages")
    traf_texts, traf_times = (reused_trafilatura(args.reuse_trafilatura, pages) if args.reuse_trafilatura
                              else run_trafilatura(pages))
    course_texts, course_times, held = run_course(pages, options, min_pages=args.min_pages,
                                                  max_share=args.max_share)
    course, traf = score(evaluate, pages, course_texts, parts), score(evaluate, pages, traf_texts, parts)
    print_table(course, traf)
    held_pages = {i: h for i, h in held.items() if h}
    rules = defaultdict(int)
    for names in held_pages.values():
        for name in names:
            rules[name] += 1
    print(f"pages where a rule was held back (it would have emptied the page): {len(held_pages)}"
          + (f" ({', '.join(f'{r} {n}' for r, n in sorted(rules.items()))})" if rules else ""))
    mc = statistics.median(course_times)
    if traf_times:
        mt = statistics.median(traf_times)
        print(f"median ms per page: course {mc:.1f}, trafilatura {mt:.1f} (ratio {mc / mt:.2f}); "
              f"load {os.getloadavg()[0]:.2f}")
    else:
        print(f"median ms per page: course {mc:.1f}; trafilatura's texts reused from "
              f"{args.reuse_trafilatura}, so no time ratio (only printed when both ran in the same run); "
              f"load {os.getloadavg()[0]:.2f}")
    if args.save:
        saved = {"course": course_texts, "trafilatura": traf_texts,
                 "scores": {"course": course, "trafilatura": traf}}
        args.save.write_text(json.dumps(saved), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
