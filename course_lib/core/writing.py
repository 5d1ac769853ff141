"""Writing systems: text in scripts that do not put spaces between words, and how much of a
corpus is English.

Chinese and Japanese write words without spaces, so `\\w+` reads a whole sentence as one
"word", which BM25 can then never match against a question's. `cjk_terms` cuts such a run into
overlapping pairs of characters (the bigrams Lucene's CJK analyser indexes), so a two-character
word of the question finds the passage that holds it. `english_share` tells whether text is
English, by the share of its words that are the commonest English function words: the bundled
embedder reads English only, and a learner whose site is in another language should know.
"""
from __future__ import annotations

import re

from course_lib import settings

# Han ideographs, hiragana, katakana and hangul: the scripts written without spaces between words
# (Korean uses spaces between phrases, but its phrases are long runs too).
CJK_RUN = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
ENGLISH_WORDS = frozenset("""
    the of and to in is a that for it as was with be by on not this are or from at which an
    but have has can you if will all one there their they when we your more also use used
""".split())
_WORD = re.compile(r"[^\W\d_]+")


def cjk_terms(run: str) -> list[str]:
    """The overlapping character pairs of a run of CJK text ("東京都" -> 東京, 京都); a single
    character stands alone."""
    return [run] if len(run) < 2 else [run[i:i + 2] for i in range(len(run) - 1)]


def split_cjk(word: str) -> list[tuple[str, bool]]:
    """`word` cut into its CJK runs and the rest, in order: (piece, is_cjk)."""
    pieces, start = [], 0
    for match in CJK_RUN.finditer(word):
        if match.start() > start:
            pieces.append((word[start:match.start()], False))
        pieces.append((match.group(), True))
        start = match.end()
    if start < len(word):
        pieces.append((word[start:], False))
    return pieces


def function_word_share(text: str) -> float:
    """The share of `text`'s space-separated words that are the commonest English function words
    ("the", "of", "is"); CJK runs count as words that are not. English prose has about a third of
    its words among `ENGLISH_WORDS`; German, French or Chinese almost none."""
    words = _WORD.findall(text.lower())
    return sum(w in ENGLISH_WORDS for w in words) / len(words) if words else 0.0


def looks_english(text: str, *, min_share: float = settings.ENGLISH_MIN_FUNCTION_SHARE) -> bool:
    """True when at least `min_share` of the words are English function words: far from both
    English (about 0.3) and other languages (about 0.0)."""
    return function_word_share(text) >= min_share
