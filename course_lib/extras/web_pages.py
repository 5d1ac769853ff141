"""Real web pages that are not documentation, and how an extractor's text is scored on them (lesson 03).

`load_web_pages` reads pages laid out like the WCXB benchmark (`data/web/`, a shipped sample of
its development split, or the whole split in `../shared/wcxb-dev/dev/`): the HTML and a
human-reviewed main text with snippets that must appear (`with`) and boilerplate that must not
(`without`). `word_scores` and `snippet_share` score text exactly as the benchmark's own
`evaluate.py` does (a test checks it against the shipped copy); `parts_to_keep` and `kept_parts`
measure what the course promises beyond words: every table cell and every `<pre>` block of the
main text kept, code byte for byte. `course_texts` and `trafilatura_texts` run the two extractors
the lesson and `benchmarks/bench_extraction.py` compare.
"""
from __future__ import annotations

import gzip
import json
import logging
import re
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from course_lib import settings
from course_lib.core.chunking import blocks_to_text
from course_lib.core.decode import decode_html
from course_lib.core.frequency import drop_frequent_blocks
from course_lib.core.html_parts import code_text, collapse
from course_lib.core.parse import ParsedPage, make_soup, parse_page
from course_lib.infra.paths import DATA_DIR

WEB_SAMPLE = DATA_DIR / "web"
_WORDS = re.compile(r"\w+")
_MIN_CELL_CHARS, _MIN_CODE_CHARS = 3, 10  # shorter cells and code are too common to place


@dataclass(frozen=True)
class WebPage:
    """One page: its id, kind, site, HTML, and the benchmark's main text and snippets."""

    id: str
    kind: str
    domain: str
    html: str
    main_content: str
    with_snippets: tuple[str, ...]
    without_snippets: tuple[str, ...]


def load_web_pages(folder: Path = WEB_SAMPLE, *, ids: Sequence[str] | None = None) -> list[WebPage]:
    """The pages of a WCXB-shaped folder (`html/NNNN.html.gz`, `ground-truth/NNNN.json`), by id."""
    pages = []
    for path in sorted((folder / "html").glob("*.html.gz")):
        page_id = path.name.split(".")[0]
        if ids is not None and page_id not in ids:
            continue
        data = json.loads((folder / "ground-truth" / f"{page_id}.json").read_text(encoding="utf-8"))
        truth = data.get("ground_truth") or {}
        kind = ((data.get("_internal") or {}).get("page_type") or {}).get("primary", "article")
        domain = re.sub(r"^https?://(www\.)?([^/]+).*", r"\2", data.get("url") or page_id)
        pages.append(WebPage(page_id, "collection" if kind == "category" else kind, domain,
                             decode_html(gzip.decompress(path.read_bytes())), truth.get("main_content") or "",
                             tuple(truth.get("with") or ()), tuple(truth.get("without") or ())))
    return pages


def word_scores(text: str, reference: str) -> tuple[float, float, float]:
    """Word precision, recall and F1 of `text` against `reference`, as the benchmark scores them:
    lowercase `\\w+` words counted as a bag, so order and formatting do not matter."""
    got, want = Counter(_WORDS.findall(text.lower())), Counter(_WORDS.findall(reference.lower()))
    if not want:
        return (1.0, 1.0, 1.0) if not got else (0.0, 0.0, 0.0)
    if not got:
        return 0.0, 0.0, 0.0
    overlap = sum((got & want).values())
    precision, recall = overlap / sum(got.values()), overlap / sum(want.values())
    return precision, recall, (2 * precision * recall / (precision + recall) if overlap else 0.0)


def snippet_share(text: str, snippets: Sequence[str]) -> float:
    """The share of `snippets` found in `text` (case-insensitive); 1.0 when there are none."""
    if not snippets:
        return 1.0
    lowered = text.lower()
    return sum(s.lower() in lowered for s in snippets) / len(snippets)


def parts_to_keep(html: str, reference: str) -> tuple[list[str], list[str]]:
    """The table cells and `<pre>` texts of a page that belong to its main text (their collapsed
    text occurs in the human-reviewed reference): what an extractor should keep whole."""
    soup = make_soup(html)
    ref = collapse(reference).casefold()
    cells = [collapse(c.get_text(" ")) for c in soup.select("table td, table th")]
    cells = [c for c in cells if len(c) >= _MIN_CELL_CHARS and c.casefold() in ref]
    codes = [code_text(pre).strip("\n") for pre in soup.find_all("pre")]
    codes = [c for c in codes if len(collapse(c)) >= _MIN_CODE_CHARS and collapse(c).casefold() in ref]
    return cells, codes


def kept_parts(text: str, cells: Sequence[str], codes: Sequence[str]) -> tuple[float | None, float | None]:
    """The share of `cells` found in `text` (whitespace collapsed) and of `codes` found byte for
    byte; None where the page has none."""
    flat = collapse(text).casefold()
    cell_share = sum(c.casefold() in flat for c in cells) / len(cells) if cells else None
    code_share = sum(c in text for c in codes) / len(codes) if codes else None
    return cell_share, code_share


def course_texts(pages: Sequence[WebPage], *, min_pages: int = settings.BOILERPLATE_MIN_PAGES,
                 max_share: float = settings.BOILERPLATE_MAX_PAGE_SHARE, times: list[float] | None = None,
                 **options) -> tuple[dict[str, str], dict[str, ParsedPage]]:
    """The course's parse stage on each page (`parse_page` with `options`), then boilerplate by
    frequency over the pages of each site, then `blocks_to_text`: the text per page id, and
    each page's `ParsedPage` (what was chosen and removed). `times`, if given, receives the
    milliseconds each page's parse took (the benchmark's timing)."""
    parsed = {}
    for page in pages:
        start = time.perf_counter()
        parsed[page.id] = parse_page(page.html, **options)
        if times is not None:
            times.append((time.perf_counter() - start) * 1000)
    sites: dict[str, dict[str, list]] = defaultdict(dict)
    for page in pages:
        sites[page.domain][page.id] = parsed[page.id].blocks
    texts = {}
    for site in sites.values():
        kept, _ = drop_frequent_blocks(site, min_pages=min_pages, max_share=max_share)
        texts.update({page_id: blocks_to_text(blocks) for page_id, blocks in kept.items()})
    return texts, parsed


def trafilatura_texts(pages: Sequence[WebPage]) -> dict[str, str]:
    """`trafilatura.extract(html)` with its default settings, per page id ("" when it finds nothing)."""
    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    return {page.id: trafilatura.extract(page.html) or "" for page in pages}


def scores_by_kind(pages: Sequence[WebPage], texts: dict[str, dict[str, str]]) -> list[dict[str, object]]:
    """Per kind of page and overall, each system's mean word F1 and share of boilerplate snippets
    leaked (the benchmark's two headline figures): `texts` maps a system's name to its texts."""
    groups = {kind: [p for p in pages if p.kind == kind] for kind in dict.fromkeys(p.kind for p in pages)}
    rows = []
    for kind, group in {**groups, "overall": list(pages)}.items():
        row: dict[str, object] = {"kind": kind, "pages": len(group)}
        for name, by_id in texts.items():
            row[f"{name} F1"] = sum(word_scores(by_id[p.id], p.main_content)[2] for p in group) / len(group)
            leaked = [snippet_share(by_id[p.id], p.without_snippets) for p in group]
            row[f"{name} leaked"] = sum(leaked) / len(group)
        rows.append(row)
    return rows
