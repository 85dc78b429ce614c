"""Whether the opt-in Hugging Face Hub lookup (``hub.py``) is on, and its client: a module of its own, so
that a run with the lookup off decides it without importing the HTTP client."""

from __future__ import annotations

import os


def enabled(config: dict | None) -> bool:
    """``hub: true`` in the configuration (``--online`` sets it), else ``CFGCHECK_HUB`` from the environment."""
    value = (config or {}).get("hub")
    if isinstance(value, bool):
        return value
    return os.environ.get("CFGCHECK_HUB", "").strip().lower() in ("1", "true", "yes", "on")


def client(config: dict | None):
    """``hub.client``: the HTTP client and its stack (urllib, http, ssl, email) imported only now."""
    from . import hub

    return hub.client(config)
