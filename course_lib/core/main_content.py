"""Where a page's main text is: chosen by evidence, not by the first selector that matches.

Documentation marks its main text (`role="main"`, `<main>`); the rest of the web often does not,
or marks a reader comment, an empty microdata holder or a search form as an `<article>`. So every
element is measured once (`measure`): its characters of text, how many of them are link text, and
how many paragraphs it holds. A reader's text is the text that is not links (`content`). Then
`choose_main` takes, in this order:

1. the landmark (`LANDMARKS`) with the most content, when it holds at least
   `settings.MAIN_LANDMARK_SHARE` of the page's content: the author's own mark wins when it is true;
   inside it, the post's own body when one container holds most of it (`narrow`);
2. else the smallest container holding at least `settings.MAIN_CONTAINER_SHARE` of the content
   and at least two paragraphs: where the text is concentrated;
3. else the whole `<body>`.

A landmark holding a small part of the text (a comment, a form, an empty holder) never wins, and a
listing of twenty `<article>` teasers, none of which holds most of the text, is read whole.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import soupsieve
from bs4.element import Tag

from course_lib import settings
from course_lib.core.html_parts import is_text

# The author's marks of the main text, as CSS selectors.
LANDMARKS = ('[role="main"]', "main", "article", '[itemprop="articleBody"]')
# Elements that may hold the main text when no landmark does.
CONTAINERS = frozenset("div section article main td form span".split())
_PARAGRAPH_TAGS = frozenset("p pre table li dd blockquote".split())
_TITLE_WORD = re.compile(r"[a-z0-9]+")
_PARAGRAPH_MIN_CHARS = 40  # a "paragraph" of fewer characters is a label, a price, a button


@dataclass(frozen=True)
class Measure:
    """What an element holds: characters of text, of link text, links, and paragraphs of 40+ characters."""

    chars: int = 0
    link_chars: int = 0
    paragraphs: int = 0
    links: int = 0

    @property
    def content(self) -> int:
        """Characters a reader reads rather than clicks."""
        return self.chars - self.link_chars

    @property
    def link_density(self) -> float:
        return self.link_chars / self.chars if self.chars else 0.0


def measure(root: Tag) -> dict[int, Measure]:
    """`Measure` of `root` and of every element under it, keyed by `id(element)`, in one pass.

    Elements are visited in reverse document order, so each element's children are measured
    before it and its figures are their sums: linear in the size of the page, no recursion.
    """
    nodes = [root, *root.descendants]
    sizes: dict[int, Measure] = {}
    for node in reversed(nodes):
        if not isinstance(node, Tag):
            continue
        chars = link_chars = paragraphs = links = 0
        for child in node.contents:
            if isinstance(child, Tag):
                m = sizes.get(id(child))
                if m is not None:
                    chars, link_chars = chars + m.chars, link_chars + m.link_chars
                    paragraphs, links = paragraphs + m.paragraphs, links + m.links
            elif is_text(child):
                chars += len(child.strip())
        if node.name == "a" and node.get("href") is not None:
            link_chars, links = chars, 1
        if node.name in _PARAGRAPH_TAGS and chars - link_chars >= _PARAGRAPH_MIN_CHARS:
            paragraphs += 1
        sizes[id(node)] = Measure(chars, link_chars, paragraphs, links)
    return sizes


@dataclass(frozen=True)
class MainChoice:
    """The element read as the page's main text, and why it was chosen."""

    element: Tag
    label: str  # e.g. 'main#content', 'div.entry-content'
    reason: str
    share: float  # the share of the page's content it holds


def describe(tag: Tag) -> str:
    """A short CSS-like name for an element: `div#main.post.entry`."""
    ident = f"#{tag['id']}" if tag.get("id") else ""
    classes = "".join(f".{c}" for c in (tag.get("class") or ())[:3])
    return f"{tag.name}{ident}{classes}"


@cache
def _landmark_matcher(landmarks: tuple[str, ...]) -> tuple[soupsieve.SoupSieve | None, Callable[[Tag], bool]]:
    """The compiled selectors, and a cheap test that an element could match them: it has one of the
    tag names they name or one of the attributes they test (`[role=main]` needs a `role`)."""
    if not landmarks:
        return None, lambda tag: False
    names: set[str] = set()
    keys: set[str] = set()
    for selector in ", ".join(landmarks).split(","):
        simple = selector.strip()
        attr = re.match(r"^\[\s*([\w-]+)", simple)
        if attr:
            keys.add(attr.group(1).lower())
        elif re.fullmatch(r"[a-zA-Z][\w-]*", simple):
            names.add(simple.lower())
        elif re.fullmatch(r"[a-zA-Z]*[.#][\w-]+", simple):
            keys.add("class" if "." in simple else "id")
        else:  # a compound or combinator selector: test every element
            return soupsieve.compile(", ".join(landmarks)), lambda tag: True
    return (soupsieve.compile(", ".join(landmarks)),
            lambda tag: tag.name in names or not keys.isdisjoint(tag.attrs))


# Where a landmark's own body may be: not a <section>, which in documentation is a part of the
# page beside its introduction (pandas' tutorials: "Data used for this tutorial" above the sections).
_BODIES = CONTAINERS - {"section"}
_NARROW_MIN_CHARS = 0.5


def narrow(landmark: Tag, sizes: dict[int, Measure], *, share: float) -> Tag | None:
    """The smallest container inside `landmark` holding `share` of its content, half of all its
    characters, two paragraphs and all of its code, or None.

    A site's `<main>` often holds more than the post: related posts, a newsletter box, a "Latest"
    grid beside the article's own `div.entry-content`. The text a reader came for is concentrated
    in that one container; what is left around it is furniture (lesson 03 measures the share).
    Half of all characters, links included: a listing's text is its links, so one long product
    description among them holds most of the content and is still not the page.
    """
    whole = sizes[id(landmark)]
    inside = [t for t in landmark.find_all(_BODIES)
              if sizes[id(t)].content >= share * whole.content and sizes[id(t)].paragraphs >= 2
              and sizes[id(t)].chars >= _NARROW_MIN_CHARS * whole.chars]
    code = len(landmark.find_all("pre")) if inside else 0
    for tag in sorted(inside, key=lambda t: sizes[id(t)].chars):
        if not code or len(tag.find_all("pre")) == code:  # code outside it is content, not furniture
            return tag
    return None


def choose_main(
    body: Tag,
    *,
    landmarks: tuple[str, ...] = LANDMARKS,
    landmark_share: float = settings.MAIN_LANDMARK_SHARE,
    container_share: float = settings.MAIN_CONTAINER_SHARE,
    sizes: dict[int, Measure] | None = None,
    narrow_share: float | None = None,
) -> MainChoice:
    """The element that holds the page's main text (see the module docstring for the rule).
    `sizes` is `measure(body)` when the caller has it already (the furniture rules do).
    `narrow_share` (the parser passes `settings.MAIN_NARROW_SHARE`) looks inside a chosen landmark
    for the post's own body (`narrow`); None keeps the landmark whole."""
    sizes = measure(body) if sizes is None else sizes
    total = sizes[id(body)].content or 1

    def share(tag: Tag) -> float:
        return sizes[id(tag)].content / total

    marks, holders = [], []
    matcher, may_match = _landmark_matcher(tuple(landmarks))
    for tag in body.descendants:  # one pass in document order: soupsieve's select was a fifth of parse time
        m = sizes.get(id(tag)) if isinstance(tag, Tag) else None
        if m is None:
            continue
        if matcher is not None and may_match(tag) and matcher.match(tag):
            marks.append(tag)
        if tag.name in CONTAINERS and m.content >= container_share * total and m.paragraphs >= 2:
            holders.append(tag)
    if marks:
        best = max(marks, key=lambda tag: sizes[id(tag)].content)
        if share(best) >= landmark_share:
            inner = narrow(best, sizes, share=narrow_share) if narrow_share is not None else None
            if inner is not None:
                reason = (f"in the landmark {describe(best)}, the container with "
                          f"{narrow_share:.0%} of its text")
                return MainChoice(inner, describe(inner), reason, share(inner))
            return MainChoice(best, describe(best), "the landmark that holds the text", share(best))
    if holders:
        smallest = min(holders, key=lambda tag: sizes[id(tag)].chars)
        return MainChoice(smallest, describe(smallest), "the smallest container that holds most of the text",
                          share(smallest))
    return MainChoice(body, describe(body), "no element holds most of the text: the whole body", 1.0)


def title_headings(root: Tag) -> list[Tag]:
    """The `<h1>` elements that may be the page's title, in document order.

    One `<h1>` is the title. Of several, a site's name in the header ("Houstonia Magazine") or a
    footer's "Footer navigation" is not: the title is the `<h1>` that shares most words with the
    document's `<title>` (every one that ties). With no `<title>`, or none sharing a word, all are.
    """
    headings = root.find_all("h1")
    top = root
    while top.parent is not None:
        top = top.parent
    title = top.find("title") if len(headings) > 1 else None
    title_words = set(_TITLE_WORD.findall(title.get_text(" ").lower())) if title is not None else set()
    shared = [len(title_words & set(_TITLE_WORD.findall(h.get_text(" ").lower()))) for h in headings]
    best = max(shared, default=0)
    return [h for h, n in zip(headings, shared, strict=True) if n == best or not best]
