"""Karpenter ``NodePool`` (karpenter.sh/v1, v1beta1) and the older ``Provisioner`` (v1alpha5): the nodes
Karpenter may launch for a pod, as node pools of the run (``capacity.fleet``). Reads no served model.

What a node of the pool carries (https://karpenter.sh/docs/concepts/nodepools/): the template's labels,
``karpenter.sh/nodepool: <name>``, one value of each ``In`` requirement, the template's taints. What it
offers: the instance types an ``node.kubernetes.io/instance-type`` requirement allows, else the GPUs of a
``karpenter.k8s.aws/instance-gpu-name`` requirement, else the instance families of a
``karpenter.k8s.aws/instance-family`` one, with ``instance-gpu-count`` as the count
(https://karpenter.sh/docs/reference/instance-types/). The ``EC2NodeClass`` a pool names (its AMI, its
subnets) says nothing about the GPU and is named only in the pool's description.
"""

from __future__ import annotations

from ...cluster import NodePool, Offer
from ...capacity.gpu_table import accelerator_by_instance_type
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import add_pool, file_notes, gpu_offer, instance_offer, resources_of, taint
from ..core.recognition import string_map

MARKERS = ("karpenter.sh",)
INDEX_WORDS = MARKERS  # index() reads resources of the API group only
_TYPE, _FAMILY = "node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family"
_GPU_NAME, _GPU_COUNT = "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-count"


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # cluster definitions only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    for root in resources_of(loaded, "karpenter.sh/", ("NodePool", "Provisioner")):
        kind = root.scalar("kind")
        spec = root.get("spec")
        # v1 / v1beta1 keep the node's shape in spec.template; v1alpha5 Provisioners at spec
        shape = spec.path("template", "spec") if kind == "NodePool" and spec is not None else spec
        labels_node = spec.path("template", "metadata", "labels") if kind == "NodePool" and spec is not None else \
            spec.get("labels") if spec is not None else None
        if shape is None or shape.kind != "map":
            continue
        name = str(root.scalar("metadata", "name", default="default"))
        allowed = _requirements(shape.get("requirements"))
        pool = NodePool(name, f"Karpenter {kind}", root.location(loaded.path),
                        {**string_map(labels_node), "karpenter.sh/nodepool": name},
                        {key: values for key, (op, values) in allowed.items() if op == "In"})
        pool.taints = [t for item in _seq(shape.get("taints")) if item.kind == "map"
                       and (t := taint(item.scalar("key"), item.scalar("value"), item.scalar("effect"))) is not None]
        pool.offers = _offers(pool.allowed)
        if not pool.offers:
            pool.unknown = "its requirements do not limit the instance types to ones with a known GPU"
        name_node = root.path("metadata", "name")
        lines = [root.line] + ([name_node.line] if name_node is not None else []) + \
            [item.line for item in _seq(shape.get("requirements"))]
        add_pool(workspace, pool, file_notes(loaded, lines))


def _seq(node: YNode | None) -> list[YNode]:
    return node.value if node is not None and node.kind == "seq" else []


def _requirements(node: YNode | None) -> dict[str, tuple[str, tuple[str, ...]]]:
    found = {}
    for item in _seq(node):
        key = item.scalar("key") if item.kind == "map" else None
        if isinstance(key, str):
            values = tuple(str(v.value) for v in _seq(item.get("values")) if v.kind == "scalar" and v.value is not None)
            found[key] = (str(item.scalar("operator", default="In")), values)
    return found


def _offers(allowed: dict[str, tuple[str, ...]]) -> list[Offer]:
    counts = [int(v) for v in allowed.get(_GPU_COUNT, ()) if v.isdigit()]
    count = counts[0] if len(counts) == 1 else None
    if _TYPE in allowed:
        offers = []
        for instance in allowed[_TYPE]:
            offer = instance_offer(instance, {_FAMILY: instance.split(".")[0]})
            offers.append(offer)
        return offers
    if _GPU_NAME in allowed:
        return [gpu_offer(name, count, {_GPU_NAME: name}) for name in allowed[_GPU_NAME]]
    offers = []
    for family in allowed.get(_FAMILY, ()):
        found = accelerator_by_instance_type(family + ".x")
        offers.append(Offer(found[0] if found else None, count, {_FAMILY: family}, family))
    return offers
