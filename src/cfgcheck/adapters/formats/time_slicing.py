"""The NVIDIA device plugin's time-slicing configuration: ``sharing.timeSlicing.resources[]`` with
``name`` (``nvidia.com/gpu``) and ``replicas`` (https://docs.nvidia.com/datacenter/cloud-native/
gpu-operator/latest/gpu-sharing.html), written in a ConfigMap's data (one configuration per key, the
key being its name, which nodes select with ``nvidia.com/device-plugin.config``) or in Helm values
(``config.map.<name>``). Each is a shared GPU of the run (``cluster.Sharing``): that many pods
share one GPU and its memory. Reads no served model.
"""

from __future__ import annotations

from ...cluster import Sharing
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import fleet
from ..core.recognition import to_int
from ..core.yaml_in_strings import embedded_document

MARKERS = ("timeslicing",)
INDEX_WORDS = MARKERS  # index() returns at once for a file without "timeSlicing"
_MAX_DEPTH = 8


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # cluster definitions only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    if "timeSlicing" not in loaded.text:
        return
    for document in loaded.documents:
        if document.root is not None:
            _walk(DocContext(loaded, document, workspace), document.root, None, 0)


def _walk(ctx: DocContext, node: YNode, name: str | None, depth: int) -> None:
    """Find ``sharing.timeSlicing`` in mappings and in YAML strings; ``name`` is the key that holds it."""
    if depth > _MAX_DEPTH:
        return
    if node.kind == "scalar" and isinstance(node.value, str) and "timeSlicing" in node.value:
        inner = embedded_document(ctx, node)
        if inner is not None:
            _walk(inner[0], inner[1], name, depth + 1)
        return
    if node.kind == "seq":
        for item in node.value:
            _walk(ctx, item, name, depth + 1)
        return
    slicing = node.path("sharing", "timeSlicing") if node.kind == "map" else None
    resources = slicing.get("resources") if slicing is not None and slicing.kind == "map" else None
    # renameByDefault: the shares are advertised as <resource>.shared, which pods then request
    suffix = ".shared" if slicing is not None and str(slicing.scalar("renameByDefault")).lower() == "true" else ""
    for item in resources.value if resources is not None and resources.kind == "seq" else []:
        replicas = to_int(item.scalar("replicas")) if item.kind == "map" else None
        if isinstance(replicas, int) and replicas > 1:
            resource = str(item.scalar("name", default="nvidia.com/gpu")) + suffix
            fleet(ctx.workspace).sharing.append(Sharing(resource, replicas, ctx.location(item.get("replicas")), name))
    for key, value in node.items():
        _walk(ctx, value, str(key.value) if key.kind == "scalar" else name, depth + 1)
