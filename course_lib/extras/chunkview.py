"""See the chunks on the page, and count what a chunker loses of it.

`show_chunks(chunks)` renders one chunker's chunks of one page in reading order, alternating two
shades so every cut is visible (mid-row, mid-word, a heading torn from its paragraph); text a
chunk repeats from the previous one (an overlap) is shaded darker. Each chunk carries a badge:
its number, its token count under the embedder's tokenizer and, past the window (the counter's
`limit`, the model's real one), "over". `side_by_side({"course": chunks, "peer:docling": ...})`
puts several chunkers of the same page in columns. The HTML uses inline styles only (no <style>
block, no script), so it renders the same in JupyterLab and in GitHub's notebook viewer.

`what_chunks_keep` counts, for any chunker, what the pages hold and its chunks do not: code
blocks (`<pre>`) and table rows (`<tr>`) of the page's visible HTML, whole in one chunk, split
across chunks, or damaged (a line or cell in no chunk at all); the words of the page's content
(the text the course's parser keeps) that no chunk carries; and the chunks past the window. Text
is compared as the judge compares it (`golden.normalize`, which folds the markdown a library adds),
so reformatted text is not counted as loss.
"""
from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from IPython.display import HTML

from course_lib import settings
from course_lib.evaluation.golden import normalize, strip_markup
from course_lib.records import Chunk, Page

SHADES = ("#dbeafe", "#fef3c7")  # alternating chunk backgrounds (blue, amber): colour-blind safe
OVERLAP = "#c4b5fd"  # text repeated from the previous chunk
OVER = "#b91c1c"  # the badge of a chunk over the window
_BOX = "font-family:monospace;font-size:12px;line-height:1.5;white-space:pre-wrap;word-break:break-word"


def _body(chunk: Chunk | str) -> str:
    return chunk.body if isinstance(chunk, Chunk) else chunk


def _text(chunk: Chunk | str) -> str:
    return chunk.text if isinstance(chunk, Chunk) else chunk


def repeated_prefix(previous: str, current: str, *, min_chars: int = settings.CHUNK_VIEW_REPEAT_CHARS) -> int:
    """Length of the longest start of `current` that ends `previous` (an overlap), 0 if shorter
    than `min_chars` (a shared word is not an overlap)."""
    for n in range(min(len(previous), len(current)), min_chars - 1, -1):
        if previous.endswith(current[:n]):
            return n
    return 0


def _counter_and_limit(counter, limit: int | None):
    """The counter (default: the embedder's own) and the window: `limit`, else the counter's
    (the model's real input limit, asked of the model, never typed)."""
    if counter is None:
        from course_lib.core.tokens import get_counter

        counter = get_counter()
    return counter, counter.limit if limit is None else limit


def chunk_rows(chunks: Sequence[Chunk | str], *, limit: int | None = None, counter=None) -> list[dict]:
    """Per chunk: its body, the characters it repeats from the previous one, its tokens (of the
    embedded text) and whether they exceed `limit` (default: the counter's window)."""
    counter, limit = _counter_and_limit(counter, limit)
    from course_lib.core.tokens import count_all

    counts = count_all([_text(c) for c in chunks], counter)
    rows, previous = [], ""
    for chunk, tokens in zip(chunks, counts, strict=True):
        body = _body(chunk)
        rows.append({"body": body, "repeated": repeated_prefix(previous, body), "tokens": tokens,
                     "over": tokens > limit})
        previous = body
    return rows


def chunks_html(chunks: Sequence[Chunk | str], *, limit: int | None = None, counter=None,
                max_chars: int | None = None) -> str:
    """The chunks as one inline-styled HTML fragment (see the module docstring); `max_chars`
    shortens each chunk's middle for a long page."""
    counter, limit = _counter_and_limit(counter, limit)
    parts = []
    for n, row in enumerate(chunk_rows(chunks, limit=limit, counter=counter), 1):
        body, cut = row["body"], row["repeated"]
        head, rest = body[:cut], body[cut:]
        if max_chars is not None and len(rest) > max_chars:
            half = max_chars // 2
            rest = f"{rest[:half]} […{len(rest) - 2 * half} characters…] {rest[-half:]}"
        colour = OVER if row["over"] else "#374151"
        flag = f" over {limit}" if row["over"] else ""
        badge = (f'<span style="background:{colour};color:#fff;border-radius:3px;padding:0 4px;'
                 f'font-size:10px">#{n} · {row["tokens"]} tok{flag}</span>')
        repeated = f'<span style="background:{OVERLAP}">{html.escape(head)}</span>' if head else ""
        parts.append(f'<span style="background:{SHADES[(n - 1) % 2]}">{badge} {repeated}'
                     f'{html.escape(rest)}</span>')
    return f'<div style="{_BOX}">{"".join(parts)}</div>'


def show_chunks(chunks: Sequence[Chunk | str], *, limit: int | None = None, counter=None,
                title: str = "",
                max_chars: int | None = None) -> HTML:
    """One chunker's chunks of one page, shaded in turn, with token badges (renders in a notebook)."""
    heading = f'<div style="font-weight:bold;margin:4px 0">{html.escape(title)}</div>' if title else ""
    return HTML(heading + chunks_html(chunks, limit=limit, counter=counter, max_chars=max_chars))


def side_by_side(columns: Mapping[str, Sequence[Chunk | str]], *, limit: int | None = None,
                 counter=None, max_chars: int | None = None) -> HTML:
    """Several chunkers of the same page in columns, each headed by its name, chunk count and
    how many chunks exceed the window (a table: GitHub's viewer keeps tables, drops flexbox)."""
    counter, limit = _counter_and_limit(counter, limit)
    heads, cells = [], []
    for name, chunks in columns.items():
        rows = chunk_rows(chunks, limit=limit, counter=counter)
        over = sum(r["over"] for r in rows)
        heads.append(f'<th style="text-align:left;vertical-align:top">{html.escape(name)}<br>'
                     f'<span style="font-weight:normal">{len(rows)} chunks, {over} over {limit}</span></th>')
        cells.append(f'<td style="vertical-align:top;text-align:left;width:{100 // max(len(columns), 1)}%">'
                     f'{chunks_html(chunks, limit=limit, counter=counter, max_chars=max_chars)}</td>')
    return HTML(f'<table style="table-layout:fixed;width:100%"><tr>{"".join(heads)}</tr>'
                f'<tr>{"".join(cells)}</tr></table>')


# --- what a chunker loses ---------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def words(text: str) -> Counter:
    """The words of a text (markup stripped, case folded), with their counts."""
    folded = unicodedata.normalize("NFKC", html.unescape(strip_markup(text))).casefold()
    return Counter(_WORD.findall(folded))


@dataclass(frozen=True)
class PageParts:
    """What one page holds that a chunker can lose: its code blocks (each the flattened non-blank
    lines of one `<pre>`), its table rows (each the flattened non-empty cells of one `<tr>`), and
    the words of its content."""

    code: tuple[tuple[str, ...], ...]
    rows: tuple[tuple[str, ...], ...]
    words: Counter


def page_parts(page: Page, content: str) -> PageParts:
    """A page's code blocks and table rows from its visible HTML, and the words of `content` (the
    text taken as the page's content, e.g. what the course's parser keeps)."""
    from course_lib.evaluation.golden_checks import visible_soup

    soup = visible_soup(page.html)
    code = [tuple(f for line in pre.get_text().splitlines() if (f := normalize(line)))
            for pre in soup.find_all("pre")]
    rows = [tuple(f for cell in tr.find_all(["td", "th"], recursive=False)
                  if (f := normalize(cell.get_text(" ")))) for tr in soup.find_all("tr")]
    return PageParts(tuple(c for c in code if c), tuple(r for r in rows if r), words(content))


@dataclass(frozen=True)
class Kept:
    """What one chunking keeps of the pages: code blocks and table rows whole (in one chunk),
    damaged (a line or cell in no chunk: cut mid-line, reformatted or dropped), the rest split
    across chunks; content words carried by some chunk; chunks past the window."""

    chunks: int
    over_window: int
    code_blocks: int
    code_whole: int
    code_damaged: int
    table_rows: int
    rows_whole: int
    rows_damaged: int
    words: int
    words_kept: int

    @property
    def words_outside(self) -> float:
        """Share of the content's words that no chunk of their page carries."""
        return 1 - self.words_kept / self.words if self.words else float("nan")


def _whole_or_damaged(units: Sequence[tuple[str, ...]], bodies: Sequence[str], *,
                      contiguous: bool) -> tuple[int, int]:
    """(whole, damaged) among the units: whole when one body holds all its parts (`contiguous`: as
    one run of text, as a code block's lines must be; else each anywhere, as a row's cells with
    the separators a library writes between them); damaged when a part is in no body."""
    whole = damaged = 0
    for parts in units:
        if any(("".join(parts) in body) if contiguous else all(part in body for part in parts)
               for body in bodies):
            whole += 1
        elif not all(any(part in body for body in bodies) for part in parts):
            damaged += 1
    return whole, damaged


def what_chunks_keep(parts: Mapping[str, PageParts], chunks: Sequence[Chunk], *, counter=None,
                     limit: int | None = None) -> Kept:
    """Count what `chunks` keep of the pages described by `parts` (page path -> `page_parts`):
    see `Kept`. A chunk counts only for its own page; over the window means its embedded text
    (context line included) has more tokens than `limit` (default: the counter's window)."""
    counter, limit = _counter_and_limit(counter, limit)
    bodies: dict[str, list[str]] = defaultdict(list)
    carried: dict[str, Counter] = defaultdict(Counter)
    for chunk in chunks:
        bodies[chunk.doc].append(normalize(chunk.body))
        carried[chunk.doc].update(words(chunk.body))
    totals = Counter()
    for doc, page in parts.items():
        code = _whole_or_damaged(page.code, bodies[doc], contiguous=True)
        rows = _whole_or_damaged(page.rows, bodies[doc], contiguous=False)
        totals.update(code_blocks=len(page.code), code_whole=code[0], code_damaged=code[1],
                      table_rows=len(page.rows), rows_whole=rows[0], rows_damaged=rows[1],
                      words=sum(page.words.values()),
                      words_kept=sum(min(n, carried[doc][w]) for w, n in page.words.items()))
    from course_lib.core.tokens import count_all

    over = sum(n > limit for n in count_all([c.text for c in chunks], counter))
    fields = ("code_blocks", "code_whole", "code_damaged", "table_rows", "rows_whole", "rows_damaged",
              "words", "words_kept")
    return Kept(len(chunks), over, **{name: totals[name] for name in fields})
