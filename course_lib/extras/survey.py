"""Survey a corpus's shapes before writing a parser: which tags, how nested, what repeats.

The chunking lesson's advice: "Survey first; it is a ten-line script and it stops you guessing."
Lesson 00 runs it; every count tells the parser something it must handle.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from bs4 import BeautifulSoup, Tag

from course_lib import settings
from course_lib.core.html_parts import HEADING_TAGS
from course_lib.records import Page

BOILERPLATE_TAGS = ("nav", "header", "footer", "aside", "form", "script", "style")


def _div_depth(div: Tag) -> int:
    return sum(1 for parent in div.parents if parent.name == "div")


def _has_header_row(table: Tag) -> bool:
    first_row = table.find("tr")
    return table.find("thead") is not None or (first_row is not None and first_row.find("th") is not None)


def survey_page(html: str) -> Counter:
    """Counts of the shapes one page contains (tag counts and a few derived figures)."""
    soup = BeautifulSoup(html, "lxml")
    counts: Counter = Counter({h: len(soup.find_all(h)) for h in HEADING_TAGS})
    tables = soup.find_all("table")
    counts["tables"] = len(tables)
    counts["tables with a header row"] = sum(_has_header_row(t) for t in tables)
    pres = soup.find_all("pre")
    counts["pre blocks"] = len(pres)
    counts["highlighting spans in pre"] = sum(len(p.find_all("span")) for p in pres)
    divs = soup.find_all("div")
    counts["divs"] = len(divs)
    counts["deepest div nesting"] = max((_div_depth(d) for d in divs), default=0)
    counts["definition lists (dl)"] = len(soup.find_all("dl"))
    counts["list items"] = len(soup.find_all("li"))
    for tag in BOILERPLATE_TAGS:
        counts[f"<{tag}>"] = len(soup.find_all(tag))
    counts['role="navigation"'] = len(soup.find_all(attrs={"role": "navigation"}))
    counts["¶ permalinks"] = len(soup.find_all("a", class_="headerlink"))
    return counts


def survey(pages: Iterable[Page], *, progress: bool = False) -> Counter:
    """Shape counts summed over a corpus; nesting depth is the maximum, not the sum.

    `progress=True` shows a progress bar (a widget in JupyterLab, a line of text elsewhere), so a
    learner surveying a large site of their own sees that it is moving.
    """
    if progress:
        from tqdm.auto import tqdm  # only a notebook asks for a bar

        pages = tqdm(pages, desc="survey", bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt}")
    total: Counter = Counter()
    for page in pages:
        counts = survey_page(page.html)
        depth = counts.pop("deepest div nesting")
        total.update(counts)
        total["deepest div nesting"] = max(total["deepest div nesting"], depth)
    return total


TEXT_ELEMENTS = ("p", "li", "a", "pre", "td", "th", "dt", "caption", *HEADING_TAGS)


def repeated_texts(pages: list[Page], *, min_share: float = settings.SURVEY_REPEAT_SHARE,
                   min_chars: int = settings.SURVEY_MIN_CHARS) -> list[tuple[str, int]]:
    """Texts of paragraphs, links, list items, cells and headings found on at least
    `min_share` of the pages, most widespread first.

    Texts that every page repeats are navigation, sidebars and footers: boilerplate that a
    tag-stripper keeps and that frequency-based cleaning (lesson 03) removes.
    """
    pages_with: Counter = Counter()
    for page in pages:
        elements = BeautifulSoup(page.html, "lxml").find_all(TEXT_ELEMENTS)
        texts = {" ".join(e.get_text(" ").split()) for e in elements}
        pages_with.update(t for t in texts if len(t) >= min_chars)
    threshold = min_share * len(pages)
    frequent = ((line, n) for line, n in pages_with.items() if n >= threshold)
    return sorted(frequent, key=lambda item: (-item[1], item[0]))
