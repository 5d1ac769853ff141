"""Tests of the golden set: normalisation, loading, and validation against a tiny HTML corpus."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from course_lib.evaluation import golden_checks
from course_lib.evaluation.golden import Place, Question, load_golden, normalize
from course_lib.evaluation.golden_checks import section_text, validate_golden, visible_soup
from course_lib.infra.errors import GoldenError

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
CORPUS = FIXTURES / "corpus"
GOLDEN = FIXTURES / "golden.jsonl"

GOOD = {"id": "ok", "question": "Which directive gives the day?", "doc": "library/datetime.html",
        "section": "format-codes", "evidence": "Day of the month as a zero-padded decimal number.",
        "kind": "table", "split": "dev"}


def write_golden(tmp_path: Path, *lines: str | dict) -> Path:
    """A golden.jsonl in tmp_path; dicts are dumped as JSON, strings written as they are."""
    path = tmp_path / "golden.jsonl"
    path.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines),
                    encoding="utf-8")
    return path


# --- normalize -------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    ("Hello  World", "helloworld"),
    ("os . path", "os.path"),
    ("Tom &amp; Jerry", "tom&jerry"),
    ("1989&nbsp;C standard", "1989cstandard"),
    ("1989\u00a0C", "1989c"),
    ("Format Codes¶", "formatcodes"),
    ("\ufb01le STRASSE", "filestrasse"),   # NFKC turns the ligature into "fi"
    ("Stra\u00dfe", "strasse"),           # casefold, not lower
    ("line\nbreak\ttab", "linebreaktab"),
    ("\u2018it\u2019s\u2019 \u201cquoted\u201d", "'it's'\"quoted\""),  # curly quotes and apostrophes
    ("a \u2013 b \u2014 c \u2212 1", "a-b-c-1"),      # en dash, em dash, minus sign
    ("wait\u2026", "wait..."),
])
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_normalize_folds_typographic_punctuation_on_both_sides():
    page = "The default is \u2018raise\u2019 \u2014 see \u201cerrors\u201d\u2026"
    peer = "The default is 'raise' - see \"errors\"..."
    assert normalize(page) == normalize(peer)
    assert normalize("'raise'") != normalize("raise")  # quotes are folded, not dropped


def test_normalize_makes_spacing_irrelevant_but_keeps_punctuation():
    assert normalize("os . path") == normalize("os.path")
    assert normalize("os.path") != normalize("os_path")


# --- Question ----------------------------------------------------------------------------------

def test_question_answerable():
    assert Question("a", "q?", "x.html", "s", "four words of evidence", "exact").answerable
    assert not Question("b", "q?", None, None, None, "unanswerable").answerable


# --- load_golden -------------------------------------------------------------------------------

def test_load_golden_reads_fixture():
    questions = load_golden(GOLDEN)
    assert [q.id for q in questions] == ["q1", "q2", "q3", "q4", "q5"]
    assert questions[0] == Question("q1", "Which directive gives the day of the month?",
                                    "library/datetime.html", "format-codes",
                                    "Day of the month as a zero-padded decimal number.",
                                    "table", "dev")
    assert questions[3].split is None and not questions[3].answerable


def test_load_golden_split_keeps_unsplit_questions_in_every_split():
    assert [q.id for q in load_golden(GOLDEN, split="dev")] == ["q1", "q3", "q4"]
    assert [q.id for q in load_golden(GOLDEN, split="test")] == ["q2", "q4", "q5"]


def test_load_golden_rejects_unknown_split_argument():
    with pytest.raises(ValueError, match="split must be one of"):
        load_golden(GOLDEN, split="train")


def test_load_golden_error_names_file_and_line(tmp_path):
    path = write_golden(tmp_path, GOOD, "", "{not json")
    with pytest.raises(GoldenError) as err:
        load_golden(path)
    assert str(err.value).startswith("golden.jsonl:3: invalid JSON")


def test_load_golden_rejects_duplicate_ids(tmp_path):
    path = write_golden(tmp_path, GOOD, GOOD)
    with pytest.raises(GoldenError, match=r"^golden.jsonl:2: duplicate id —"):
        load_golden(path)


def test_load_golden_rejects_short_evidence(tmp_path):
    path = write_golden(tmp_path, {**GOOD, "evidence": "too short"})
    with pytest.raises(GoldenError, match=r"golden.jsonl:1: evidence has 2 words"):
        load_golden(path)


# --- section_text ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def datetime_soup():
    return visible_soup((CORPUS / "library" / "datetime.html").read_text())


@pytest.fixture(scope="module")
def flat_soup():
    return visible_soup((CORPUS / "flat.html").read_text())


def test_section_text_of_section_element(datetime_soup):
    text = normalize(section_text(datetime_soup, "format-codes"))
    assert normalize("Day of the month as a zero-padded") in text
    assert normalize("Examples of usage") not in text


def test_section_text_heading_inside_section_means_the_section(datetime_soup):
    assert section_text(datetime_soup, "examples-heading") == section_text(datetime_soup,
                                                                           "examples")


def test_section_text_flat_heading_runs_to_next_heading_of_same_level(flat_soup):
    text = normalize(section_text(flat_soup, "install"))
    assert normalize("Run the installer") in text
    assert normalize("Double click the setup file") in text   # an h3 below stays inside
    assert normalize("Pass the input folder") not in text       # the next h2 ends it


def test_section_text_plain_element_and_missing_id(flat_soup):
    assert normalize(section_text(flat_soup, "note-box")) == normalize(
        "Notes live in a plain div with an id.")
    assert section_text(flat_soup, "no-such-id") is None


def test_section_text_ignores_script_and_style(datetime_soup):
    text = normalize(section_text(datetime_soup, "module-datetime")
                     + datetime_soup.get_text())
    assert "hiddenscriptphrase" not in text
    assert "styletextisnevervisible" not in text


def test_section_text_on_raw_soup_with_heading_at_top_level():
    soup = BeautifulSoup("<h2 id='a'>A</h2><p>one</p><h2 id='b'>B</h2><p>two</p>", "lxml")
    assert normalize(section_text(soup, "a")) == "aone"
    assert normalize(section_text(soup, "b")) == "btwo"


# --- validate_golden ---------------------------------------------------------------------------

def test_validate_fixture_is_clean():
    assert validate_golden(GOLDEN, CORPUS) == []


BAD_LINES = [
    ("{not json", "golden.jsonl:2: invalid JSON"),
    ("[1, 2]", "golden.jsonl:2: a line must be a JSON object"),
    ({k: v for k, v in GOOD.items() if k != "evidence"} | {"id": "b"},
     "golden.jsonl:2: missing field 'evidence'"),
    ({**GOOD, "id": 7}, "golden.jsonl:2: field 'id' has the wrong type (int)"),
    ({**GOOD, "id": "b", "kind": "trivia"}, "golden.jsonl:2: kind 'trivia' is not one of"),
    ({**GOOD, "id": "b", "split": "train"}, "golden.jsonl:2: split 'train' is not one of"),
    (GOOD, "golden.jsonl:2: duplicate id 'ok'"),
    ({**GOOD, "id": "b", "evidence": "Day of month"},
     "golden.jsonl:2: evidence has 3 words; it must have 4-20"),
    ({**GOOD, "id": "b", "evidence": " ".join(["word"] * 21)},
     "golden.jsonl:2: evidence has 21 words; it must have 4-20"),
    ({**GOOD, "id": "b", "kind": "unanswerable"},
     "golden.jsonl:2: an unanswerable question must have doc, section and evidence all null"),
    ({**GOOD, "id": "b", "section": None},
     "golden.jsonl:2: a 'table' question needs doc, section and evidence (none may be null)"),
    ({**GOOD, "id": "b", "doc": "library/missing.html"},
     f"golden.jsonl:2: doc 'library/missing.html' not found under {CORPUS}"),
    ({**GOOD, "id": "b", "section": "no-such-section"},
     "golden.jsonl:2: no element with id 'no-such-section' in library/datetime.html"),
    ({**GOOD, "id": "b", "evidence": "Weekday as locale's full name."},
     "golden.jsonl:2: evidence not found in section 'format-codes' of library/datetime.html"),
    ({**GOOD, "id": "b", "section": "examples"},   # right page, wrong section
     "golden.jsonl:2: evidence not found in section 'examples' of library/datetime.html"),
    ({**GOOD, "id": "b", "evidence": "strftime accepts a hidden script phrase",
      "section": "module-datetime"},
     "golden.jsonl:2: evidence not found in section 'module-datetime' of library/datetime.html"),
    ({**GOOD, "id": "b", "evidence": "Format Codes The following is a list"},  # heading into paragraph
     "golden.jsonl:2: evidence spans two blocks in section 'format-codes'"),
    ({**GOOD, "id": "b", "evidence": "abbreviated name. %d Day of the month"},  # across two cells
     "golden.jsonl:2: evidence spans two blocks in section 'format-codes'"),
    ({**GOOD, "id": "b", "section": "module-datetime"},   # the quote is in its inner section format-codes
     "golden.jsonl:2: evidence lies in the inner section 'format-codes' of section 'module-datetime'"),
    ({**GOOD, "id": "b", "also": [{"doc": "flat.html", "evidence": "no such words on that page"}]},
     "golden.jsonl:2: also: evidence not found in flat.html"),
    ({**GOOD, "id": "b", "also": [{"doc": "../outside.html", "evidence": "one two three four"}]},
     "golden.jsonl:2: also: doc '../outside.html' points outside the corpus"),
    ({**GOOD, "id": "b", "also": [{"doc": "flat.html"}]},
     "golden.jsonl:2: each 'also' entry must be"),
    ({**GOOD, "id": "b", "also": [{"doc": "flat.html", "evidence": "too short"}]},
     "golden.jsonl:2: also: evidence has 2 words"),
]


@pytest.mark.parametrize("bad, message", BAD_LINES)
def test_validate_reports_each_kind_of_bad_line(tmp_path, bad, message):
    errors = validate_golden(write_golden(tmp_path, GOOD, bad), CORPUS)
    assert len(errors) == 1
    assert errors[0].startswith(message)


def test_validate_accepts_evidence_through_entities_and_spacing(tmp_path):
    lines = [{**GOOD, "id": "a", "evidence": "Weekday as locale’s abbreviated name."},
             {**GOOD, "id": "b", "section": "examples", "kind": "code",
              "evidence": 'os . path . join("a", "b") &amp;&amp; done'},
             {**GOOD, "id": "c", "section": "format-codes", "kind": "exact",
              "evidence": "THE FOLLOWING is   a list of all"}]
    assert validate_golden(write_golden(tmp_path, *lines), CORPUS) == []


def test_validate_reports_every_bad_line_and_continues(tmp_path):
    path = write_golden(tmp_path, "{oops", GOOD, {**GOOD, "id": "x", "kind": "nope"}, GOOD)
    errors = validate_golden(path, CORPUS)
    assert [e.split(":")[1] for e in errors] == ["1", "3", "4"]


def test_validate_parses_each_page_once(tmp_path, monkeypatch):
    calls = []
    real = golden_checks.visible_soup
    monkeypatch.setattr(golden_checks, "visible_soup", lambda html: calls.append(1) or real(html))
    lines = [{**GOOD, "id": str(i)} for i in range(4)]
    assert validate_golden(write_golden(tmp_path, *lines), CORPUS) == []
    assert calls == [1]


def test_an_also_place_is_read_and_validated_on_its_own_page(tmp_path):
    line = {**GOOD, "also": [{"doc": "./library/datetime.html",
                              "evidence": "Use Tom & Jerry style names only"}]}
    path = write_golden(tmp_path, line)
    assert validate_golden(path, CORPUS) == []
    (q,) = load_golden(path)
    assert q.also == (Place("./library/datetime.html", "Use Tom & Jerry style names only"),)


def test_an_unanswerable_question_has_no_also_place(tmp_path):
    line = {**GOOD, "kind": "unanswerable", "doc": None, "section": None, "evidence": None,
            "also": [{"doc": "flat.html", "evidence": "one two three four"}]}
    with pytest.raises(GoldenError, match="no 'also'"):
        load_golden(write_golden(tmp_path, line))


def test_a_drafted_line_with_an_empty_question_is_invalid(tmp_path):
    from course_lib.evaluation.golden import load_golden
    from course_lib.infra.errors import GoldenError

    line = ('{"id": "d1", "question": "  ", "doc": "a.html", "section": "s", '
            '"evidence": "one two three four", "kind": "paraphrase"}\n')
    path = tmp_path / "draft.jsonl"
    path.write_text(line)
    with pytest.raises(GoldenError, match="question is empty"):
        load_golden(path)


# --- answer units: fragments -------------------------------------------------------------------

def test_fragments_are_read_for_the_gold_place_and_each_also_place(tmp_path):
    line = {**GOOD, "fragments": ["%d"],
            "also": [{"doc": "library/datetime.html", "evidence": "Weekday as locale’s abbreviated name.",
                      "fragments": ["%a"]}]}
    path = write_golden(tmp_path, line)
    assert validate_golden(path, CORPUS) == []
    (q,) = load_golden(path)
    assert q.unit == ("Day of the month as a zero-padded decimal number.", "%d")
    assert q.also[0].unit == ("Weekday as locale’s abbreviated name.", "%a")


@pytest.mark.parametrize("bad, message", [
    ({**GOOD, "fragments": ["%Q"]}, "fragment '%Q' not found in section 'format-codes'"),
    ({**GOOD, "fragments": ["%a"]},   # on the page, but in another row: not this answer's unit
     "fragments are not in the quote's block or table row in section 'format-codes'"),
    ({**GOOD, "fragments": "%d"}, "field 'fragments' must be a list of non-empty strings"),
    ({**GOOD, "fragments": [""]}, "field 'fragments' must be a list of non-empty strings"),
    ({**GOOD, "fragmets": ["%d"]}, "unknown field 'fragmets'"),
    ({**GOOD, "also": [{"doc": "library/datetime.html", "evidence": "Weekday as locale’s abbreviated name.",
                        "fragments": ["%d"]}]},
     "also: fragments are not in the quote's block or table row in library/datetime.html"),
])
def test_validate_refuses_a_fragment_outside_its_answer_unit(tmp_path, bad, message):
    errors = validate_golden(write_golden(tmp_path, bad), CORPUS)
    assert len(errors) == 1 and errors[0].startswith(f"golden.jsonl:1: {message}"), errors


def test_an_unanswerable_question_has_no_fragments(tmp_path):
    line = {**GOOD, "kind": "unanswerable", "doc": None, "section": None, "evidence": None,
            "fragments": ["%d"]}
    with pytest.raises(GoldenError, match="no 'also' or 'fragments'"):
        load_golden(write_golden(tmp_path, line))


def test_a_definition_term_and_its_definition_are_one_answer_unit():
    soup = BeautifulSoup("<dl><dt>read_fwf</dt><dd><p>Read fixed-width lines.</p></dd>"
                         "<dt>read_csv</dt><dd><p>Read comma-separated values.</p></dd></dl>", "lxml")
    assert golden_checks.fragments_problem("Read fixed-width lines.", ["read_fwf"], [soup], "p") is None
    assert golden_checks.fragments_problem("Read comma-separated values.", ["read_fwf"], [soup], "p") \
        .startswith("fragments are not in the quote's block or table row in p")
