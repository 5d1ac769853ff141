"""Count tokens the way the embedder does, and show what happens past its limit.

An embedder reads at most `max_input_tokens()` word pieces (256 for the bundled MiniLM, special
tokens included) and silently ignores the rest. Its tokenizer's `model_max_length` claims 512:
trust the model, not the tokenizer. Everything here counts with the model's own tokenizer, special
tokens included, with no truncation, so a count says exactly how much of a text the model reads.
"""
from __future__ import annotations

import atexit
from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Protocol

import cachetools
import numpy as np

from course_lib import settings
from course_lib.infra import models
from course_lib.infra.json_cache import cache_path, read_json, write_json
from course_lib.infra.vector_cache import warn_once
from course_lib.records import text_digest


class Counter(Protocol):
    """Anything that counts the tokens of a text; the chunker accepts any such object."""

    def count(self, text: str) -> int: ...


class TokenCounter:
    """Token counts with the embedder's own tokenizer, special tokens included, cached by text.

    `count` and `count_many` never truncate (and never warn about long inputs), so a count above
    `limit` is the number of tokens the embedder would drop. `limit` is the embedder's real input
    limit; `tokenizer_claim` is the tokenizer's `model_max_length`, kept side by side because the
    two differ for MiniLM (256 vs 512) and only the first is true. The cache is a bounded LRU, so
    the chunker can count thousands of candidate chunks without holding them all in memory.

    With `persist` (the default), counts are also kept on disk (`<cache>/token_counts/`, keyed by
    the tokenizer's files and a hash of each text): every lesson chunks the same pages, and
    counting their candidate chunks costs about 10 s a process. `save()` writes what was counted.
    """

    def __init__(self, name: str | None = None, *, cache_size: int = settings.TOKEN_COUNT_CACHE,
                 persist: bool = True):
        self.name = name
        self.tokenizer = models.load_tokenizer(name)
        self.cache_size = cache_size
        self._cache: cachetools.LRUCache[str, int] = cachetools.LRUCache(maxsize=cache_size)
        key = [_COUNTS_FORMAT, type(self.tokenizer).__name__, models.model_fingerprint(name)]
        self._path = cache_path("token_counts", "counts", key) if persist else None
        self._stored: dict[str, int] | None = None  # read from disk on first use
        self._fresh: dict[str, int] = {}  # counted in this process, not yet saved
        if persist:
            atexit.register(self.save)  # the chunk builders save as they go; this keeps the rest

    def __repr__(self) -> str:
        return f"TokenCounter({self.name!r})"

    @cached_property
    def limit(self) -> int:
        """The embedder's real input limit in tokens (loads the embedder once, on first use)."""
        return models.max_input_tokens(self.name)

    @property
    def budget(self) -> int:
        """The tokens a chunk's embedded text may hold when no budget is given: the embedder's
        whole window (`limit`), special tokens included, since every count includes them."""
        return self.limit

    @property
    def tokenizer_claim(self) -> int:
        """What the tokenizer claims the limit is (512 for MiniLM): not what the model reads."""
        return int(self.tokenizer.model_max_length)

    @cached_property
    def special_tokens(self) -> int:
        """How many special tokens wrap every text ([CLS] and [SEP] for BERT-style models)."""
        return self.count("")

    def _remember(self, text: str, n: int) -> None:
        self._cache[text] = n  # the LRU evicts the least recently counted text past cache_size
        if self._path is not None:
            self._fresh[_text_key(text)] = n

    def _known(self, text: str) -> int | None:
        """The count from memory, else from the disk store; None when it was never counted."""
        n = self._cache.get(text)
        if n is None and self._path is not None:
            if self._stored is None:
                self._stored = _read_counts(self._path)
            n = self._stored.get(_text_key(text))
            if n is not None:
                self._cache[text] = n
        return n

    def save(self) -> None:
        """Add this process's new counts to the disk store (merged with what other processes
        wrote meanwhile; a lost race costs a recount, never a wrong count)."""
        if self._path is None or not self._fresh:
            return
        merged = {**_read_counts(self._path), **self._fresh}
        write_json(self._path, merged)
        self._stored, self._fresh = merged, {}

    def count(self, text: str) -> int:
        """The number of tokens the embedder would need for `text`, special tokens included."""
        n = self._known(text)
        if n is None:
            # verbose=False: the "sequence longer than 512" warning is about the tokenizer's
            # wrong claim, and counting long texts is the whole point here.
            n = len(self.tokenizer(text, add_special_tokens=True, verbose=False)["input_ids"])
            self._remember(text, n)
        return n

    __call__ = count

    def count_many(self, texts: Sequence[str], *, batch_size: int = settings.TOKENIZE_BATCH) -> list[int]:
        """Counts for many texts, tokenizing the uncached ones in batches (fast tokenizers are
        much quicker per text in a batch, and skipping masks roughly halves the time)."""
        todo = list(dict.fromkeys(t for t in texts if self._known(t) is None))
        fresh: dict[str, int] = {}  # kept here too: more texts than the cache holds must not recount
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            ids = self.tokenizer(
                batch,
                add_special_tokens=True,
                verbose=False,
                return_attention_mask=False,
                return_token_type_ids=False,
            )["input_ids"]
            for text, row in zip(batch, ids, strict=False):
                fresh[text] = len(row)
                self._remember(text, len(row))
        return [fresh[t] if t in fresh else self.count(t) for t in texts]

    def over_limit(self, texts: Sequence[str], *, limit: int | None = None) -> list[int]:
        """Indices of the texts longer than the limit: the ones whose tails the model never reads."""
        cut = self.limit if limit is None else limit
        return [i for i, n in enumerate(self.count_many(texts)) if n > cut]

    def truncate(self, text: str, n: int) -> str:
        """The prefix of `text` that fits in `n` tokens (special tokens included), as the model
        would read it. The original characters are kept (via offsets), not a lower-cased decode,
        so `text.startswith(counter.truncate(text, n))` always holds."""
        if not getattr(self.tokenizer, "is_fast", False):
            return self._truncate_by_search(text, n)
        enc = self.tokenizer(
            text,
            add_special_tokens=True,
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
            verbose=False,
        )
        pairs = zip(enc["offset_mapping"], enc["special_tokens_mask"], strict=True)
        content = [span for span, special in pairs if not special]
        keep = n - (len(enc["input_ids"]) - len(content))
        if keep >= len(content):
            return text
        if keep <= 0:
            return ""
        return text[: content[keep - 1][1]]

    def _truncate_by_search(self, text: str, n: int) -> str:
        # Slow (pure Python) tokenizers have no offsets: bisect on the prefix length instead.
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            fits = len(self.tokenizer(text[:mid], add_special_tokens=True, verbose=False)["input_ids"]) <= n
            lo, hi = (mid, hi) if fits else (lo, mid - 1)
        return text[:lo].rstrip()  # as the offsets would: trailing spaces are no token


_COUNTS_FORMAT = "token-counts-2"  # 2: keyed by a prefix of `text_digest` (1: by blake2b)


def _text_key(text: str) -> str:
    """A text's key in the count store: 24 hex digits (96 bits) of its `text_digest`, short
    because the store holds every chunk text lesson after lesson counts (about 450,000)."""
    return text_digest(text)[:24]


def _read_counts(path: Path) -> dict[str, int]:
    """The stored counts; {} when there are none or the file does not hold text-hash -> count."""
    data = read_json(path)
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and type(v) is int and v >= 0
                                             for k, v in data.items()):
        warn_once(path, "holds something other than token counts: counted again")
        return {}
    return data


@lru_cache(maxsize=4)
def get_counter(name: str | None = None) -> TokenCounter:
    """One shared TokenCounter per model, so lessons and the chunker share its cache."""
    return TokenCounter(name)


class WordCounter:
    """A stand-in counter: whitespace-separated words plus `special` tokens per text.

    Fast and exact to reason about, so tests can assert chunk boundaries by hand; in a lesson it
    shows how far a word count is from the real token count (code and tables most of all).
    """

    def __init__(self, *, limit: int = settings.WINDOW_TOKENS, special: int = settings.SPECIAL_TOKENS):
        self.limit = limit
        self.special = special

    def __repr__(self) -> str:
        return f"WordCounter(limit={self.limit}, special={self.special})"

    @property
    def budget(self) -> int:
        """A chunk's default budget: the whole stand-in window, as `TokenCounter.budget`."""
        return self.limit

    def count(self, text: str) -> int:
        return len(text.split()) + self.special

    __call__ = count

    def count_many(self, texts: Iterable[str]) -> list[int]:
        return [self.count(t) for t in texts]


def budget_of(counter: Counter, model: str | None = None) -> int:
    """The default token budget of a chunk: the counter's `budget`. A stand-in counter that has
    none gets its `limit`, else the model's real input limit (asked of the model, never typed)."""
    budget = getattr(counter, "budget", None) or getattr(counter, "limit", None)
    return int(budget) if budget else models.max_input_tokens(model)


def count_all(texts: Sequence[str], counter: Counter) -> list[int]:
    """Counts with any counter: batched when it can (`count_many`), one by one otherwise."""
    many = getattr(counter, "count_many", None)
    return list(many(texts)) if many else [counter.count(t) for t in texts]


def chars_per_token(texts: Sequence[str], *, counter: Counter | None = None) -> float:
    """Characters per content token over all `texts` (special tokens not counted).

    The chunking lesson's rule of thumb is ~4 for prose and ~3 for code; measuring it on your own chunks
    tells you how many characters a token budget really buys.
    """
    counter = counter or get_counter()
    special = counter.count("")
    tokens = sum(n - special for n in count_all(texts, counter))
    return sum(len(t) for t in texts) / tokens if tokens else float("nan")


def window_spans(texts: Sequence[str], *, tokens: int, counter: TokenCounter | None = None) -> list[int]:
    """Characters spanned by each run of `tokens` consecutive content tokens, the texts cut into
    such runs end to end (a shorter tail is left out: it is not a full window).

    A character-counting splitter keeps chunks of some length in characters; these spans say how
    many characters a window of tokens really holds, text by text, so a bound can be set where
    dense text (tables, code) still fits, not only average prose.
    """
    counter = counter or get_counter()
    spans: list[int] = []
    for text in texts:
        if getattr(counter.tokenizer, "is_fast", False):
            offsets = counter.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                                        verbose=False)["offset_mapping"]
            spans += [offsets[end - 1][1] - offsets[end - tokens][0]
                      for end in range(tokens, len(offsets) + 1, tokens)]
            continue
        rest = text  # a slow tokenizer has no offsets: cut window by window with `truncate`
        while counter.count(rest) - counter.special_tokens > tokens:
            head = counter.truncate(rest, tokens + counter.special_tokens)
            spans.append(len(head.strip()))
            rest = rest[len(head):]
    return spans


def low_chars_per_token(texts: Sequence[str], *, tokens: int, counter: TokenCounter | None = None,
                        percentile: float = settings.WINDOW_CHARS_PERCENTILE) -> float:
    """Characters per token of the densest `percentile` % of `tokens`-long spans of the texts: a
    bound of `tokens` times this many characters keeps (100 - percentile) % of such spans inside
    `tokens` tokens. Falls back to the mean (`chars_per_token`) when no text holds a whole span."""
    spans = window_spans(texts, tokens=tokens, counter=counter)
    if not spans:
        return chars_per_token(texts, counter=counter)
    return float(np.percentile(spans, percentile)) / tokens


def truncation_demo(
    text: str, *, model: str | None = None, keep: int | None = None, replacement: str = ""
) -> float:
    """Cosine between the embedding of `text` and of `text` with everything after `keep` tokens
    replaced by `replacement` (default: removed; `keep` defaults to the model's limit).

    With the default `keep`, a long text gives ~1.0: the tail was never read, so deleting it or
    swapping it for anything else changes nothing. That is silent truncation. A smaller `keep`
    changes text inside the window, and the cosine drops.
    """
    counter = get_counter(model)
    head = counter.truncate(text, counter.limit if keep is None else keep)
    # A space keeps the replacement from gluing onto the last kept word piece.
    changed = f"{head} {replacement}" if replacement else head
    if changed == text:  # nothing past `keep`: the same input, the same vector
        return 1.0
    # No cache: the demo is about what the model computes now, and the variants are throwaway.
    vectors = models.embed([text, changed], model=model, use_cache=False, progress=False)
    return float(np.dot(vectors[0], vectors[1]))
