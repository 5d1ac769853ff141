"""The verdict check on small synthetic notebooks: hand-written verdicts fail, rendered ones pass."""
import importlib.util
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def claims():
    spec = importlib.util.spec_from_file_location("check_claims", ROOT / "scripts" / "check_claims.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_claims"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def notebook(*cells):
    return new_notebook(cells=list(cells))


def test_hand_written_verdict_is_flagged(claims):
    nb = notebook(new_code_cell("run = evaluate_retriever(r, qs, name='x')"),
                  new_markdown_cell("## Results\n\nHybrid retrieval **helps**: it is clearly better."),
                  new_code_cell("metrics_table([run])"))
    [flag] = claims.flag_cells(nb, name="bad.ipynb")
    assert flag.cell == 1 and flag.words == ("helps", "better")
    assert flag.line.startswith("Hybrid retrieval")


def test_verdict_rendered_or_asserted_next_to_it_passes(claims):
    rendered_after = notebook(new_markdown_cell("Is the gain significant? No difference, or a real one?"),
                              new_code_cell("verdict(paired_comparison(dense, hybrid), what='RRF')"))
    asserted_before = notebook(new_code_cell("c = paired_comparison(a, b)\nassert c.delta > 0 and c.lo > 0"),
                               new_markdown_cell("So the context line helped."))
    table_after = notebook(new_markdown_cell("Which technique wins?"), new_markdown_cell("(see below)"),
                           new_code_cell("technique_table(effects)"))
    for nb in (rendered_after, asserted_before, table_after):
        assert claims.flag_cells(nb) == []


def test_an_assert_without_a_figure_does_not_back_a_verdict(claims):
    nb = notebook(new_code_cell("assert run is not None"), new_markdown_cell("BM25 beats dense on names."))
    assert [f.words for f in claims.flag_cells(nb)] == [("beats",)]


def test_only_the_nearest_code_cells_count(claims):
    nb = notebook(new_code_cell("verdict(c)"), new_code_cell("x = 1"),
                  new_markdown_cell("It improves recall."), new_code_cell("y = 2"))
    assert len(claims.flag_cells(nb)) == 1


def test_whole_words_only_and_case_insensitive(claims):
    assert claims.verdict_words("Bettering the gains, a winsome significance.") == []
    assert [w for w, _ in claims.verdict_words("SIGNIFICANTLY Better; no\ndifference; No   difference")] == [
        "significantly", "better", "no difference"]


def test_source_quotes_code_and_blockquotes_are_exempt(claims):
    text = ("> Hybrid retrieval helps a lot.\n"
            "The production write-up says re-ranking improved precision.\n"
            "The chunking lesson says structure beats character counts.\n"
            "The `better_than` helper and\n```python\nassert gain > 0  # helps\n```\n")
    assert claims.verdict_words(text) == []


def test_cli_exit_status_and_counts(claims, tmp_path, capsys):
    bad, good = tmp_path / "bad.ipynb", tmp_path / "good.ipynb"
    nbformat.write(notebook(new_markdown_cell("Re-ranking hurts.")), bad)
    nbformat.write(notebook(new_markdown_cell("Re-ranking hurts?"), new_code_cell("verdict(c)")), good)
    assert claims.main([str(good)]) == 0
    assert claims.main([str(bad), str(good)]) == 1
    assert "bad.ipynb: cell 0: hurts: Re-ranking hurts." in capsys.readouterr().out
    assert claims.main(["--count", str(bad), str(good)]) == 0
    out = capsys.readouterr().out
    assert f"   1  {bad}" in out and f"   0  {good}" in out


def test_every_lesson_and_solution_states_its_verdicts_from_data(claims):
    """The contract on the real course: no Markdown cell of any lesson or worked solution states
    a measured verdict in hand-written words without a rendered figure or assertion beside it."""
    paths = sorted((ROOT / "notebooks").rglob("*.ipynb"))
    paths = [p for p in paths if ".ipynb_checkpoints" not in p.parts]
    assert len(paths) >= 20  # every lesson and its solutions, not an empty glob
    flags = [flag for found in claims.check_paths(paths).values() for flag in found]
    assert not flags, "\n".join(f"{f.notebook}: cell {f.cell}: {', '.join(f.words)}: {f.line}" for f in flags)
