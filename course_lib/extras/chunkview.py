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

`show_cuts(blocks, {"fixed windows": ..., "structured": ...}, focus="a table's caption")` draws
where each chunking cuts one page, as a picture: the page's blocks on a line of characters (tables
and code coloured, headings labelled), one lane of chunks per chunking, and a red mark wherever a
cut tears a table or code block apart.
"""
from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
from IPython.display import HTML
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from course_lib import settings
from course_lib.core.chunking import blocks_to_text
from course_lib.evaluation.golden import normalize, strip_markup
from course_lib.records import Block, Chunk, Page

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
    budget (the model's real input limit, asked of the model, never typed)."""
    from course_lib.core.tokens import budget_of, get_counter

    counter = counter if counter is not None else get_counter()
    return counter, budget_of(counter) if limit is None else limit


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
    from course_lib.evaluation.golden_checks import html_tree

    root = html_tree(page.html)  # only whole elements' text is read: no soup needed
    code = [tuple(f for line in "".join(pre.itertext()).splitlines() if (f := normalize(line)))
            for pre in root.iter("pre")]
    rows = [tuple(f for cell in tr  # a row's own cells, as find_all(recursive=False) read them
                  if cell.tag in ("td", "th") and (f := normalize(" ".join(cell.itertext()))))
            for tr in root.iter("tr")]
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


# --- where a chunker cuts, as a picture ------------------------------------------------------

CUT_KINDS = ("table", "code")  # blocks a cut must never go through (a row or a line torn apart)
_KIND_COLOURS = {"heading": "#374151", "table": "#f59e0b", "code": "#10b981"}
_OTHER_KIND = "#cbd5e1"
_CUT_INSIDE = "#b91c1c"


def _squash(text: str) -> str:
    return " ".join(text.split())


def locate(text: str, pieces: Sequence[str]) -> list[tuple[int, int]]:
    """Where each piece lies in `text`, in reading order: (start, end) offsets in the text with its
    whitespace folded (a chunker re-joins lines and blank lines its own way, the characters stay).
    Each piece is looked for from where the previous one ended, else (an overlap) from just after
    where it began; a piece not found raises ValueError, since a chunker that rewrote the text
    cannot be drawn on the page's own characters."""
    page, spans = _squash(text), []
    for piece in pieces:
        target = _squash(piece)
        begin, end = spans[-1] if spans else (-1, 0)
        at = page.find(target, end)
        at = page.find(target, begin + 1) if at < 0 else at
        if at < 0:
            raise ValueError(f"piece {len(spans)} is not in the text: {target[:60]!r}")
        spans.append((at, at + len(target)))
    return spans


def cuts_inside(spans: Sequence[tuple[int, int]], regions: Sequence[tuple[int, int]]) -> list[int]:
    """The cuts (each chunk's start but the first) that fall strictly inside a region, e.g. a table:
    the places where a chunker tore one block in two."""
    return [start for start, _ in spans[1:] if any(lo < start < hi for lo, hi in regions)]


def _lane_label(name: str, inside: int) -> str:
    return f"{name}\n{inside} cut{'s' * (inside != 1)} inside a table or code block (whole page)"


def cut_figure(blocks: Sequence[Block], chunkings: Mapping[str, Sequence[Chunk | str]], *,
               focus: str | None = None, around: int = settings.CHUNK_VIEW_AROUND_CHARS,
               title: str = "") -> tuple[Figure, dict[str, int]]:
    """One page drawn as a line of characters: its blocks on top (tables and code coloured,
    headings as dotted lines across the picture, labelled), and under it one lane per chunking,
    each chunk a box in alternating shades. A cut that falls inside a table or code block is
    marked in red and counted in its lane's label, so a learner sees a window tear a table apart
    where the structured chunks do not. `focus` zooms onto the first block whose text holds it,
    `around` characters either side (a whole page is too long to read). Returns the figure and
    the cuts inside a table or code block per chunking (over the whole page, not only the view)."""
    page = blocks_to_text(blocks)
    kept = [b for b in blocks if b.text.strip()]
    block_spans = locate(page, [b.text for b in kept])
    regions = [span for b, span in zip(kept, block_spans, strict=True) if b.kind in CUT_KINDS]
    lanes = {name: locate(page, [_body(c) for c in chunks]) for name, chunks in chunkings.items()}
    inside = {name: len(cuts_inside(spans, regions)) for name, spans in lanes.items()}
    lo, hi = 0, len(_squash(page))
    if focus is not None:
        hit = next((span for b, span in zip(kept, block_spans, strict=True) if focus in b.text), None)
        if hit is None:
            raise ValueError(f"no block of the page holds {focus!r}")
        lo, hi = max(0, hit[0] - around), min(hi, hit[1] + around)

    figure, ax = plt.subplots(figsize=(11, 1.6 + 0.8 * len(lanes)))
    top = len(lanes)
    for b, (start, end) in zip(kept, block_spans, strict=True):
        if end > lo and start < hi:
            ax.add_patch(Rectangle((start, top - 0.15), end - start, 0.3, linewidth=0,
                                   facecolor=_KIND_COLOURS.get(b.kind, _OTHER_KIND)))
        if b.kind == "heading" and lo <= start < hi:
            ax.axvline(start, color=_KIND_COLOURS["heading"], linestyle=":", linewidth=0.8)
            label = b.text.strip() if len(b.text.strip()) <= 40 else b.text.strip()[:38] + "…"
            ax.text(start, top + 0.3, label, rotation=20, fontsize=7, ha="left", va="bottom")
    for lane, spans in enumerate(lanes.values()):
        y = top - 1 - lane
        for n, (start, end) in enumerate(spans):
            if end > lo and start < hi:
                ax.add_patch(Rectangle((start, y - 0.3), end - start, 0.6, facecolor=SHADES[n % 2],
                                       edgecolor="#6b7280", linewidth=0.6))
        for cut in cuts_inside(spans, regions):
            if lo <= cut < hi:
                ax.plot([cut], [y + 0.42], marker="v", color=_CUT_INSIDE, markersize=8)
    handles = [Rectangle((0, 0), 1, 1, facecolor=_KIND_COLOURS[k]) for k in ("heading", *CUT_KINDS)]
    handles.append(Line2D([], [], marker="v", color=_CUT_INSIDE, linestyle="", markersize=8))
    ax.legend(handles, ["heading", "table", "code", "cut inside a table or code block"], fontsize=7,
              loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_yticks([top, *(top - 1 - i for i in range(len(lanes)))],
                  ["the page's blocks", *(_lane_label(name, inside[name]) for name in lanes)], fontsize=8)
    ax.set(xlim=(lo, hi), ylim=(-0.6, top + 1.4), xlabel="characters of the page's cleaned text")
    ax.spines[["top", "right", "left"]].set_visible(False)
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    figure.tight_layout()
    return figure, inside


def show_cuts(blocks: Sequence[Block], chunkings: Mapping[str, Sequence[Chunk | str]], *,
              focus: str | None = None, around: int = settings.CHUNK_VIEW_AROUND_CHARS,
              title: str = "") -> dict[str, int]:
    """Draw `cut_figure` in a notebook; return the cuts inside a table or code block per chunking."""
    _, inside = cut_figure(blocks, chunkings, focus=focus, around=around, title=title)
    plt.show()
    return inside
