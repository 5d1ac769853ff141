"""Code blocks: the exact text of a <pre>, its language, its Markdown fence, and raw markup put back.

Code is the one kind of block whose text must survive byte for byte (indentation, prompts,
blank lines): `code_text` reads it without a separator, `_fence` wraps it, and
`_repair_raw_pre` restores markup an author wrote unescaped inside <pre>.
"""
from __future__ import annotations

import html as htmllib
import re

from bs4 import BeautifulSoup
from bs4.element import NavigableString, Tag

_LANGS = {"python3": "python", "py3": "python", "py": "python", "none": "", "default": ""}
# Tags that may appear inside highlighted code; any other tag inside a raw <pre> is markup that
# the author meant as text (an unescaped <script> example) and that a parser would swallow.
_CODE_MARKUP = frozenset("span a b i em strong code br kbd var samp u s mark sub sup font small "
                         "big tt ins del abbr q cite dfn".split())
_RAW_SCAN = re.compile(r"<!--.*?-->|<(script|style)\b.*?</\1\s*>|<pre\b[^>]*>(.*?)</pre\s*>",
                       re.S | re.I)
_TAG_NAME = re.compile(r"</?([a-zA-Z][\w:-]*)")


def _code_language(pre: Tag) -> str:
    """The language named by a Sphinx wrapper (`highlight-python3`) or a `language-x` class."""
    node: Tag | None = pre
    for _ in range(4):  # <div class="highlight-python3"><div class="highlight"><pre>
        if node is None:
            break
        for cls in node.get("class") or ():
            for prefix in ("highlight-", "language-", "lang-"):
                if cls.startswith(prefix) and len(cls) > len(prefix):
                    lang = cls[len(prefix):].lower()
                    return _LANGS.get(lang, lang)
        code = node.find("code", recursive=False) if node is pre else None
        if code is not None and code.get("class"):
            node = code
            continue
        node = node.parent
    return ""


def _fence(code: str, lang: str) -> str:
    """Wrap code in a Markdown fence longer than any run of backticks inside it."""
    ticks = "`" * max(3, max((len(m) for m in re.findall(r"`+", code)), default=0) + 1)
    return f"{ticks}{lang}\n{code}\n{ticks}"


def code_text(pre: Tag) -> str:
    """The exact text of a <pre>: `get_text()` with NO separator rejoins highlighting spans.

    Leading and trailing blank lines go; indentation, prompts (`>>>`, `...`) and inner blank
    lines stay exactly as written.
    """
    lines = pre.get_text().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def _repair_raw_pre(soup: BeautifulSoup, source: str) -> int:
    """Put back raw markup written unescaped inside <pre> that the parser took for real tags.

    `<pre><script>alert(1)</script></pre>` parses as a <pre> holding a script: its text is
    gone. We scan the raw source for <pre> blocks (skipping comments and scripts), and where one
    holds a tag that is not highlighting markup we take its text from the source, entities
    unescaped. The scan and the parser must see the same number of <pre>; otherwise we do not
    guess. Returns the number of repaired blocks.
    """
    raw = [m.group(2) for m in _RAW_SCAN.finditer(source) if m.group(2) is not None]
    pres = soup.find_all("pre")
    if len(raw) != len(pres):
        return 0
    repaired = 0
    for pre, content in zip(pres, raw, strict=False):
        if {n.lower() for n in _TAG_NAME.findall(content)} <= _CODE_MARKUP:
            continue
        markup = "|".join(sorted(_CODE_MARKUP))
        text = re.sub(rf"</?(?:{markup})\b[^>]*>", "", content, flags=re.I)
        lang = _code_language(pre)  # may sit on an inner <code> that clear() is about to remove
        pre.clear()
        if lang:
            pre["class"] = [*(pre.get("class") or ()), f"language-{lang}"]
        pre.append(NavigableString(htmllib.unescape(text.removeprefix("\n"))))
        repaired += 1
    return repaired
