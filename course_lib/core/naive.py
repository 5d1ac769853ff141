"""The naive pipeline every tutorial starts with: strip tags by regex, cut every N characters.

Lesson 01 builds it to show its failures; later lessons keep it as the baseline that every
improvement is measured against, so it stays deliberately naive.
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterable

from course_lib import settings
from course_lib.infra.safe_text import CONTROLS
from course_lib.records import Chunk, Page

_SCRIPT_STYLE = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_SPACES = re.compile(r"\s+")


def strip_tags(markup: str) -> str:
    """Delete every tag with a regular expression, as tutorials do, and unescape entities.

    Script and style bodies go too (otherwise CSS and JavaScript would fill the chunks), but
    navigation, sidebars and footers stay, and every tag becomes a space: that is what glues
    boilerplate into the text and spaces code out ("os . path . join").
    """
    text = _TAG.sub(" ", _SCRIPT_STYLE.sub(" ", markup))
    # &#x81; unescapes to a C1 control character; no chunk may carry one (it acts on a terminal).
    return _SPACES.sub(" ", CONTROLS.sub("", html.unescape(text))).strip()


def fixed_size_chunks(text: str, *, doc: str, size: int = settings.NAIVE_CHUNK_CHARS,
                      overlap: int = settings.NAIVE_OVERLAP_CHARS) -> list[Chunk]:
    """Cut text every `size` characters, each chunk repeating the last `overlap` of the previous.

    No regard for words, sentences, tables or code: chunks start mid-word and carry no title,
    heading or section, only the page they were cut from (which the judge needs).
    """
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be in [0, size), got overlap={overlap}, size={size}")
    step = size - overlap
    starts = range(0, max(len(text) - overlap, 1), step)
    return [
        Chunk(id=f"{doc}#{n}", doc=doc, body=text[start : start + size], kinds=("fixed",),
              meta={"start": start})
        for n, start in enumerate(starts)
        if text[start : start + size].strip()
    ]


def naive_chunks(pages: Iterable[Page], *, size: int = settings.NAIVE_CHUNK_CHARS,
                 overlap: int = settings.NAIVE_OVERLAP_CHARS) -> list[Chunk]:
    """Lesson 01's chunks for a whole corpus: regex-stripped pages cut into fixed-size pieces."""
    return [
        chunk
        for page in pages
        for chunk in fixed_size_chunks(strip_tags(page.html), doc=page.path, size=size, overlap=overlap)
    ]
