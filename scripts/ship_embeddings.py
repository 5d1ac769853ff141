"""Rebuild the embeddings shipped with the course: `make ship-embeddings`.

    python scripts/ship_embeddings.py

Writes data/embeddings/all-MiniLM-L6-v2.npz (float32, one row per text sha256) and its .sha256
from the vectors already shipped plus every vector in the local cache (COURSE_CACHE_DIR) for the
bundled model. Run the lessons first (`make course`) so the cache holds every chunking they
build. Prints how many vectors were shipped before and after, and the file's size.
"""
from __future__ import annotations

import sys

import numpy as np

from course_lib.infra import models, shipped


def main() -> int:
    model_key = models.model_id() + "|normalize=True"
    cache = models.open_cache(model_key)
    before = shipped.shipped_vectors(model_key)
    vectors: dict[str, np.ndarray] = {}
    if before is not None:
        for key in before.keys():
            vectors[key] = before.get(key)
    for key in cache.store.keys():
        found = cache.get(key)
        if found is not None:
            vectors.setdefault(key, found)
    keys = sorted(vectors)
    matrix = np.stack([vectors[k] for k in keys])
    digest = shipped.write_shipped(shipped.SHIPPED_FILE, model_key, keys, matrix)
    size = shipped.SHIPPED_FILE.stat().st_size
    print(f"shipped vectors: {len(before) if before is not None else 0:,} before, {len(keys):,} now; "
          f"{shipped.SHIPPED_FILE} {size / 1e6:.1f} MB, sha256 {digest[:16]}...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
