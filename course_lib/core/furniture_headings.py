"""Headings that name page furniture ("Related posts", "109 Comments", "Subscribe…") and the
sections they open: the `furniture headings` rule of `boilerplate.remove_furniture`.

A heading is furniture when its whole text is one of `FURNITURE_HEADING`'s phrases; what it
opens is found by structure (`headed_sections`), never taking prose or the main text.
"""
from __future__ import annotations

import re
from typing import Protocol

from bs4.element import Tag

from course_lib import settings
from course_lib.core.html_parts import HEADING_TAGS, collapse, is_text
from course_lib.core.main_content import Measure

PROSE_PARAGRAPHS = 3  # three paragraphs of prose (not mostly links) are never furniture
# Headings that name furniture, matched against the whole heading text: the section they open is
# a list of other pages, a comment thread or a sign-up box ("Related posts", "You may also like",
# "109 Comments", "Subscribe to our newsletter"), or a shop's other products and its reviews widget
# ("Frequently bought together", "Customer reviews"). Not "More on ...", "Other ..." or "Comments" alone:
# documentation has sections called that.
FURNITURE_HEADING = re.compile(r"""(?x)^(?:
    related(?:\ (?!work\b)\S.*)?  # "Related tools and resources"; not a paper's "Related work"
  | (?:you|customers\ who\ viewed\ this)\ (?:may|might|will)\ also
    \ (?:like|enjoy|love|need|be\ interested\ in)
  | you\ (?:may|might)\ (?:like|enjoy)(?:\ these)?
  | like\ what\ you(?:'|’)re\ reading\b.* | pin\ (?:it|this)(?:\ for\ later)?
  | (?:customers|people)\ (?:who\ (?:bought|viewed)\ this\ (?:item\ )?)?also
    \ (?:bought|viewed|liked|purchased)\b.*
  | frequently\ bought\ together | recently\ viewed(?:\ (?:products|items))? | similar\ (?:products|items)
  | complete\ (?:the|your)\ (?:look|order|set) | (?:customer\ )?reviews(?:\ \(\d+\))? | \d+\ reviews
  | customer\ (?:reviews|ratings)\b.* | (?:ratings|reviews)\ (?:&|and)\ (?:reviews|ratings)
  | more\ (?:from|by|like\ this|stories|articles|posts|news|to\ explore)\b.*
  | other\ (?:interesting\ )?(?:articles|posts|stories)
  | (?:recent|latest|popular|trending|top|featured|most\ read)
    \ (?:posts?|articles?|news|stories|topics|reads)\b.*
  | latest | trending(?:\ now)? | most\ popular | popular | up\ next
  | (?:leave|post|add|write)\ a\ (?:reply|comment|review)
  | \d+\ (?:comments?|responses|replies) | comments\ \(\d+\)
  | discussion\ about\ this\ post | what\ do\ you\ think
  | share(?:\ (?:this|on|with)\b.*)? | follow\ us\b.* | subscribe\b.* | sign\ up\b.* | newsletter
  | read\ (?:more|next)\b.* | continue\ reading | keep\ (?:reading|exploring)\b.* | ready\ for\ more
  | recommended(?:\ (?:for\ you|articles|reading|posts|products|stories))?
  | (?:previous|next)\ (?:post|article|story)
  | contact\ us\b.* | get\ in\ touch\b.* | (?:sign|log)\ in(?:\ (?:to|or)\ .*)?
  | create\ an?\ (?:free\ )?account\b.*
  | join\ (?:the|our)\ (?:conversation|discussion|community|newsletter|mailing\ list)\b.*
)$""")
_HEADING_EDGES = " \t\n:?!.…»›→"


class SectionRules(Protocol):
    """What `headed_sections` asks of the rules in force (`boilerplate._Rules`)."""

    sizes: dict[int, Measure]
    total: int
    headings: list[Tag]

    def bounded(self, tag: Tag) -> bool: ...


def heading_names_furniture(heading: Tag) -> bool:
    """The heading's whole text is one of `FURNITURE_HEADING`'s phrases ("Related posts:")."""
    words = collapse(heading.get_text(" ")).casefold().strip(_HEADING_EDGES)
    return bool(words) and FURNITURE_HEADING.match(words) is not None


def _rank(tag: Tag) -> int:
    return int(tag.name[1])


def headed_sections(root: Tag, rules: SectionRules) -> set[int]:
    """The elements that a furniture heading opens, by `id`: climbing from the heading, each
    element that starts with it, holds no other heading of its rank or higher and adds no prose of
    its own (a sidebar's "Popular posts" box, not the column that also holds the post); where the
    heading stands among its siblings, the siblings up to the next such heading or paragraph of
    prose. Always `bounded`."""
    sizes, found = rules.sizes, set()

    def has_text(node) -> bool:
        return sizes[id(node)].chars > 0 if isinstance(node, Tag) else is_text(node) and bool(node.strip())

    def prose(m: Measure) -> bool:  # three paragraphs that are not mostly links
        return m.paragraphs >= PROSE_PARAGRAPHS and m.link_density < settings.PROSE_MAX_LINK_SHARE

    def outranked(tag: Tag, heading: Tag, rank: int) -> bool:
        return any(h is not heading and _rank(h) <= rank for h in tag.find_all(HEADING_TAGS))

    for heading in rules.headings:
        if not heading_names_furniture(heading) or not rules.bounded(heading):
            continue
        rank, node = _rank(heading), heading
        while node.parent is not None and node.parent is not root and rules.bounded(node.parent):
            parent, mine = sizes[id(node.parent)], sizes[id(node)]
            added = Measure(parent.chars - mine.chars, parent.link_chars - mine.link_chars,
                            parent.paragraphs - mine.paragraphs, parent.links - mine.links)
            if (any(has_text(s) for s in node.previous_siblings) or prose(added)
                    or outranked(node.parent, heading, rank)):
                break
            node = node.parent
        run = [node]
        if node is heading:
            for sibling in heading.next_siblings:
                if not isinstance(sibling, Tag):
                    continue
                m = sizes[id(sibling)]
                if ((sibling.name in HEADING_TAGS and _rank(sibling) <= rank)
                        or outranked(sibling, heading, rank) or prose(m) or not rules.bounded(sibling)
                        or (sibling.name == "p" and m.paragraphs
                            and m.link_density < settings.PROSE_MAX_LINK_SHARE)):
                    break
                run.append(sibling)
            if sum(sizes[id(t)].chars for t in run) >= 0.5 * rules.total:
                run = [heading]
        found.update(id(t) for t in run)
    return found
