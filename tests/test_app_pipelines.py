"""The command line finds a course pipeline in the core registry, and a peer only when asked for one."""
import subprocess
import sys

import pytest

from course_lib.app import inputs
from course_lib.infra.errors import UsageError

PROBE = """
import sys
from course_lib.app import inputs
inputs.pipeline_name("naive"), inputs.describe_pipeline("reranked")
print(sorted(m for m in sys.modules if m.startswith("course_lib.extras")))
"""


def test_a_course_pipeline_is_named_and_described_without_importing_the_peers():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"  # the walk of `ask --pipeline naive` never enters extras/


def test_a_peer_is_found_and_described_and_an_unknown_name_lists_both_kinds():
    assert inputs.pipeline_name("peer:trafilatura") == "peer:trafilatura"
    assert inputs.describe_pipeline("peer:trafilatura").startswith("peer:trafilatura: lesson 10's peer, chunked by")
    with pytest.raises(UsageError, match="unknown pipeline 'peer:nope'") as raised:
        inputs.pipeline_name("peer:nope")
    assert "naive" in raised.value.hint and "peer:docling" in raised.value.hint
    with pytest.raises(UsageError, match="unknown pipeline 'hybird'"):
        inputs.pipeline_name("hybird")
