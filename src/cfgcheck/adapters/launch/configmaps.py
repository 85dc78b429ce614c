"""The ConfigMaps of the run, indexed from every file: env taken from them (``env_argv``), engine
``--config`` and ``--models-preset`` files mounted from them (``config_file``, ``model_presets``), KAITO's
inference configuration, and the scripts a container runs from a ConfigMap volume. Registered for its index
hook only: it owns no document.

A ConfigMap a kustomization's ``configMapGenerator`` builds is indexed by its name too, with the repository
file each key is read from (``files: [KEY=]PATH``, the key being the file's name when not given: kustomize
api/kv/kv.go ``ParseFileSource``); the workloads refer to it by that name (kustomize appends its hash
suffix to both when it renders).
"""

from __future__ import annotations

import posixpath

from ...records import Record
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.resources import file_resources

MARKERS: tuple[str, ...] = ()  # indexes documents of every file, reads none as its own
INDEX_WORDS = ("configmap",)  # kind ConfigMap; configMapRef, configMapKeyRef and configMap volumes
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_MAX_DEPTH = 12


def configmaps(workspace: Workspace) -> dict:
    """This module's index space: ConfigMap name -> (file, document, data node), from every file."""
    return workspace.space(__name__, dict)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def generated(workspace: Workspace) -> dict[str, dict[str, str]]:
    """ConfigMap name -> {key: repository path of the file it is read from}, of every kustomization's
    ``configMapGenerator`` (this module's second index space)."""
    return workspace.space(f"{__name__}.generated", dict)


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: every ConfigMap's ``data`` by name, for env taken from it, and the ConfigMaps
    kustomizations generate from files."""
    if loaded.path.rpartition("/")[2] in KUSTOMIZATIONS:
        _index_generators(workspace, loaded)
        return
    for document, root in file_resources(loaded):
        if root.scalar("kind") != "ConfigMap":
            continue
        name, data = root.scalar("metadata", "name"), root.get("data")
        if isinstance(name, str) and data is not None and data.kind == "map":
            configmaps(workspace)[name] = (loaded, document, data)


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: env or a script taken from a ConfigMap not indexed yet (it may be in a file read later)."""
    return any(name not in configmaps(workspace) for name in _configmap_refs(root, 0))


def unindexed(workspace: Workspace, root: YNode) -> bool:
    """Whether the document mounts a ConfigMap (a volume, or a chart's ``persistence`` entry) that no file
    read so far defines or generates: a file read later may (a kustomization after its HelmRelease)."""
    names = set(configmap_volumes(root).values()) | {
        entry.scalar("name") for values in _holders(root, "persistence") for _, entry in values.get("persistence").items()
        if entry.kind == "map" and entry.scalar("type") == "configMap" and isinstance(entry.scalar("name"), str)}
    return bool(names - set(configmaps(workspace)) - set(generated(workspace)))


def mentions(node: YNode, words: tuple[str, ...], depth: int = 0) -> bool:
    """Whether a key or a string value below ``node`` contains one of ``words`` (a flag, an env name)."""
    if node.kind == "scalar":
        return isinstance(node.value, str) and any(word in node.value for word in words)
    if depth > _MAX_DEPTH:
        return False
    children = node.value if node.kind == "seq" else [n for pair in node.items() for n in pair] if node.kind == "map" else []
    return any(mentions(child, words, depth + 1) for child in children)


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


def _index_generators(workspace: Workspace, loaded: LoadedFile) -> None:
    root = loaded.documents[0].root if loaded.documents else None
    generators = root.get("configMapGenerator") if root is not None and root.kind == "map" else None
    folder = posixpath.dirname(loaded.path)
    for generator in generators.value if generators is not None and generators.kind == "seq" else []:
        name, files = (generator.scalar("name"), generator.get("files")) if generator.kind == "map" else (None, None)
        if not isinstance(name, str) or files is None or files.kind != "seq":
            continue
        keys = generated(workspace).setdefault(name, {})
        for item in files.value:
            if item.kind == "scalar" and isinstance(item.value, str) and "://" not in item.value:
                key, _, source = item.value.rpartition("=")
                keys[key or posixpath.basename(source)] = posixpath.normpath(posixpath.join(folder, source))


# ---------------------------------------------------------------- files mounted from a volume


class Mounted(Record):
    """Where a file the engine reads comes from: a ConfigMap key (``loaded`` and its ``node``), or a
    repository file (``rel``: a compose bind mount, a ConfigMap a kustomization generates from it)."""

    __slots__ = ("how", "loaded", "node", "rel")

    def __init__(self, how: str, loaded: LoadedFile | None = None, node: YNode | None = None,
                 rel: str | None = None) -> None:
        self.how = how  # for messages: "ConfigMap llama-presets key presets.ini"
        self.loaded = loaded
        self.node = node
        self.rel = rel


def mounted(ctx: DocContext, root: YNode, mounts, path: str) -> Mounted | None:
    """The ConfigMap key or repository file a Kubernetes pod's ``volumes`` (under ``root``) put at ``path``
    through ``mounts`` (``PodFacts.mount_at``); None when no ConfigMap volume holds it, or the ConfigMap
    is not in the run (``items`` renaming keys is followed)."""
    mount = mounts.mount_at(path) if mounts is not None else None
    if mount is None:
        return None
    below = path[len(mount.path.rstrip("/")):].lstrip("/")
    name = configmap_volumes(root).get(mount.volume)
    if name is None:
        return None
    key = configmap_items(root, mount.volume).get(below, below)
    held = configmaps(ctx.workspace).get(name)
    if held is not None:
        node = held[2].get(key) if key else None
        return Mounted(f"ConfigMap {name} key {key}", held[0], node) if node is not None else None
    source = generated(ctx.workspace).get(name, {}).get(key) if key else None
    return Mounted(f"ConfigMap {name} (configMapGenerator) key {key}", rel=source) if source else None


def persistence_mount(ctx: DocContext, root: YNode, path: str) -> Mounted | None:
    """The ConfigMap key a chart's ``persistence`` entry of ``type: configMap`` puts at ``path``: the bjw-s
    app-template chart's volume of ``name`` (an existing ConfigMap) or ``identifier`` (one of the values' own
    ``configMaps``; bjw-s-labs/helm-charts library/common ``templates/lib/pod/fields/_volumes.tpl``), at each
    path its ``globalMounts`` / ``advancedMounts`` name, a ``subPath`` mounting one key."""
    for values in _holders(root, "persistence"):
        for _, entry in values.get("persistence").items():
            if entry.kind != "map" or entry.scalar("type") != "configMap":
                continue
            key = next((_key_below(mount, sub, path) for mount, sub in _persistence_paths(entry)
                        if _key_below(mount, sub, path)), None)
            identifier, name = entry.scalar("identifier"), entry.scalar("name")
            if key is None:
                continue
            if isinstance(identifier, str):
                node = values.path("configMaps", identifier, "data", key)
                return Mounted(f"the chart's ConfigMap {identifier} key {key}", ctx.loaded, node) if node is not None else None
            if isinstance(name, str):
                held = configmaps(ctx.workspace).get(name)
                node = held[2].get(key) if held is not None else None
                if node is not None:
                    return Mounted(f"ConfigMap {name} key {key}", held[0], node)
                source = generated(ctx.workspace).get(name, {}).get(key)
                return Mounted(f"ConfigMap {name} (configMapGenerator) key {key}", rel=source) if source else None
    return None


def _holders(node: YNode, key: str, depth: int = 0) -> list[YNode]:
    """The mappings below ``node`` that hold ``key`` (chart values sit a few levels down a HelmRelease)."""
    if depth > 6 or node.kind != "map":
        return []
    found = [node] if node.get(key) is not None and node.get(key).kind == "map" else []
    for _, value in node.items():
        found += _holders(value, key, depth + 1) if value.kind == "map" else []
    return found


def _persistence_paths(entry: YNode) -> list[tuple[str, str | None]]:
    """(mount path, subPath) of a persistence entry, in every container it is mounted in."""
    mounts = list(entry.get("globalMounts").value) if entry.get("globalMounts") is not None and \
        entry.get("globalMounts").kind == "seq" else []
    advanced = entry.get("advancedMounts")
    for _, controller in advanced.items() if advanced is not None and advanced.kind == "map" else []:
        for _, container in controller.items() if controller.kind == "map" else []:
            mounts += container.value if container.kind == "seq" else []
    return [(str(m.scalar("path")), m.scalar("subPath")) for m in mounts if m.kind == "map" and m.scalar("path")]


def _key_below(mount: str, sub_path, path: str) -> str | None:
    """The ConfigMap key a mount at ``mount`` (of one key when ``sub_path``) shows at ``path``."""
    if isinstance(sub_path, str) and sub_path:
        return sub_path if path.rstrip("/") == mount.rstrip("/") else None
    root = mount.rstrip("/")
    return path[len(root) + 1:] if path.startswith(root + "/") and "/" not in path[len(root) + 1:] else None


def configmap_volumes(node: YNode, depth: int = 0) -> dict[str, str]:
    """volume name -> ConfigMap name, for every ``volumes`` list below ``node``."""
    found: dict[str, str] = {}
    if depth > _MAX_DEPTH or node.kind not in ("map", "seq"):
        return found
    if node.kind == "seq":
        for child in node.value:
            found.update(configmap_volumes(child, depth + 1))
        return found
    for key, value in node.items():
        if key.value == "volumes" and value.kind == "seq":
            for item in value.value:
                name = item.scalar("name") if item.kind == "map" else None
                source = item.scalar("configMap", "name") if item.kind == "map" else None
                if isinstance(name, str) and isinstance(source, str):
                    found[name] = source
        else:
            found.update(configmap_volumes(value, depth + 1))
    return found


def configmap_items(root: YNode, volume: str) -> dict[str, str]:
    """``items`` of the ConfigMap volume ``volume``: the file path each key is written to."""
    for item in _volume_items(root, volume):
        mapping = item.path("configMap", "items")
        if mapping is not None and mapping.kind == "seq":
            return {str(entry.scalar("path")): str(entry.scalar("key")) for entry in mapping.value
                    if entry.kind == "map" and entry.scalar("key") is not None}
    return {}


def _volume_items(node: YNode, volume: str, depth: int = 0):
    if depth > _MAX_DEPTH or node.kind not in ("map", "seq"):
        return
    children = node.value if node.kind == "seq" else [v for _, v in node.items()]
    if node.kind == "map" and node.scalar("name") == volume and node.get("configMap") is not None:
        yield node
    for child in children:
        yield from _volume_items(child, volume, depth + 1)
