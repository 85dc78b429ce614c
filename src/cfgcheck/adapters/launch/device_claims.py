"""Dynamic Resource Allocation (``resource.k8s.io``): the accelerator a pod's ``resourceClaims`` ask for.

A pod names a ``ResourceClaimTemplate`` or a ``ResourceClaim``; its device requests name a
``DeviceClass`` (``gpu.nvidia.com``, ``gaudi.intel.com`` …), a count, and CEL selectors such as
``device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"``. The index hook records
them from every file; ``pod_claims`` turns the ones a pod refers to into accelerator claims
(``capacity.gpus.Claim``) and a device count. Both API shapes are read: ``v1beta1`` (fields on the
request) and ``v1`` (under ``exactly``). See
https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/.
"""

from __future__ import annotations

from ... import lazy
from ...capacity.gpus import Claim
from ...model import Setting
from ...records import Record
from ...yamlio import LoadedFile, YNode, scalar_text_location
from ..core.contexts import DocContext, Workspace
from ..core.recognition import is_resource, to_int
from ..core.resources import NO_POD_SPEC, file_resources

MARKERS = ("resourceclaim",)
# claims and device classes are of the API group resource.k8s.io; pods name them under resourceClaims
INDEX_WORDS = ("resource.k8s.io", "resourceclaim")
CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
# A CEL comparison of a device attribute that names the product: productName (NVIDIA, AMD), model.
_PRODUCT = lazy.Pattern(r"""\.(?:productName|model)\s*==\s*["']([^"']{1,100})["']""")
MAX_DEPTH = 12


class DeviceRequests(Record):
    """What one claim asks for: product names from CEL selectors, device classes, and the device count
    (None when a request allocates ``All`` devices or its count is not a number)."""

    __slots__ = ("products", "classes", "count")

    def __init__(self, products: list[str] | None = None, classes: list[str] | None = None,
                 count: Setting | None = None) -> None:
        self.products = [] if products is None else products
        self.classes = [] if classes is None else classes
        self.count = count


def _is_dra(root: YNode) -> bool:
    return is_resource(root, "resource.k8s.io/")


class _Indexed:
    """This module's index space: DRA claims and templates by name, device classes' selectors."""

    def __init__(self) -> None:
        self.claims: dict[str, DeviceRequests] = {}  # "Kind/name" of templates and claims
        self.classes: dict[str, list[str]] = {}  # DeviceClass name -> its CEL selectors


def _space(workspace: Workspace) -> _Indexed:
    """This module's index space: the DRA claims, templates and device classes of every file."""
    return workspace.space(__name__, _Indexed)


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Record every ResourceClaimTemplate, ResourceClaim and DeviceClass of the file."""
    for _, root in file_resources(loaded):
        if not _is_dra(root):
            continue
        kind, name = root.scalar("kind"), root.scalar("metadata", "name")
        if kind == "DeviceClass" and isinstance(name, str):
            _space(workspace).classes[name] = _expressions(root.path("spec", "selectors"))
        elif kind in CLAIM_KINDS and isinstance(name, str):
            spec = root.path("spec", "spec") if kind == "ResourceClaimTemplate" else root.get("spec")
            _space(workspace).claims[f"{kind}/{name}"] = _requests(loaded, spec, f"{kind} {name}")


def served_models(ctx: DocContext, root: YNode) -> list:
    return []  # claims and classes serve no model; pods refer to them (``pod_claims``)


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """A pod that refers to a claim or template not indexed yet: read its file after the others."""
    return any(ref not in _space(workspace).claims for ref in _references(root, 0))


def _references(root: YNode, depth: int) -> list[str]:
    """The claims and templates the pod specs under ``root`` refer to (an iterative, pruned walk: this
    runs on every document of every file)."""
    found: list[str] = []
    stack = [(root, depth)]
    while stack:
        node, level = stack.pop()
        if level > MAX_DEPTH:
            continue
        if node.kind == "seq":
            stack.extend((item, level + 1) for item in node.value if item.kind in ("map", "seq"))
            continue
        claims, pod = None, False
        for key, value in node.value if node.kind == "map" else ():
            name = key.value if key.kind == "scalar" else None
            if name == "resourceClaims":
                claims = value
            pod = pod or name == "containers"
            if name not in NO_POD_SPEC and value.kind in ("map", "seq"):
                stack.append((value, level + 1))
        if pod and claims is not None and claims.kind == "seq":
            found += [ref for item in claims.value if (ref := _reference(item))]
    return found


def _reference(item: YNode) -> str | None:
    if item.kind != "map":
        return None
    template = item.scalar("resourceClaimTemplateName") or item.path("source", "resourceClaimTemplateName")
    claim = item.scalar("resourceClaimName") or item.path("source", "resourceClaimName")
    template = template.value if isinstance(template, YNode) else template
    claim = claim.value if isinstance(claim, YNode) else claim
    if isinstance(template, str):
        return f"ResourceClaimTemplate/{template}"
    return f"ResourceClaim/{claim}" if isinstance(claim, str) else None


def _expressions(selectors: YNode | None) -> list[str]:
    found = []
    for item in selectors.value if selectors is not None and selectors.kind == "seq" else []:
        expression = item.path("cel", "expression") if item.kind == "map" else None
        if expression is not None and isinstance(expression.value, str):
            found.append(expression.value)
    return found


def _requests(loaded: LoadedFile, spec: YNode | None, where: str) -> DeviceRequests:
    found = DeviceRequests()
    requests = spec.path("devices", "requests") if spec is not None and spec.kind == "map" else None
    total: int | None = 0
    for request in requests.value if requests is not None and requests.kind == "seq" else []:
        body = request.get("exactly") or request if request.kind == "map" else None
        if body is None or body.kind != "map":
            continue
        class_name = body.scalar("deviceClassName")
        if isinstance(class_name, str):
            found.classes.append(class_name)
        found.products += [m for e in _expressions(body.get("selectors")) for m in _PRODUCT.findall(e)]
        count_node = body.get("count")
        count = to_int(count_node.value) if count_node is not None and count_node.kind == "scalar" else 1
        if body.scalar("allocationMode") == "All" or not isinstance(count, int) or total is None:
            total = None
        else:
            total += count
        if count_node is not None and found.count is None:
            found.count = Setting("gpus", None, scalar_text_location(loaded.path, count_node), f"{where} devices.requests.count")
    if total and found.count is not None:
        found.count = Setting("gpus", total, found.count.location, found.count.source)
    elif total and requests is not None:
        found.count = Setting("gpus", total, requests.location(loaded.path), f"{where} devices.requests")
    return found


def pod_claims(workspace: Workspace, pod_spec: YNode | None) -> tuple[list[Claim], Setting | None]:
    """The accelerator claims and device count of the DRA claims a pod spec refers to."""
    claims = pod_spec.get("resourceClaims") if pod_spec is not None and pod_spec.kind == "map" else None
    found: list[Claim] = []
    count: Setting | None = None
    for item in claims.value if claims is not None and claims.kind == "seq" else []:
        ref = _reference(item)
        requests = _space(workspace).claims.get(ref) if ref else None
        if requests is None:
            continue
        products = list(requests.products)
        for name in requests.classes:
            products += [m for e in _space(workspace).classes.get(name, []) for m in _PRODUCT.findall(e)]
        if products:
            found.append(Claim("DRA productName", tuple(dict.fromkeys(products)), f"DRA {ref}"))
        found += [Claim("DRA deviceClassName", (name,), f"DRA {ref}", "kind") for name in requests.classes]
        count = count or requests.count
    return found, count
