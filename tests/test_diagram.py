"""The pipeline picture every lesson opens with."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from course_lib.extras.diagram import STAGE_KEYS, STAGES, pipeline_figure  # noqa: E402


def box_styles(figure):
    boxes = [p for p in figure.axes[0].patches if isinstance(p, FancyBboxPatch)]
    return [(round(b.get_linewidth(), 1), b.get_facecolor()) for b in boxes]


def test_the_named_stages_and_only_they_are_highlighted():
    figure = pipeline_figure("chunk", "limit")
    styles = box_styles(figure)
    assert len(styles) == len(STAGES) + 1  # the row and the judge under it
    thick = [i for i, (width, _) in enumerate(styles) if width > 2]
    assert thick == [STAGE_KEYS.index("chunk"), STAGE_KEYS.index("limit")]
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert "chunk by\nstructure" in texts and any(t.startswith("golden set + judge") for t in texts)


def test_the_judge_can_be_the_highlight_and_a_typo_is_refused():
    styles = box_styles(pipeline_figure("judge"))
    assert [w > 2 for w, _ in styles] == [False] * len(STAGES) + [True]
    with pytest.raises(ValueError, match="unknown pipeline stage.*'chunks'.*the stages are"):
        pipeline_figure("chunks")
