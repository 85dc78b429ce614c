"""Values of settings as the capacity arithmetic reads them: numbers, vLLM byte sizes, booleans."""

from __future__ import annotations

from typing import Any

from ..engines.argv import human_int as argv_human_int




def int_value(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return int(float(v))
    except (TypeError, ValueError, OverflowError):  # "INF", "nan"
        return None


def human_int(v: Any) -> int | None:
    """vLLM's ``human_readable_int``: ``4G`` = 4 GiB, ``4g`` = 4e9, ``32k`` = 32000, plain digits."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int_value(v)
    return argv_human_int(str(v))


def float_value(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def argv_value(model: Any, flag: str) -> str | None:
    toks = [t.text for t in getattr(model, "argv", []) or []]
    for i, t in enumerate(toks):
        if t == flag and i + 1 < len(toks):
            return toks[i + 1]
        if t.startswith(flag + "="):
            return t.split("=", 1)[1]
    return None


def truthy(v: Any) -> bool | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("1", "true", "yes", "on", "")
