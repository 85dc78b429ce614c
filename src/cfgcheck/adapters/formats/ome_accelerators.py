"""OME ``AcceleratorClass`` (ome.io/v1beta1): a kind of accelerator and the nodes that have it (its
``discovery.nodeSelector``), as a node pool of the run (``capacity.fleet``). Reads no served model. The
GPU is the one the class's ``discovery.nodeSelector`` product label names, else its ``vendor``,
``model`` and ``capabilities.memoryGB`` together (https://github.com/sgl-project/ome,
``config/crd/.../ome.io_acceleratorclasses.yaml``).
"""

from __future__ import annotations

import re

from ...cluster import NodePool
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import add_pool, file_notes, gpu_offer, resources_of
from ..core.recognition import string_map

MARKERS = ("acceleratorclass",)
INDEX_WORDS = MARKERS  # index() reads AcceleratorClass resources only


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # cluster definitions only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    for root in resources_of(loaded, "ome.io/", "AcceleratorClass"):
        spec = root.get("spec")
        if spec is None or spec.kind != "map":
            continue
        name = str(root.scalar("metadata", "name", default="default"))
        selector = string_map(spec.path("discovery", "nodeSelector"))
        pool = NodePool(name, "OME AcceleratorClass", root.location(loaded.path), selector)
        memory = re.sub(r"(?i)(\d+)\s*gi?b?$", r"\1GB", str(spec.scalar("capabilities", "memoryGB") or ""))
        product = next((selector[key] for key in ("nvidia.com/gpu.product", "amd.com/gpu.product-name")
                        if key in selector), None)
        described = " ".join(str(part) for part in (spec.scalar("vendor"), spec.scalar("model"), memory)
                             if part not in (None, ""))
        offer = gpu_offer(product or described or name, None)
        pool.offers = [offer]
        if offer.gpu is None:
            pool.unknown = f"{product or described or name!r} is no GPU cfgcheck knows"
        add_pool(workspace, pool, file_notes(loaded, [root.line]))
