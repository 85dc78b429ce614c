"""Whether the opt-in Hugging Face Hub lookup (``capacity/hub.py``) is on, and the client capacity asks
through: the command line hands that client in (``use``) for a run whose lookup may be on, so that
capacity never imports the HTTP client itself, and a run with the lookup off decides it without loading
capacity or the HTTP stack."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable

_OFF = ("0", "false", "no", "off")
_client_of: Callable[[dict | None], Any] | None = None  # hub.client, once the command line handed it in


def enabled(config: dict | None) -> bool:
    """``hub: true`` in the configuration (``--online`` sets it), else ``CFGCHECK_HUB`` from the environment."""
    value = (config or {}).get("hub")
    if isinstance(value, bool):
        return value
    return os.environ.get("CFGCHECK_HUB", "").strip().lower() in ("1", "true", "yes", "on")


def switched_off() -> bool:
    """``CFGCHECK_HUB`` (or ``--offline``, which sets it for a command that reads its configuration later)
    turns the lookup off whatever a configuration says."""
    return os.environ.get("CFGCHECK_HUB", "").strip().lower() in _OFF


def use(client_of: Callable[[dict | None], Any] | None) -> None:
    """Hand in the Hub client (``hub.client``: configuration -> client), or take it back with None."""
    global _client_of
    _client_of = client_of


def client(config: dict | None) -> Any | None:
    """The Hub client for a run whose lookup is on; None when none was handed in (a library caller that
    turns the lookup on hands ``hub.client`` to ``use`` first)."""
    return _client_of(config) if _client_of is not None and enabled(config) else None
