"""Where the course keeps its data and caches, relative to the repository root.

The cache folder can be moved with the environment variable COURSE_CACHE_DIR (a teacher may point
a classroom at a shared, pre-warmed cache).
"""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
GOLDEN_FILE = DATA_DIR / "golden" / "golden.jsonl"


def cache_dir() -> Path:
    """The on-disk cache root (embeddings, results); created on first use."""
    root = Path(os.environ.get("COURSE_CACHE_DIR", REPO_ROOT / ".cache"))
    root.mkdir(parents=True, exist_ok=True)
    return root
