"""Units and the bundled data tables (``cfgcheck/data/*.json``), read on first use."""

from __future__ import annotations

from functools import lru_cache

from ..data import read_json

GiB = 1024**3
MiB = 1024**2


@lru_cache(maxsize=None)
def bundled_table(name: str) -> dict:
    """``cfgcheck/data/<name>`` parsed once per process, when a run first needs it."""
    return read_json(name)
