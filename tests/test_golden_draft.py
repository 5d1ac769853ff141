"""golden-draft: sampled, quotable evidence on one page, one per section, questions left blank."""
import json

from course_lib.app.cli import main
from course_lib.extras import golden_draft as gd
from course_lib.records import Block


def block(kind, text, section="s1"):
    return Block(kind=kind, text=text, heading_path=("Page",), section_id=section)


def test_pieces_are_sentences_or_lines_of_four_to_twenty_words():
    prose = block("text", "Too short. This sentence has exactly six words. " + "Word " * 25)
    assert gd.candidate_pieces(prose) == ["This sentence has exactly six words."]
    code = block("code", "x = 1\ndf.merge(other, on='key', how='left')  # keep all rows")
    assert gd.candidate_pieces(code) == ["df.merge(other, on='key', how='left')  # keep all rows"]


def test_pieces_are_the_chunkers_sentences_within_the_golden_evidence_limits():
    from course_lib.evaluation.golden import MAX_EVIDENCE_CHARS, evidence_problem

    abbreviation = block("text", "Sort by a key, e.g. Len or a lambda of your own.")
    assert gd.candidate_pieces(abbreviation) == ["Sort by a key, e.g. Len or a lambda of your own."]
    huge_word = "Five words then one " + "x" * MAX_EVIDENCE_CHARS + "."
    assert evidence_problem(huge_word) and gd.candidate_pieces(block("text", huge_word)) == []
    assert gd.candidate_pieces(block("code", huge_word)) == []


def test_kind_is_guessed_from_block_and_text():
    assert gd.guess_kind(block("table", "a | b"), "a b c d") == "table"
    assert gd.guess_kind(block("code", "x"), "x") == "code"
    assert gd.guess_kind(block("text", "x"), "Changed in version 1.5.0: sort is now stable") == "context"
    assert gd.guess_kind(block("text", "x"), "Pass how='left' to keep rows") == "exact"
    assert gd.guess_kind(block("text", "x"), "Missing values propagate through arithmetic") == "paraphrase"


def test_quotes_repeated_on_two_pages_are_never_proposed():
    shared = "This docstring sentence appears on both pages."
    blocks = {"a.html": [block("text", shared + " Only page a says this sentence here.")],
              "b.html": [block("text", shared)]}
    assert [p for _, _, p in gd.candidates(blocks)] == ["Only page a says this sentence here."]


def test_draft_spreads_over_pages_and_kinds_one_per_section():
    blocks = {f"p{i}.html": [block("text", f"Page {i} explains topic {i} in one sentence.", f"s{i}"),
                             block("text", f"Page {i} repeats section {i} with another sentence.", f"s{i}"),
                             block("code", f"result = df.method_{i}(axis=0, inplace=False)", f"c{i}")]
              for i in range(5)}
    drafts = gd.draft_golden(blocks, n=8)
    assert len(drafts) == 8
    assert len({(d.doc, d.section) for d in drafts}) == 8
    assert {d.kind for d in drafts} == {"paraphrase", "code"}
    assert all(d.question == "" for d in drafts)
    assert [d.split for d in drafts[:4]] == ["dev", "test", "dev", "test"]
    assert gd.draft_golden(blocks, n=8) == drafts  # seeded


def test_command_writes_drafts_and_never_overwrites(tmp_path, capsys):
    corpus = tmp_path / "site"
    corpus.mkdir()
    body = " ".join(f"Sentence number {i} describes one thing about page {{p}}." for i in range(30))
    for p in range(3):
        (corpus / f"p{p}.html").write_text(
            f"<html><body><main><section id='s{p}'><h1>Page {p}</h1><p>{body.format(p=p)}</p></section></main>"
            "</body></html>")
    out = tmp_path / "draft.jsonl"
    assert main(["golden-draft", "--corpus", str(corpus), "--out", str(out), "--n", "3"]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 3 and {d["doc"] for d in lines} == {"p0.html", "p1.html", "p2.html"}
    assert gd.unwritten(out) == [d["id"] for d in lines]
    assert main(["golden-draft", "--corpus", str(corpus), "--out", str(out)]) == 7
    assert "exists" in capsys.readouterr().err
