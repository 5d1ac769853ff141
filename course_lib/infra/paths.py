"""Where the course keeps its data and caches, relative to the repository root.

The cache folder can be moved with the environment variable COURSE_CACHE_DIR (a teacher may point
a classroom at a shared, pre-warmed cache).
"""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "data"
GOLDEN_FILE = DATA_DIR / "golden" / "golden.jsonl"


def cache_dir() -> Path:
    """The on-disk cache root (embeddings, token vectors, results); created on first use.

    A folder that cannot be created (a read-only share) is returned as it is: the stores under
    it then fall back to computing without caching, with one warning, instead of failing here.
    """
    root = Path(os.environ.get("COURSE_CACHE_DIR", REPO_ROOT / ".cache"))
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    return root
