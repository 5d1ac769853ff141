"""Shared test setup: offline model hub and a private cache folder per test session."""
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """Point the course cache at a temporary folder so a test starts cold."""
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
