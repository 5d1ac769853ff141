"""The final pipeline, frozen before the test split is read: its fingerprint and the frozen record.

Dev chooses, test confirms once. To make "once" checkable, the final pipeline is frozen: its
fingerprint (every chunk it indexes, every setting it reads, the models it names) is written to
`data/golden/frozen_pipeline.json` with the git tag and commit it was frozen at. A test recomputes
the fingerprint; a change to parsing, chunking, fusion or re-ranking settings fails it, so the test
split's figures cannot silently come from a pipeline tuned after it was read. Changing the final
pipeline on purpose means writing a new record, and the lesson 09 headline then counts as new
exploration until it is confirmed on questions it has not seen.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from course_lib import settings
from course_lib.core.pipeline import structured_chunks
from course_lib.core.rerank import MAXSIM
from course_lib.infra.models import DEFAULT_EMBEDDER
from course_lib.infra.paths import REPO_ROOT
from course_lib.records import Page

FROZEN_RECORD = REPO_ROOT / "data" / "golden" / "frozen_pipeline.json"
# Every setting the final pipeline's chunks, retrieval and re-ranking read.
FROZEN_SETTINGS = ("STUB_MIN_CHARS", "BOILERPLATE_MAX_PAGE_SHARE", "BOILERPLATE_MIN_PAGES",
                   "CHUNK_OVERLAP_BLOCKS", "CHUNK_MARGIN_TOKENS", "PREFER_BLANK", "WINDOW_TOKENS",
                   "SPECIAL_TOKENS", "BM25_K1", "BM25_B", "RRF_K", "FUSION_CANDIDATES", "RERANK_TOP_N",
                   "RERANK_MAX_TOKENS", "FINAL_PIPELINE")


def pipeline_fingerprint(pages: Sequence[Page]) -> str:
    """A sha256 over the final pipeline's chunk texts, its settings and the models it names (offline)."""
    digest = hashlib.sha256()
    described = {name: getattr(settings, name) for name in FROZEN_SETTINGS}
    described |= {"embedder": DEFAULT_EMBEDDER, "offline_reranker": MAXSIM}
    digest.update(json.dumps(described, sort_keys=True, default=str).encode())
    for chunk in structured_chunks(pages):
        digest.update(chunk.content_hash.encode())
    return digest.hexdigest()


def frozen_record(path: Path = FROZEN_RECORD) -> dict:
    """The record the final pipeline was frozen with: tag, commit, date, fingerprint."""
    return json.loads(path.read_text(encoding="utf-8"))
