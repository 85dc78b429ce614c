"""The content cache of `cfgcheck lint`: one file's stage (parsed, indexed, its served models built) kept
for the next run over the same text, in the user's cache folder (docs/CACHE.md).

What is kept is only what follows from the file's own text: ``stages.py`` stores a file that shares no
index with other files (``registry.shares_index``: no ConfigMap, no reference to one, no kustomization,
chart or script), whose adapting read nothing beyond it (``paths.reads_beyond``: no ``.env``, no
``Chart.yaml`` beside it, no ``model_configs``), in a run over the working tree. Rules always run: the
cache holds no finding, so a cached file's findings are the rules' answer on the same served models.

An entry's name is the SHA-256 of the file's path and text; it lives in a folder named by the digest of
everything else its content depends on: cfgcheck's version and the size and time of every file of the
installed package (an edited checkout is another cache), the run's configuration and the parser. An
entry is written to a temporary file beside it and renamed into place (``os.replace`` is atomic), so
runs at the same time never read half an entry; one that cannot be read or written is no entry.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

from . import __version__

PACKAGE = Path(__file__).resolve().parent
_WRITES = itertools.count()  # this process's temporary entry names (tempfile would cost 6 ms of start-up)


def folder() -> Path:
    """``$XDG_CACHE_HOME/cfgcheck``, else ``~/.cache/cfgcheck`` (``%LOCALAPPDATA%`` on Windows)."""
    base = os.environ.get("XDG_CACHE_HOME") or (os.environ.get("LOCALAPPDATA") if os.name == "nt" else None)
    return Path(base) / "cfgcheck" if base else Path.home() / ".cache" / "cfgcheck"


def _code_stamp() -> str:
    """cfgcheck's version and the size and modification time of each file of the package: a changed
    adapter, table or catalog starts a new cache (about 170 stat calls, 2 ms)."""
    stamps = [__version__]
    for top, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            stat = os.stat(os.path.join(top, name))
            stamps.append(f"{os.path.relpath(os.path.join(top, name), PACKAGE)}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(stamps)


def _digest(text: str) -> str:
    # imported here: hashlib loads OpenSSL's library (3-4 ms), and a run whose files hold no served model
    # (most pre-commit runs) never asks the cache for anything
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ContentCache:
    """The entries of one configuration and build of cfgcheck: ``get`` and ``put`` by file path and text.
    Its folder is worked out when a file first asks for it."""

    def __init__(self, settings: dict, fast: bool, where: Path | None = None) -> None:
        self.scope = json.dumps({"settings": settings, "fast": fast}, sort_keys=True, default=str)
        self.where = where
        self._root: Path | None = None

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = (self.where or folder()) / "stage" / _digest(f"{_code_stamp()}\n{self.scope}")[:32]
        return self._root

    @staticmethod
    def key(rel: str, text: str) -> str:
        return _digest(f"{rel}\0{text}")

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key[2:]

    def get(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except OSError:
            return None

    def put(self, key: str, data: bytes) -> None:
        """Write the entry atomically; a cache that cannot be written is left alone (the run goes on)."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.parent / f".entry-{os.getpid()}-{next(_WRITES)}"
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(data)
                os.replace(temporary, path)
            except OSError:
                os.unlink(temporary)
                raise
        except OSError:
            return
