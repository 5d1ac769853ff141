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
    The default folder is created private to the user (0700). A path that is a file is one
    warning line, and the stores under it compute without caching and without a word each.
    """
    chosen = os.environ.get("COURSE_CACHE_DIR")
    root = Path(chosen) if chosen else REPO_ROOT / ".cache"
    if root.exists() and not root.is_dir():  # every store under it would fail, each in its own words
        from course_lib.infra.vector_cache import silence_under

        silence_under(root, "is a file, not a folder (COURSE_CACHE_DIR): nothing is cached; point it at "
                            "a folder, or unset it")
        return root
    try:
        # The default cache is private (0700): whoever can write a cache can change what it
        # serves (docs/LIBRARY.md, "The caches"). A folder named by COURSE_CACHE_DIR keeps the
        # mode its owner gave it: a teacher's shared, read-only one is meant to be read by others.
        root.mkdir(parents=True, exist_ok=True, **({} if chosen else {"mode": 0o700}))
    except OSError:
        pass
    return root
