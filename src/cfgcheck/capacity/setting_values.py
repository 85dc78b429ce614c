"""An engine flag's value read straight from the argv, for the flags the settings vocabulary does not name
(numbers, byte sizes and switches are read with the vocabulary's parsers, ``cfgcheck.settings``)."""

from __future__ import annotations

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any


def argv_value(model: Any, flag: str) -> str | None:
    toks = [t.text for t in getattr(model, "argv", []) or []]
    for i, t in enumerate(toks):
        if t == flag and i + 1 < len(toks):
            return toks[i + 1]
        if t.startswith(flag + "="):
            return t.split("=", 1)[1]
    return None
