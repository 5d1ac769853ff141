"""Parse, don't strip: turn an HTML page into a stream of typed blocks in document order.

`parse_blocks` walks the main content of a page with BeautifulSoup and emits `Block` records:
headings (which update the heading path), paragraphs and bare text, tables (one row per line,
see `course_lib.tables`), code (exact, fenced with its language), list items and definitions.
Boilerplate is removed by structure (`STRUCTURAL_BOILERPLATE`) and, across a corpus, by frequency
(`drop_frequent_blocks`). `parse_file` and `parse_corpus` add decoding and the checks that turn
an empty, binary or stub file into a counted skip instead of a crash.

Definitions, decided here once: a Sphinx object (`<dl class="py function">`) becomes ONE
"definition" block holding its signature (the `<dt>`) and the description that follows it up to
the first code sample, table, list or nested definition; those become blocks of their own, and
every block inside the `<dd>` gets the object's name (`shutil.copy2`, from the `<dt>` id) as a
last heading-path element, so "what does shutil.copy2 do" finds signature and description
together, and a chunker that never mixes heading paths keeps one object per chunk.
`section_id` stays the innermost `<section>` id. `level` is the heading level for headings,
the nesting depth for list items and definitions, 0 otherwise.
"""
from __future__ import annotations

import hashlib
import html as htmllib
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import soupsieve
from bs4 import BeautifulSoup
from bs4.element import NavigableString, Tag

from .records import Block, Page
from .tables import BLOCK_LEVEL, collapse, is_layout_table, is_text, table_to_text, text_of

# Tried in order; the first that matches is the page's main content, else the whole <body>.
MAIN_SELECTOR = ('[role="main"]', "main", "article")

# Page furniture, removed by structure before any text is read. docutils >= 0.18 writes
# footnotes, "Abstract" topics and sidebars as <aside>: those are content and are kept.
STRUCTURAL_BOILERPLATE = (
    "nav", "header:not(article header, main header, [role=main] header)", "footer",
    "aside:not(.footnote, .footnote-list, .citation, .topic, .sidebar:has(> .sidebar-title))",
    '[role="navigation"]', '[role="banner"]', '[role="contentinfo"]', '[role="search"]',
    "div.sphinxsidebar", "div.related", "div.footer", "div.mobile-nav", "form", "button",
    "div.toctree-wrapper",  # a Sphinx table of contents inside the page: links to other pages
    # Cookie and consent notices. Not a bare [id*=cookie]: that would delete the docs of
    # http.cookies (<section id="cookie-objects">, <dt id="http.cookiejar.CookieJar">).
    ':is(div, aside, dialog, p, span, ul)[class*="cookie-"], :is(div, aside, dialog)[id*="cookie-"]',
    ':is(div, aside, dialog)[class*="consent"], :is(div, aside, dialog)[id*="consent"]',
    ':is(div, aside, dialog)[class*="gdpr"], :is(div, aside, dialog)[id*="gdpr"]',
)
# Decoration attached to content: permalink pilcrows, "[source]" links, copy buttons, line numbers.
DECORATION = (
    "a.headerlink", ".viewcode-link", ".viewcode-back", "span.linenos", "[class*=copybtn]",
    "[class*=copy-btn]", "[class*=copybutton]", "[class*=copy-button]", "[data-clipboard-target]",
)
# Never text, whatever the settings: their strings are code, styling or widgets.
NEVER_CONTENT = ("script", "style", "noscript", "template", "svg", "iframe", "canvas", "object",
                 "embed", "select", "input", "textarea")

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_PARAGRAPHS = frozenset("p address figcaption summary caption legend".split())
_LISTS = frozenset(("ul", "ol", "menu"))
_LABELS = frozenset(("admonition-title", "topic-title", "sidebar-title"))  # "Note", "See also"
_LANGS = {"python3": "python", "py3": "python", "py": "python", "none": "", "default": ""}
# Tags that may appear inside highlighted code; any other tag inside a raw <pre> is markup that
# the author meant as text (an unescaped <script> example) and that a parser would swallow.
_CODE_MARKUP = frozenset("span a b i em strong code br kbd var samp u s mark sub sup font small "
                         "big tt ins del abbr q cite dfn".split())
_RAW_SCAN = re.compile(r"<!--.*?-->|<(script|style)\b.*?</\1\s*>|<pre\b[^>]*>(.*?)</pre\s*>",
                       re.S | re.I)
_TAG_NAME = re.compile(r"</?([a-zA-Z][\w:-]*)")


class ParseError(Exception):
    """A file that cannot be parsed as HTML, with the path and a reason a learner can act on."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = str(path), reason


# ----------------------------------------------------------------------------- decoding

_META = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([-\w.:]+)|<\?xml[^>]*encoding=["']([-\w.:]+)""", re.I)
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def sniff_encoding(raw: bytes) -> tuple[str, str]:
    """Choose the encoding of an HTML file and say why: BOM, then <meta charset>, then UTF-8, then cp1252.

    Browsers read "iso-8859-1" and "ascii" as windows-1252, so we do too. A declared encoding
    that does not decode the bytes is ignored (a page saved by another tool keeps its old meta
    tag), and undeclared bytes that are not UTF-8 are read as cp1252, the usual culprit.
    """
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, f"byte order mark ({name})"
    match = _META.search(raw[:4096])
    if match:
        declared = (match.group(1) or match.group(2)).decode("ascii", "replace").lower()
        name = "cp1252" if declared in ("iso-8859-1", "latin-1", "latin1", "ascii", "us-ascii") else declared
        try:
            raw.decode(name)
            return name, f"declared charset {declared}"
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        raw.decode("utf-8")
        return "utf-8", "valid UTF-8" + (" (declared charset did not decode)" if match else "")
    except UnicodeDecodeError as err:
        return "cp1252", f"not valid UTF-8 (byte {raw[err.start]:#04x} at {err.start}): read as cp1252"


# cp1252 leaves five bytes undefined; a browser shows them as the same code points as latin-1.
_CP1252 = {i: bytes([i]).decode("cp1252") for i in range(0x80, 0xA0) if i not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)}


def decode_html(raw: bytes) -> str:
    """Decode the bytes of an HTML file to text, choosing the encoding with `sniff_encoding`."""
    name, _ = sniff_encoding(raw)
    if name == "cp1252":
        return raw.decode("latin-1").translate(_CP1252)
    return raw.decode(name).lstrip("\ufeff")


# ----------------------------------------------------------------------------- code

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
    for pre, content in zip(pres, raw):
        if {n.lower() for n in _TAG_NAME.findall(content)} <= _CODE_MARKUP:
            continue
        text = re.sub(r"</?(?:%s)\b[^>]*>" % "|".join(sorted(_CODE_MARKUP)), "", content, flags=re.I)
        lang = _code_language(pre)  # may sit on an inner <code> that clear() is about to remove
        pre.clear()
        if lang:
            pre["class"] = [*(pre.get("class") or ()), f"language-{lang}"]
        pre.append(NavigableString(htmllib.unescape(text.removeprefix("\n"))))
        repaired += 1
    return repaired


# ----------------------------------------------------------------------------- the walk

@dataclass
class _Owner:
    """An open list item or definition: it decides the kind of the text flushed inside it."""

    kind: str  # "list_item" or "definition"
    scope: Tag  # leaving this element closes the owner (the <li>, or the <dl> of a dt/dd pair)
    depth: int = 1
    label: str | None = None  # a definition's name, appended to the heading path
    has_dd: bool = False
    emitted: bool = False


def _is_label(tag: Tag) -> bool:
    """An admonition/topic title paragraph, or the "[1]" label of a docutils footnote."""
    classes = tag.get("class") or ()
    if tag.name == "p":
        return bool(_LABELS.intersection(classes))
    parent = tag.parent.get("class") or () if tag.parent is not None else ()
    return tag.name == "span" and "label" in classes and bool({"footnote", "citation"} & set(parent))


def _definition_label(dt: Tag) -> str | None:
    """The name a Sphinx object description adds to the heading path, or None for a plain term.

    Python objects use the `<dt>` id (`shutil.copy2`, `datetime.timedelta.total_seconds`: a
    method's visible name lacks its class); other domains (C, options) their visible name.
    """
    if "sig" not in (dt.get("class") or ()):
        return None
    if dt.get("id") and "py" in (dt.parent.get("class") or ()):
        return str(dt["id"])
    name = collapse("".join(text_of(t) for t in dt.select(".sig-prename, .sig-name")))
    return name or dt.get("id") or collapse(text_of(dt))[:80] or None


class _Walker:
    """Walks a tree once, in document order, with an explicit stack (no recursion limit).

    Inline content accumulates in `segments` (the current run of text) and is flushed as one
    block at the next block boundary. Inside a list item or a definition a paragraph boundary
    only starts a new segment, so the item's paragraphs stay one block; a "hard" element
    (heading, code, table, list, definition list) always flushes.
    """

    def __init__(self, title: str, *, definition_paths: bool) -> None:
        self.title, self.definition_paths = title, definition_paths
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []
        self.sections: list[str] = []
        self.heading_id: str | None = None
        self.owners: list[_Owner] = []
        self.labels: list[str] = []  # names of the open definitions (kept for the heading path)
        self.definitions = 0  # how many definitions are open
        self.segments: list[list[str]] = [[]]
        self.sticky = 0  # > 0: a "Note" label ends the run here and waits for its paragraph
        self.list_depth = 0
        self.title_seen = False
        self.blocky: set[int] = set()

    # -- output ---------------------------------------------------------------------------
    def path(self) -> tuple[str, ...]:
        base = ((self.title,) if self.title else ()) + tuple(t for _, t in self.headings)
        if not self.definition_paths:
            return base
        return base + tuple(self.labels)

    def emit(self, kind: str, text: str, level: int = 0) -> None:
        section = self.sections[-1] if self.sections else self.heading_id
        self.blocks.append(Block(kind, text, self.path(), section, level))

    def flush(self) -> None:
        """Emit the current run as one block whose kind the innermost open owner decides."""
        text = "\n".join(t for t in (collapse("".join(seg)) for seg in self.segments) if t)
        self.segments, self.sticky = [[]], 0
        if not text:
            return
        owner = self.owners[-1] if self.owners else None
        if owner is not None and owner.kind == "list_item":
            self.emit("list_item", "- " + text, owner.depth)
        elif owner is not None and not owner.emitted:
            owner.emitted = True
            self.emit("definition", text, self.definitions)
        else:
            self.emit("text", text)

    def boundary(self) -> None:
        """A soft block boundary: a new block, or a new segment inside an item or definition."""
        if self.sticky:
            waiting = not "".join(self.segments[-1][self.sticky:]).strip()
            self.sticky = 0
            if waiting:  # only the label so far: the paragraph after it joins it
                self.segments[-1].append(" ")
                return
        if self.owners:
            self.new_segment()
        else:
            self.flush()

    def push(self, owner: _Owner) -> None:
        self.owners.append(owner)
        self.definitions += owner.kind == "definition"
        if owner.label:
            self.labels.append(owner.label)

    def pop(self) -> None:
        owner = self.owners.pop()
        self.definitions -= owner.kind == "definition"
        if owner.label:
            self.labels.pop()

    def new_segment(self) -> None:
        self.segments.append([])
        self.sticky = 0

    # -- the walk ---------------------------------------------------------------------------
    def walk(self, root: Tag) -> list[Block]:
        for tag in root.descendants:  # mark the elements that wrap blocks (an inline <span><p>)
            if not isinstance(tag, Tag) or tag.name not in BLOCK_LEVEL:
                continue
            node = tag.parent
            while node is not None and node is not root and id(node) not in self.blocky:
                self.blocky.add(id(node))
                node = node.parent
        stack: list[tuple[object, bool]] = [(child, False) for child in reversed(root.contents)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self.leave(node)
            elif isinstance(node, Tag):
                if self.enter(node):
                    stack.append((node, True))
                    stack.extend((child, False) for child in reversed(node.contents))
            elif is_text(node):
                self.segments[-1].append(str(node))
        self.flush()
        return self.blocks

    def enter(self, tag: Tag) -> bool:
        """Handle an element on the way down; True means: walk its children."""
        name = tag.name
        if name in HEADINGS:
            self.flush()
            self.heading(tag)
        elif name == "pre":
            self.flush()
            code = code_text(tag)
            if code.strip():
                self.emit("code", _fence(code, _code_language(tag)))
        elif name == "table":
            self.flush()
            if is_layout_table(tag):
                return True  # rows and cells are block boundaries: read it like nested divs
            path = self.path()
            text = table_to_text(tag, context=path[-1] if path else "")
            if text:
                self.emit("table", text)
        elif name in _LISTS:
            self.flush()
            self.list_depth += 1
            return True
        elif name == "li":
            self.flush()
            self.push(_Owner("list_item", tag, depth=max(self.list_depth, 1)))
            return True
        elif name in ("dt", "dd"):
            self.definition_part(tag)
            return True
        elif name == "br":
            self.segments[-1].append(" ")
        elif _is_label(tag):  # "Note", "See also", a footnote's "[1]": joined to what follows
            self.boundary() if name == "p" else None
            label = collapse(text_of(tag))
            colon = name == "p" and label and label[-1] not in ":.?!"
            self.segments[-1].append(label + ":" if colon else label)
            self.sticky = len(self.segments[-1])
        elif name in _PARAGRAPHS and id(tag) not in self.blocky:
            self.boundary()
            self.segments[-1].append(text_of(tag))
            self.boundary()
        elif name in BLOCK_LEVEL:
            self.flush() if name == "dl" else self.boundary()
            if name in ("section", "article") and tag.get("id"):
                self.sections.append(str(tag["id"]))
            return True
        elif id(tag) in self.blocky:
            return True  # an inline wrapper around blocks (<span><p>..</p></span>): transparent
        else:
            self.segments[-1].append(text_of(tag))
        return False

    def leave(self, tag: Tag) -> None:
        """Handle an element on the way up: close owners, sections and lists it opened."""
        name = tag.name
        if name == "dd" and self.owners and self.owners[-1].scope is tag.parent:
            self.flush()
            self.pop()
        elif name == "dt":
            self.new_segment()
        if self.owners and self.owners[-1].scope is tag:
            self.flush()
            while self.owners and self.owners[-1].scope is tag:
                self.pop()
        if name in ("section", "article") and tag.get("id"):
            self.sections.pop()
        if name in _LISTS:
            self.flush()
            self.list_depth -= 1
        elif name in BLOCK_LEVEL and name not in ("dt", "dd"):
            self.flush() if name in ("dl", "table") else self.boundary()

    def definition_part(self, tag: Tag) -> None:
        """Open or continue the definition owner of a dt/dd pair (several dt may share one dd)."""
        top = self.owners[-1] if self.owners else None
        same = top is not None and top.kind == "definition" and top.scope is tag.parent
        if same and not top.has_dd:  # a second signature, or the description after its dt
            top.has_dd = tag.name == "dd"
            self.new_segment()
            return
        self.flush()
        if same:
            self.pop()  # the previous pair had no <dd>, or this <dd> has no <dt>
        label = _definition_label(tag) if tag.name == "dt" else None
        self.push(_Owner("definition", tag.parent, label=label, has_dd=tag.name == "dd"))

    def heading(self, tag: Tag) -> None:
        """Emit a heading and make it the last element of the heading path at its level."""
        text, level = collapse(text_of(tag)), int(tag.name[1])
        if not text:
            return
        if level == 1 and not self.title_seen and not self.headings and text == self.title:
            self.title_seen = True  # the page title is already the root of every path
        else:
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.headings.append((level, text))
        anchor = tag if tag.get("id") else tag.find(id=True)
        self.heading_id = str(anchor["id"]) if anchor is not None else self.heading_id
        self.emit("heading", text, level)


# ----------------------------------------------------------------------------- public API

def _split_top(text: str, seps: str) -> list[int]:
    """Positions of the characters in `seps` that sit outside any (...) or [...]."""
    depth, found = 0, []
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in seps:
            found.append(i)
    return found


def required_token(selector: str) -> str | None:
    """A string that any element matching a simple CSS selector must carry in its tag name or
    attributes (None when we cannot tell). Used only to skip elements cheaply: see `_remove`.
    """
    cuts = _split_top(selector, " >+~")
    compound = selector[cuts[-1] + 1:] if cuts else selector  # the rightmost compound
    compound = re.sub(r":[\w-]+\([^()]*(\([^()]*\)[^()]*)*\)", "", compound)  # :not(..), :is(..), :has(..)
    attr = re.search(r"""\[\s*([\w-]+)\s*(?:[~|^$*]?=\s*["']?([^"'\]]+))?""", compound)
    if attr:
        return (attr.group(2) or attr.group(1)).strip().lower()
    named = re.search(r"[.#]([\w-]+)", compound) or re.match(r"([a-zA-Z][\w-]*)", compound)
    return named.group(1).lower() if named else None


@lru_cache(maxsize=None)
def _compiled(selectors: tuple[str, ...]) -> tuple[soupsieve.SoupSieve, tuple[str, ...] | None]:
    flat = [sel[a + 1:b].strip() for sel in selectors
            for a, b in zip([-1, *_split_top(sel, ",")], [*_split_top(sel, ","), len(sel)])]
    tokens = [required_token(sel) for sel in flat]
    return soupsieve.compile(", ".join(flat)), None if None in tokens else tuple(set(tokens))


def _remove(root: Tag, selectors: tuple[str, ...]) -> int:
    """Delete every element under `root` that matches one of the CSS selectors; return the count.

    Same result as `soupsieve.select`, several times faster: testing thirty selectors on each of
    15,000 elements dominated parse time, so an element is tested only when its name or an
    attribute contains a token that every match must carry (`required_token`).
    """
    matcher, tokens = _compiled(selectors)
    doomed = []
    for tag in root.find_all(True):
        if tokens is not None:
            hay = " ".join([tag.name, *(f"{k} {' '.join(v) if isinstance(v, list) else v}"
                                        for k, v in tag.attrs.items())]).lower()
            if not any(t in hay for t in tokens):
                continue
        if matcher.match(tag):
            doomed.append(tag)
    for tag in doomed:
        if not tag.decomposed:  # an ancestor may already have taken it
            tag.decompose()
    return len(doomed)


def make_soup(html: str, parser: str = "lxml") -> BeautifulSoup:
    """Parse with BeautifulSoup, falling back to html.parser if the chosen parser fails.

    lxml and html.parser build trees 100,000 levels deep without trouble; should a parser
    still break on a pathological page (a RecursionError, an lxml error), the page is read
    again with the pure-Python html.parser rather than lost.
    """
    try:
        return BeautifulSoup(html, parser)
    except Exception:  # noqa: BLE001 - any parser failure gets the fallback
        if parser == "html.parser":
            raise
        return BeautifulSoup(html, "html.parser")


def parse_blocks(
    html: str | bytes,
    *,
    title: str | None = None,
    main_selector: str | tuple[str, ...] | None = MAIN_SELECTOR,
    parser: str = "lxml",
    drop_boilerplate: bool = True,
    drop_decoration: bool = True,
    definition_paths: bool = True,
) -> list[Block]:
    """Turn one HTML page into its stream of blocks, in document order.

    Reads the main content (the first match of `main_selector`, else <body>), after removing
    `STRUCTURAL_BOILERPLATE` (if `drop_boilerplate`) and `DECORATION` such as the pilcrow
    permalinks (if `drop_decoration`). Layout wrappers (div, section, span around blocks...)
    are walked through; the walk stops at the first block-level element, so no text appears
    twice. The page title (`title`, else the first <h1>, else <title>) is the first element of
    every heading path. Each lesson flips one keyword and measures the effect.
    """
    if isinstance(html, bytes):
        html = decode_html(html)
    html = html.replace("\r\n", "\n").replace("\r", "\n")  # as HTML5 does; html.parser does not
    soup = make_soup(html, parser)
    if re.search(r"<pre\b", html, re.I):
        _repair_raw_pre(soup, html)
    selectors = (main_selector,) if isinstance(main_selector, str) else tuple(main_selector or ())
    root = next((m for m in (soup.select_one(s) for s in selectors) if m is not None), None)
    if root is None:
        root = soup.body if soup.body is not None else soup
    _remove(root, NEVER_CONTENT + (DECORATION if drop_decoration else ())
            + (STRUCTURAL_BOILERPLATE if drop_boilerplate else ()))
    if title is None:
        h1 = root.find("h1")
        title_tag = soup.find("title")
        title = collapse(text_of(h1)) if h1 is not None else ""
        title = title or (collapse(title_tag.get_text()) if title_tag is not None else "")
    return _Walker(title, definition_paths=definition_paths).walk(root)


def is_stub(blocks: list[Block], *, min_chars: int = 200) -> bool:
    """True when a page has fewer than `min_chars` characters of text outside its headings."""
    return sum(len(b.text) for b in blocks if b.kind != "heading") < min_chars


def _check_html(text: str, path: str | Path) -> None:
    """Raise ParseError for an empty file or one with no HTML tag in it."""
    if not text.strip():
        raise ParseError(path, "empty file")
    if not re.search(r"<[a-zA-Z!/?]", text):  # "a < b" in plain text is not a tag
        raise ParseError(path, "no HTML tags: not an HTML file")


def parse_file(path: str | Path, **kwargs) -> list[Block]:
    """Read, decode and parse one HTML file; raise ParseError with a clear reason if it is not HTML.

    Empty, binary (NUL bytes) and tag-less files are refused before parsing; a parser that still
    fails is reported with the file's path. Keyword arguments go to `parse_blocks`.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise ParseError(path, f"cannot read: {err.strerror or err}") from err
    if not raw.strip():
        raise ParseError(path, "empty file")
    if b"\x00" in raw[:8192] and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ParseError(path, "binary file (NUL bytes): not an HTML file")
    text = decode_html(raw)
    _check_html(text, path)
    try:
        return parse_blocks(text, **kwargs)
    except Exception as err:  # noqa: BLE001 - say which file broke the parser, and how
        raise ParseError(path, f"parser failed: {type(err).__name__}: {err}") from err


def parse_corpus(
    items: Iterable[Page | str | Path],
    *,
    min_chars: int = 200,
    skip_stubs: bool = True,
    **kwargs,
) -> tuple[dict[str, list[Block]], list[tuple[str, str]]]:
    """Parse many pages (Page records or file paths); one bad file never stops the rest.

    Returns the blocks per page path and the skipped pages as (path, reason): unreadable,
    empty, binary or tag-less files, parser failures, and stubs with fewer than `min_chars`
    characters of text (when `skip_stubs`). Every page given is in exactly one of the two.
    """
    parsed: dict[str, list[Block]] = {}
    skipped: list[tuple[str, str]] = []
    for item in items:
        key = item.path if isinstance(item, Page) else str(item)
        try:
            if isinstance(item, Page):
                _check_html(item.html, key)
                blocks = parse_blocks(item.html, **kwargs)
            else:
                blocks = parse_file(item, **kwargs)
        except ParseError as err:
            skipped.append((key, err.reason))
            continue
        except Exception as err:  # noqa: BLE001 - a parser bug on one page must not stop the corpus
            skipped.append((key, f"parser failed: {type(err).__name__}: {err}"))
            continue
        if skip_stubs and is_stub(blocks, min_chars=min_chars):
            chars = sum(len(b.text) for b in blocks if b.kind != "heading")
            skipped.append((key, f"stub: {chars} characters of text (< {min_chars})"))
            continue
        parsed[key] = blocks
    return parsed, skipped


# ----------------------------------------------------------------------------- frequency

def block_key(text: str) -> str:
    """A short hash of a block's normalised text (case-folded, whitespace collapsed)."""
    return hashlib.blake2b(collapse(text).casefold().encode("utf-8"), digest_size=8).hexdigest()


def _pages(pages_blocks: Mapping[str, list[Block]] | Iterable[list[Block]]) -> list[list[Block]]:
    return list(pages_blocks.values()) if isinstance(pages_blocks, Mapping) else list(pages_blocks)


def block_frequencies(pages_blocks: Mapping[str, list[Block]] | Iterable[list[Block]]) -> Counter:
    """Count, for each normalised block text (by `block_key`), the number of pages containing it.

    A block repeated within one page counts once: what we look for is text that every page
    carries (a menu, a footer, a notice), not a word a page happens to repeat.
    """
    return Counter(key for blocks in _pages(pages_blocks) for key in {block_key(b.text) for b in blocks})


@dataclass(frozen=True)
class FrequentBlock:
    """One block text removed as boilerplate: how many pages carry it and how often it was dropped."""

    text: str
    kind: str
    pages: int
    share: float
    removed: int


def drop_frequent_blocks(
    pages_blocks: Mapping[str, list[Block]] | Iterable[list[Block]],
    *,
    max_share: float = 0.05,
    min_pages: int = 3,
    keep_kinds: tuple[str, ...] = ("heading",),
) -> tuple[Mapping[str, list[Block]] | list[list[Block]], list[FrequentBlock]]:
    """Drop blocks whose text appears on more than `max_share` of the pages (and on >= `min_pages`).

    Boilerplate that no selector names (a "Was this page helpful?" line, a repeated disclaimer)
    shows itself by appearing on many pages. Kinds in `keep_kinds` are never dropped: with
    `keep_kinds=()` or a tiny `max_share`, repeated headings such as "Examples" or "Notes" go
    too, which is the mistake a lesson shows. Returns the kept blocks in the shape given (dict
    or list) and a report of what was removed, most widespread first.
    """
    pages = _pages(pages_blocks)
    counts = block_frequencies(pages)
    limit = max_share * len(pages)
    removed: dict[str, list] = {}
    kept_pages = []
    for blocks in pages:
        kept = []
        for block in blocks:
            key = block_key(block.text)
            if block.kind not in keep_kinds and counts[key] > limit and counts[key] >= min_pages:
                removed.setdefault(key, [block, 0])[1] += 1
            else:
                kept.append(block)
        kept_pages.append(kept)
    report = sorted(
        (FrequentBlock(b.text, b.kind, counts[k], counts[k] / len(pages), n) for k, (b, n) in removed.items()),
        key=lambda r: (-r.pages, r.text),
    )
    if isinstance(pages_blocks, Mapping):
        return dict(zip(pages_blocks.keys(), kept_pages)), report
    return kept_pages, report
