"""See the chunks on the page: each chunk's span shaded in turn, its tokens, and whether it fits.

`show_chunks(chunks)` renders one chunker's chunks of one page in reading order, alternating two
shades so every cut is visible (mid-row, mid-word, a heading torn from its paragraph); text a
chunk repeats from the previous one (an overlap) is shaded darker. Each chunk carries a badge:
its number, its token count under the embedder's tokenizer and, past the window, "over".
`side_by_side({"course": chunks, "peer:docling": ...})` puts several chunkers of the same page in
columns. The HTML uses inline styles only (no <style> block, no script), so it renders the same
in JupyterLab and in GitHub's notebook viewer.
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from IPython.display import HTML

from course_lib import settings
from course_lib.records import Chunk

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


def chunk_rows(chunks: Sequence[Chunk | str], *, limit: int = settings.WINDOW_TOKENS,
               counter=None) -> list[dict]:
    """Per chunk: its body, the characters it repeats from the previous one, its tokens (of the
    embedded text) and whether they exceed `limit`."""
    if counter is None:
        from course_lib.core.tokens import get_counter

        counter = get_counter()
    counts = counter.count_many([_text(c) for c in chunks]) if hasattr(counter, "count_many") else [
        counter.count(_text(c)) for c in chunks]
    rows, previous = [], ""
    for chunk, tokens in zip(chunks, counts, strict=True):
        body = _body(chunk)
        rows.append({"body": body, "repeated": repeated_prefix(previous, body), "tokens": tokens,
                     "over": tokens > limit})
        previous = body
    return rows


def chunks_html(chunks: Sequence[Chunk | str], *, limit: int = settings.WINDOW_TOKENS, counter=None,
                max_chars: int | None = None) -> str:
    """The chunks as one inline-styled HTML fragment (see the module docstring); `max_chars`
    shortens each chunk's middle for a long page."""
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


def show_chunks(chunks: Sequence[Chunk | str], *, limit: int = settings.WINDOW_TOKENS, counter=None,
                title: str = "",
                max_chars: int | None = None) -> HTML:
    """One chunker's chunks of one page, shaded in turn, with token badges (renders in a notebook)."""
    heading = f'<div style="font-weight:bold;margin:4px 0">{html.escape(title)}</div>' if title else ""
    return HTML(heading + chunks_html(chunks, limit=limit, counter=counter, max_chars=max_chars))


def side_by_side(columns: Mapping[str, Sequence[Chunk | str]], *, limit: int = settings.WINDOW_TOKENS,
                 counter=None,
                 max_chars: int | None = None) -> HTML:
    """Several chunkers of the same page in columns, each headed by its name, chunk count and
    how many chunks exceed the window (a table: GitHub's viewer keeps tables, drops flexbox)."""
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
