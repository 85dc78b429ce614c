"""The run's cluster definitions (``cluster.Fleet``), and what the formats that read them share.

This module owns the index space the cluster formats (``formats/karpenter.py``, ``eksctl.py``,
``terraform.py``, ``node_labels.py`` ...) add their node pools, nodes and shared GPUs to, and the
served models' view of a pod's placement (``placement``: required node affinity, tolerations, the node
it names, the comments beside them). ``attach`` gives every served model of the run the fleet, once every
file has been read; capacity matches the pod against it (``capacity/fleet.match_pod``).
"""

from __future__ import annotations

from collections import Counter

from ...capacity.evidence import one_gpu
from ...capacity.fleet import layout_key
from ...cluster import Fleet, HostNote, NodePool, Offer, Placement, Taint
from ...capacity.gpu_table import accelerator_by_instance_type, gpus_in_text
from ...model import Location, ServedModel
from ...yamlio import LoadedFile, YNode
from .contexts import DocContext, Workspace, comment_lines
from .recognition import is_resource
from .resources import NO_POD_SPEC, file_resources

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Iterator

_MAX_DEPTH = 12  # pod specs sit a few levels down a resource; deeper is data, not a pod


def fleet(workspace: Workspace) -> Fleet:
    """This module's index space: the node pools, nodes and shared GPUs of every file read."""
    return workspace.space(__name__, Fleet)


def attach(workspace: Workspace, models: list[ServedModel], files: list[LoadedFile] = ()) -> None:
    """Give each served model the run's cluster definitions, and remember the comments that name a GPU
    in each of ``files`` whose served models are all of one document (one resource, one script: what its
    author wrote is about that deployment)."""
    found = fleet(workspace)
    count = Counter(path for path, _ in {(model.path, model.document) for model in models if not model.template})
    headers: dict[str, list[tuple[int, str]]] = {}
    for file in files:
        if count.get(file.path) == 1:
            named = [(line, c.text) for line, c in sorted(file.comments.items()) if gpus_in_text(c.text)]
            if named:
                found.solo[file.path] = named
                header = _header_lines(file)
                headers[file.path] = [(line, text) for line, text in named if line in header]
    for model in models:
        model.cluster = found
        if headers.get(model.path) and model.kind in LAYOUT_KINDS and model.model_id() is not None:
            found.layouts.setdefault(layout_key(model), []).append((model.path, headers[model.path]))


# the formats whose files beside each other are one machine's alternatives: compose files of one folder
# (a file per parallel size or quantisation); Kubernetes manifests of one folder are often unrelated samples
LAYOUT_KINDS = ("docker-compose",)


def _header_lines(loaded: LoadedFile) -> set[int]:
    """The lines of the comment block a file opens with (after a shebang)."""
    lines, probe = set(), 1
    while (comment := loaded.comments.get(probe)) is not None and comment.full_line:
        lines.add(probe)
        probe += 1
    return lines


def notes_at(ctx: DocContext, nodes: list[YNode | None]) -> list[tuple[Location, str]]:
    """The comments on and above each of ``nodes`` (keys, list items), located, in line order."""
    return file_notes(ctx.loaded, [node.line for node in nodes if node is not None])


def file_notes(loaded: LoadedFile, lines: list[int]) -> list[tuple[Location, str]]:
    """The comments on and directly above each of ``lines`` of ``loaded``, located, in line order."""
    found = {number: text for line in lines for number, text in comment_lines(loaded, line)}
    return [(Location(loaded.path, line, 1), text) for line, text in sorted(found.items())]


def add_pool(workspace: Workspace, pool: NodePool, notes: list[tuple[Location, str]]) -> None:
    """Record a node pool of the run, its GPU assumed from ``notes`` (comments on it) when it states none."""
    fleet(workspace).pools.append(commented_gpu(pool, notes))
    for host in pool.hosts:
        fleet(workspace).hosts.setdefault(host, pool.location)


def resources_of(loaded: LoadedFile, group: str, kinds: str | tuple[str, ...]) -> Iterator[YNode]:
    """The resources of ``loaded`` of the API ``group`` and one of ``kinds`` (``recognition.is_resource``);
    the file's text is tested for the group first, before any walk."""
    if group in loaded.text:
        for _, root in file_resources(loaded):
            if is_resource(root, group, kinds):
                yield root


def placement(ctx: DocContext, pod_spec: YNode) -> Placement:
    """Where the pod of ``pod_spec`` may be scheduled beyond its nodeSelector, and what was written beside it."""
    terms_node = pod_spec.path("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                               "nodeSelectorTerms")
    terms = [_expressions(term.get("matchExpressions")) for term in _seq(terms_node) if term.kind == "map"]
    tolerations = [(item.scalar("key"), str(item.scalar("operator", default="Equal")), _text(item.scalar("value")),
                    item.scalar("effect")) for item in _seq(pod_spec.get("tolerations")) if item.kind == "map"]
    selector = pod_spec.get("nodeSelector")
    keys = [pod_spec.key_node(key) for key in ("nodeSelector", "affinity", "tolerations", "nodeName")]
    keys += [key for key, _ in selector.items()] if selector is not None and selector.kind == "map" else []
    node = pod_spec.scalar("nodeName")
    return Placement([t for t in terms if t], tolerations, str(node) if node else None, notes_at(ctx, keys))


def _expressions(node: YNode | None) -> list[tuple[str, str, tuple[str, ...]]]:
    found = []
    for expr in _seq(node):
        key = expr.scalar("key") if expr.kind == "map" else None
        if isinstance(key, str):
            values = tuple(str(v.value) for v in _seq(expr.get("values")) if v.kind == "scalar" and v.value is not None)
            found.append((key, str(expr.scalar("operator", default="In")), values))
    return found


def _seq(node: YNode | None) -> list[YNode]:
    return node.value if node is not None and node.kind == "seq" else []


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def pod_specs(root: YNode, depth: int = 0) -> Iterator[YNode]:
    """Every mapping under ``root`` that holds a ``containers`` list: a pod spec, whatever wraps it."""
    if root.kind == "map":
        containers = root.get("containers")
        if containers is not None and containers.kind == "seq":
            yield root
            return
        children = [value for key, value in root.value if value.kind != "scalar" and key.value not in NO_POD_SPEC]
    elif root.kind == "seq":
        children = [child for child in root.value if child.kind != "scalar"]  # a scalar holds no pod spec
    else:
        return
    if depth < _MAX_DEPTH:
        for child in children:
            yield from pod_specs(child, depth + 1)


# ---------------------------------------------------------------- what the cluster formats share


def instance_offer(instance_type: str, labels: dict[str, str] | None = None) -> Offer:
    """What a node of a cloud instance type offers: its GPU and count from the table, and the well-known
    instance-type label every such node carries."""
    found = accelerator_by_instance_type(instance_type)
    gpu, count = found if found else (None, None)
    return Offer(gpu, count, {"node.kubernetes.io/instance-type": instance_type, **(labels or {})}, instance_type)


def gpu_offer(text: str, count: int | None, labels: dict[str, str] | None = None) -> Offer:
    """What a node offers when its definition names the GPU itself (``nvidia-l4``, ``NVIDIA-A100-SXM4-80GB``)."""
    named = gpus_in_text(text)
    return Offer(named[0][0] if len(named) == 1 else None, count, dict(labels or {}), text)


def taint(key: Any, value: Any, effect: Any) -> Taint | None:
    if not isinstance(key, str) or not key:
        return None
    return Taint(key, None if value in (None, "") else str(value), str(effect or "NoSchedule"))


def parse_taint(text: str) -> Taint | None:
    """A taint as kubectl and kubelet flags write it: ``key=value:Effect`` or ``key:Effect``."""
    head, _, effect = str(text).rpartition(":") if ":" in str(text) else (str(text), "", "NoSchedule")
    key, _, value = head.partition("=")
    return taint(key.strip(), value.strip(), effect.strip())


def commented_gpu(pool: NodePool, comments: list[tuple[Location, str]]) -> NodePool:
    """A pool whose definition states no GPU, but a comment on it names one (``# one 3090``): that GPU,
    assumed, with where it was written."""
    if any(offer.gpu is not None for offer in pool.offers):
        return pool
    found = one_gpu((f"{where.path}:{where.line}", text) for where, text in comments)
    if isinstance(found, tuple):
        gpu, words, where = found
        counts = {offer.count for offer in pool.offers}
        pool.offers = [Offer(gpu, counts.pop() if len(counts) == 1 else None, {}, words)]
        pool.assumed = f"the comment at {where} names {words!r}"
    return pool


def note_hosts(workspace: Workspace, hosts: dict[str, Location]) -> None:
    """Host names the repository defines or pins workloads to (for ``cfgcheck init``)."""
    for host, where in hosts.items():
        fleet(workspace).hosts.setdefault(host, where)


def add_note(workspace: Workspace, host: str | None, comments: list[tuple[Location, str]],
             document: int | None = None) -> None:
    """The GPUs a comment beside a GPU workload names, about the host it is pinned to (or none)."""
    for where, text in comments:
        found = one_gpu([(f"{where.path}:{where.line}", text)])
        if isinstance(found, tuple):
            fleet(workspace).notes.append(HostNote(host, found[0], where, found[1], document=document))
