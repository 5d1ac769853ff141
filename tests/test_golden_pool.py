"""The re-pool reads only what no earlier reading held, and keeps every judgment already made."""
from __future__ import annotations

from collections import Counter

import pytest

from course_lib.infra.paths import REPO_ROOT


@pytest.fixture(scope="module")
def pool():
    import golden_pool  # scripts/golden_pool.py (tests/conftest.py puts scripts/ on the path)

    return golden_pool


def item(pool, doc, body, gold=False):
    then = pool.item_key(doc, body, fold_markup=False)  # the name an earlier pool gave it
    return pool.item_key(doc, body), {"doc": doc, "body": body, "gold": gold, "then": then}


def test_only_sentences_no_earlier_reading_of_the_page_held_are_read_again(pool):
    read = item(pool, "a.html", "Use sort=False to keep the order. Groups are sorted by default.")
    gold_before = item(pool, "a.html", "The key and its answer.")
    rechunked = item(pool, "a.html", "Groups are sorted by default. A new sentence here.\nto keep the order.")
    same_sentences = item(pool, "a.html", "Use sort=False to keep the order.")
    other_page = item(pool, "b.html", "Use sort=False to keep the order.")
    unknown = item(pool, "a.html", "a body no system makes now")
    before = {read[1]["then"]: {"gold": False}, gold_before[1]["then"]: {"gold": True},
              unknown[1]["then"]: {"gold": False}}
    today = dict([read, rechunked, same_sentences, other_page, gold_before,
                  item(pool, "a.html", "The key and its answer, whole.", gold=True)])
    bodies = {entry["then"]: entry["body"] for entry in today.values()}
    counts = Counter()
    pages = pool.unread(before, today, bodies, counts)
    # a sentence read on a.html is not read again, nor a piece of one; on b.html it is (a place is on its
    # own page)
    assert pages == {"a.html": ({"anewsentencehere.": "A new sentence here."}, 1),
                     "b.html": ({"usesort=falsetokeeptheorder.": "Use sort=False to keep the order."}, 1)}
    assert counts == Counter({"pooled items": 6, "read before": 1, "held the quote, lack a fragment now": 1,
                              "holding the answer unit": 1, "new items with unread sentences": 2,
                              "new items whose sentences were all read": 1,
                              "items read before whose text is not known now": 1})


def test_reading_units_are_the_distinct_sentences_and_lines(pool):
    units = pool.reading_units("First sentence here. Second one follows.\ncode = 1\nFirst sentence here.\nok")
    assert list(units.values()) == ["First sentence here.", "Second one follows.", "code = 1"]


def test_an_earlier_pools_keys_are_matched_as_it_made_them(pool):
    """The first pools named items before `normalize` folded Markdown: a body with backticks has
    another name now, and the re-pool looks the earlier reading up under the earlier name."""
    body = "Use `sort=False` to keep the order."
    assert pool.item_key("a.html", body) != pool.item_key("a.html", body, fold_markup=False)
    assert pool.earlier_key({})("a.html", body) == pool.item_key("a.html", body, fold_markup=False)
    assert pool.earlier_key({pool.KEYS_FOLD_MARKUP: True})("a.html", body) == pool.item_key("a.html", body)


@pytest.mark.model
def test_earlier_bodies_are_named_as_an_earlier_pool_named_them(pool, tmp_path):
    """golden_pool_bodies.py names each chunk as the code it runs with names pooled items."""
    import json
    import subprocess
    import sys

    out = tmp_path / "bodies.json"
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "golden_pool_bodies.py"), "python", str(out),
                    "naive"], check=True, capture_output=True, cwd=REPO_ROOT)
    bodies = json.loads(out.read_text(encoding="utf-8"))
    assert len(bodies) > 1000
    # at this commit the names are today's (markup folded); at an earlier commit, that commit's
    assert all(name == pool.item_key(name.split("#")[0], body) for name, body in bodies.items())
