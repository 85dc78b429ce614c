"""Opt-in lookup of a model's ``config.json`` and safetensors index on the Hugging Face Hub.

Off unless ``--online`` / ``hub: true`` (or ``CFGCHECK_HUB=1``, which the Action's ``hub`` input sets) asks for it
(``online.enabled``; the command line imports this module and its HTTP stack only then and hands its
``client`` to capacity, ``online.use``). It
reads ``{HF_ENDPOINT}/{org}/{name}/resolve/{revision}/config.json`` and ``model.safetensors.index.json``
(whose ``metadata.total_size`` is the checkpoint's exact size), at the revision the served model pins,
``main`` otherwise. ``HF_TOKEN`` is sent to the configured endpoint only (never across a redirect to
another host) and never printed. Answers are cached on disk (``CFGCHECK_CACHE_DIR``, else the user cache
dir): a pinned commit forever, a branch for a day; a failure that is no answer (offline, a timeout, a 5xx)
is remembered for the rest of the run instead, not asked again. Any failure (offline, timeout, 401/404, a
body that is not a JSON object) falls back to the bundled table with a note; nothing here raises.

Model ids come from the linted files (possibly a hostile pull request): only ``org/name`` ids of the
Hub's character set are looked up, revisions are URL-quoted, bodies are capped, and a run looks up at most
``MAX_LOOKUPS`` models.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import redirects

DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_TIMEOUT = 10.0
MAX_BODY_BYTES = 8 * 1024 * 1024  # a large MoE's safetensors index is ~2 MB
MAX_LOOKUPS = 64
BRANCH_TTL_SECONDS = 24 * 3600
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_FILES = ("config.json", "model.safetensors.index.json")


def cache_dir() -> Path:
    """``CFGCHECK_CACHE_DIR``, else the platform's user cache folder, + ``hub``."""
    explicit = os.environ.get("CFGCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit) / "hub"
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cfgcheck" / "hub"


@dataclass
class HubAnswer:
    config: dict | None = None
    total_size: int | None = None
    note: str | None = None  # why the bundled table was used instead


class HubClient:
    def __init__(self, endpoint: str | None = None, token: str | None = None, timeout: float | None = None,
                 cache: Path | None = None) -> None:
        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        self._token = token if token is not None else os.environ.get("HF_TOKEN") or None
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.cache = cache or cache_dir()
        self.lookups = 0
        # failures that are not answers (a timeout, a 5xx, a refused connection) are not cached on disk,
        # but asked again for every estimate of a run they cost a request each (44 for two models)
        self._failed: dict[tuple[str, str, str], str] = {}
        self._opener = redirects.opener()

    def __repr__(self) -> str:  # the token stays out of logs and tracebacks
        return f"HubClient(endpoint={self.endpoint!r}, token={'set' if self._token else 'unset'})"

    def lookup(self, model_id: str, revision: str | None = None) -> HubAnswer:
        """The model's config.json and checkpoint size at ``revision``; a note instead when unavailable."""
        if not _REPO_ID.match(model_id or "") or ".." in model_id:
            return HubAnswer(note=f"{model_id} is not a Hugging Face repository id: not looked up")
        rev = str(revision or "main")
        files: dict[str, Any] = {}
        for name in _FILES:
            data, problem = self._file(model_id, rev, name)
            if problem and name == "config.json":
                return HubAnswer(note=f"hub lookup of {model_id}@{rev} failed ({problem}): bundled table used")
            files[name] = data
        index = files["model.safetensors.index.json"] or {}
        total = (index.get("metadata") or {}).get("total_size") if isinstance(index, dict) else None
        try:
            total = int(total) if total is not None else None
        except (TypeError, ValueError):
            total = None
        return HubAnswer(config=files["config.json"], total_size=total if total and total > 0 else None)

    # -- one file, through the cache
    def _cache_path(self, model_id: str, rev: str, name: str) -> Path:
        key = hashlib.sha256(f"{self.endpoint}\n{model_id}\n{rev}\n{name}".encode()).hexdigest()
        return self.cache / f"{key}.json"

    def _file(self, model_id: str, rev: str, name: str) -> tuple[dict | None, str | None]:
        path = self._cache_path(model_id, rev, name)
        cached = _read_cache(path, forever=bool(_COMMIT.match(rev)))
        if cached is not None:
            return cached.get("body"), cached.get("problem")
        if (model_id, rev, name) in self._failed:
            return None, self._failed[model_id, rev, name]
        if self.lookups >= MAX_LOOKUPS * len(_FILES):
            return None, f"more than {MAX_LOOKUPS} models in one run"
        self.lookups += 1
        body, problem, cacheable = self._get(model_id, rev, name)
        if cacheable:
            _write_cache(path, {"body": body, "problem": problem, "at": time.time()})
        elif problem is not None:
            self._failed[model_id, rev, name] = problem
        return body, problem

    def _get(self, model_id: str, rev: str, name: str) -> tuple[dict | None, str | None, bool]:
        """(JSON object, problem, whether the answer may be cached): 404 is an answer, a timeout is not."""
        url = f"{self.endpoint}/{model_id}/resolve/{urllib.parse.quote(rev, safe='')}/{name}"
        request = urllib.request.Request(url, headers={"User-Agent": "cfgcheck"})
        if self._token:
            request.add_unredirected_header("Authorization", f"Bearer {self._token}")
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read(MAX_BODY_BYTES + 1)
        except urllib.error.HTTPError as exc:
            return None, f"HTTP {exc.code}", exc.code in (404, 410)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            return None, f"{type(reason).__name__ if not isinstance(reason, str) else reason}", False
        if len(raw) > MAX_BODY_BYTES:
            return None, f"{name} larger than {MAX_BODY_BYTES // 2**20} MiB", True
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError; deep nesting recurses
            return None, f"{name} is not JSON", True
        if not isinstance(data, dict):
            return None, f"{name} is not a JSON object", True
        return data, None, True


def _read_cache(path: Path, forever: bool) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    if not forever and time.time() - float(data.get("at") or 0) > BRANCH_TTL_SECONDS:
        return None
    return data


def _write_cache(path: Path, data: dict) -> None:
    try:  # a read-only or full disk only costs the next run a lookup
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


_CLIENTS: dict[tuple, HubClient] = {}


def client(config: dict | None) -> HubClient:
    """One client per endpoint, token and timeout in a process: the lookup budget is per run."""
    timeout = (config or {}).get("hub-timeout")
    key = (os.environ.get("HF_ENDPOINT"), os.environ.get("HF_TOKEN"), timeout, os.environ.get("CFGCHECK_CACHE_DIR"))
    if key not in _CLIENTS:
        _CLIENTS[key] = HubClient(timeout=float(timeout) if timeout else None)
    return _CLIENTS[key]
