"""The ConfigMaps of the run, indexed from every file: env taken from them (``env_argv``), engine
``--config`` files mounted from them (``config_file``), KAITO's inference configuration, and the scripts
a container runs from a ConfigMap volume. Registered for its index hook only: it owns no document.
"""

from __future__ import annotations

from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.resources import file_resources

MARKERS: tuple[str, ...] = ()  # indexes documents of every file, reads none as its own
INDEX_WORDS = ("configmap",)  # kind ConfigMap; configMapRef, configMapKeyRef and configMap volumes


def configmaps(workspace: Workspace) -> dict:
    """This module's index space: ConfigMap name -> (file, document, data node), from every file."""
    return workspace.space(__name__, dict)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: every ConfigMap's ``data`` by name, for env taken from it."""
    for document, root in file_resources(loaded):
        if root.scalar("kind") != "ConfigMap":
            continue
        name, data = root.scalar("metadata", "name"), root.get("data")
        if isinstance(name, str) and data is not None and data.kind == "map":
            configmaps(workspace)[name] = (loaded, document, data)


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: env or a script taken from a ConfigMap not indexed yet (it may be in a file read later)."""
    return any(name not in configmaps(workspace) for name in _configmap_refs(root, 0))


def _configmap_refs(node: YNode, depth: int) -> list[str]:
    """Names of the ConfigMaps that ``configMapKeyRef`` / ``envFrom.configMapRef`` entries and
    ``configMap`` volumes (a script the container may run) refer to."""
    if depth > 40:  # pod specs sit a dozen levels down; a deeper document names nothing we read
        return []
    found: list[str] = []
    if node.kind == "map":
        for key, value in node.items():
            if key.value in ("configMapKeyRef", "configMapRef", "configMap") and value.kind == "map":
                name = value.scalar("name")
                found.extend([name] if isinstance(name, str) else [])
            elif value.kind in ("map", "seq"):
                found.extend(_configmap_refs(value, depth + 1))
    elif node.kind == "seq":
        for item in node.value:
            found.extend(_configmap_refs(item, depth + 1) if item.kind in ("map", "seq") else [])
    return found
