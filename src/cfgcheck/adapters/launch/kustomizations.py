"""Kustomizations read for the files they name, without rendering them: a resource, base, component, patch
or generator file that does not exist is a reference that leads nowhere (``core/references.py``).

What kustomize fetches (a URL, a remote repository: ``render/kustomize.py`` names the forms) and what
leaves the repository are not the repository's to hold, and are not looked for. A folder named as a
resource or base must hold a kustomization (kustomize api/krusty: a directory is loaded as a kustomization
root). Registered for its index hook only: it owns no document.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from stat import S_ISDIR, S_ISREG
from typing import Callable

from ... import lazy
from ...model import Location, ServedModel
from ...paths import LOOKED, RESOLVED, escapes_by_strings, looked, read_beyond
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.references import record

MARKERS: tuple[str, ...] = ()  # indexes kustomizations by file name, reads no document as its own
NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# what kustomize fetches instead of reading from the repository (kustomize api/internal/git/repospec.go)
_REMOTE = lazy.Pattern(r"[A-Za-z][A-Za-z0-9+.-]*://|^\s*(?:git::|[\w.-]+@[\w.-]+:|(?:github\.com|gitlab\.com|"
                     r"bitbucket\.org|dev\.azure\.com)[/:])|\?ref=", re.I)
_LISTS = ("resources", "bases", "components", "patchesStrategicMerge", "crds")
# a secretGenerator's files are left out: a repository keeps secrets out of Git on purpose (a gitignored .env
# each operator provides), so its missing file is no mistake of the repository
_GENERATORS = ("configMapGenerator",)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: record what a kustomization names that is not in the repository."""
    repo = workspace.config.get("root")
    if loaded.path.rpartition("/")[2] not in NAMES or not repo or not loaded.documents:
        return
    document = loaded.documents[0]
    if document.root is None or document.root.kind != "map":
        return
    ctx = DocContext(loaded, document, workspace)
    folder = posixpath.dirname(loaded.path)
    top = os.path.abspath(str(repo))
    resolved, looks = workspace.space(RESOLVED, dict), workspace.space(LOOKED, dict)
    for at, written, what, folders in _references(ctx, document.root):
        if _REMOTE.search(written) or "$" in written:
            continue
        rel = posixpath.normpath(posixpath.join(folder, written))
        target = os.path.join(top, rel)
        read_beyond(target)  # whether it is there, for the whole-run cache (cache.py)
        if rel.startswith("../") or rel == ".." or _outside(target, top, resolved, looks):
            continue  # outside the repository: kustomize's load restrictor refuses it, the renderer says so
        mode = looked(target, looks)[1]
        if S_ISREG(mode) or folders and S_ISDIR(mode) and \
                any(S_ISREG(looked(os.path.join(target, name), looks)[1]) for name in NAMES):
            continue
        said = f"looked for {rel}" + (" (a folder with a kustomization)" if folders and S_ISDIR(mode) else "")
        record(workspace, at(), f"{what} '{written}'", said,
               f"add {rel}, or remove it from {posixpath.basename(loaded.path)}")


def _outside(target: str, repo: str, resolved: dict[str, str | None], looks: dict[str, tuple[int, int]]) -> bool:
    """Whether ``target`` (absolute, normalised) is outside the repository ``repo``: through a link of the
    nearest part of it that exists (a path that does not exist does not resolve; a folder linked out of
    the repository is not its own). ``resolved``, ``looks``: the run's paths resolved and looked at so far."""
    existing = os.path.normpath(target)  # "." joined to the repository is the repository
    while not looked(existing, looks)[0]:
        parent = os.path.dirname(existing)
        if parent == existing:
            existing = repo
            break
        existing = parent
    return escapes_by_strings(existing, repo, resolved, looks)


def _references(ctx: DocContext, root: YNode) -> list[tuple[Callable[[], Location], str, str, bool]]:
    """(where it is written, the path, what it is, whether a folder may be named) of every file a
    kustomization names; where it is written is worked out when a reference leads nowhere (a few of
    thousands)."""
    found: list[tuple[Callable[[], Location], str, str, bool]] = []
    for key in _LISTS:
        node = root.get(key)
        for item in node.value if node is not None and node.kind == "seq" else []:
            if item.kind == "scalar" and isinstance(item.value, str):
                found.append((functools.partial(ctx.location, item), item.value, _singular(key),
                              key in ("resources", "bases", "components")))
    for key in ("patches", "patchesJson6902"):
        node = root.get(key)
        for item in node.value if node is not None and node.kind == "seq" else []:
            path = item.get("path") if item.kind == "map" else None
            if path is not None and path.kind == "scalar" and isinstance(path.value, str):
                found.append((functools.partial(ctx.location, path), path.value, "patch", False))
    for key in _GENERATORS:
        node = root.get(key)
        for generator in node.value if node is not None and node.kind == "seq" else []:
            for field in ("files", "envs"):
                entries = generator.get(field) if generator.kind == "map" else None
                for item in entries.value if entries is not None and entries.kind == "seq" else []:
                    if item.kind == "scalar" and isinstance(item.value, str):
                        at, written = _source_of(ctx, item)
                        found.append((lambda at=at: at, written, f"{key} file", False))
    return found


def _singular(key: str) -> str:
    return {"resources": "resource", "bases": "base", "components": "component",
            "patchesStrategicMerge": "patch", "crds": "CRD file"}[key]


def _source_of(ctx: DocContext, item: YNode) -> tuple[Location, str]:
    """A generator's ``KEY=PATH`` entry names the file PATH (kustomize api/kv/kv.go ParseFileSource)."""
    at = ctx.location(item)
    key, sep, path = str(item.value).partition("=")
    if not sep or at.end_line != at.line:
        return at, str(item.value)
    return Location(at.path, at.line, at.column + len(key) + 1, at.line, at.end_column), path
