"""Files a served model depends on but that are not its own document: a compose file's ``.env`` and
``env_file``, an engine ``--config`` file. Read from the repository the run is about, never outside
it (a path with ``..`` or a symlink out of the repository is refused, docs/SECURITY.md "Promises"), within the file
size limit, once per run.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from ...paths import escapes
from ...yamlio import DEFAULT_LIMITS, LoadedFile, YamlError, decode, parse_text
from ..core.contexts import Workspace
from ..core.protocol import file_format


def repo_path(base_file: str, written: str) -> str | None:
    """The repository-relative path of ``written`` (relative to the folder of ``base_file``, or to the
    repository root when it starts with ``/``), or None when it leaves the repository."""
    if not written or "\0" in written or "$" in written or "{{" in written:
        return None
    joined = written.lstrip("/") if written.startswith("/") else posixpath.join(posixpath.dirname(base_file), written)
    normal = posixpath.normpath(joined)
    if normal in (".", "") or normal == ".." or normal.startswith("../"):
        return None
    return normal


def read_text(workspace: Workspace, rel: str) -> str | None:
    """The text of the repository file ``rel``, or None when it is absent, unreadable, too large, or
    reached through a link out of the repository."""
    cache = workspace.space(__name__, dict)  # this module's index space: path -> text, or None
    if rel in cache:
        return cache[rel]
    cache[rel] = None
    root = workspace.config.get("root")
    if not root:
        return None
    path = Path(str(root)) / rel
    limits = {**DEFAULT_LIMITS, **(workspace.config.get("limits") or {})}
    try:
        if not path.is_file() or escapes(path, Path(str(root))) or path.stat().st_size > limits["max-file-bytes"]:
            return None
        cache[rel] = decode(path.read_bytes())
    except (OSError, YamlError):
        return None
    return cache[rel]


def read_yaml(workspace: Workspace, rel: str) -> LoadedFile | None:
    """``rel`` parsed as YAML (located nodes and comments), or None when it cannot be read or parsed."""
    text = read_text(workspace, rel)
    if text is None:
        return None
    loaded = parse_text(rel, text, workspace.config.get("limits"), reader=file_format(rel))
    return None if loaded.error is not None else loaded
