"""Token counting with the bundled MiniLM's real tokenizer, and the silent-truncation demo."""
from __future__ import annotations

import logging

import pytest

from course_lib.core.tokens import (
    TokenCounter,
    WordCounter,
    chars_per_token,
    get_counter,
    low_chars_per_token,
    truncation_demo,
    window_spans,
)

PROSE = (
    "A Python decorator wraps a function to add behaviour before or after it runs. "
    "Decorators are applied with the at sign above the definition, and can be stacked. "
)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return get_counter()


@pytest.mark.model
def test_count_includes_special_tokens(counter):
    assert counter.count("hello world") == 4  # [CLS] hello world [SEP]
    assert counter.count("") == 2
    assert counter.special_tokens == 2
    assert counter("Tokenization") == 4  # token ##ization, plus the two specials
    assert counter.count("os.path.join(a, b)") == 12


@pytest.mark.model
def test_limit_is_the_models_not_the_tokenizers(counter):
    # The trap: the tokenizer claims 512, the embedder reads 256.
    assert counter.tokenizer_claim == 512
    assert counter.limit == 256


@pytest.mark.model
def test_count_many_matches_count_and_keeps_order(counter):
    texts = ["hello world", "def f(x):\n    return x + 1", "hello world", PROSE * 30]
    fresh = TokenCounter()
    assert fresh.count_many(texts) == [counter.count(t) for t in texts]
    assert fresh.count_many(texts)[:3] == [4, 12, 4]
    assert fresh.count_many(texts)[3] > 512  # never truncated


@pytest.mark.model
def test_long_text_counts_without_the_512_warning():
    # transformers logs the warning on its own logger (which does not propagate), so listen there.
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        fresh = TokenCounter()
        long_text = PROSE * 20
        assert fresh.count(long_text) > 512
        assert not [r for r in records if "longer than the specified maximum" in r.getMessage()]
        # The same text through the raw tokenizer does warn: the check above is not vacuous.
        fresh.tokenizer(long_text)
        assert [r for r in records if "longer than the specified maximum" in r.getMessage()]
    finally:
        logger.removeHandler(handler)


@pytest.mark.model
def test_over_limit_returns_indices(counter):
    texts = ["short", PROSE * 10, "also short", PROSE * 2]
    assert counter.count(PROSE * 2) < 256 < counter.count(PROSE * 10)
    assert counter.over_limit(texts) == [1]
    assert counter.over_limit(texts, limit=10) == [1, 3]


@pytest.mark.model
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 10, 57, 256])
def test_truncate_keeps_a_prefix_of_the_original(counter, n):
    text = "Tokenization of os.path in Python 3.11 is GREAT. " * 40
    head = counter.truncate(text, n)
    assert text.startswith(head)  # original characters, not a lower-cased decode
    assert counter.count(head) <= max(n, 2)
    if n > 2:
        assert counter.count(head) == n  # every kept token is used


@pytest.mark.model
def test_truncate_examples(counter):
    assert counter.truncate("Tokenization is hard", 3) == "Token"
    assert counter.truncate("Tokenization is hard", 4) == "Tokenization"
    assert counter.truncate("Tokenization is hard", 2) == ""
    assert counter.truncate("hello world", 256) == "hello world"


@pytest.mark.model
def test_chars_per_token():
    counter = get_counter()
    assert chars_per_token(["hello world"], counter=counter) == pytest.approx(11 / 2)
    assert chars_per_token(["def f(x):\n    return x + 1"], counter=counter) == pytest.approx(26 / 10)
    assert chars_per_token(["a b c"], counter=WordCounter()) == pytest.approx(5 / 3)


@pytest.mark.model
def test_window_spans_are_the_characters_of_each_full_run_of_tokens(counter):
    # "hello world " is two tokens, so 4 tokens span "hello world hello world" (23 characters)
    assert window_spans(["hello world " * 5], tokens=4, counter=counter) == [23, 23]  # the 5th pair is a tail
    assert window_spans(["hello world"], tokens=4, counter=counter) == []


@pytest.mark.model
def test_the_low_rate_is_set_by_the_densest_spans_not_the_mean(counter):
    prose = PROSE * 20
    code = "df.loc[df['a'] > 0, ['b', 'c']] = f(x[1:3], y={'k': 2})\n" * 20
    mean = chars_per_token([prose, code], counter=counter)
    low = low_chars_per_token([prose, code], tokens=64, counter=counter)
    code_rate = low_chars_per_token([code], tokens=64, counter=counter, percentile=50)
    assert low < mean and low == pytest.approx(code_rate, rel=0.05)  # the code's rate, not the average's
    spans = window_spans([prose, code], tokens=64, counter=counter)
    assert sum(s >= 64 * low for s in spans) >= 0.95 * len(spans)  # a bound at it keeps 95% of spans whole
    # No text holds a whole window: the mean stands in rather than nothing.
    assert low_chars_per_token(["hello world"], tokens=64, counter=counter) == chars_per_token(["hello world"],
                                                                                              counter=counter)


def test_word_counter():
    words = WordCounter(limit=10)
    assert words.count("a b  c\nd") == 6
    assert words.count_many(["", "x"]) == [2, 3]
    assert words.limit == 10


@pytest.mark.model
def test_silent_truncation_of_a_long_text(counter):
    long_text = PROSE * 12
    assert counter.count(long_text) > 300
    unrelated = "Boil the pasta in salted water and serve it with tomato sauce. " * 20
    assert truncation_demo(long_text, replacement=unrelated) > 0.999
    assert truncation_demo(long_text) > 0.999


@pytest.mark.model
def test_the_window_is_exactly_the_limit_special_tokens_included():
    # Keeping 256 tokens keeps all the model reads; keeping 255 lets one token of the tail in.
    long_text = PROSE * 12
    unrelated = "Boil the pasta in salted water and serve it with tomato sauce. " * 20
    assert truncation_demo(long_text, keep=256, replacement=unrelated) > 0.99999
    assert truncation_demo(long_text, keep=255, replacement=unrelated) < 0.999


@pytest.mark.model
def test_a_change_inside_the_window_is_seen():
    short = "Python decorators wrap a function to add behaviour before or after it runs."
    assert truncation_demo(short) > 0.999  # nothing past the limit: nothing changes
    changed = truncation_demo(short, keep=6, replacement="Boil the pasta in salted water.")
    assert changed < 0.99


@pytest.mark.model
def test_count_many_beyond_the_cache_size():
    small = TokenCounter(cache_size=2)
    texts = ["hello world", "Tokenization", "os.path.join(a, b)", "hello world"]
    assert small.count_many(texts) == [4, 4, 12, 4]
    assert len(small._cache) == 2


@pytest.mark.model
def test_truncate_without_offsets_gives_the_same_prefix(counter):
    text = "Tokenization of os.path in Python 3.11 is GREAT. " * 10
    for n in (2, 5, 40):
        assert counter._truncate_by_search(text, n) == counter.truncate(text, n)


TEXTS = ["def f(x):\n    return x", "A plain sentence of prose.", "| a | b |\n|---|---|\n| 1 | 2 |"]


@pytest.mark.model
def test_counts_kept_on_disk_are_read_back_without_tokenizing(private_cache, monkeypatch):
    first = TokenCounter()
    expected = [first.count(t) for t in TEXTS]
    first.save()
    assert list((private_cache / "token_counts").glob("*.json.gz"))
    second = TokenCounter()
    monkeypatch.setattr(second, "tokenizer", None)  # any tokenizing now raises
    assert [second.count(t) for t in TEXTS] == second.count_many(TEXTS) == expected
    assert TokenCounter(persist=False).count_many(TEXTS) == expected


@pytest.mark.model
def test_counts_from_two_processes_are_merged_not_lost(private_cache):
    one, two = TokenCounter(), TokenCounter()
    n_one, n_two = one.count(TEXTS[0]), two.count(TEXTS[1])
    one.save()
    two.save()
    third = TokenCounter()
    third.tokenizer = None
    assert (third.count(TEXTS[0]), third.count(TEXTS[1])) == (n_one, n_two)


@pytest.mark.model
@pytest.mark.parametrize("damage", [b"not gzip", b'\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03+\xc9\xc8,V\x00\x00',
                                    "json"])
def test_a_damaged_count_store_is_counted_again_with_one_warning(private_cache, caplog, damage):
    import gzip
    import json

    counter = TokenCounter()
    expected = counter.count(TEXTS[0])
    counter.save()
    (stored,) = (private_cache / "token_counts").glob("*.json.gz")
    stored.write_bytes(gzip.compress(json.dumps({"k": -3, "x": "7"}).encode()) if damage == "json" else damage)
    with caplog.at_level(logging.WARNING, logger="course_lib"):
        assert TokenCounter().count(TEXTS[0]) == expected
    assert any(str(stored) in r.getMessage() for r in caplog.records)


def test_the_count_store_is_keyed_by_a_prefix_of_the_one_text_digest():
    from course_lib.core import tokens
    from course_lib.records import text_digest

    assert tokens._text_key("os.path.join") == text_digest("os.path.join")[:24]


def test_the_default_budget_is_a_property_of_the_counter(monkeypatch):
    """Chunkers, the splitter and the chunk reports all take their default from `budget_of`."""
    from course_lib.core import tokens

    class OnlyCounts:
        def count(self, text):
            return len(text.split())

    class StatesALimit(OnlyCounts):
        limit = 12

    assert WordCounter(limit=9).budget == tokens.budget_of(WordCounter(limit=9)) == 9
    assert tokens.budget_of(StatesALimit()) == 12
    monkeypatch.setattr(tokens.models, "max_input_tokens", lambda model=None: 77)
    assert tokens.budget_of(OnlyCounts(), "some-model") == 77

