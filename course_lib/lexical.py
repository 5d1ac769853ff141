"""Tokenizers for BM25: a code-aware one that keeps names findable whole and by their parts,
and the usual lowercase-words one for contrast. `case_sensitive_spans` says where case is the
meaning; the result-cache key in `serve` keeps case exactly there too.
"""
from __future__ import annotations

import re

# Order matters: a format code or an option must be claimed before the word rule eats its letters.
_TOKEN_RE = re.compile(
    r"(?P<fmt>%(?:\(\w+\))?[-#0+]*\d*(?:\.\d+)?[A-Za-z])"  # %Y, %-d, %5.2f, %(asctime)s
    r"|(?P<opt>(?<![\w-])--?[A-Za-z][\w-]*)"              # -X, --user (not the "-in" of built-in)
    r"|(?P<word>\w+(?:\.\w+)*)"                           # words, snake_case, dotted.names, 3.11
)
# Pieces of one identifier segment: snake_case on "_", CamelCase on case changes; digits stay
# attached (sha256, utf8, E501 are names, "256" alone is not).
_PIECE_RE = re.compile(r"[A-Z]+\d*(?![a-z])|[A-Z]?[a-z]+\d*|\d+")


def _parts(whole: str) -> list[str]:
    """The findable parts of a dotted, snake_case or CamelCase name, lowercased."""
    parts: list[str] = []
    for segment in re.split(r"[.\-]+", whole):
        parts.append(segment)
        for piece in filter(None, segment.split("_")):
            # Non-ASCII words (café, Straße) have no CamelCase convention to split on.
            parts.extend(_PIECE_RE.findall(piece) if piece.isascii() else [piece])
    return [p.lower() for p in parts if p.strip("_")]


def case_sensitive_spans(text: str) -> list[tuple[int, int]]:
    """Where in `text` case is the meaning: format codes (`%Y` vs `%y`) and single-dash options
    (`-X` vs `-x`). The BM25 tokenizer and the result-cache key both keep exactly these as typed."""
    return [match.span() for match in _TOKEN_RE.finditer(text) if _keeps_case(match)]


def _keeps_case(match: re.Match) -> bool:
    return match.lastgroup == "fmt" or (match.lastgroup == "opt" and not match.group().startswith("--"))


def code_aware_tokens(text: str) -> list[str]:
    """Split text into BM25 terms that keep code findable whole AND by its parts.

    `os.path.join` gives ["os.path.join", "os", "path", "join"], `__init__` gives
    ["__init__", "init"], `--user` gives ["--user", "user"], `str.format()` gives
    ["str.format", "str", "format"] (the call parentheses are dropped: docs write both forms),
    `ThreadPoolExecutor` also gives "thread", "pool", "executor". Everything is lowercased
    (PYTHONPATH, EEXIST and Path are matched whatever the case the user types) EXCEPT where case
    is the meaning: format codes (`%Y` year with century vs `%y` without, `%M` minute vs `%m`
    month) and single-dash options (`-X` vs `-x` are different interpreter options); those are
    kept whole, with their case and without their one-letter part.
    """
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        raw = match.group()
        if _keeps_case(match):
            tokens.append(raw)
            tokens.extend(p.lower() for p in re.findall(r"\((\w+)\)", raw))  # %(asctime)s
        else:
            whole = raw.rstrip("-").lower()
            tokens.append(whole)
            tokens.extend(dict.fromkeys(p for p in _parts(raw.rstrip("-")) if p != whole))
    return tokens


def simple_tokens(text: str) -> list[str]:
    """Lowercase runs of word characters: the usual BM25 tokenizer, shown for contrast.

    It turns `os.path.join` into three unrelated words and `%Y` into "y", which is why plain BM25
    is weak on code-heavy documentation.
    """
    return re.findall(r"\w+", text.lower())
