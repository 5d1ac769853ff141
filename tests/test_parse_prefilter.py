"""Property test: the boilerplate remover's cheap pre-filter never changes what is removed.

`boilerplate._remove` tests an element against the selectors only when its name or attributes
contain a token every match must carry (`required_token`); that halves the parse time of the
corpus (benchmarks/bench_prefilter.py). It is only safe if it never skips a match, so here random
selectors (tags, classes, ids, attribute operators, :not/:is/:has, combinators, comma lists,
mixed case) are run on random pages both ways, and the surviving trees must be identical.
"""
from __future__ import annotations

import os

import soupsieve
from bs4 import BeautifulSoup
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course_lib.core.boilerplate import STRUCTURAL_BOILERPLATE, _remove, required_token

SETTINGS = settings(max_examples=int(os.environ.get("PARSE_PROPERTY_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

TAGS = ["div", "p", "span", "aside", "nav", "header", "section", "ul", "li", "a"]
WORDS = ["nav", "cookie-bar", "Consent", "gdpr", "main", "x", "footer", "side-bar", "copy-btn"]
ATTRS = ["class", "id", "role", "data-clipboard-target", "aria-label"]

word = st.sampled_from(WORDS)
qualifier = st.one_of(  # a simple selector that is not a tag name, so it can follow another
    word.map(lambda w: f".{w}"),
    word.map(lambda w: f"#{w}"),
    st.sampled_from(ATTRS).map(lambda a: f"[{a}]"),
    st.builds(lambda a, op, w: f'[{a}{op}="{w}"]', st.sampled_from(ATTRS),
              st.sampled_from(["", "*", "^", "$", "~", "|"]), word),
    st.builds(lambda a, w: f"[{a}*={w}]", st.sampled_from(ATTRS), word),  # unquoted value
)
simple = st.one_of(st.sampled_from(TAGS), qualifier,
                   st.builds(lambda tag, q: tag + q, st.sampled_from(TAGS), qualifier))
compound = st.one_of(
    simple,
    st.builds(lambda s, t: f"{s}:not({t})", simple, simple),
    st.builds(lambda s, t: f":is({s}, {t})", simple, simple),
    st.builds(lambda s, t, q: f":is({s}, {t}){q}", simple, simple, qualifier),
    st.builds(lambda s, t: f"{s}:has(> {t})", simple, simple),
)
complex_ = st.builds(lambda parts, combs: parts[0] + "".join(f"{c}{p}" for c, p in zip(combs, parts[1:], strict=False)),
                     st.lists(compound, min_size=1, max_size=3),
                     st.lists(st.sampled_from([" ", " > ", " + ", " ~ "]), min_size=2, max_size=2))
selectors = st.lists(st.lists(complex_, min_size=1, max_size=2).map(", ".join), min_size=1, max_size=4)

attr_values = st.lists(word, min_size=1, max_size=2).map(" ".join)
element = st.tuples(st.sampled_from(TAGS), st.dictionaries(st.sampled_from(ATTRS), attr_values, max_size=2))
trees = st.recursive(st.builds(lambda e: (e, []), element),
                     lambda kids: st.builds(lambda e, ks: (e, ks), element, st.lists(kids, max_size=4)),
                     max_leaves=25)


def render(tree) -> str:
    (tag, attrs), kids = tree
    attributes = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f"<{tag}{attributes}>t{''.join(render(k) for k in kids)}</{tag}>"


def remove_plainly(root, selector_list: tuple[str, ...]) -> int:
    """The reference: soupsieve.select with no pre-filter, same decomposition."""
    doomed = soupsieve.select(", ".join(selector_list), root)
    for tag in doomed:
        if not tag.decomposed:
            tag.decompose()
    return len(doomed)


@SETTINGS
@given(selectors, st.lists(trees, min_size=1, max_size=3))
def test_prefilter_removes_exactly_what_soupsieve_selects(selector_list, forest):
    html = "<html><body>" + "".join(render(t) for t in forest) + "</body></html>"
    fast, plain = BeautifulSoup(html, "lxml"), BeautifulSoup(html, "lxml")
    sels = tuple(selector_list)
    assert _remove(fast.body, sels) == remove_plainly(plain.body, sels)
    assert str(fast) == str(plain)


@SETTINGS
@given(st.lists(trees, min_size=1, max_size=3))
def test_prefilter_matches_soupsieve_with_the_shipped_selectors(forest):
    html = "<html><body>" + "".join(render(t) for t in forest) + "</body></html>"
    fast, plain = BeautifulSoup(html, "lxml"), BeautifulSoup(html, "lxml")
    assert _remove(fast.body, STRUCTURAL_BOILERPLATE) == remove_plainly(plain.body, STRUCTURAL_BOILERPLATE)
    assert str(fast) == str(plain)


@given(complex_)
def test_required_token_is_carried_by_every_match(selector):
    """Direct form of the property: any element the selector matches carries the token."""
    token = required_token(selector)
    soup = BeautifulSoup('<div class="nav x" id="main"><p role="gdpr">t</p><span data-clipboard-target="c">'
                         '<a class="cookie-bar Consent" aria-label="side-bar">t</a></span></div>', "lxml")
    if token is None:
        return
    for tag in soupsieve.select(selector, soup):
        hay = " ".join([tag.name, *(f"{k} {' '.join(v) if isinstance(v, list) else v}"
                                    for k, v in tag.attrs.items())]).lower()
        assert token in hay, (selector, token, str(tag)[:80])
