"""The verdict check on small synthetic notebooks: hand-written verdicts fail, rendered ones pass."""
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def claims():
    import check_claims  # scripts/check_claims.py (tests/conftest.py puts scripts/ on the path)

    return check_claims


def notebook(*cells):
    return new_notebook(cells=list(cells))


def test_a_verdict_with_no_code_cell_is_flagged(claims):
    nb = notebook(new_markdown_cell("## Results\n\nHybrid retrieval **helps**: it is clearly better on recall@5."))
    [flag] = claims.flag_cells(nb, name="bad.ipynb")
    assert flag.cell == 0 and flag.words == ("helps", "better")
    assert flag.line.startswith("Hybrid retrieval") and "no code cell" in flag.why


def test_a_verdict_backed_by_an_unrelated_assert_is_flagged(claims):
    unrelated = notebook(new_code_cell("assert len(chunks) > 100 and run.recall_at(20) > 0.5"),
                         new_markdown_cell("Re-ranking improves MRR on dev."))
    [flag] = claims.flag_cells(unrelated)
    assert flag.words == ("improves",)
    nameless = notebook(new_code_cell("assert c.delta > 0"), new_markdown_cell("So the context line helped."))
    assert [f.words for f in claims.flag_cells(nameless)] == [("helped",)]  # which quantity? none named


def test_a_verdict_word_typed_into_code_is_flagged(claims):
    typed = notebook(new_code_cell('print("BM25 beats dense search on exact names")'))
    [flag] = claims.flag_cells(typed)
    assert flag.words == ("beats",) and "typed" in flag.why
    rendered = notebook(new_code_cell('print(f"{word(c)}: {c.delta:+.3f}")\nlabel = "gain"'))
    assert claims.flag_cells(rendered) == []  # f-strings render figures; one bare word is a key


def test_a_verdict_rendered_or_asserted_on_the_same_quantity_passes(claims):
    rendered_after = notebook(new_markdown_cell("Is the gain on recall@5 significant, or no difference?"),
                              new_code_cell("verdict(paired_comparison(dense, hybrid), what='RRF')"))
    mrr_rendered = notebook(new_markdown_cell("Does re-ranking improve MRR?"),
                            new_code_cell("verdict_table([paired_comparison(a, b, metric='mrr')])"))
    asserted = notebook(new_code_cell("c = paired_comparison(a, b, metric='mrr')\nassert c.p < 0.05  # mrr"),
                        new_markdown_cell("Re-ranking improves MRR."))
    latency = notebook(new_markdown_cell("The cache makes a repeat faster: p50 below 1 ms."),
                       new_code_cell("assert timings['p50 cached'] < 0.001"))
    table_after = notebook(new_markdown_cell("Which technique is the winner?"), new_markdown_cell("(see below)"),
                           new_code_cell("technique_table(effects)"))
    for nb in (rendered_after, mrr_rendered, asserted, latency, table_after):
        assert claims.flag_cells(nb) == [], nb


def test_the_main_verdict_table_and_the_decision_line_render_verdicts(claims):
    table = notebook(new_markdown_cell("Cleaning alone: we cannot tell on recall@5."),
                     new_code_cell("main_verdict_table(headline, holm=False)"))
    decision = notebook(new_code_cell("decision_line('splitting', {'dev MRR': step['mrr']})"),
                        new_markdown_cell("Each step is equivalent on MRR."))
    other = notebook(new_code_cell("decision_line('splitting', {'dev recall@5': c})  # metric='recall@5'"),
                     new_markdown_cell("Splitting is equivalent on MRR."))
    assert claims.flag_cells(table) == [] and claims.flag_cells(decision) == []
    assert [f.words for f in claims.flag_cells(other)] == [("equivalent",)]


def test_a_rendered_verdict_on_another_metric_does_not_back_the_sentence(claims):
    nb = notebook(new_markdown_cell("Re-ranking improves MRR."),
                  new_code_cell("verdict(paired_comparison(a, b, metric='recall@5'))"))
    assert [f.words for f in claims.flag_cells(nb)] == [("improves",)]


def test_only_the_nearest_code_cells_count(claims):
    nb = notebook(new_code_cell("verdict(c)"), new_code_cell("x = 1"),
                  new_markdown_cell("It improves recall."), new_code_cell("y = 2"))
    assert len(claims.flag_cells(nb)) == 1


def test_whole_words_only_and_case_insensitive(claims):
    assert claims.verdict_words("Bettering the gainsay, a winsome significance.") == []
    assert [w for w, _ in claims.verdict_words("SIGNIFICANTLY Better; no\ndifference; No   difference")] == [
        "significantly", "better", "no difference"]
    assert [w for w, _ in claims.verdict_words("the winner; an improvement; it costs 3 ms; Outperforms")] == [
        "winner", "improvement", "costs", "outperforms"]


def test_source_quotes_code_and_blockquotes_are_exempt(claims):
    text = ("> Hybrid retrieval helps a lot.\n"
            "The production write-up says re-ranking improved precision.\n"
            "The chunking lesson says structure beats character counts.\n"
            "The `better_than` helper and\n```python\nassert gain > 0  # helps\n```\n")
    assert claims.verdict_words(text) == []


def test_headings_and_questions_state_no_verdict_but_answers_do(claims):
    text = ("## 8. What it costs per query\n"
            "- Why can an overlap of one block not help a question? Because the block is whole.\n"
            "**Could you tell a 0.03 improvement from noise?** No: re-ranking helps here.\n")
    assert [w for w, _ in claims.verdict_words(text)] == ["helps"]


def test_cli_exit_status_and_counts(claims, tmp_path, capsys):
    bad, good = tmp_path / "bad.ipynb", tmp_path / "good.ipynb"
    nbformat.write(notebook(new_markdown_cell("Re-ranking hurts.")), bad)
    nbformat.write(notebook(new_markdown_cell("Re-ranking hurts?"), new_code_cell("verdict(c)")), good)
    assert claims.main([str(good)]) == 0
    assert claims.main([str(bad), str(good)]) == 1
    assert "bad.ipynb: cell 0: hurts (no code cell beside it renders or asserts it): Re-ranking hurts." in (
        capsys.readouterr().out)
    assert claims.main(["--count", str(bad), str(good)]) == 0
    out = capsys.readouterr().out
    assert f"   1  {bad}" in out and f"   0  {good}" in out


def test_every_lesson_and_solution_states_its_verdicts_from_data(claims):
    """The contract on the real course: no Markdown cell of any lesson or worked solution states
    a measured verdict in hand-written words without a rendered figure or assertion beside it, and
    no committed output prints an interval that contradicts the word beside it."""
    paths = sorted((ROOT / "notebooks").rglob("*.ipynb"))
    paths = [p for p in paths if ".ipynb_checkpoints" not in p.parts]
    assert len(paths) >= 20  # every lesson and its solutions, not an empty glob
    flags = [flag for found in claims.check_paths(paths, intervals=True).values() for flag in found]
    assert not flags, "\n".join(f"{f.notebook}: cell {f.cell}: {', '.join(f.words)}: {f.line}" for f in flags)


# --- printed intervals against their words (--intervals) --------------------------------------

def printed(text: str, *, mime: str = "text/markdown"):
    """A code cell that rendered `verdict(...)` and printed `text`."""
    cell = new_code_cell("verdict(c)")
    cell.outputs = [nbformat.v4.new_output("display_data", data={mime: text, "text/plain": text})]
    return cell


ROW = ('<table><tbody><tr class="cl-none"><td>hybrid against dense</td><td>recall@5</td>'
       "<td>+0.020 [{lo}, {hi}] ({level}%)</td><td>9 wins / 5 losses</td>"
       "<td>exact McNemar, Holm p {p} over 3</td><td><b>{word}</b></td></tr></tbody></table>"
       "<p><i>One primary Holm family: x (3 comparisons); equivalence margin ±0.05.</i></p>")


def row(lo: str, hi: str, word: str, *, level: str = "98.3", p: str = "= 0.42"):
    """A code cell that printed one `verdict_table` row."""
    return printed(ROW.format(lo=lo, hi=hi, word=word, level=level, p=p), mime="text/html")


def test_a_printed_interval_that_contradicts_its_word_is_flagged(claims):
    sentence = ("**RRF against dense, recall@5:** 0.817 → 0.887, +0.020 [−0.012, +0.057] (95% interval), "
                "9 wins / 5 losses, exact McNemar p = 0.42: equivalent: shown within ±0.05 (two one-sided "
                "tests, p = 0.03), on 194 questions.")
    [flag] = claims.interval_flags(notebook(printed(sentence)), name="bad.ipynb")
    assert flag.cell == 0 and flag.words == ("equivalent",) and "past ±0.05" in flag.why
    assert claims.flag_cells(notebook(printed(sentence))) == []  # only --intervals reads outputs
    [flag] = claims.interval_flags(notebook(row("+0.004", "+0.036", "cannot tell")))
    assert "clear of 0" in flag.why
    gain = row("−0.004", "+0.036", "gain", p="= 0.04")
    assert [f.why for f in claims.interval_flags(notebook(gain))] == ["a gain beside an interval that reaches 0"]


def test_a_printed_interval_that_agrees_with_its_word_passes(claims):
    sentence = ("**RRF against dense, recall@5:** 0.817 → 0.827, +0.010 [−0.031, +0.049] (90% interval), "
                "9 wins / 7 losses, exact McNemar p = 0.8: equivalent: shown within ±0.05 (two one-sided "
                "tests, p = 0.03), on 194 questions.")
    cells = [printed(sentence), row("−0.030", "+0.071", "cannot tell"),
             row("+0.000", "+0.036", "gain", p="= 0.04"),  # rounds to 0
             row("−0.090", "−0.010", "loss", p="&lt; 0.001")]
    assert claims.interval_flags(notebook(*cells)) == []


def test_the_rendered_verdicts_agree_with_their_intervals(claims):
    """What `verdict` and `verdict_table` print passes the interval check, word by word."""
    import numpy as np

    from course_lib.evaluation.compare import compare_values, holm_adjust
    from course_lib.evaluation.verdicts import (
        holm_columns,
        interval_text,
        technique_table,
        verdict,
        verdict_table,
        word,
    )

    rng = np.random.default_rng(3)
    comparisons = []
    for size, gained, lost in ((200, 0.3, 0.0), (200, 0.0, 0.3), (400, 0.02, 0.02), (40, 0.1, 0.0)):
        a = rng.random(size) < 0.6
        b = (a | (rng.random(size) < gained)) & ~(rng.random(size) < lost)
        comparisons.append(compare_values(a, b, metric="recall@5"))
    html = verdict_table(comparisons).data
    assert {"gain", "loss", "equivalent", "cannot tell"} <= {w for w, _, _ in claims._pairs(html, claims._HTML_WORD)}
    family = holm_adjust(comparisons, family="x")
    effects = holm_columns([(f"step {i}", c, c) for i, c in enumerate(comparisons)])
    lesson_09 = "; ".join(f"step {i}, {interval_text(c)}, **{word(c)}**" for i, c in enumerate(family))
    cells = ([printed(html, mime="text/html"), printed(technique_table(effects).data, mime="text/html"),
              printed(lesson_09)] + [printed(str(verdict(c))) for c in comparisons + family])
    assert claims.interval_flags(notebook(*cells)) == []
    assert {p.word for p in claims.read_printed(lesson_09, claims._TEXT_WORD)} == {
        "gain", "loss", "equivalent", "cannot tell"}


def test_cli_intervals_flag(claims, tmp_path, capsys):
    bad = tmp_path / "bad.ipynb"
    nbformat.write(notebook(row("+0.004", "+0.036", "cannot tell")), bad)
    assert claims.main([str(bad)]) == 0  # the prose check alone reads no outputs
    assert claims.main(["--intervals", str(bad)]) == 1
    assert "cannot tell beside [+0.004, +0.036]" in capsys.readouterr().out


def test_a_takeaway_is_backed_by_any_assert_in_its_lesson_on_the_same_quantity(claims):
    takeaway = new_markdown_cell("# 07 · Re-ranking\n\n**Takeaway**\n\n- Found: re-ranking improves MRR.")
    later = [new_code_cell("show_pipeline('rerank')"), new_markdown_cell("## 1. A shortlist"),
             new_code_cell("x = 1"), new_code_cell("mrr = paired_comparison(a, b, metric='mrr')\nassert word(mrr) == GAIN")]
    assert claims.flag_cells(notebook(takeaway, *later)) == []
    unrelated = [*later[:3], new_code_cell("assert run.recall_at(5) > 0.5")]
    assert [f.words for f in claims.flag_cells(notebook(takeaway, *unrelated))] == [("improves",)]
    plain = new_markdown_cell("Re-ranking improves MRR.")  # not a takeaway: only its neighbours count
    assert [f.words for f in claims.flag_cells(notebook(plain, *unrelated[:3], later[3]))] == [("improves",)]


# --- lesson 09's ", **word**", the level beside an interval, the word's own p, the README ------

def test_a_bold_word_after_a_comma_is_read_with_its_interval(claims):
    line = ("**The whole course.** recall@5 +0.091 [+0.018, +0.165] (97.5%), **gain** (30 questions); "
            "05 token limits on recall@5, +0.015 [−0.016, +0.047] (90%), **equivalent**.")
    assert [(p.word, p.lo, p.level) for p in claims.read_printed(line, claims._TEXT_WORD)] == [
        ("gain", "+0.018", "97.5"), ("equivalent", "−0.016", "90")]
    assert claims.interval_flags(notebook(printed(line))) == []
    bad = line.replace("[+0.018,", "[−0.018,").replace("+0.047] (90%)", "+0.057] (90%)")
    assert [(f.words, f.why) for f in claims.interval_flags(notebook(printed(bad)))] == [
        (("gain",), "a gain beside an interval that reaches 0"),
        (("equivalent",), "equivalent beside an interval that reaches past ±0.05")]
    loose = "+0.091 [−0.018, +0.165] (97.5%) on 197 questions. The verdict is **gain**."
    assert claims.interval_flags(notebook(printed(loose))) == []  # no comma: not the printed form


def test_a_level_that_cannot_be_the_word_s_is_flagged(claims):
    equivalent = "steps, +0.015 [−0.016, +0.047] ({}), **equivalent**"
    [flag] = claims.interval_flags(notebook(printed(equivalent.format("85%"))))
    assert flag.words == ("equivalent",) and "85% interval" in flag.why and "90%" in flag.why
    assert flag.line == "equivalent beside [−0.016, +0.047] (85%)"
    # in a Holm family the two one-sided tests stand at 1 - 0.1 / j: 95%, 96.7%, 97.5%, ... never 97.2%
    [flag] = claims.interval_flags(notebook(printed(equivalent.format("97.2%"))))
    assert "97.2% interval" in flag.why and "1 − 0.1/j" in flag.why
    gain = row("+0.010", "+0.090", "gain", level="90", p="= 0.01")
    [flag] = claims.interval_flags(notebook(gain))
    assert flag.why.startswith("a gain beside a 90% interval") and "95% or more" in flag.why
    passing = [printed(equivalent.format("90%")), printed(equivalent.format("96.7%")),  # Holm step 3
               printed(equivalent.format("99.2%")), row("+0.010", "+0.090", "gain", level="95", p="= 0.01"),
               row("−0.090", "−0.010", "loss", level="97.5", p="= 0.01"),
               row("−0.060", "+0.070", "cannot tell", level="90"),  # widened to the equivalence interval
               row("−0.060", "+0.070", "cannot tell", level="99.6"),
               printed("+0.015 [−0.016, +0.047], 9 vs 7 questions: equivalent<br><small>95% interval</small>")]
    assert claims.interval_flags(notebook(*passing)) == []  # a level counts only beside its interval


def test_a_gain_or_a_loss_whose_own_p_is_not_below_alpha_is_flagged(claims):
    [flag] = claims.interval_flags(notebook(row("+0.010", "+0.090", "gain", p="= 0.42")))
    assert flag.why == "a gain beside Holm p = 0.42, not below 0.05"
    small_print = ("**a against b, recall@5:** 0.70 → 0.80, +0.100 [+0.020, +0.180], 30 vs 10 questions: gain"
                   "<br><small>95% interval · exact McNemar p = 0.31; equivalence margin ±0.05</small>")
    [flag] = claims.interval_flags(notebook(printed(small_print)))
    assert flag.why == "a gain beside p = 0.31, not below 0.05" and flag.line.endswith(", p = 0.31")
    passing = [row("+0.010", "+0.090", "gain", p="= 0.05"),  # 0.0496 prints as 0.05
               row("−0.090", "−0.010", "loss", p="&lt; 0.001"), row("+0.010", "+0.090", "gain", p="≤ 0.0002"),
               printed(small_print.replace("p = 0.31", "p &lt; 0.001")),
               printed(small_print.replace("exact McNemar p = 0.31", "two one-sided tests, p = 0.31")),  # TOST
               printed(small_print.replace("p = 0.31", "Holm p = 0.01 over 3, p = 0.31")),  # its Holm p
               printed(small_print.replace("p = 0.31", "Holm p = 0.01, Holm p = 0.31")),  # which one?
               printed("+0.067 [+0.011, +0.125] (99.6%), **gain**. MRR: Holm p = 0.4 over 3.")]  # next sentence
    assert claims.interval_flags(notebook(*passing)) == []


def test_no_verdict_beside_a_holm_p_below_alpha_and_an_interval_clear_of_0(claims):
    [flag] = claims.interval_flags(notebook(row("+0.005", "+0.046", "equivalent", level="90", p="= 0.01")))
    assert flag.why == "equivalent beside Holm p = 0.01, below 0.05, and an interval clear of 0"
    sentence = "+0.026 [+0.005, +0.046] (90%), **equivalent**<br><small>exact McNemar Holm p &lt; 0.001</small>"
    [flag] = claims.interval_flags(notebook(printed(sentence)))  # "&lt;" ends no sentence
    assert "Holm p &lt; 0.001" in flag.why
    cannot_tell = claims.interval_flags(notebook(row("+0.004", "+0.036", "cannot tell", p="= 0.02")))
    assert "Holm p = 0.02" in cannot_tell[0].why
    passing = [row("+0.005", "+0.046", "equivalent", level="90", p="= 0.2"),
               row("−0.005", "+0.046", "equivalent", level="90", p="= 0.01"),  # contains 0: not both facts
               row("+0.005", "+0.046", "equivalent", level="90", p="= 0.05"),  # may be 0.0504
               printed(sentence.replace("Holm p", "p"))]  # an uncorrected p below 0.05 may pass Holm
    assert claims.interval_flags(notebook(*passing)) == []


def test_each_word_of_a_technique_row_reads_its_own_p(claims):
    cells = ("<td>+0.040 [+0.010, +0.070] (99.6%)</td><td>20 wins / 5 losses, Holm p = {dev}</td><td><b>gain</b></td>"
             "<td>+0.010 [−0.020, +0.060] (99.6%)</td><td>12 wins / 9 losses, Holm p = {test}</td>"
             "<td><b>cannot tell</b></td>")
    table = "<table><tr><td>07 re-ranking</td>{}</tr></table>"
    assert claims.interval_flags(notebook(printed(table.format(cells.format(dev="0.01", test="0.6")),
                                                  mime="text/html"))) == []
    flags = claims.interval_flags(notebook(printed(table.format(cells.format(dev="0.6", test="0.01")),
                                                   mime="text/html")))
    assert [f.line for f in flags] == ["gain beside [+0.010, +0.070] (99.6%), Holm p = 0.6"]


README = """# Course

| on the test split | naive | final | difference [interval the verdict rests on] | better / worse | verdict |
|---|---|---|---|---|---|
| recall@5 | 0.76 | 0.85 | +0.09 [{lo}, +0.17] {level} | 30 / 12 | **gain** |
| recall@20 | 0.91 | 0.94 | +0.03 [−0.02, +0.07] 95% | 11 / 6 | **cannot tell** |

Each verdict is decided by its paired test; a gain or a loss lies clear of 0 and "cannot tell" contains it.
"""


def test_the_readme_is_read_for_intervals_levels_and_p_only(claims, tmp_path, capsys):
    assert claims.markdown_flags(README.format(lo="+0.02", level="97.5%")) == []
    [flag] = claims.markdown_flags(README.format(lo="−0.02", level="97.5%"), name="README.md")
    assert (flag.unit, flag.cell, flag.words) == ("line", 5, ("gain",)) and "reaches 0" in flag.why
    [flag] = claims.markdown_flags(README.format(lo="+0.02", level="90%"))
    assert "90% interval" in flag.why
    readme = tmp_path / "README.md"
    readme.write_text(README.format(lo="−0.02", level="97.5%"), encoding="utf-8")
    assert claims.check_paths([readme]) == {str(readme): []}  # no code cells: the prose rule does not apply
    assert claims.main(["--intervals", str(readme)]) == 1
    assert f"{readme}: line 5: gain (a gain beside an interval that reaches 0)" in capsys.readouterr().out
    assert claims.default_paths(ROOT, intervals=True)[-1] == ROOT / "README.md"
    assert ROOT / "README.md" not in claims.default_paths(ROOT, intervals=False)


def test_the_readme_findings_agree_with_their_intervals(claims):
    """The README's rendered headline (scripts/update_readme.py) passes the interval check."""
    path = ROOT / "README.md"
    assert claims.check_paths([path], intervals=True) == {str(path): []}
