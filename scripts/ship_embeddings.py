"""Rebuild the embeddings shipped with the course: `make ship-embeddings`.

    python scripts/ship_embeddings.py

Writes data/embeddings/all-MiniLM-L6-v2.npz (float32, one row per text sha256) and its .sha256
with the vectors shipped before plus those of the texts a cold run of the course embeds most:
every registered pipeline's chunks and the fixed-window and counted chunkings of lessons 04, 05
and 09, on both shipped corpora, and every golden question, taken from the local cache
(COURSE_CACHE_DIR); a course text not in the cache is left out and counted. Not everything a
cache has ever held: experiments would swell the file. Run the lessons first
(`make course`). Prints how many vectors were shipped before and after, and the file's size.
"""
from __future__ import annotations

import sys

import numpy as np

from course_lib.core.load import load_pages
from course_lib.core.pipeline import PIPELINES, build_pipeline, structured_chunks, window_chunks_of
from course_lib.evaluation.golden import load_golden
from course_lib.infra import models, shipped
from course_lib.infra.paths import DATA_DIR

GOLDEN = {"python": DATA_DIR / "golden" / "golden.jsonl", "pandas": DATA_DIR / "golden" / "pandas.jsonl"}


def course_texts() -> set[str]:
    """The texts the lessons embed on a cold run: chunks of every chunking they build, and questions."""
    texts: set[str] = set()
    for corpus, golden in GOLDEN.items():
        pages = load_pages(corpus=corpus)
        for name in PIPELINES:
            texts.update(chunk.text for chunk in build_pipeline(name, pages).chunks)
        for chunks in (structured_chunks(pages, split_long=False), window_chunks_of(pages),
                       window_chunks_of(pages, within_heading_path=True, context=True)):
            texts.update(chunk.text for chunk in chunks)
        texts.update(q.question for q in load_golden(golden))
    return texts


def main() -> int:
    model_key = models.model_id() + "|normalize=True"
    cache = models.open_cache(model_key)
    before = shipped.shipped_vectors(model_key)
    vectors: dict[str, np.ndarray] = {}
    if before is not None:
        vectors.update((key, before.get(key)) for key in before.keys())
    missing = 0
    for text in course_texts():
        key = models.text_key(text)
        found = vectors.get(key)
        found = cache.get(key) if found is None else found
        if found is None:
            missing += 1
            continue
        vectors[key] = found
    keys = sorted(vectors)
    matrix = np.stack([vectors[k] for k in keys])
    digest = shipped.write_shipped(shipped.SHIPPED_FILE, model_key, keys, matrix)
    size = shipped.SHIPPED_FILE.stat().st_size
    print(f"shipped vectors: {len(before) if before is not None else 0:,} before, {len(keys):,} now "
          f"({missing:,} course texts neither shipped nor cached, left out); "
          f"{shipped.SHIPPED_FILE.name} {size / 1e6:.1f} MB, sha256 {digest[:16]}...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
