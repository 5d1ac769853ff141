"""Boilerplate by structure: page furniture removed by named rules before any text is read.

The rules (`FURNITURE_RULES`, switchable one at a time with `parse_blocks(skip_rules=...)`): the
HTML5 and ARIA landmarks of furniture (nav, header, footer, aside), hidden elements, dialogs, forms
and buttons, cookie notices, Sphinx's own furniture, class and id names that say "menu" or "share"
as whole words, link-dense lists, the section a heading such as "Related posts" or "109 Comments"
opens (`furniture_headings`), a lone short link standing as a block ("Back to blog"), a small box
around one form or button, an element made only of controls' labels ("Reply · Quote · Report",
"Previous article", "Add to cart") and a short affiliate disclosure ("We may earn commission...").
`remove_furniture` counts what each removes. No rule removes the main text: an element that holds
the page's `<h1>`, its `<main>`,
the main text as `main_content.choose_main` finds it before anything is removed, or half the page's
text is kept (bar dialogs, cookie notices, search boxes and Sphinx's furniture, never the main
text); a rule that would take nearly all of a page's text (`settings.RULE_MAX_PAGE_SHARE`) is held
back on that page: a `<form>` around an ASP.NET page, an unclosed `<header>` or a paywall `<aside>`
around the article would otherwise leave nothing. What no rule names shows itself by repeating
across a site's pages (`frequency.drop_frequent_blocks`).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

import soupsieve
from bs4.element import Tag

from course_lib import settings
from course_lib.core.furniture_headings import PROSE_PARAGRAPHS, headed_sections
from course_lib.core.html_parts import HEADING_TAGS, collapse, is_text, text_of
from course_lib.core.main_content import Measure, choose_main, describe, measure

# docutils >= 0.18 writes footnotes, "Abstract" topics and sidebars as <aside>: those are content.
_CONTENT_ASIDES = ".footnote, .footnote-list, .citation, .topic, .sidebar:has(> .sidebar-title)"
_OUTSIDE_CONTENT = "article, main, [role=main]"
_CONTENT_ASIDE = soupsieve.compile(f"{_CONTENT_ASIDES}, .sidebar-title")  # a docutils sidebar's title too
# Page furniture by structure: the named rules' selectors, in the order they are tried.
STRUCTURE_RULES = {
    "navigation": ("nav", '[role="navigation"]', '[role="menubar"]'),
    "header": (f"header:not({_OUTSIDE_CONTENT} header)", '[role="banner"]'),
    "footer": ("footer", '[role="contentinfo"]'),
    "aside": (f"aside:not({_CONTENT_ASIDES})", '[role="complementary"]'),
    "search": ('[role="search"]',),
    "forms and buttons": ("form", "button"),
    "dialogs": ("dialog", '[role="dialog"]', '[role="alertdialog"]', '[aria-modal="true"]'),
    "hidden": ("[hidden]", '[aria-hidden="true"]', "noscript", ".sr-only", ".visually-hidden",
               ".visuallyhidden", ".screen-reader-text", ".screenreader"),
    "sphinx furniture": ("div.sphinxsidebar", "div.related", "div.footer", "div.mobile-nav",
                         "div.toctree-wrapper"),  # a table of contents inside the page: links elsewhere
    # Not a bare [id*=cookie]: that would delete the docs of http.cookies (<section id="cookie-objects">).
    "cookie notices": (':is(div, aside, dialog, p, span, ul)[class*="cookie-"]',
                       ':is(div, aside, dialog)[id*="cookie-"]', ':is(div, aside, dialog)[class*="consent"]',
                       ':is(div, aside, dialog)[id*="consent"]', ':is(div, aside, dialog)[class*="gdpr"]',
                       ':is(div, aside, dialog)[id*="gdpr"]'),
}
STRUCTURAL_BOILERPLATE = tuple(sel for name, sels in STRUCTURE_RULES.items() if name != "hidden"
                               for sel in sels)
# Class and id words that name furniture, matched as whole words ("share-bar" yes, "shared" no).
FURNITURE_WORDS = frozenset("""
    menu menus navbar navigation sidebar footer share sharing social related recommended
    cookie cookies consent newsletter subscribe subscription promo promotion advert advertisement ad ads
    banner breadcrumb breadcrumbs pagination pager skip masthead toolbar popup signup
    author bio byline meta tags respond cta btn button disclaimer signature sponsored trending
    user userinfo postprofile avatar
""".split())
_INLINE_STYLE_HIDDEN = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_WORD = re.compile(r"[a-z0-9]+")
_LINK_LIST_TAGS = frozenset(("ul", "ol", "div", "section", "table"))  # not <p>: prose may be all links
_ANCHOR_TAGS = frozenset("section dt dd li span a h1 h2 h3 h4 h5 h6".split())
_PROTECTED = ("h1", "main")  # furniture never holds the page's title or main landmark ...
# Rules that hold whatever they match, however much prose or text: a dialog, a cookie notice, a search
# box and Sphinx's furniture are never the main text. Not "hidden": a hidden element that holds the
# main text (React's streamed `<div hidden id="S:2">`, a `<noscript>` article) is shown by a script.
_ANY_SIZE = frozenset(("dialogs", "cookie notices", "sphinx furniture", "search"))
FURNITURE_RULES = (*STRUCTURE_RULES, "inline hidden", "furniture words", "link-dense", "furniture headings",
                   "lone links", "calls to action", "control labels", "disclosures")
# A control's whole label: a forum's action bar ("Reply", "Quote", "Report", "Like 3"), a link from post
# to post ("Previous article"), a shop's button row and status lines ("Add to cart", "Quick shop", "In stock",
# "Shipping calculated at checkout"), "Click to expand...".
# Matched against each string of an element once counts, brackets and separators are gone.
CONTROL_LABEL = re.compile(r"""(?x)^(?:
    reply(?:\ with\ quote|\ to\ (?:this\ )?(?:topic|thread|post|comment|question))? | quote | multi\ ?quote
  | report(?:\ (?:post|comment|abuse|this\ (?:post|comment)))? | likes? | unlike
  | permalink | upvote | downvote
  | start\ (?:a\ )?new\ (?:topic|thread|discussion) | (?:post|add)\ (?:a\ )?(?:reply|comment)
  | click\ to\ (?:expand|shrink) | (?:show|load|view)\ (?:more|all)\ (?:replies|comments|posts)
  | (?:log|sign)\ in\ to\ (?:reply|answer|comment|post)\b.*
  | (?:previous|next|prev|older|newer)\ (?:post|article|story|entry|topic|thread)s?
  | back\ to\ (?:top|blog|news|articles|posts|all\ \w+)
  | add\ to\ (?:cart|bag|basket|wish\ ?list|favou?rites|compare) | quick\ (?:shop|view|add|look) | buy\ now
  | (?:see|check|view)\ (?:the\ )?(?:price|deal)\ (?:at|on)\ .{1,30}
  | see\ (?:full\ )?review | pin\ (?:it|this)(?:\ for\ later)?
  | (?:in|out\ of)\ stock | sold\ out | no\ longer\ available | (?:leave|write)\ a\ review
  | (?:tax(?:es)?\ included\ )?(?:taxes\ discounts\ and\ )?shipping\ calculated\ at\ checkout
)$""")
_LABEL_NOISE = re.compile(r"[\d()\[\]|·•/,:…»›«‹→←+\-–—.!?\s]+")
_INLINE = frozenset("a span strong em b i small label button".split())
_CODE_TAGS = ("code", "pre", "kbd", "samp", "tt", "var")  # "print", "like" in code are code, not labels
_NOT_LABELS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "dt", "dd", "caption", *_CODE_TAGS))
# A disclosure: "We may earn commission from links on this page", "As an Amazon Associate I earn...".
DISCLOSURE = re.compile(r"""(?xi)
    \baffiliate\ (?:links?|commissions?|partners?|programs?)\b
  | \b(?:we|i)\ (?:may\ |might\ |will\ |could\ )?(?:earn|receive|get|make)\ (?:an?\ )?(?:small\ )?
    (?:commissions?|compensation|affiliate)\b
  | \bas\ an\ amazon\ associate\b | \breader[-\ ]supported\b
  | \bthis\ (?:post|article|page|site)\ (?:may\ )?contains?\ (?:affiliate|sponsored|paid)\b
  | \bwe\ (?:\w+\ )?independently\ (?:test|evaluate|research|review|select|choose|vet)
  | \b(?:advertiser\ disclosure|editorial\ (?:guidelines|policy|standards|integrity))\b
""")
_DISCLOSURE_BOXES = frozenset("p div span aside section small em i li".split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A call to action is a small box around a form or a button ("Get the free eBook!" over a sign-up
# form): once the form or button goes, its pitch and heading stay behind unless the box goes too.
_ACTION_WORDS = frozenset(("btn", "button", "cta"))  # a link dressed as a button
_ACTION_BOXES = frozenset(("div", "section", "aside", "p", "li"))
_ITEM_TAGS = ("li", "td", "th", "dd", "dt")
# A link to an API name or a docutils cross-reference ("See also: String Methods") is content.
_CROSS_REFERENCE = soupsieve.compile("a:has(code), a.reference")
REPEATED = "repeated within the page"  # not a rule on elements: the parser's last step (drop_repeats)
# Decoration attached to content: permalink pilcrows, "[source]" links, copy buttons, line numbers.
DECORATION = (
    "a.headerlink", ".viewcode-link", ".viewcode-back", "span.linenos", "[class*=copybtn]",
    "[class*=copy-btn]", "[class*=copybutton]", "[class*=copy-button]", "[data-clipboard-target]",
)
# Never text, whatever the settings: their strings are code, styling or widgets.
NEVER_CONTENT = ("script", "style", "template", "svg", "iframe", "canvas", "object",
                 "embed", "select", "input", "textarea")


# ----------------------------------------------------------------------------- structure

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


@cache
def _compiled(selectors: tuple[str, ...]) -> tuple[soupsieve.SoupSieve, tuple[str, ...] | None]:
    flat = [sel[a + 1:b].strip() for sel in selectors
            for a, b in zip([-1, *_split_top(sel, ",")], [*_split_top(sel, ","), len(sel)], strict=False)]
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
        hay = _hay(tag) if tokens is not None else ""
        if (tokens is None or any(t in hay for t in tokens)) and matcher.match(tag):
            doomed.append(tag)
    for tag in doomed:
        if not tag.decomposed:  # an ancestor may already have taken it
            tag.decompose()
    return len(doomed)


# ----------------------------------------------------------------------------- named rules

@dataclass(frozen=True)
class Removed:
    """One element a furniture rule removed: the rule's name, what it was, and its text."""

    rule: str
    element: str
    text: str


@dataclass
class FurnitureReport:
    """What `remove_furniture` did to one page: elements removed (by rule) and rules held back."""

    removed: list[Removed] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # rule -> elements removed
    held_back: list[str] = field(default_factory=list)  # rules that would have emptied the page
    explain: bool = False  # keep the text of what was removed


def _words(tag: Tag) -> set[str]:
    """The lowercase words of an element's class and id ("share-bar sticky" -> share, bar, sticky).

    Not the id of a section, a term or a heading: documentation derives those from their text
    (`<section id="cookie-objects">`, `<dt id="term-meta-path-finder">`), so they name content.
    """
    classes = tag.get("class") or ""
    names = classes if isinstance(classes, str) else " ".join(classes)
    if tag.name not in _ANCHOR_TAGS and "section" not in names:
        names += " " + str(tag.get("id") or "")
    return set(_WORD.findall(names.lower()))


def _is_link_dense(m: Measure) -> bool:
    """Mostly links, and short ones: a menu, a tag cloud, a list of related pages (not teasers)."""
    return (m.links >= 3 and m.link_density >= settings.LINK_DENSE_SHARE
            and m.link_chars / m.links <= settings.LINK_DENSE_MAX_CHARS)


class _Rules:
    """The furniture rules in force for one page, and the one test that finds an element's rule."""

    def __init__(self, root: Tag, names: tuple[str, ...], sizes: dict[int, Measure], total: int,
                 main: Tag) -> None:
        self.names, self.sizes, self.total = names, sizes, total
        self.selectors = [(name, *_compiled(STRUCTURE_RULES[name]))
                          for name in names if name in STRUCTURE_RULES]
        self.too_big: set[str] = set()  # rules that matched an element holding nearly all the text
        # The main text as chosen before anything is removed, and every element around it.
        self.holds_main = {id(main), *(id(a) for a in main.parents)} if main is not root else set()
        # One pass for what the guards ask of every element: does it hold a title, a landmark, code?
        self.headings: list[Tag] = []
        self.holds_protected: set[int] = set()
        self.holds_code: set[int] = set()
        self.actions: Counter = Counter()  # element -> forms and buttons under it, not nested
        actions = "calls to action" in names
        for tag in root.find_all(True):
            if actions and _is_action(tag):
                self.count_action(tag)
            if tag.name in HEADING_TAGS:
                self.headings.append(tag)
            held = (self.holds_protected if tag.name in _PROTECTED else
                    self.holds_code if tag.name == "pre" else None)
            for above in tag.parents if held is not None else ():
                if id(above) in held:  # and so are all above it: linear however deep the page
                    break
                held.add(id(above))
        self.headed = headed_sections(root, self) if "furniture headings" in names else set()

    def bounded(self, tag: Tag) -> bool:
        """The element is not the page: it holds neither the page's title, nor its main landmark,
        nor the main text chosen before anything was removed, nor half the page's text."""
        m = self.sizes.get(id(tag))
        return (m is not None and m.chars < 0.5 * self.total and id(tag) not in self.holds_main
                and tag.name not in _PROTECTED and id(tag) not in self.holds_protected)

    def small(self, tag: Tag) -> bool:
        """Furniture named by a guess (a class word, link density) is a small part of a page:
        `bounded`, holding fewer than three paragraphs of prose, and no code (a docs card's
        footer holds `pip install pandas`)."""
        m = self.sizes.get(id(tag))
        return (m is not None and m.paragraphs < PROSE_PARAGRAPHS and self.bounded(tag)
                and id(tag) not in self.holds_code)

    def count_action(self, action: Tag) -> None:
        """Count a form or button in every element above it, unless it sits in one already counted
        (a form's own button is one action, not two). Actions are few: depth times their number."""
        above = list(action.parents)
        if any(self.actions.get(id(a)) == -1 for a in above):
            return
        self.actions[id(action)] = -1  # marks an action itself
        for a in above:
            self.actions[id(a)] += 1

    def is_call_to_action(self, tag: Tag, *, in_item: bool) -> bool:
        """A small box (`settings.CALL_TO_ACTION_MAX_CHARS`, at most one paragraph) around one form or
        button, that is not one of a row of like items (a product tile's "Add to cart")."""
        m = self.sizes.get(id(tag))
        return (not in_item and self.actions.get(id(tag)) == 1 and tag.name in _ACTION_BOXES
                and m is not None and m.chars <= settings.CALL_TO_ACTION_MAX_CHARS and m.paragraphs <= 1
                and self.small(tag) and not self.repeated_item(tag))

    def repeated_item(self, tag: Tag) -> bool:
        """A sibling of the same tag and classes also holds a form or a button: a tile in a grid."""
        if not self.actions.get(id(tag)) or tag.parent is None:
            return False
        shape = (tag.name, tag.get("class"))
        return any(s is not tag and isinstance(s, Tag) and (s.name, s.get("class")) == shape
                   and self.actions.get(id(s)) for s in tag.parent.contents)

    def selector_rule(self, tag: Tag) -> str | None:
        """The first selector rule that matches `tag` and may remove it, or None; a match that
        holds nearly all of the page is held back and reported instead."""
        hay = None
        for name, matcher, tokens in self.selectors:
            if tokens is not None:
                hay = hay or _hay(tag)
                if not any(t in hay for t in tokens):
                    continue
            if matcher.match(tag):
                if name in _ANY_SIZE or self.bounded(tag):
                    return name
                if self.sizes[id(tag)].chars > settings.RULE_MAX_PAGE_SHARE * self.total:
                    self.too_big.add(name)  # a <form> around the page: held back, and reported
        return None

    def rule_of(self, tag: Tag, *, in_landmark: bool = False, in_item: bool = False) -> str | None:
        """The name of the first rule in force that matches `tag`, or None. Inside a landmark of
        the main text (`in_landmark`) a link-dense list is content: a list of API references."""
        if (name := self.selector_rule(tag)) is not None:
            return name
        if "inline hidden" in self.names and _INLINE_STYLE_HIDDEN.search(str(tag.get("style") or "")):
            return "inline hidden"
        if ("furniture words" in self.names and _words(tag) & FURNITURE_WORDS and self.small(tag)
                and not _CONTENT_ASIDE.match(tag)):
            return "furniture words"
        if ("link-dense" in self.names and not in_landmark and tag.name in _LINK_LIST_TAGS
                and _is_link_dense(self.sizes.get(id(tag), Measure())) and self.small(tag)):
            return "link-dense"
        if id(tag) in self.headed:
            return "furniture headings"
        if "lone links" in self.names and tag.name in ("p", "div"):
            m = self.sizes.get(id(tag), Measure())
            if (m.links == 1 and m.link_chars == m.chars and 0 < m.chars <= settings.LONE_LINK_MAX_CHARS
                    and tag.find_parent(_ITEM_TAGS) is None  # in a list or a table, a link is an item
                    and not _CROSS_REFERENCE.match(tag.find("a", href=True) or tag)):
                return "lone links"
        if "calls to action" in self.names and self.is_call_to_action(tag, in_item=in_item):
            return "calls to action"
        if "control labels" in self.names and self.is_control_labels(tag):
            return "control labels"
        if "disclosures" in self.names and self.is_disclosure(tag):
            return "disclosures"
        return None

    def is_disclosure(self, tag: Tag) -> bool:
        """A short box (`settings.DISCLOSURE_MAX_CHARS`, one paragraph at most) whose sentences are mostly
        a disclosure (`DISCLOSURE`, `settings.DISCLOSURE_MIN_SHARE` of its text): "We may earn commission
        from links on this page." Not an intro that ends on one, nor anything in a tile of a grid (a
        provider's card that repeats the line beside its name and rating)."""
        m = self.sizes.get(id(tag))
        if (tag.name not in _DISCLOSURE_BOXES or m is None or not 0 < m.chars <= settings.DISCLOSURE_MAX_CHARS
                or m.paragraphs > 1 or _wrapper(tag, _DISCLOSURE_BOXES.__contains__) or not self.small(tag)):
            return False
        text = collapse(text_of(tag))
        said = sum(len(s) for s in _SENTENCE_END.split(text) if DISCLOSURE.search(s))
        return (said >= settings.DISCLOSURE_MIN_SHARE * len(text)
                and not any(_same_shape_sibling(a) for a in (tag, *tag.parents)))

    def is_control_labels(self, tag: Tag) -> bool:
        """Every string of a short element is a control's label (`CONTROL_LABEL`) or a count, and no
        code is near (nor an API signature's `<dt>`: `quote=True`): a forum's "Reply · Quote · Report"
        row. An inline label (a link, a span) goes only when no words of its parent stand beside it:
        "click <a>reply</a> to answer" is a sentence."""
        m = self.sizes.get(id(tag))
        if (m is None or not 0 < m.chars <= settings.CONTROL_LABELS_MAX_CHARS or tag.name in _NOT_LABELS
                or _wrapper(tag, lambda name: name not in _NOT_LABELS)
                or tag.find(_CODE_TAGS) is not None or not self.bounded(tag)):
            return False
        if tag.name in _INLINE and tag.parent is not None and any(
                is_text(c) and c.strip() and not _LABEL_NOISE.fullmatch(c) for c in tag.parent.contents):
            return False
        labels = [w for w in (_LABEL_NOISE.sub(" ", s.casefold()).strip() for s in tag.stripped_strings) if w]
        # The tests that walk up to the root come last: asked of every short paragraph of a page
        # nested a thousand levels deep, they made the parse quadratic (tests/test_chunking_linear.py).
        return (bool(labels) and all(CONTROL_LABEL.match(w) for w in labels)
                and tag.find_parent((*_CODE_TAGS, "dt")) is None and not _CROSS_REFERENCE.match(tag))

    def matches(self, root: Tag) -> dict[str, list[Tag]]:
        """The outermost elements under `root` each rule matches, in document order. Below a tile
        of a grid (`repeated_item`) nothing is a call to action: the tile's button is its own."""
        found: dict[str, list[Tag]] = {}
        stack = [(c, False, False) for c in reversed(root.contents) if isinstance(c, Tag)]
        while stack:
            tag, in_landmark, in_item = stack.pop()
            name = self.rule_of(tag, in_landmark=in_landmark, in_item=in_item)
            if name is not None:
                found.setdefault(name, []).append(tag)
            else:
                inside = in_landmark or tag.name in ("main", "article") or tag.get("role") == "main"
                item = in_item or self.repeated_item(tag)
                stack.extend((c, inside, item) for c in reversed(tag.contents) if isinstance(c, Tag))
        return found


def _wrapper(tag: Tag, passes_to) -> bool:
    """One element and no text of its own, where that element is one `passes_to` accepts: the test
    passes to it, so that reading each element's text stays linear on a page nested ten thousand
    levels deep."""
    inner = [c for c in tag.contents if isinstance(c, Tag) or (is_text(c) and c.strip())]
    return len(inner) == 1 and isinstance(inner[0], Tag) and passes_to(inner[0].name)


def _same_shape_sibling(tag: Tag) -> bool:
    """Another child of the same parent has this element's tag and classes: one tile of a grid."""
    shape = (tag.name, tag.get("class"))
    return tag.parent is not None and "class" in tag.attrs and any(
        s is not tag and isinstance(s, Tag) and (s.name, s.get("class")) == shape
        for s in tag.parent.contents)


def _is_action(tag: Tag) -> bool:
    """A form, a button, or a link dressed as one (`class="btn"`, `role="button"`)."""
    return (tag.name in ("form", "button") or tag.get("role") == "button"
            or (tag.name == "a" and "class" in tag.attrs and not _words(tag).isdisjoint(_ACTION_WORDS)))


def _hay(tag: Tag) -> str:
    """An element's name and attributes as one lowercase string, where a selector's token is sought."""
    return " ".join([tag.name, *(f"{k} {' '.join(v) if isinstance(v, list) else v}"
                                 for k, v in tag.attrs.items())]).lower()


def remove_furniture(
    root: Tag,
    *,
    skip_rules: tuple[str, ...] = (),
    max_share: float = settings.RULE_MAX_PAGE_SHARE,
    explain: bool = False,
) -> FurnitureReport:
    """Remove the page furniture under `root`, rule by named rule; return what each removed.

    A rule whose matches hold more than `max_share` of the page's text is held back on this page
    (named in the report) and the others are tried again without it, except the rules that never
    hold the main text (`_ANY_SIZE`: a shop's terms in hidden dialogs may hold 95% of a product
    page's words, and the product is the other 5%); when the rules together would
    leave no text at all, the one that takes most is held back. So no rule empties a page (a chapter
    index that is nearly all table of contents may still become a stub, skipped with its reason).
    `explain` keeps the text of every removed element (for `course-lib extract --why`).
    """
    unknown = sorted(set(skip_rules) - set(FURNITURE_RULES))
    if unknown:
        raise ValueError(f"unknown furniture rule(s) {', '.join(unknown)}; "
                         f"known: {', '.join(FURNITURE_RULES)}")
    sizes = measure(root)
    total = sizes[id(root)].chars
    report = FurnitureReport(explain=explain)
    names = tuple(n for n in FURNITURE_RULES if n not in skip_rules)
    main = choose_main(root, sizes=sizes).element
    while True:
        rules = _Rules(root, names, sizes, total, main)
        found = rules.matches(root)
        report.held_back += sorted(rules.too_big - set(report.held_back))
        taken = {n: sum(sizes[id(t)].chars for t in tags) for n, tags in found.items()}
        # a dialog or a cookie notice is never the main text, however much of the page it holds
        greedy = [n for n, chars in taken.items() if chars > max_share * total and n not in _ANY_SIZE]
        if not greedy and total and sum(taken.values()) >= total:
            # together they would leave nothing: the rule that takes most waits
            greedy = [max(taken, key=taken.get)]
        if not greedy:
            break
        report.held_back += greedy
        names = tuple(n for n in names if n not in greedy)
    for name in names:
        for tag in found.get(name, ()):
            if explain:
                report.removed.append(Removed(name, describe(tag), collapse(text_of(tag))))
            report.counts[name] += 1
            tag.decompose()
    return report
