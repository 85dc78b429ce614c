"""eksctl ``ClusterConfig`` (eksctl.io/v1alpha5): its ``nodeGroups`` and ``managedNodeGroups`` as node
pools of the run (``capacity.fleet``). Reads no served model.

A node of a group carries the group's ``labels``, eksctl's ``alpha.eksctl.io/nodegroup-name: <name>``
(and, for a managed group, EKS's ``eks.amazonaws.com/nodegroup: <name>``), and its ``taints`` (a list of
``{key, value, effect}``, or the older map ``key: value:Effect``); it is one of the group's
``instanceType``, ``instanceTypes`` or ``instancesDistribution.instanceTypes``
(https://eksctl.io/usage/schema/).
"""

from __future__ import annotations

from ...cluster import NodePool
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import add_pool, file_notes, instance_offer, parse_taint, resources_of, taint
from ..core.recognition import string_map

MARKERS = ("eksctl.io",)
INDEX_WORDS = MARKERS  # index() reads ClusterConfigs of the API group only


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # cluster definitions only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    for root in resources_of(loaded, "eksctl.io/", "ClusterConfig"):
        for key, managed in (("nodeGroups", False), ("managedNodeGroups", True)):
            groups = root.get(key)
            for group in groups.value if groups is not None and groups.kind == "seq" else []:
                if group.kind == "map" and isinstance(group.scalar("name"), str):
                    _group(workspace, loaded, group, managed)


def _group(workspace: Workspace, loaded: LoadedFile, group: YNode, managed: bool) -> None:
    name = str(group.scalar("name"))
    labels = {**string_map(group.get("labels")), "alpha.eksctl.io/nodegroup-name": name}
    if managed:
        labels["eks.amazonaws.com/nodegroup"] = name
    pool = NodePool(name, "eksctl managed node group" if managed else "eksctl node group", group.location(loaded.path),
                    labels)
    pool.taints = _taints(group.get("taints"))
    types = [group.scalar("instanceType")] + _strings(group.get("instanceTypes")) + \
        _strings(group.path("instancesDistribution", "instanceTypes"))
    pool.offers = [instance_offer(str(t)) for t in dict.fromkeys(types) if isinstance(t, str) and t != "mixed"]
    if not any(offer.gpu is not None for offer in pool.offers):
        pool.unknown = f"instance types {', '.join(o.what for o in pool.offers) or 'not stated'}"
    add_pool(workspace, pool, file_notes(loaded, [group.line] + [n.line for n in (
        group.key_node("instanceType"), group.key_node("instanceTypes")) if n is not None]))


def _strings(node: YNode | None) -> list[str]:
    return [str(v.value) for v in node.value if v.kind == "scalar"] if node is not None and node.kind == "seq" else []


def _taints(node: YNode | None) -> list:
    found = []
    if node is not None and node.kind == "seq":
        found = [taint(item.scalar("key"), item.scalar("value"), item.scalar("effect")) for item in node.value
                 if item.kind == "map"]
    elif node is not None and node.kind == "map":  # eksctl's older form: key: "value:Effect"
        found = [parse_taint(f"{key.value}={value.value}") for key, value in node.items()
                 if key.kind == "scalar" and value.kind == "scalar"]
    return [t for t in found if t is not None]
