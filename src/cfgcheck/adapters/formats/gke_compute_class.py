"""GKE ``ComputeClass`` (cloud.google.com/v1): the machines GKE may create for the pods that select it
with ``cloud.google.com/compute-class: <name>``, as a node pool of the run (``capacity.fleet``). Reads no
served model. Its ``priorities`` are tried in order, so a pod may land on any of them: each is an offer
(its ``gpu.type`` and ``gpu.count``, else its ``machineType``; https://cloud.google.com/kubernetes-engine/
docs/reference/crds/computeclass).
"""

from __future__ import annotations

from ...cluster import NodePool
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import add_pool, file_notes, gpu_offer, instance_offer, resources_of
from ..core.recognition import to_int

MARKERS = ("computeclass",)
INDEX_WORDS = MARKERS  # index() reads ComputeClass resources only
CLASS_LABEL = "cloud.google.com/compute-class"


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # cluster definitions only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    for root in resources_of(loaded, "cloud.google.com/", "ComputeClass"):
        name = str(root.scalar("metadata", "name", default="default"))
        pool = NodePool(name, "GKE ComputeClass", root.location(loaded.path), {CLASS_LABEL: name})
        priorities = root.path("spec", "priorities")
        for item in priorities.value if priorities is not None and priorities.kind == "seq" else []:
            if item.kind != "map":
                continue
            gpu_type, machine = item.scalar("gpu", "type"), item.scalar("machineType")
            count = to_int(item.scalar("gpu", "count"))
            if isinstance(gpu_type, str):
                pool.offers.append(gpu_offer(gpu_type, count if isinstance(count, int) else None,
                                             {"cloud.google.com/gke-accelerator": gpu_type}))
            elif isinstance(machine, str):
                pool.offers.append(instance_offer(machine))
        if not any(offer.gpu is not None for offer in pool.offers):
            pool.unknown = "no priority names a GPU or a machine type with one"
        add_pool(workspace, pool, file_notes(loaded, [root.line, getattr(root.path("metadata", "name"), "line", root.line)]))
