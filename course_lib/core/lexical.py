"""Tokenizers for BM25: a code-aware one that keeps names findable whole and by their parts,
and the usual lowercase-words one for contrast. `case_sensitive_spans` says where case is the
meaning; the result-cache key in `serve` keeps case exactly there too.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from rank_bm25 import BM25Okapi

from course_lib import settings
from course_lib.core.retrieve import Where, check_k, top_k, where_mask
from course_lib.core.writing import CJK_RUN, cjk_terms, split_cjk
from course_lib.records import Chunk, Hit

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
    kept whole, with their case and without their one-letter part. A run of Chinese or Japanese
    gives its overlapping character pairs (`writing.cjk_terms`), as those scripts have no spaces.
    """
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        raw = match.group()
        if _keeps_case(match):
            tokens.append(raw)
            tokens.extend(p.lower() for p in re.findall(r"\((\w+)\)", raw))  # %(asctime)s
        elif CJK_RUN.search(raw):  # Chinese or Japanese: no spaces, so character pairs
            for piece, is_cjk in split_cjk(raw):
                rest = piece.strip(".")
                tokens.extend(cjk_terms(piece) if is_cjk else _word_terms(rest) if rest else ())
        else:
            tokens.extend(_word_terms(raw))
    return tokens


@lru_cache(maxsize=2**18)
def _word_terms(raw: str) -> tuple[str, ...]:
    """A word's terms: itself lowercased, then its distinct parts. Memoised because a corpus
    repeats its words: building BM25 over the lesson corpus calls this about 900,000 times for
    far fewer distinct words. A tuple, so no caller can change what the next one gets."""
    whole = raw.rstrip("-").lower()
    return (whole, *dict.fromkeys(p for p in _parts(raw.rstrip("-")) if p != whole))


def simple_tokens(text: str) -> list[str]:
    """Lowercase runs of word characters: the usual BM25 tokenizer, shown for contrast.

    It turns `os.path.join` into three unrelated words and `%Y` into "y", which is why plain BM25
    is weak on code-heavy documentation.
    """
    return re.findall(r"\w+", text.lower())


# ---------------------------------------------------------------------------------------------
# BM25


def okapi_idf(n_docs: int, doc_freq: int) -> float:
    """Robertson-Sparck Jones idf as in rank_bm25's BM25Okapi: log((N - n + 0.5) / (n + 0.5)).

    It is zero for a term in exactly half of the documents and NEGATIVE above half, so a
    matching chunk can score lower than one that does not contain the term at all.
    """
    return math.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def lucene_idf(n_docs: int, doc_freq: int) -> float:
    """Lucene's idf, log(1 + (N - n + 0.5) / (n + 0.5)): the same shape, but always positive."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


class LuceneBM25(BM25Okapi):
    """rank_bm25's BM25Okapi with Lucene's always-positive idf instead of the epsilon floor.

    BM25Okapi replaces negative idfs by `epsilon * average idf`; in a small collection (or one
    where a word is on most pages, like a product name) that average can itself be tiny or
    negative, so common-but-relevant terms count for nothing or count against a chunk.
    """

    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {word: lucene_idf(self.corpus_size, n) for word, n in nd.items()}
        self.average_idf = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0


class BM25Retriever:
    """BM25 over `chunk.text` with rank_bm25, tokenized with `code_aware_tokens` by default.

    rank_bm25 builds the statistics (term frequencies, lengths, idf) once; scoring then walks a
    posting list per query term, touching only the chunks that contain it, instead of
    rank_bm25's `get_scores`, which loops in Python over every chunk for every term (same
    numbers, see the tests). Only chunks sharing at least one term with the query are returned.
    `idf="okapi"` restores rank_bm25's own idf, to show its pitfall (see `idf_table`).
    """

    name = "bm25"

    def __init__(self, chunks: Sequence[Chunk], *,
                 tokenizer: Callable[[str], list[str]] = code_aware_tokens,
                 k1: float = settings.BM25_K1, b: float = settings.BM25_B,
                 idf: Literal["lucene", "okapi"] = "lucene"):
        if not chunks:
            raise ValueError("BM25Retriever needs at least one chunk")
        if idf not in ("lucene", "okapi"):
            raise ValueError(f"idf must be 'lucene' or 'okapi', not {idf!r}")
        self.chunks = list(chunks)
        self.tokenizer, self.k1, self.b, self.idf_kind = tokenizer, k1, b, idf
        corpus = [tokenizer(c.text) for c in self.chunks]
        engine = LuceneBM25 if idf == "lucene" else BM25Okapi
        # Tokenized here, not by rank_bm25: its `tokenizer=` argument starts a process pool.
        self.bm25 = engine(corpus, k1=k1, b=b)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, freqs in enumerate(self.bm25.doc_freqs):
            for term, tf in freqs.items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(i)
                tfs.append(tf)
        self.postings = {term: (np.array(docs), np.array(tfs, dtype=float))
                         for term, (docs, tfs) in postings.items()}
        doc_len = np.array(self.bm25.doc_len, dtype=float)
        # The length-normalised k1 of each chunk, computed once instead of per query term.
        self._norm = k1 * (1 - b + b * doc_len / (self.bm25.avgdl or 1.0))

    def doc_freq(self, term: str) -> int:
        """In how many chunks the term occurs."""
        return len(self.postings[term][0]) if term in self.postings else 0

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """BM25 score of every chunk for the query, and which chunks share a term with it."""
        scores = np.zeros(len(self.chunks))
        matched = np.zeros(len(self.chunks), dtype=bool)
        for term in self.tokenizer(query):  # a repeated query term counts again, as in rank_bm25
            if term not in self.postings:
                continue
            docs, tf = self.postings[term]
            scores[docs] += self.bm25.idf[term] * (tf * (self.k1 + 1) / (tf + self._norm[docs]))
            matched[docs] = True
        return scores, matched

    def search(self, query: str, *, k: int = settings.EVAL_DEPTH, where: Where | None = None,
               vector: np.ndarray | None = None) -> list[Hit]:
        """The k best-scoring chunks among those that contain at least one query term. `vector` (a
        ready query embedding) is accepted as by every retriever and ignored: BM25 reads words."""
        check_k(k)
        scores, matched = self.scores(query)
        mask = where_mask(self.chunks, where)
        return top_k(scores, k, mask=matched if mask is None else matched & mask)


def idf_table(retriever: BM25Retriever, terms: Sequence[str]) -> list[dict]:
    """One row per term: its document frequency and its idf under Okapi and under Lucene.

    `okapi_used` is what rank_bm25's BM25Okapi actually uses: the raw idf, or, when that is
    negative, epsilon (0.25) times the average raw idf of the whole vocabulary. Terms are looked
    up as given, so pass them as the tokenizer emits them (lowercase, `%Y` kept).
    """
    n_docs = len(retriever.chunks)
    raw = [okapi_idf(n_docs, len(docs)) for docs, _ in retriever.postings.values()]
    floor = 0.25 * (sum(raw) / len(raw) if raw else 0.0)
    rows = []
    for term in terms:
        n = retriever.doc_freq(term)
        okapi = okapi_idf(n_docs, n)
        rows.append({"term": term, "docs": n, "share": n / n_docs, "okapi_raw": okapi,
                     "okapi_used": okapi if okapi >= 0 else floor,
                     "lucene": lucene_idf(n_docs, n)})
    return rows
