"""Survey a corpus's shapes before writing a parser: which tags, how nested, what repeats.

The chunking lesson's advice: "Survey first; it is a ten-line script and it stops you guessing."
Lesson 00 runs it; every count tells the parser something it must handle.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from bs4 import BeautifulSoup

from course_lib import settings
from course_lib.core.html_parts import HEADING_TAGS
from course_lib.core.writing import looks_english
from course_lib.evaluation.golden_checks import html_tree
from course_lib.records import Page

# A multilingual embedder of the same size as the bundled one, for a corpus in another language.
MULTILINGUAL_MODEL = "intfloat/multilingual-e5-small"

BOILERPLATE_TAGS = ("nav", "header", "footer", "aside", "form", "script", "style")


_HEADERLINK = "//a[contains(concat(' ', normalize-space(@class), ' '), ' headerlink ')]"


def _has_header_row(table) -> bool:
    first_row = next(table.iter("tr"), None)
    return next(table.iter("thead"), None) is not None or (
        first_row is not None and next(first_row.iter("th"), None) is not None)


def _count(root, tag: str) -> int:
    return sum(1 for _ in root.iter(tag))


def survey_page(html: str) -> Counter:
    """Counts of the shapes one page contains (tag counts and a few derived figures).

    Read from a bare lxml tree, not a soup: a survey only counts, and over a corpus of large
    pages (pandas' API pages hold thousands of highlighting spans) that is several times quicker.
    """
    root = html_tree(html, visible_only=False)  # scripts and styles are counted too
    counts: Counter = Counter({h: _count(root, h) for h in HEADING_TAGS})
    tables = list(root.iter("table"))
    counts["tables"] = len(tables)
    counts["tables with a header row"] = sum(_has_header_row(t) for t in tables)
    pres = list(root.iter("pre"))
    counts["pre blocks"] = len(pres)
    counts["highlighting spans in pre"] = sum(_count(p, "span") for p in pres)
    divs = list(root.iter("div"))
    counts["divs"] = len(divs)
    counts["deepest div nesting"] = max((sum(1 for _ in d.iterancestors("div")) for d in divs), default=0)
    counts["definition lists (dl)"] = _count(root, "dl")
    counts["list items"] = _count(root, "li")
    for tag in BOILERPLATE_TAGS:
        counts[f"<{tag}>"] = _count(root, tag)
    counts['role="navigation"'] = len(root.xpath('//*[@role="navigation"]'))
    counts["¶ permalinks"] = len(root.xpath(_HEADERLINK))
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


def page_text(html: str) -> str:
    """The text of a page's body outside scripts and styles: what its language is judged on."""
    root = html_tree(html)
    return " ".join(root.xpath("//body//text()[not(ancestor::script or ancestor::style)]"))


def language_note(pages: Iterable[Page], *, warn_share: float = settings.NOT_ENGLISH_WARN_SHARE) -> str:
    """One sentence on the corpus's language: how many pages read as English (`writing.looks_english`)
    and, when more than `warn_share` do not, a warning that the bundled embedder reads English only."""
    pages = list(pages)
    english = sum(looks_english(page_text(page.html)) for page in pages)
    note = f"{english} of {len(pages)} pages read as English"
    if len(pages) - english <= warn_share * len(pages):
        share = settings.ENGLISH_MIN_FUNCTION_SHARE
        return note + f" (at least {share:.0%} of their words are 'the', 'of', 'is'...)."
    return (note + ": most of this corpus is in another language, and the bundled embedder "
            "(all-MiniLM-L6-v2) reads English only. Pass a multilingual embedder by name, "
            f"for example model='{MULTILINGUAL_MODEL}' (downloaded once from the Hugging Face hub).")
