"""The chunk viewer as a picture: where each chunking cuts one page, and the cuts that tear a table."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from course_lib.extras import chunkview  # noqa: E402
from course_lib.records import Block  # noqa: E402

PAGE = [
    Block("heading", "Intro", ("Page", "Intro")),
    Block("text", "Some words before the table.", ("Page", "Intro")),
    Block("table", "Codes\nDirective: %a | Meaning: weekday\nDirective: %b | Meaning: month", ("Page", "Intro")),
    Block("heading", "Next", ("Page", "Next")),
    Block("text", "After it.", ("Page", "Next")),
]
TABLE = PAGE[2].text
# Windows cut wherever a size runs out: one cut falls between two rows of the table.
WINDOWS = ["Intro\n\nSome words before the table.\n\nCodes\nDirective: %a | Meaning: weekday",
           "Directive: %b | Meaning: month\n\nNext\n\nAfter it."]
STRUCTURED = [f"Intro\n\nSome words before the table.\n\n{TABLE}", "Next\n\nAfter it."]


def test_locate_folds_whitespace_and_finds_pieces_in_order():
    spans = chunkview.locate("a  b\n\nc d\ne", ["a b", "c d e"])
    assert spans == [(0, 3), (4, 9)]
    # an overlap: the second piece starts inside the first
    assert chunkview.locate("one two three", ["one two", "two three"]) == [(0, 7), (4, 13)]
    with pytest.raises(ValueError, match="piece 1 is not in the text"):
        chunkview.locate("one two", ["one", "rewritten"])


def test_a_cut_counts_only_strictly_inside_a_region():
    spans = [(0, 10), (10, 20), (25, 30)]
    assert chunkview.cuts_inside(spans, [(5, 15)]) == [10]
    assert chunkview.cuts_inside(spans, [(10, 25)]) == []  # cuts at a block's edges tear nothing


def test_the_figure_marks_the_window_that_tears_the_table_and_spares_the_structured_chunks():
    figure, inside = chunkview.cut_figure(PAGE, {"fixed windows": WINDOWS, "structured": STRUCTURED},
                                          title="toy")
    assert inside == {"fixed windows": 1, "structured": 0}
    ax = figure.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "the page's blocks"
    assert "fixed windows\n1 cut inside a table or code block" in labels[1]
    assert "structured\n0 cuts" in labels[2]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(boxes) == len(PAGE) + len(WINDOWS) + len(STRUCTURED)
    assert len([line for line in ax.lines if line.get_marker() == "v"]) == 1  # one red mark
    assert {t.get_text() for t in ax.texts} == {"Intro", "Next"}  # headings labelled


def test_focus_zooms_onto_a_block_and_an_unknown_focus_is_refused():
    figure, _ = chunkview.cut_figure(PAGE, {"structured": STRUCTURED}, focus="Directive: %b", around=5)
    start = len("Intro Some words before the table. ")
    assert figure.axes[0].get_xlim() == (start - 5, start + len(" ".join(TABLE.split())) + 5)
    with pytest.raises(ValueError, match="no block of the page holds"):
        chunkview.cut_figure(PAGE, {"structured": STRUCTURED}, focus="not on the page")
