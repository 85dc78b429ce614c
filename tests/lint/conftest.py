"""Fixtures the cache tests share (test_cache.py, test_stat_index.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch) -> Path:
    """The cache folder of the test (``XDG_CACHE_HOME``), its own."""
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home
