"""Oracle test: the code the parser extracts from the shipped pages is the code their authors wrote.

Sphinx keeps each page's reST source next to it (`_sources/<page>.rst.txt`). A literal block in
reST is an indented run of lines, so once that run is dedented the code must appear in it
verbatim: prompts, indentation, blank lines and all. Any difference means the extraction
mangled something (a lost span, a space inserted between highlighting tokens, a dropped line).

The few blocks that legitimately differ are listed below, each with its reason, and each reason
is checked as far as it can be (a "literalinclude" page must use that directive, a
"doctest-flags" block must match once Sphinx's own trimming is applied to the source). The test
fails if a listed block starts matching or an unlisted one stops, so the list stays exact.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from course_lib.core.parse import parse_file


def _corpus_dir() -> Path | None:
    """The shipped corpus: via course_lib.core.load (extracts and verifies it), else data/corpus."""
    try:
        from course_lib.core import load as corpus
        return Path(corpus.ensure_corpus())
    except Exception:  # noqa: BLE001 - no corpus module, or no archive: fall back to the folder
        folder = Path(__file__).resolve().parents[1] / "data" / "corpus"
        return folder if folder.is_dir() else None


CORPUS = _corpus_dir()
if CORPUS is None:
    pytest.skip("data/corpus is absent: the oracle needs the shipped pages", allow_module_level=True)

FENCE = re.compile(r"^(`{3,})[\w+-]*\n(.*)\n\1$", re.S)
# What Sphinx does to doctest blocks before highlighting them (sphinx.transforms.post_transforms.code).
DOCTEST_FLAGS = re.compile(r"[ \t]*#\s*doctest:.+$", re.M)

REASONS = {
    "doctest-flags": "Sphinx strips '# doctest: +SKIP'-style flags and <BLANKLINE> from doctest blocks",
    "literalinclude": "the code comes from another file through a literalinclude directive",
    "productionlist": "a grammar written as a productionlist directive, laid out by Sphinx",
    "pygments-traceback": "Pygments' pycon lexer reorders or drops traceback lines in the HTML itself",
}

# (page, first line of the code block, reason): every block whose code is not verbatim in the source.
EXCEPTIONS = [
    ("faq/general.html", ">>> L = []", "doctest-flags"),
    ("faq/programming.html", ">>> id(1000)", "doctest-flags"),
    ("faq/programming.html", ">>> a = 1000; b = 2000", "doctest-flags"),
    ("howto/regex.html", ">>> iterator = p.finditer('12 drummers drumming, 11 ... 10 ...')", "doctest-flags"),
    ("howto/regex.html", ">>> print(re.match(r'From\\s+', 'Fromage amk'))", "doctest-flags"),
    ("howto/regex.html", ">>> print(re.search('^From', 'From Here to Eternity'))", "doctest-flags"),
    ("howto/regex.html", ">>> print(re.search('}$', '{block}'))", "doctest-flags"),
    ("howto/unicode.html", '>>> b\'\\x80abc\'.decode("utf-8", "strict")', "doctest-flags"),
    ("howto/unicode.html", ">>> u = chr(40960) + 'abcd' + chr(1972)", "doctest-flags"),
    ("library/datetime.html", ">>> from datetime import date", "doctest-flags"),
    ("library/datetime.html", ">>> from datetime import datetime", "doctest-flags"),
    ("library/datetime.html", ">>> from datetime import datetime", "doctest-flags"),
    ("library/datetime.html", ">>> from datetime import datetime, date, time, timezone", "doctest-flags"),
    ("library/datetime.html", "from datetime import tzinfo, timedelta, datetime", "literalinclude"),
    ("library/exceptions.html", "BaseException", "literalinclude"),
    ("library/functions.html", ">>> import struct", "doctest-flags"),
    ("library/functions.html", 'sign        ::=  "+" | "-"', "productionlist"),
    ("library/functions.html", ">>> s = input('--> ')", "doctest-flags"),
    ("library/functions.html", ">>> for item in zip(range(3), ['fee', 'fi', 'fo', 'fum'], strict=True):",
     "doctest-flags"),
    ("library/hashlib.html", ">>> import io, hashlib, hmac", "doctest-flags"),
    ("library/multiprocessing.html", ">>> from multiprocessing import Pool", "pygments-traceback"),
    ("library/multiprocessing.html", "from multiprocessing import freeze_support", "literalinclude"),
    ("library/multiprocessing.html", "import multiprocessing", "literalinclude"),
    ("library/multiprocessing.html", "import time", "literalinclude"),
    ("library/secrets.html", ">>> token_bytes(16)", "doctest-flags"),
    ("library/secrets.html", ">>> token_hex(16)", "doctest-flags"),
    ("library/secrets.html", ">>> token_urlsafe(16)", "doctest-flags"),
    ("library/string.html",
     'replacement_field ::=  "{" [field_name] ["!" conversion] [":" format_spec] "}"', "productionlist"),
    ("library/string.html",
     "format_spec     ::=  [[fill]align][sign][z][#][0][width][grouping_option][.precision][type]",
     "productionlist"),
    ("library/string.html", ">>> for align, text in zip('<^>', ['left', 'center', 'right']):", "doctest-flags"),
    ("library/time.html", ">>> import time", "doctest-flags"),
    ("tutorial/errors.html", ">>> try:", "doctest-flags"),
    ("tutorial/errors.html", ">>> def func():", "doctest-flags"),
    ("tutorial/errors.html", ">>> try:", "pygments-traceback"),
    ("tutorial/modules.html", ">>> import fibo, sys", "doctest-flags"),
    ("tutorial/modules.html", ">>> import builtins", "doctest-flags"),
]


def dedented_views(source: str) -> list[str]:
    """The source once per indentation level L: lines indented by >= L lose L spaces, blank
    lines become empty, shallower lines become a NUL that no code can match across.
    Every reST literal block is then a contiguous run of one of these views."""
    lines = source.split("\n")
    indent = [len(line) - len(line.lstrip(" ")) for line in lines]
    views = []
    for level in sorted({i for i, line in zip(indent, lines, strict=False) if line.strip()}):
        views.append("\n".join("" if not line.strip() else line[level:].rstrip() if i >= level else "\x00"
                               for i, line in zip(indent, lines, strict=False)))
    return views


def code_blocks(page: Path) -> list[str]:
    """The code of every code block of a page, unfenced, trailing spaces of each line dropped
    (reST sources have none that matter; a trimmed doctest flag leaves some in the HTML)."""
    out = []
    for block in parse_file(page):
        if block.kind == "code":
            code = FENCE.match(block.text).group(2)
            out.append("\n".join(line.rstrip() for line in code.split("\n")))
    return out


def _pages() -> list[str]:
    return sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.html")
                  if not p.relative_to(CORPUS).parts[0].startswith("_"))


@pytest.fixture(scope="module")
def oracle() -> dict:
    """Per page: its source, and each code block with whether it is verbatim in the source."""
    result = {}
    for page in _pages():
        source = (CORPUS / "_sources" / (page[:-5] + ".rst.txt")).read_text(encoding="utf-8")
        views = dedented_views(source)
        result[page] = (source, [(code, any(code in view for view in views)) for code in code_blocks(CORPUS / page)])
    return result


def test_every_page_has_its_source():
    missing = [p for p in _pages() if not (CORPUS / "_sources" / (p[:-5] + ".rst.txt")).exists()]
    assert missing == []


def test_code_blocks_match_their_rest_source(oracle):
    total = sum(len(blocks) for _, blocks in oracle.values())
    misses = Counter((page, code.split("\n")[0]) for page, (_, blocks) in oracle.items()
                     for code, found in blocks if not found)
    expected = Counter((page, first) for page, first, _ in EXCEPTIONS)
    assert misses - expected == Counter(), "code not verbatim in its source and not explained"
    assert expected - misses == Counter(), "listed as an exception but now matches: remove it"
    assert total > 1000
    assert 1 - len(EXCEPTIONS) / total > 0.97


@pytest.mark.parametrize("number", range(len(EXCEPTIONS)))
def test_each_exception_has_its_stated_cause(oracle, number):
    page, first, reason = EXCEPTIONS[number]
    source, blocks = oracle[page]
    nth = sum(entry[:2] == (page, first) for entry in EXCEPTIONS[:number])  # two blocks may open alike
    code = [code for code, found in blocks if not found and code.split("\n")[0] == first][nth]
    assert reason in REASONS
    if reason == "doctest-flags":  # trimmed as Sphinx trims, the source then holds the code
        trimmed = DOCTEST_FLAGS.sub("", source).replace("<BLANKLINE>", "")
        assert any(code in view for view in dedented_views(trimmed))
    elif reason == "literalinclude":
        assert ".. literalinclude::" in source
    elif reason == "productionlist":
        assert ".. productionlist::" in source
    elif reason == "pygments-traceback":  # same lines, in another order or fewer
        lines = Counter(line.strip() for line in source.split("\n"))
        assert "Traceback (most recent call last):" in code
        assert all(lines[line.strip()] for line in code.split("\n"))
