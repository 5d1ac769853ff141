"""data/web/: lesson 03's sample of real web pages (WCXB, CC-BY-4.0) is whole, attributed and as described.

Rebuild with `python scripts/build_web_sample.py`; see data/web/README.md.
"""
import csv
import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parent.parent / "data" / "web"
KINDS = {"article", "forum", "product", "collection", "listing", "documentation", "service"}


def _manifest() -> dict[str, str]:
    entries = {}
    for line in (WEB / "MANIFEST.sha256").read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ", 1)
        entries[name] = digest
    return entries


def _pages() -> list[dict[str, str]]:
    with open(WEB / "pages.tsv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_every_file_in_the_manifest_exists_and_matches_its_sha256():
    manifest = _manifest()
    assert manifest, "MANIFEST.sha256 is empty"
    problems = [f"{name}: missing" for name in manifest if not (WEB / name).is_file()]
    problems += [f"{name}: sha256 differs" for name, digest in manifest.items()
                 if (WEB / name).is_file() and hashlib.sha256((WEB / name).read_bytes()).hexdigest() != digest]
    assert problems == []


def test_every_shipped_file_is_in_the_manifest():
    shipped = {p.relative_to(WEB).as_posix() for p in WEB.rglob("*") if p.is_file()} - {"MANIFEST.sha256"}
    assert shipped == set(_manifest())


def test_seven_kinds_of_three_pages_each_and_the_files_match_the_table():
    pages = _pages()
    assert Counter(p["kind"] for p in pages) == dict.fromkeys(KINDS, 3)
    ids = [p["id"] for p in pages]
    assert len(set(ids)) == len(ids) == 21
    assert sorted(p.name for p in (WEB / "html").iterdir()) == sorted(f"{i}.html.gz" for i in ids)
    assert sorted(p.name for p in (WEB / "ground-truth").iterdir()) == sorted(f"{i}.json" for i in ids)
    for page in pages:
        truth = json.loads((WEB / "ground-truth" / f"{page['id']}.json").read_text(encoding="utf-8"))
        assert truth["_internal"]["page_type"]["primary"] == page["kind"], page["id"]
        assert truth["url"] == page["url"], page["id"]


def test_ids_are_even():
    assert [p["id"] for p in _pages() if int(p["id"]) % 2] == []


@pytest.mark.parametrize("path", sorted((WEB / "html").glob("*.html.gz")), ids=lambda p: p.name)
def test_every_page_decompresses_to_html(path):
    html = gzip.decompress(path.read_bytes()).lower()
    assert b"<html" in html or b"<body" in html


@pytest.mark.parametrize("path", sorted((WEB / "ground-truth").glob("*.json")), ids=lambda p: p.name)
def test_every_ground_truth_has_a_main_text(path):
    main = json.loads(path.read_text(encoding="utf-8"))["ground_truth"]["main_content"]
    assert isinstance(main, str) and main.strip()


def test_readme_names_the_licence_and_the_author():
    readme = (WEB / "README.md").read_text(encoding="utf-8")
    for needed in ("CC-BY-4.0", "https://creativecommons.org/licenses/by/4.0/", "LICENSE-CC-BY-4.0.txt",
                   "Murrough Foley", "WCXB: Web Content eXtraction Benchmark", "c039d5e", "unmodified"):
        assert needed in readme, needed
    assert "Creative Commons Attribution 4.0" in (WEB / "LICENSE-CC-BY-4.0.txt").read_text(encoding="utf-8")
