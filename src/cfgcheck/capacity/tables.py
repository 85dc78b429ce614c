"""Units and the bundled data tables (``cfgcheck/data/*.json``), read on first use."""

from __future__ import annotations

import json
from functools import lru_cache

GiB = 1024**3
MiB = 1024**2


@lru_cache(maxsize=None)
def bundled_table(name: str) -> dict:
    """``cfgcheck/data/<name>`` parsed once per process, when a run first needs it."""
    from importlib import resources  # only runs that size a model pay for it

    text = resources.files("cfgcheck").joinpath("data", name).read_text(encoding="utf-8")
    return json.loads(text)
