"""The block walker: one pass over the main content, in document order, emitting typed blocks."""
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
        self.wrappers: set[int] = set()  # ids of inline elements that wrap blocks (set once, in walk)

    # -- output ---------------------------------------------------------------------------
    def path(self) -> tuple[str, ...]:
        """The heading path of the next block: title, open headings, open definition names."""
        base = ((self.title,) if self.title else ()) + tuple(t for _, t in self.headings)
        if not self.definition_paths:
            return base
        return base + tuple(o.label for o in self.owners if o.label)

    def emit(self, kind: str, text: str, level: int = 0) -> None:
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
            self.emit("definition", text, sum(o.kind == "definition" for o in self.owners))
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

    def new_segment(self) -> None:
        self.segments.append([])
        self.label_end = 0

    # -- the walk ---------------------------------------------------------------------------
    def walk(self, root: Tag) -> list[Block]:
        for tag in root.descendants:  # mark the elements that wrap blocks (an inline <span><p>)
            if not isinstance(tag, Tag) or tag.name not in BLOCK_LEVEL:
                continue
            node = tag.parent
            while node is not None and node is not root and id(node) not in self.wrappers:
                self.wrappers.add(id(node))
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
        if name in HEADING_TAGS:
            self.flush()
            self.heading(tag)
        elif name == "pre":
            self.flush()
            code = code_text(tag)
            if code.strip():
                self.emit("code", fence(code, code_language(tag)))
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
            self.owners.append(_Owner("list_item", tag, depth=max(self.list_depth, 1)))
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
            self.label_end = len(self.segments[-1])
        elif name in _PARAGRAPHS and id(tag) not in self.wrappers:
            self.boundary()
            self.segments[-1].append(text_of(tag))
            self.boundary()
        elif name in BLOCK_LEVEL:
            self.flush() if name == "dl" else self.boundary()
            if name in ("section", "article") and tag.get("id"):
                self.sections.append(str(tag["id"]))
            return True
        elif id(tag) in self.wrappers:
            return True  # an inline wrapper around blocks (<span><p>..</p></span>): transparent
        else:
            self.segments[-1].append(text_of(tag))
        return False

    def leave(self, tag: Tag) -> None:
        """Handle an element on the way up: close owners, sections and lists it opened."""
        name = tag.name
        if name == "dd" and self.owners and self.owners[-1].scope is tag.parent:
            self.flush()
            self.owners.pop()
        elif name == "dt":
            self.new_segment()
        if self.owners and self.owners[-1].scope is tag:
            self.flush()
            while self.owners and self.owners[-1].scope is tag:
                self.owners.pop()
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
            self.owners.pop()  # the previous pair had no <dd>, or this <dd> has no <dt>
        label = _definition_label(tag) if tag.name == "dt" else None
        self.owners.append(_Owner("definition", tag.parent, label=label, has_dd=tag.name == "dd"))

    def heading(self, tag: Tag) -> None:
        """Emit a heading and make it the last element of the heading path at its level."""
        text, level = collapse(text_of(tag)), int(tag.name[1])
        if not text:
            return
        first = not any(b.kind == "heading" for b in self.blocks)
        if not (level == 1 and first and text == self.title):  # the title is already the path's root
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.headings.append((level, text))
        anchor = tag if tag.get("id") else tag.find(id=True)
        self.heading_id = str(anchor["id"]) if anchor is not None else self.heading_id
        self.emit("heading", text, level)
