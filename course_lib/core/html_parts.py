"""The two HTML shapes a text extractor must not flatten: tables and code blocks (lesson 03).

Tables are linearised one row per line as `header: value` pairs: a table cut into fixed-size
pieces loses its column labels, while a row written as
`Attribute: days | Value: Between -999999999 and 999999999 inclusive` can stand on its own in a
chunk. Headers come from `<thead>`, from a first row of `<th>`, or from a first column of `<th>`
(key/value tables); colspan and rowspan are expanded into a grid; nested tables are linearised
inside their cell; layout tables (one column, links only, role="presentation") are recognised so
the walker reads them as ordinary text instead.

Code is the one kind of block whose text must survive byte for byte (indentation, prompts, blank
lines): `code_text` reads a `<pre>` without a separator, `fence` wraps it in Markdown with its
language, and `repair_raw_pre` restores markup an author wrote unescaped inside `<pre>`.

`text_of` and `collapse`, the element-text helpers the walker also uses, live here because a
table cell is their most demanding caller (nested tables inside a cell). Written by hand: this
is lesson content.
"""
from __future__ import annotations

import html as htmllib
import re
from collections import deque

from bs4 import BeautifulSoup
from bs4.element import NavigableString, PreformattedString, Script, Stylesheet, Tag, TemplateString

# Elements that start a new line when a browser renders them. Text inside inline elements
# (<code>, <em>, <a>, <span>) stays glued to its sentence; block-level ones get a space around.
BLOCK_LEVEL = frozenset(
    "address article aside blockquote body caption center dd details dialog div dl dt fieldset "
    "figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html li main menu nav ol p "
    "pre section summary table tbody td tfoot th thead tr ul legend".split()
)
_NOT_TEXT = (PreformattedString, Script, Stylesheet, TemplateString)  # comments, doctypes, code of <script>
HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")  # the one list of heading elements
_MAX_COLSPAN, _MAX_ROWSPAN = 1000, 65534  # the HTML spec's limits: a hostile colspan cannot eat memory
_SPACE = object()


def collapse(text: str) -> str:
    """Collapse every run of whitespace (newlines and no-break spaces included) into one space."""
    return " ".join(text.split())


def is_text(node: object) -> bool:
    """True for a string node that is visible text (not a comment, doctype or script body)."""
    return isinstance(node, NavigableString) and not isinstance(node, _NOT_TEXT)


def text_of(node: Tag | NavigableString, *, replace: dict[int, str] | None = None) -> str:
    """The visible text of an element, with inline children joined exactly as written.

    Unlike `get_text(" ")`, which puts a space between every pair of strings and so writes
    `shutil. copy2 ( src , dst )` for a Sphinx signature, this adds a space only around
    block-level descendants (a `<p>` inside a cell, a `<br>`), which is where a browser breaks
    the line. `replace` maps `id(tag)` to a ready-made text used instead of that subtree (a
    nested table already linearised). Whitespace is left as is: callers `collapse` it.
    An explicit stack instead of recursion, so 10,000 nested elements cannot overflow it.
    """
    if not isinstance(node, Tag):
        return str(node) if is_text(node) else ""
    out: list[str] = []
    stack: list[object] = list(reversed(node.contents))
    while stack:
        item = stack.pop()
        if item is _SPACE:
            out.append(" ")
        elif isinstance(item, Tag):
            if replace is not None and id(item) in replace:
                out.append(f" {replace[id(item)]} ")
            elif item.name == "br":
                out.append(" ")
            elif item.name in BLOCK_LEVEL:
                out.append(" ")
                stack.append(_SPACE)
                stack.extend(reversed(item.contents))
            else:
                stack.extend(reversed(item.contents))
        elif is_text(item):
            out.append(str(item))
    return "".join(out)


def _span(cell: Tag, name: str, limit: int) -> int:
    """A cell's colspan or rowspan as a sane integer (missing or garbage -> 1, 0 -> `limit`)."""
    try:
        value = int(str(cell.get(name, "1")).strip() or 1)
    except ValueError:
        return 1
    return limit if value == 0 else max(1, min(value, limit))


def _rows(table: Tag) -> tuple[list[tuple[list[Tag], bool]], list[object]]:
    """The table's own rows as (cells, in_thead), plus stray content that sits outside any cell.

    Only this table's rows: a nested table's rows belong to the cell that holds it. Cells found
    directly under <table>/<tbody> (html.parser leaves `<table><td>` as written) form a row of
    their own; stray text is returned so the caller can keep it rather than lose it silently.
    """
    rows: list[tuple[list[Tag], bool]] = []
    stray: list[object] = []
    loose: list[Tag] = []
    loose_head = False
    flat: list[tuple[object, bool]] = []  # (child, in_thead) with <thead>/<tbody>/<tfoot> opened
    for child in table.children:
        if isinstance(child, Tag) and child.name in ("thead", "tbody", "tfoot"):
            flat += [(item, child.name == "thead") for item in child.children] + [(None, False)]
        else:
            flat.append((child, False))
    for item, head in flat + [(None, False)]:
        if isinstance(item, Tag) and item.name in ("td", "th"):
            loose_head = head if not loose else loose_head
            loose.append(item)
            continue
        if loose and (item is None or isinstance(item, Tag) or collapse(text_of(item))):
            rows.append((loose, loose_head))
            loose = []
        if isinstance(item, Tag) and item.name == "tr":
            cells = [c for c in item.children if isinstance(c, Tag) and c.name in ("td", "th")]
            rows.append((cells, head))
            stray.extend(c for c in item.children if c.name not in ("td", "th") and collapse(text_of(c)))
        elif isinstance(item, Tag) and item.name in ("caption", "colgroup", "col"):
            continue
        elif item is not None and collapse(text_of(item)):
            stray.append(item)
    return rows, stray


def table_grid(table: Tag) -> tuple[list[list[Tag | None]], list[bool]]:
    """The table as a rectangular grid of cells (colspan/rowspan expanded) and a head flag per row.

    A cell spanning two columns appears in both slots (the same Tag object), so a caller can
    tell a spanned cell from two equal ones. Short rows are padded with None.
    """
    rows, _ = _rows(table)
    grid: list[list[Tag | None]] = []
    pending: dict[int, tuple[Tag, int]] = {}  # column -> (cell, rows still to fill) for rowspans
    for cells, _head in rows:
        line: list[Tag | None] = []
        queue = deque(cells)  # popped from the left: a list would make a wide row quadratic
        while queue or any(col >= len(line) for col in pending):
            col = len(line)
            if col in pending:
                cell, left = pending.pop(col)
                if left > 1:
                    pending[col] = (cell, left - 1)
                line.append(cell)
                continue
            if not queue:
                line.append(None)  # a hole before a later rowspan column
                continue
            cell = queue.popleft()
            down = _span(cell, "rowspan", min(_MAX_ROWSPAN, len(rows)))
            for _ in range(_span(cell, "colspan", _MAX_COLSPAN)):
                if down > 1:
                    pending[len(line)] = (cell, down - 1)
                line.append(cell)
        grid.append(line)
    width = max((len(r) for r in grid), default=0)
    return [r + [None] * (width - len(r)) for r in grid], [h for _, h in rows]


def _only_links(cell: Tag) -> bool:
    """True when every letter and digit of the cell belongs to a link (a navigation cell)."""
    def letters(s: str) -> str:
        return re.sub(r"[\W_]+", "", s)
    links = "".join(text_of(a) for a in cell.find_all("a"))
    return bool(links) and letters(links) == letters(text_of(cell))


def is_layout_table(table: Tag) -> bool:
    """Guess whether a table only arranges content on the page instead of holding data.

    Layout: role="presentation"/"none", a single column (a stack of boxes or a list of links),
    headings inside cells (a page laid out with a table), or no <th> and nothing but links in
    every non-empty cell (a navigation bar). The parser walks such tables as ordinary text.
    """
    if str(table.get("role", "")).lower() in ("presentation", "none"):
        return True
    grid, _ = table_grid(table)
    if max((len(r) for r in grid), default=0) <= 1:
        return True
    cells = {id(c): c for row in grid for c in row if c is not None}.values()
    if any(c.name == "th" for c in cells):
        return False
    if any(c.find(HEADING_TAGS) is not None for c in cells):
        return True
    filled = [c for c in cells if collapse(text_of(c))]
    return bool(filled) and all(_only_links(c) for c in filled)


def _lines(table: Tag, replace: dict[int, str], pair_sep: str) -> list[str]:
    """The row lines of one table; nested tables come ready-made through `replace`."""
    grid, head = table_grid(table)
    text: dict[int, str] = {}

    def cell_text(cell: Tag) -> str:
        if id(cell) not in text:
            text[id(cell)] = collapse(text_of(cell, replace=replace))
        return text[id(cell)]

    width = len(grid[0]) if grid else 0
    full_width = [width > 1 and len({id(c) for c in r}) == 1 and r[0] is not None for r in grid]
    head_rows = [i for i, h in enumerate(head) if h and not full_width[i]]
    first = next((i for i, f in enumerate(full_width) if not f), None)
    if not head_rows and first is not None and all(c is not None and c.name == "th" for c in grid[first]):
        head_rows = [first]  # a first row of <th> without <thead>
    # Each column's header parts, top row first: ["2023", "Q1"] under a colspan="2" "2023".
    labels = [[cell_text(grid[i][col]) for i in head_rows if grid[i][col] is not None]
              for col in range(width)]
    body = [i for i in range(len(grid)) if i not in head_rows]
    # Key/value table: no header row, and each data row starts with a <th> naming it.
    key_value = not head_rows and any(not full_width[i] for i in body) and all(
        full_width[i] or (grid[i][0] is not None and grid[i][0].name == "th") for i in body)
    lines, used = [], set()
    for i in body:
        groups: list[tuple[Tag, list[int]]] = []  # consecutive slots of one spanned cell
        for col, cell in enumerate(grid[i]):
            if cell is None:
                continue
            if groups and groups[-1][0] is cell:
                groups[-1][1].append(col)
            else:
                groups.append((cell, [col]))
        if full_width[i]:
            line = cell_text(grid[i][0])
        elif key_value:
            values = [cell_text(c) for c, _ in groups[1:] if cell_text(c)]
            key = cell_text(groups[0][0])
            line = f"{key}: {pair_sep.join(values)}" if key and values else key or pair_sep.join(values)
        else:
            pairs = []
            for cell, cols in groups:
                value = cell_text(cell)
                label = " / ".join(dict.fromkeys(part for c in cols for part in labels[c] if part))
                if value:
                    pairs.append(f"{label}: {value}" if label else value)
                    used.update(cols)
            line = pair_sep.join(pairs)
        if line:
            lines.append(line)
    # A header whose column holds no value would vanish with the pairs: say it once instead.
    unused = [" / ".join(p for p in labels[c] if p) for c in range(width) if c not in used and any(labels[c])]
    return ([pair_sep.join(dict.fromkeys(unused))] if unused else []) + lines


def _linearise(table: Tag, inner: dict[int, str], pair_sep: str, context: str) -> list[str]:
    """Caption (or context), row lines, then any stray text outside the cells."""
    lines = _lines(table, inner, pair_sep)
    _, stray = _rows(table)
    lines += [t for t in (collapse(text_of(s, replace=inner)) for s in stray) if t]
    caption = table.find("caption", recursive=False)
    title = collapse(text_of(caption, replace=inner)) if caption is not None else context.strip()
    return [title, *lines] if title and lines else lines


def table_to_text(table: Tag, *, context: str = "", pair_sep: str = " | ") -> str:
    """Linearise a data table: the context line, then one line per row of `header: value` pairs.

    `context` is the nearest heading, written first so that a row cut away from the top of the
    table still says what it is about; the table's own <caption> wins over it. Nested tables
    are linearised inside their cell (rows joined by "; ", pairs by ", "), innermost first, so
    their text appears once, in place. Stray text the table holds outside any cell is kept as a
    last line. Returns "" when the table has no text at all.
    """
    inner: dict[int, str] = {}
    for nested in reversed(table.find_all("table")):  # reversed document order: innermost first
        if is_layout_table(nested):
            inner[id(nested)] = collapse(text_of(nested, replace=inner))
        else:
            inner[id(nested)] = "; ".join(_linearise(nested, inner, ", ", ""))
    return "\n".join(_linearise(table, inner, pair_sep, context))


# A code block's language as its class spells it -> the course's name (parse's cache check reads them).
LANGUAGE_ALIASES = {"python3": "python", "py3": "python", "py": "python", "none": "", "default": ""}
# Tags that may appear inside highlighted code; any other tag inside a raw <pre> is markup that
# the author meant as text (an unescaped <script> example) and that a parser would swallow.
_CODE_MARKUP = frozenset("span a b i em strong code br kbd var samp u s mark sub sup font small "
                         "big tt ins del abbr q cite dfn".split())
_RAW_SCAN = re.compile(r"<!--.*?-->|<(script|style)\b.*?</\1\s*>|<pre\b[^>]*>(.*?)</pre\s*>",
                       re.S | re.I)
_TAG_NAME = re.compile(r"</?([a-zA-Z][\w:-]*)")
# Tags a browser hides or moves when they sit unescaped inside <pre>: their text is what the author
# meant to show. Any other tag inside <pre> is real markup: a highlighter's line <div>, a copy button.
_RAW_SIGNS = frozenset("script style template html head body title meta link noscript iframe textarea "
                       "xmp frameset".split())
_CODE_LINE_TAGS = frozenset("div p li tr".split())  # one line of code each (CodeMirror, line tables)


def code_language(pre: Tag) -> str:
    """The language named by a Sphinx wrapper (`highlight-python3`) or a `language-x` class."""
    node: Tag | None = pre
    for _ in range(4):  # <div class="highlight-python3"><div class="highlight"><pre>
        if node is None:
            break
        for cls in node.get("class") or ():
            for prefix in ("highlight-", "language-", "lang-"):
                if cls.startswith(prefix) and len(cls) > len(prefix):
                    lang = cls[len(prefix):].lower()
                    return LANGUAGE_ALIASES.get(lang, lang)
        code = node.find("code", recursive=False) if node is pre else None
        if code is not None and code.get("class"):
            node = code
            continue
        node = node.parent
    return ""


def fence(code: str, lang: str) -> str:
    """Wrap code in a Markdown fence longer than any run of backticks inside it."""
    ticks = "`" * max(3, max((len(m) for m in re.findall(r"`+", code)), default=0) + 1)
    return f"{ticks}{lang}\n{code}\n{ticks}"


def _pre_text(pre: Tag) -> str:
    """The strings of a <pre> joined with no separator, a line break for each `<br>`, and one before
    each line element (`<div class="cm-line">`) where the source has none: what a browser shows."""
    parts: list[str] = []
    for node in pre.descendants:
        if isinstance(node, Tag):
            if node.name == "br" or (node.name in _CODE_LINE_TAGS and parts and not parts[-1].endswith("\n")):
                parts.append("\n")
        elif is_text(node):
            parts.append(str(node))
    return "".join(parts)


def code_text(pre: Tag) -> str:
    """The exact text of a <pre>: `get_text()` with NO separator rejoins highlighting spans.

    Leading and trailing blank lines go; indentation, prompts (`>>>`, `...`) and inner blank
    lines stay exactly as written.
    """
    lines = _pre_text(pre).split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def repair_raw_pre(soup: BeautifulSoup, source: str) -> int:
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
        if not {n.lower() for n in _TAG_NAME.findall(content)} & _RAW_SIGNS:
            continue
        markup = "|".join(sorted(_CODE_MARKUP))
        text = re.sub(rf"</?(?:{markup})\b[^>]*>", "", content, flags=re.I)
        lang = code_language(pre)  # may sit on an inner <code> that clear() is about to remove
        pre.clear()
        if lang:
            pre["class"] = [*(pre.get("class") or ()), f"language-{lang}"]
        pre.append(NavigableString(htmllib.unescape(text.removeprefix("\n"))))
        repaired += 1
    return repaired
