"""Build data/web/: a small, attributed sample of real web pages for lesson 03's "a site that is not
documentation".

    python scripts/build_web_sample.py                     # from ../shared/wcxb-dev into data/web
    python scripts/build_web_sample.py --source DIR --out DIR --per-kind 3

Why: the course corpora are documentation sites, whose furniture (navigation, sidebars, footers)
is regular. Lesson 03 shows the parser on pages that are not documentation: real articles, forum
threads, product pages, collections, listings, documentation and service pages of many sites, each
with a human-reviewed main text (`ground_truth.main_content`) and boilerplate snippets that must not
be kept (`without`), so what the parser keeps can be compared with what a person kept.

What: from the development split of WCXB, the Web Content eXtraction Benchmark v1.0 (Murrough
Foley, 2026; CC-BY-4.0), `--per-kind` pages of each of the seven page kinds, from the even-numbered
page ids only (the odd ones are kept back for checking). A page is eligible when metadata.json lists
it with the same kind as its ground truth, its ground truth has a non-empty main text, and its HTML
is under 600 KB uncompressed and has an `<html` or `<body` tag. Preferred are pages whose `without`
list is non-empty and whose main text has 500-20,000 characters; other eligible pages only fill a
kind that has too few preferred ones. Per kind the eligible ids are sorted, shuffled with
random.Random(2026), the preferred ones taken first in that order, and the pick is sorted by id:
the same source gives the same sample.

Writes, under `--out`: html/NNNN.html.gz and ground-truth/NNNN.json copied byte for byte (the
pages are not modified), pages.tsv (id, kind, domain, url), LICENSE-CC-BY-4.0.txt (the benchmark's
LICENSE), README.md (attribution and the table of pages) and MANIFEST.sha256 (sha256sum format,
every other file, paths relative to `--out`). Stale pages from an earlier build are removed. Fails
if the sample would be 3 MB or more.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from course_lib.core.decode import decode_html
from course_lib.extras.web_pages import parts_to_keep

REPO = Path(__file__).resolve().parent.parent
KINDS = ("article", "forum", "product", "collection", "listing", "documentation", "service")
SEED = 2026
MAX_HTML_BYTES = 600_000  # uncompressed
MAIN_CHARS = (500, 20_000)
MAX_TOTAL_BYTES = 3_000_000
LICENSE_NAME = "LICENSE-CC-BY-4.0.txt"
LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
TITLE = "WCXB: Web Content eXtraction Benchmark"
VERSION = "1.0"
AUTHOR = "Murrough Foley"
YEAR = "2026"
SOURCE_REPO = "Murrough-Foley/web-content-extraction-benchmark"
SOURCE_COMMIT = "c039d5e"


@dataclass(frozen=True)
class Page:
    id: str
    kind: str
    domain: str
    url: str
    preferred: bool


def candidates(source: Path) -> dict[str, list[Page]]:
    """The eligible even-numbered pages of the source, by kind (see the module docstring)."""
    meta = json.loads((source / "metadata.json").read_text(encoding="utf-8"))["files"]
    by_kind: dict[str, list[Page]] = {kind: [] for kind in KINDS}
    for page_id, info in sorted(meta.items()):
        if int(page_id) % 2:
            continue  # the odd ids are kept back for checking
        html_path = source / "dev" / "html" / f"{page_id}.html.gz"
        truth_path = source / "dev" / "ground-truth" / f"{page_id}.json"
        if not (html_path.is_file() and truth_path.is_file()):
            continue
        doc = json.loads(truth_path.read_text(encoding="utf-8"))
        truth = doc.get("ground_truth", {})
        kind = doc.get("_internal", {}).get("page_type", {}).get("primary")
        main = truth.get("main_content") or ""
        url = doc.get("url") or ""
        if kind not in by_kind or kind != info.get("page_type") or not main.strip():
            continue
        if not url or any(c in url for c in "\t\r\n"):
            continue
        html = gzip.decompress(html_path.read_bytes())
        if len(html) >= MAX_HTML_BYTES or (b"<html" not in html.lower() and b"<body" not in html.lower()):
            continue
        preferred = bool(truth.get("without")) and MAIN_CHARS[0] <= len(main) <= MAIN_CHARS[1]
        if kind == "documentation":  # the lesson shows what each extractor does to code: pages that have some
            preferred = preferred and bool(parts_to_keep(decode_html(html), main)[1])
        by_kind[kind].append(Page(page_id, kind, info.get("domain", ""), url, preferred))
    return by_kind


def pick(pages: list[Page], n: int) -> list[Page]:
    """n pages: the preferred first, in the order of a seeded shuffle of the sorted ids; sorted by id."""
    order = sorted(pages, key=lambda p: p.id)
    random.Random(SEED).shuffle(order)  # a reproducible sample, not cryptography
    chosen = [p for p in order if p.preferred][:n]
    chosen += [p for p in order if not p.preferred][: n - len(chosen)]
    return sorted(chosen, key=lambda p: p.id)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pages_table(pages: list[Page]) -> str:
    rows = ["| id | kind | domain |", "|---|---|---|"]
    rows += [f"| {p.id} | {p.kind} | {p.domain} |" for p in pages]
    return "\n".join(rows)


def readme(pages: list[Page], per_kind: int) -> str:
    return f"""# Real web pages for lesson 03: a site that is not documentation

{len(pages)} real web pages of seven kinds, {per_kind} of each: {", ".join(KINDS)}.
Each comes with its human-reviewed main text, for lesson 03's section "a site that is not
documentation". The course corpora are documentation sites; these pages show the parser on the
rest of the web. Each page's ground truth says what a person kept as the main content
(`ground_truth.main_content`), which snippets must be kept (`with`) and which are boilerplate
that must not be (`without`).

## Source and licence

- **{TITLE}**, version {VERSION}, by {AUTHOR} ({YEAR}).
- Source: the public repository `{SOURCE_REPO}`, commit `{SOURCE_COMMIT}`;
  the pages come from the benchmark's development split, even-numbered ids only (the odd ones
  are kept for checking).
- Licence: Creative Commons Attribution 4.0 International (**CC-BY-4.0**),
  <{LICENSE_URL}>; the benchmark's licence file is shipped as
  [`{LICENSE_NAME}`]({LICENSE_NAME}).
- Changes: none; pages unmodified (gzipped HTML and ground-truth JSON as published). The
  selection and this folder's other files (`pages.tsv`, this README, `MANIFEST.sha256`) are the
  course's.

## Files

- `evaluate.py`: the benchmark's own scoring script, unmodified (word precision / recall / F1,
  `with` and `without` snippets); `course_lib.extras.web_pages` scores the same way, and a test
  checks that the two agree.
- `html/NNNN.html.gz`: the page as fetched, gzipped.
- `ground-truth/NNNN.json`: its ground truth (`ground_truth.main_content`, `with`, `without`,
  `_internal.page_type.primary`, `url`).
- `pages.tsv`: id, kind, domain and url of each page, tab-separated, with a header line.
- `MANIFEST.sha256`: one sha256 per file, in sha256sum format.

Which pages: per kind, the eligible pages (non-empty main text, HTML under 600 KB uncompressed)
are sorted by id and shuffled with `random.Random({SEED})`; those with a non-empty `without` list
and a main text of {MAIN_CHARS[0]}-{MAIN_CHARS[1]:,} characters are taken first, in that order.

## The pages

<!-- pages:start -->
{pages_table(pages)}
<!-- pages:end -->

## Rebuilding it

With the benchmark's development split in `../shared/wcxb-dev` (or pass `--source`):

```bash
python scripts/build_web_sample.py
```

The same source gives the same pages and the same bytes.

## Verifying it

```bash
cd data/web && sha256sum -c MANIFEST.sha256
```
"""


def build(source: Path, out: Path, per_kind: int) -> list[Page]:
    by_kind = candidates(source)
    short = {kind: len(pages) for kind, pages in by_kind.items() if len(pages) < per_kind}
    if short:
        sys.exit(f"too few eligible pages for {per_kind} per kind: {short}")
    pages = [p for kind in KINDS for p in pick(by_kind[kind], per_kind)]
    not_preferred = [p.id for p in pages if not p.preferred]
    if not_preferred:
        print(f"note: pages outside the preferred range: {', '.join(not_preferred)}")

    out.mkdir(parents=True, exist_ok=True)
    folders = {"html": ".html.gz", "ground-truth": ".json"}
    for folder, suffix in folders.items():
        (out / folder).mkdir(exist_ok=True)
        keep = {f"{p.id}{suffix}" for p in pages}
        for stale in (out / folder).glob(f"*{suffix}"):
            if stale.name not in keep:
                stale.unlink()
    for p in pages:
        html = f"html/{p.id}.html.gz"
        shutil.copyfile(source / "dev" / html, out / html)
        truth = f"ground-truth/{p.id}.json"
        shutil.copyfile(source / "dev" / truth, out / truth)
    shutil.copyfile(source / "LICENSE", out / LICENSE_NAME)
    shutil.copyfile(source / "evaluate.py", out / "evaluate.py")  # the benchmark's own scoring, unmodified
    tsv = ["id\tkind\tdomain\turl"] + [f"{p.id}\t{p.kind}\t{p.domain}\t{p.url}" for p in pages]
    (out / "pages.tsv").write_text("\n".join(tsv) + "\n", encoding="utf-8")
    (out / "README.md").write_text(readme(pages, per_kind), encoding="utf-8")

    shipped = sorted([LICENSE_NAME, "README.md", "pages.tsv", "evaluate.py"]
                     + [f"{folder}/{p.id}{suffix}" for folder, suffix in folders.items() for p in pages])
    (out / "MANIFEST.sha256").write_text("".join(f"{sha256(out / name)}  {name}\n" for name in shipped),
                                         encoding="utf-8")
    total = sum((out / name).stat().st_size for name in [*shipped, "MANIFEST.sha256"])
    if total >= MAX_TOTAL_BYTES:
        sys.exit(f"{out}: {total:,} bytes, over the {MAX_TOTAL_BYTES:,}-byte budget")
    print(f"{out}: {len(pages)} pages, {len(shipped) + 1} files, {total:,} bytes")
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build data/web/, lesson 03's sample of real web pages.")
    parser.add_argument("--source", type=Path, default=REPO.parent / "shared" / "wcxb-dev",
                        help="the WCXB development split (default: ../shared/wcxb-dev from the repo root)")
    parser.add_argument("--out", type=Path, default=REPO / "data" / "web",
                        help="where to write the sample (default: data/web)")
    parser.add_argument("--per-kind", type=int, default=3, help="pages of each kind (default: 3)")
    args = parser.parse_args(argv)
    if args.per_kind < 1:
        parser.error("--per-kind must be at least 1")
    for p in build(args.source, args.out, args.per_kind):
        print(f"  {p.id}  {p.kind:<13}  {p.domain}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
