"""The NVIDIA MIG manager's configurations: mig-parted's ``mig-configs`` (a file, or a ConfigMap's data,
https://github.com/NVIDIA/mig-parted: each named configuration lists device entries with ``devices``,
``device-filter``, ``mig-enabled`` and ``mig-devices`` {profile: count}) and ``MIGConfig`` resources whose
device selector names the GPU product (``NVIDIA-H100-SXM5-80GB``) and the slice profile (``1g.10gb``).
Nodes select a configuration with the ``nvidia.com/mig.config`` label
(https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html). Each is a MIG
layout of the run (``cluster.MigLayout``): capacity reads the slice a pod gets from it. Reads no
served model.
"""

from __future__ import annotations

import re

from ...cluster import MigLayout
from ...capacity.gpu_table import Gpu, accelerator_by_name
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import fleet
from ..core.yaml_in_strings import embedded_document

MARKERS = ("mig-configs", "migconfig")
INDEX_WORDS = MARKERS
_MAX_DEPTH = 8  # a configuration sits at a document's root or one ConfigMap key down; deeper is data
_PROFILE = re.compile(r"^\d+g\.\d+gb(?:\+me)?$")  # a MIG profile: 1g.10gb, 3g.40gb, 1g.10gb+me
# the keys of a MIGConfig's device selector that name the product (``productName``, ``device-filter``)
_SELECTOR_KEY = re.compile(r"(?i)product|filter|selector|model")


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # cluster definitions only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    lowered = loaded.text.lower()
    if "mig-configs" not in lowered and "migconfig" not in lowered:
        return
    for document in loaded.documents:
        if document.root is not None:
            _walk(DocContext(loaded, document, workspace), document.root, 0)


def _walk(ctx: DocContext, node: YNode, depth: int) -> None:
    """Find ``mig-configs`` mappings and ``MIGConfig`` resources, also in YAML strings (a ConfigMap's data)."""
    if depth > _MAX_DEPTH:
        return
    if node.kind == "scalar" and isinstance(node.value, str) and "mig-configs" in node.value:
        inner = embedded_document(ctx, node)
        if inner is not None:
            _walk(inner[0], inner[1], depth + 1)
        return
    if node.kind != "map":
        return
    if node.scalar("kind") == "MIGConfig":
        name = str(node.scalar("metadata", "name", default="MIGConfig"))
        _record(ctx, name, node.get("spec") or node, node.path("metadata", "name") or node)
        return
    configs = node.get("mig-configs")
    if configs is not None and configs.kind == "map":
        for key, config in configs.items():
            _record(ctx, str(key.value), config, key)
        return
    for _, value in node.items():
        _walk(ctx, value, depth + 1)


def _record(ctx: DocContext, name: str, config: YNode, at: YNode) -> None:
    profiles: set[str] = set()
    products: dict[str, Gpu] = {}
    every = [True]
    _scan(config, profiles, products, every, False, 0)
    if profiles:
        fleet(ctx.workspace).mig.append(MigLayout(name, tuple(sorted(profiles)), tuple(products.values()),
                                                  every[0], ctx.location(at)))


def _scan(node: YNode, profiles: set[str], products: dict[str, Gpu], every: list[bool], selector: bool,
          depth: int) -> None:
    """The profiles a configuration cuts (keys or values), the products its selector names, and whether
    every device entry is cut (``mig-enabled: false`` leaves some whole)."""
    if depth > _MAX_DEPTH:
        return
    if node.kind == "scalar":
        text = str(node.value) if node.value is not None else ""
        if _PROFILE.match(text):
            profiles.add(text)
        elif selector:
            gpu = accelerator_by_name(text)
            if gpu is not None and "MIG" not in (gpu.source or ""):
                products.setdefault(gpu.name, gpu)
        return
    if node.kind == "seq":
        for item in node.value:
            _scan(item, profiles, products, every, selector, depth + 1)
        return
    for key, value in node.items():
        word = str(key.value)
        if _PROFILE.match(word):
            profiles.add(word)
        if word.lower().replace("_", "-") in ("mig-enabled", "migenabled") and str(value.value).lower() == "false":
            every[0] = False
        _scan(value, profiles, products, every, selector or bool(_SELECTOR_KEY.search(word)), depth + 1)
