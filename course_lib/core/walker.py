"""The block walker: one pass over the main content, in document order, emitting typed blocks.

Hand-written on purpose: this is lesson 03's material. The lesson builds a ten-line recursive
miniature (`mini_walk`) and asserts that this walker emits the same blocks on its snippet; what is
added here is only what real pages need. Read it top to bottom: the state, how a run of text
becomes a block, then `enter` (one line per kind of element) and `leave`, then one small handler
per kind of element. `walk_blocks` is the one entry point (`course_lib.core.parse` calls it).
"""
from __future__ import annotations

from dataclasses import dataclass

from bs4.element import Tag

from course_lib.core.html_parts import (
    BLOCK_LEVEL,
    HEADING_TAGS,
    code_language,
    code_text,
    collapse,
    fence,
    is_layout_table,
    is_text,
    table_to_text,
    text_of,
)
from course_lib.records import Block

_PARAGRAPHS = frozenset("p address figcaption summary caption legend".split())
_LISTS = frozenset(("ul", "ol", "menu"))
_LABELS = frozenset(("admonition-title", "topic-title", "sidebar-title"))  # "Note", "See also"
_SECTIONS = ("section", "article")  # their `id` is the anchor of the blocks inside them


@dataclass
class _Owner:
    """An open list item or definition: it decides the kind of the text flushed inside it."""

    kind: str  # "list_item" or "definition"
    scope: Tag  # leaving this element closes the owner (the <li>, or the <dl> of a dt/dd pair)
    depth: int = 1
    label: str | None = None  # a definition's name, appended to the heading path
    has_dd: bool = False
    emitted: bool = False
    # Set by `_Walker.open_owner` from the owner outside it, so that no block rescans every open
    # owner: that rescan made 100,000 nested <dl> quadratic (issue 37).
    labels: tuple[str, ...] = ()  # the definition names of the open owners, this one's last
    definitions: int = 0  # how many open owners are definitions, this one included


def walk_blocks(root: Tag, *, title: str, definition_paths: bool = True) -> list[Block]:
    """The blocks of `root` in document order, every heading path starting with `title`.

    `definition_paths=False` leaves the names of Sphinx objects out of the heading paths (the
    lesson measures what they are worth).
    """
    return _Walker(title, definition_paths=definition_paths).walk(root)


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


def _block_wrappers(root: Tag) -> set[int]:
    """Ids of the elements between `root` and a block-level element inside them.

    An inline element that wraps blocks (`<span><p>..</p></span>`) must be walked through like a
    `<div>`, not read as one run of inline text; marking them once keeps `enter` a plain test.
    """
    wrappers: set[int] = set()
    for tag in root.descendants:
        if not isinstance(tag, Tag) or tag.name not in BLOCK_LEVEL:
            continue
        node = tag.parent
        while node is not None and node is not root and id(node) not in wrappers:
            wrappers.add(id(node))
            node = node.parent
    return wrappers


class _Walker:
    """Walk the main content once, in document order, and emit one Block per unit of meaning.

    The walk is a depth-first traversal with an explicit stack (no recursion limit): `enter`
    handles an element on the way down, `leave` on the way up. Text accumulates in the current
    *run* (`segments`, a list of paragraphs) and becomes one block at the next boundary. A
    "hard" element (heading, code, table, list, definition list) always ends the run; a
    paragraph is a "soft" boundary, which ends the run at top level but only starts a new
    paragraph inside an open list item or definition (the *owners* stack), so an item's
    paragraphs stay one block and the innermost owner decides its kind. Headings maintain the
    heading path (`headings`, under the page `title`), `<section id>` the anchor (`sections`);
    the names of open Sphinx definitions extend the path. That is all the state there is:
    where we are (headings, sections, owners, list depth) and what we are reading (the run).
    """

    def __init__(self, title: str, *, definition_paths: bool) -> None:
        self.title, self.definition_paths = title, definition_paths
        self.blocks: list[Block] = []  # the output
        # where we are
        self.headings: list[tuple[int, str]] = []  # (level, text) of the open headings
        self.sections: list[str] = []  # ids of the open <section>/<article> elements
        self.heading_id: str | None = None  # anchor of the last heading, for pages without sections
        self.owners: list[_Owner] = []  # open list items and definitions, innermost last
        self.list_depth = 0  # open <ul>/<ol>: the level of a list item
        # what we are reading: the current run, one list of strings per paragraph
        self.segments: list[list[str]] = [[]]
        self.label_end = 0  # > 0: a "Note" label ends the run here and waits for its paragraph
        self.wrappers: set[int] = set()  # ids of inline elements that wrap blocks (set in walk)
        self.headed = False  # a heading was emitted: a flag, as scanning the blocks for one is quadratic

    # -- output ---------------------------------------------------------------------------
    def path(self) -> tuple[str, ...]:
        """The heading path of the next block: title, open headings, open definition names.

        The open headings are at most six (one per level); the definition names come ready-made
        with the innermost owner, so a block costs no more than its own path however deep it is.
        """
        base = ((self.title,) if self.title else ()) + tuple(t for _, t in self.headings)
        labels = self.owners[-1].labels if self.owners and self.definition_paths else ()
        return base + labels if labels else base

    def emit(self, kind: str, text: str, level: int = 0) -> None:
        """Append one block at the current heading path and anchor."""
        section = self.sections[-1] if self.sections else self.heading_id
        self.blocks.append(Block(kind, text, self.path(), section, level))

    def flush(self) -> None:
        """Emit the current run as one block whose kind the innermost open owner decides."""
        text = "\n".join(t for t in (collapse("".join(seg)) for seg in self.segments) if t)
        self.segments, self.label_end = [[]], 0
        if not text:
            return
        owner = self.owners[-1] if self.owners else None
        if owner is not None and owner.kind == "list_item":
            self.emit("list_item", "- " + text, owner.depth)
        elif owner is not None and not owner.emitted:
            owner.emitted = True
            self.emit("definition", text, owner.definitions)
        else:
            self.emit("text", text)

    def boundary(self) -> None:
        """A soft block boundary: a new block, or a new segment inside an item or definition."""
        if self.label_end:
            waiting = not "".join(self.segments[-1][self.label_end:]).strip()
            self.label_end = 0
            if waiting:  # only the label so far: the paragraph after it joins it
                self.segments[-1].append(" ")
                return
        if self.owners:
            self.new_segment()
        else:
            self.flush()

    def open_owner(self, owner: _Owner) -> None:
        """Open `owner` inside the current innermost one, carrying over its names and count.

        An owner's `labels` and `definitions` never change once it is open (owners only open and
        close at the top of the stack), so computing them once here keeps the walk linear.
        """
        outer = self.owners[-1] if self.owners else None
        labels = outer.labels if outer is not None else ()
        owner.labels = labels + (owner.label,) if owner.label else labels
        owner.definitions = (outer.definitions if outer is not None else 0) + (owner.kind == "definition")
        self.owners.append(owner)

    def new_segment(self) -> None:
        """Start a new paragraph of the current run (a line break in the block's text)."""
        self.segments.append([])
        self.label_end = 0

    # -- the walk ---------------------------------------------------------------------------
    def walk(self, root: Tag) -> list[Block]:
        """Visit every node under `root` depth first, then flush the last run."""
        self.wrappers = _block_wrappers(root)
        if root.name in _SECTIONS and root.get("id"):  # the main text may be one <section id>
            self.sections.append(str(root["id"]))
        stack: list[tuple[object, bool]] = [(child, False) for child in reversed(root.contents)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self.leave(node)
            elif isinstance(node, Tag):
                if self.enter(node):
                    stack.append((node, True))  # `leave` runs after its children
                    stack.extend((child, False) for child in reversed(node.contents))
            elif is_text(node):
                self.segments[-1].append(str(node))
        self.flush()
        return self.blocks

    def enter(self, tag: Tag) -> bool:
        """Handle an element on the way down; True means: walk its children. First match wins."""
        name = tag.name
        if name in HEADING_TAGS:
            return self.heading(tag)
        if name == "pre":
            return self.code(tag)
        if name == "table":
            return self.table(tag)
        if name in _LISTS:
            return self.open_list()
        if name == "li":
            return self.list_item(tag)
        if name in ("dt", "dd"):
            return self.definition_part(tag)
        if name == "br":
            self.segments[-1].append(" ")
            return False
        if _is_label(tag):
            return self.label(tag)
        if name in _PARAGRAPHS and id(tag) not in self.wrappers:
            return self.paragraph(tag)
        if name in BLOCK_LEVEL:
            return self.container(tag)
        if id(tag) in self.wrappers:
            return True  # an inline wrapper around blocks (<span><p>..</p></span>): transparent
        self.segments[-1].append(text_of(tag))  # inline (<code>, <a>, <em>): part of the run
        return False

    def leave(self, tag: Tag) -> None:
        """Handle an element on the way up: close owners, sections and lists it opened."""
        name = tag.name
        if name == "dd" and self.owners and self.owners[-1].scope is tag.parent:
            self.flush()  # a description ends its definition: the next <dt> opens another
            self.owners.pop()
        elif name == "dt":
            self.new_segment()  # the description starts on a line of its own
        if self.owners and self.owners[-1].scope is tag:  # the <li> (or <dl>) of an owner
            self.flush()
            while self.owners and self.owners[-1].scope is tag:
                self.owners.pop()
        if name in _SECTIONS and tag.get("id"):
            self.sections.pop()
        if name in _LISTS:
            self.flush()
            self.list_depth -= 1
        elif name in BLOCK_LEVEL and name not in ("dt", "dd"):
            if name in ("dl", "table"):
                self.flush()
            else:
                self.boundary()

    # -- one handler per kind of element: each returns True to walk the element's children ----
    def heading(self, tag: Tag) -> bool:
        """Emit a heading and make it the last element of the heading path at its level."""
        self.flush()
        text, level = collapse(text_of(tag)), int(tag.name[1])
        if not text:
            return False
        if not (level == 1 and not self.headed and text == self.title):  # the title is the path's root
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.headings.append((level, text))
        anchor = tag if tag.get("id") else tag.find(id=True)
        self.heading_id = str(anchor["id"]) if anchor is not None else self.heading_id
        self.emit("heading", text, level)
        self.headed = True
        return False

    def code(self, tag: Tag) -> bool:
        """A `<pre>`: one code block, exact and fenced with its language."""
        self.flush()
        text = code_text(tag)
        if text.strip():
            self.emit("code", fence(text, code_language(tag)))
        return False

    def table(self, tag: Tag) -> bool:
        """A data table: one block, a row per line; a layout table is walked like nested divs."""
        self.flush()
        if is_layout_table(tag):
            return True  # rows and cells are block boundaries
        path = self.path()
        text = table_to_text(tag, context=path[-1] if path else "")
        if text:
            self.emit("table", text)
        return False

    def open_list(self) -> bool:
        """A `<ul>`/`<ol>`: one level deeper for the items inside it."""
        self.flush()
        self.list_depth += 1
        return True

    def list_item(self, tag: Tag) -> bool:
        """An `<li>` owns the run until it closes: all its paragraphs make one list item."""
        self.flush()
        self.open_owner(_Owner("list_item", tag, depth=max(self.list_depth, 1)))
        return True

    def definition_part(self, tag: Tag) -> bool:
        """Open or continue the definition owner of a dt/dd pair (several dt may share one dd)."""
        top = self.owners[-1] if self.owners else None
        same = top is not None and top.kind == "definition" and top.scope is tag.parent
        if same and not top.has_dd:  # a second signature, or the description after its dt
            top.has_dd = tag.name == "dd"
            self.new_segment()
            return True
        self.flush()
        if same:
            self.owners.pop()  # the previous pair had no <dd>, or this <dd> has no <dt>
        label = _definition_label(tag) if tag.name == "dt" else None
        self.open_owner(_Owner("definition", tag.parent, label=label, has_dd=tag.name == "dd"))
        return True

    def label(self, tag: Tag) -> bool:
        """A label ("Note", "See also", a footnote's "[1]"): joined to the paragraph after it."""
        if tag.name == "p":
            self.boundary()
        text = collapse(text_of(tag))
        colon = tag.name == "p" and text and text[-1] not in ":.?!"
        self.segments[-1].append(text + ":" if colon else text)
        self.label_end = len(self.segments[-1])
        return False

    def paragraph(self, tag: Tag) -> bool:
        """A paragraph: a soft boundary on both sides, its inline text read in one go."""
        self.boundary()
        self.segments[-1].append(text_of(tag))
        self.boundary()
        return False

    def container(self, tag: Tag) -> bool:
        """Any other block element (`<div>`, `<section>`, `<dl>`...): a boundary, walked through."""
        if tag.name == "dl":
            self.flush()  # a definition list is a hard boundary, like a list
        else:
            self.boundary()
        if tag.name in _SECTIONS and tag.get("id"):
            self.sections.append(str(tag["id"]))
        return True
