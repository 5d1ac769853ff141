"""Pages in any script: sentences end at their own script's marks, CJK runs become BM25 terms a
question can match, and a corpus that is mostly not English is named as such.

Small pages written for the tests, in Chinese, Japanese and German.
"""
from __future__ import annotations

import pytest

from course_lib.core.lexical import BM25Retriever, code_aware_tokens
from course_lib.core.splitting import split_sentences
from course_lib.core.writing import cjk_terms, function_word_share, looks_english, split_cjk
from course_lib.extras.survey import MULTILINGUAL_MODEL, language_note
from course_lib.records import Chunk, Page

CHINESE = "北京是中国的首都。上海是最大的城市！你去过吗？"
JAPANESE = "東京は日本の首都です。「大阪」は大きい都市です！本当？"
GERMAN = "Der Zug fährt um acht Uhr ab. Die Fahrkarte kostet zwölf Euro. Bitte steigen Sie ein."
ENGLISH = "The train leaves at eight. A ticket costs twelve euros, and it is sold on the platform."


def test_chinese_sentences_end_at_their_own_marks_with_no_space():
    assert split_sentences(CHINESE) == ["北京是中国的首都。", "上海是最大的城市！", "你去过吗？"]


def test_japanese_closing_brackets_stay_with_their_sentence():
    assert split_sentences(JAPANESE) == ["東京は日本の首都です。", "「大阪」は大きい都市です！", "本当？"]


def test_devanagari_danda_ends_a_sentence():
    assert split_sentences("यह पहला वाक्य है। यह दूसरा है।") == ["यह पहला वाक्य है। ", "यह दूसरा है।"]


def test_sentences_still_concatenate_back_to_the_text():
    for text in (CHINESE, JAPANESE, GERMAN, ENGLISH + " " + CHINESE):
        assert "".join(split_sentences(text)) == text


def test_german_splits_as_before():
    assert split_sentences(GERMAN) == ["Der Zug fährt um acht Uhr ab. ", "Die Fahrkarte kostet zwölf Euro. ",
                                       "Bitte steigen Sie ein."]


def test_a_cjk_run_gives_its_character_pairs():
    assert cjk_terms("東京都") == ["東京", "京都"]
    assert cjk_terms("山") == ["山"]
    assert split_cjk("Python是语言3.11") == [("Python", False), ("是语言", True), ("3.11", False)]


def test_bm25_terms_of_chinese_are_pairs_and_code_is_still_code():
    assert code_aware_tokens("用 os.path.join 连接路径") == [
        "用", "os.path.join", "os", "path", "join", "连接", "接路", "路径"]


def chunk(doc: str, text: str) -> Chunk:
    return Chunk(id=doc, doc=doc, body=text, heading_path=(doc,))


def test_a_two_character_question_finds_the_chinese_passage_that_holds_it():
    chunks = [chunk("beijing", CHINESE), chunk("tokyo", JAPANESE), chunk("train", GERMAN)]
    bm25 = BM25Retriever(chunks)
    assert [chunks[h.index].doc for h in bm25.search("上海", k=3)] == ["beijing"]
    assert [chunks[h.index].doc for h in bm25.search("大阪", k=3)] == ["tokyo"]


@pytest.mark.parametrize(("text", "english"), [(ENGLISH, True), (GERMAN, False), (CHINESE, False),
                                               (JAPANESE, False), ("", False)])
def test_english_is_told_by_its_function_words(text, english):
    assert looks_english(text) is english
    assert (function_word_share(text) > 0.2) is english


def page(name: str, text: str) -> Page:
    return Page(name, f"<html><body><p>{text}</p><script>var the = 'of the is';</script></body></html>")


def test_a_corpus_mostly_not_english_is_named_with_a_multilingual_embedder():
    note = language_note([page("a.html", GERMAN), page("b.html", CHINESE), page("c.html", ENGLISH)])
    assert note.startswith("1 of 3 pages read as English: most of this corpus is in another language")
    assert MULTILINGUAL_MODEL in note


def test_an_english_corpus_gets_no_warning():
    note = language_note([page("a.html", ENGLISH), page("b.html", GERMAN)])
    assert note.startswith("1 of 2 pages read as English (")
    assert MULTILINGUAL_MODEL not in note
