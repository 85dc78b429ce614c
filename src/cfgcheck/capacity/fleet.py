"""The cluster a served model's pod lands on, as the repository defines it: node pools (Karpenter
NodePools, eksctl node groups, Terraform GKE / EKS / AKS node pools, GKE ComputeClasses, OME
AcceleratorClasses, KAITO workspaces), named nodes (Talos and k3s node labels), shared GPUs (the NVIDIA
device plugin's time-slicing) and the GPUs other workloads' comments name for a host.

The adapters of ``adapters/formats`` fill one ``Fleet`` per run (``adapters/core/fleet.py``); nothing
here reads a file. ``match_pod`` follows the scheduler: a node of a pool can take the pod when every
nodeSelector label and every expression of one required node-affinity term holds on it, and the pod
tolerates each NoSchedule / NoExecute taint of the pool
(https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/,
https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/).
"""

from __future__ import annotations

import posixpath

from ..cluster import MIG_CONFIG_LABEL, Fleet, MigLayout, NodePool, Offer, PoolMatch, Sharing, Taint
from .gpu_table import GPU_LABELS, Gpu, accelerator_by_instance_type, accelerator_by_name, slice_of

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

# Labels a node gets from the kubelet, the cloud or a node-feature daemon, not from the definition of its
# pool: a selector on one of them does not tell pools apart (a label of a GPU vendor's prefix still needs
# that vendor's GPU). kubernetes.io/hostname is not among them: it names one node.
_AUTO_PREFIXES = ("kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/", "topology.kubernetes.io/",
                  "failure-domain.beta.kubernetes.io/", "node.kubernetes.io/", "feature.node.kubernetes.io/",
                  "nvidia.com/", "amd.com/", "beta.amd.com/", "gpu.intel.com/", "intel.feature.node.kubernetes.io/",
                  "karpenter.k8s.aws/", "karpenter.sh/capacity-type", "eks.amazonaws.com/capacityType",
                  "cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible", "cloud.google.com/machine-family",
                  "cloud.google.com/gke-accelerator", "cloud.google.com/gke-accelerator-count")
_VENDOR_PREFIXES = {"nvidia.com/": "nvidia", "amd.com/": "amd", "beta.amd.com/": "amd"}
HOSTNAME = "kubernetes.io/hostname"
_BLOCKING = ("NoSchedule", "NoExecute")


def mig_slice(model: Any, fleet: Fleet, requested: Gpu | None) -> tuple[Gpu, str] | None:
    """The MIG slice a pod's GPU is, from the run's MIG layouts, and where that is written: for a pod
    whose nodeSelector names a layout (``nvidia.com/mig.config``) that cuts every device into one profile,
    that profile; for a pod that requests a MIG resource (``requested``, its slice), that profile. The
    slice is of the GPU product the layouts cutting it name, when they name one."""
    chosen = (getattr(model, "node_selector", None) or {}).get(MIG_CONFIG_LABEL)
    layouts = [layout for layout in fleet.mig if layout.name == chosen] if chosen else []
    if layouts:
        profiles = {profile for layout in layouts for profile in layout.profiles}
        if len(profiles) != 1 or not all(layout.every_device for layout in layouts):
            return None
        profile, lead = profiles.pop(), f"{MIG_CONFIG_LABEL}={chosen}"
    elif requested is not None and "MIG" in (requested.source or ""):
        profile, lead = requested.name.lower().rpartition("mig-")[2], f"resource {requested.name}"
        layouts = [layout for layout in fleet.mig if profile in layout.profiles]
        if not layouts:
            return None
    else:
        return None
    products = {gpu.name: gpu for layout in layouts for gpu in layout.products}
    product = next(iter(products.values())) if len(products) == 1 else None
    found = slice_of(profile, product)
    if found is None:
        return None
    of = product.name if product is not None else "a GPU the layout does not name"
    return found, f"{lead}: a {profile} slice of {of} (the MIG layout at {_where(layouts[0])})"


def _where(layout: MigLayout) -> str:
    return f"{layout.location.path}:{layout.location.line}"


def layout_key(model: Any) -> tuple[str, str | None, str | None]:
    """What makes files beside each other one layout written several ways: their folder, the model they
    serve and the image that serves it."""
    image = getattr(model, "image", None)
    return (posixpath.dirname(model.path), model.model_id(), str(image.value) if image is not None else None)


def pinned_host(model: Any) -> str | None:
    """The node a served model is pinned to: ``nodeName``, else a ``kubernetes.io/hostname`` selector."""
    placement = getattr(model, "placement", None)
    if placement is not None and placement.node:
        return placement.node
    return (getattr(model, "node_selector", None) or {}).get(HOSTNAME)


def _alternatives(model: Any) -> list[list[tuple[str, str, tuple[str, ...]]]]:
    """The scheduling constraints of the pod: its nodeSelector with each required term (terms are ORed)."""
    selector = [(key, "In", (str(value),)) for key, value in (getattr(model, "node_selector", None) or {}).items()]
    placement = getattr(model, "placement", None)
    if placement is not None and placement.node:
        selector.append((HOSTNAME, "In", (placement.node,)))
    terms = placement.terms if placement is not None and placement.terms else [[]]
    return [selector + term for term in terms]


def _auto(key: str) -> bool:
    return key.startswith(_AUTO_PREFIXES)


def _holds(key: str, operator: str, values: tuple[str, ...], pool: NodePool, offer: Offer) -> bool:
    """Whether one constraint can hold on a node of ``pool`` that is ``offer``."""
    labels = {**pool.labels, **offer.labels}
    if key in labels:
        value = labels[key]
        return {"In": value in values, "NotIn": value not in values, "Exists": True, "DoesNotExist": False,
                "Gt": _number(value) > _number(values[0]) if values else False,
                "Lt": _number(value) < _number(values[0]) if values else False}.get(operator, True)
    if key in pool.allowed:  # a Karpenter requirement: the node takes one of these values
        allowed = set(pool.allowed[key])
        return {"In": bool(allowed & set(values)), "NotIn": bool(allowed - set(values)),
                "DoesNotExist": False}.get(operator, True)
    if key in GPU_LABELS and offer.gpu is not None and operator in ("In", "NotIn"):
        # a label that names the GPU or the instance: the offer's own GPU says whether the node has it
        same = any(_names(key, value) == offer.gpu.name for value in values)
        return same if operator == "In" else not same
    if _auto(key):
        vendor = next((v for prefix, v in _VENDOR_PREFIXES.items() if key.startswith(prefix)), None)
        return vendor is None or offer.gpu is None or offer.gpu.vendor == vendor or operator in ("NotIn", "DoesNotExist")
    return operator in ("NotIn", "DoesNotExist")


def _names(key: str, value: str) -> str | None:
    """The GPU a value of the label ``key`` names (an instance type, an instance family, a product)."""
    if key.endswith("instance-type"):
        found = accelerator_by_instance_type(value)
    elif key.endswith("instance-family"):
        found = accelerator_by_instance_type(value + ".x")
    else:
        gpu = accelerator_by_name(value)
        return gpu.name if gpu is not None else None
    return found[0].name if found and found[0] is not None else None


def _number(text: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")


def _tolerated(taint: Taint, tolerations: list, resource: str | None) -> bool:
    if taint.effect not in _BLOCKING:
        return True
    if resource and taint.key == resource:
        # GKE, and clusters with the ExtendedResourceToleration admission plugin, add this toleration to
        # every pod that requests the resource (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus)
        return True
    for key, operator, value, effect in tolerations:
        if effect not in (None, "", taint.effect):
            continue
        if key in (None, "") and operator == "Exists":
            return True
        if key == taint.key and (operator == "Exists" or value == taint.value):
            return True
    return False


def _fits(model: Any, pool: NodePool, offer: Offer) -> bool:
    placement = getattr(model, "placement", None)
    tolerations = placement.tolerations if placement is not None else None
    if tolerations is not None and not all(
            _tolerated(taint, tolerations, getattr(model, "gpu_resource", None)) for taint in pool.taints):
        return False
    return any(all(_holds(key, op, values, pool, offer) for key, op, values in alternative)
               for alternative in _alternatives(model))


def _chooses(model: Any) -> bool:
    """Whether the pod picks nodes by a label a definition sets (not one every node of a vendor gets)."""
    return any(not _auto(key) for alternative in _alternatives(model) for key, _, _ in alternative)


def match_pod(model: Any, fleet: Fleet) -> PoolMatch | None:
    """What the repository's node pools say about the GPU of ``model``'s pod; None when no pool is defined
    or none can take the pod."""
    fleet.settle()
    fits = [(pool, offer) for pool in fleet.pools for offer in (pool.offers or [Offer(None, None, {}, "")])
            if _fits(model, pool, offer)]
    if not fits:
        return None
    chosen = _chooses(model)
    if not chosen:  # nothing picks a pool: the pod lands on a node with its GPU, so only GPU pools count
        fits = [(pool, offer) for pool, offer in fits if offer.gpu is not None]
        if not fits:
            return None
    return _verdict(fits, chosen)


def _verdict(fits: list[tuple[NodePool, Offer]], chosen: bool) -> PoolMatch:
    named = {offer.gpu.name: (pool, offer) for pool, offer in fits if offer.gpu is not None}
    silent = [pool for pool, offer in fits if offer.gpu is None]
    if len(named) > 1:
        said = [f"{pool.where()} offers {name}" + (f" ({offer.what})" if offer.what else "")
                for name, (pool, offer) in named.items()]
        return PoolMatch(conflicts=said, hint="the node pools it can land on offer different GPUs: " + "; ".join(said)
                         + " (select one: a nodeSelector on its instance type or GPU label)")
    if not named:
        pool = silent[0]
        why = f": {pool.unknown}" if pool.unknown else ""
        return PoolMatch(hint=f"it lands on {pool.where()}, which states no GPU cfgcheck knows{why}")
    (pool, offer), = named.values()
    counts = {o.count for p, o in fits if o.gpu is not None}
    assumed = f"{pool.where()}: {pool.assumed}" if pool.assumed else None
    if not chosen:
        assumed = assumed or "the pod selects no node pool; the only GPU the repository's node pools offer"
    elif silent:
        assumed = assumed or f"{silent[0].where()} can take the pod too and states no GPU"
    what = f" ({offer.what})" if offer.what and offer.what != offer.gpu.name else ""
    return PoolMatch(offer.gpu, counts.pop() if len(counts) == 1 else None, f"{pool.where()}{what}", assumed)


def sharing_of(model: Any, fleet: Fleet) -> Sharing | None:
    """The time-slicing that shares the GPU of ``model``'s nodes: the configuration its pool's nodes
    select, else the repository's only one (for the resource the pod requests)."""
    resource = getattr(model, "gpu_resource", None) or "nvidia.com/gpu"
    found = [s for s in fleet.settle().sharing if s.resource == resource]
    if not found:
        return None
    selected = {labels.get("nvidia.com/device-plugin.config") for labels in _pool_labels(model, fleet)}
    named = [s for s in found if s.name in selected]
    if named:
        return named[0]
    return found[0] if len(found) == 1 else None


def _pool_labels(model: Any, fleet: Fleet) -> list[dict[str, str]]:
    labels = [dict(getattr(model, "node_selector", None) or {})]
    return labels + [{**pool.labels, **offer.labels} for pool in fleet.pools
                     for offer in (pool.offers or [Offer(None, None, {}, "")]) if _fits(model, pool, offer)]
