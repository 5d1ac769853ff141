"""The final pipeline is frozen: what lesson 09 reads on the test split is the pipeline that was fixed."""
import pytest

from course_lib import settings
from course_lib.core.load import load_pages
from course_lib.evaluation import freeze

pytestmark = pytest.mark.model  # the chunker counts tokens with the model's tokenizer


@pytest.fixture(scope="module")
def pages():
    return load_pages()


def test_the_final_pipeline_matches_its_frozen_fingerprint(pages):
    record = freeze.frozen_record()
    assert record["pipeline"] == settings.FINAL_PIPELINE
    assert len(record["commit"]) == 40 and record["tag"].startswith("final-pipeline-")
    assert freeze.pipeline_fingerprint(pages) == record["fingerprint"], (
        "the final pipeline changed since it was frozen: if on purpose, write a new "
        "data/golden/frozen_pipeline.json (and tag), and treat test figures as exploration until confirmed")


def test_a_changed_setting_or_chunk_changes_the_fingerprint(pages, monkeypatch):
    few = pages[:5]
    before = freeze.pipeline_fingerprint(few)
    monkeypatch.setattr(settings, "RRF_K", settings.RRF_K + 1)
    assert freeze.pipeline_fingerprint(few) != before
    monkeypatch.undo()
    assert freeze.pipeline_fingerprint(few) == before
    assert freeze.pipeline_fingerprint(few[:4]) != before

