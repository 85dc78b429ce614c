"""Kubernetes workloads whose containers start an engine -> one served model per such container.

Pod templates are found wherever a resource keeps them (Deployment, StatefulSet, DaemonSet, Job,
CronJob, Pod, LeaderWorkerSet leader/worker templates, and operator resources that embed a pod spec),
by looking for ``containers`` lists. The engine argv is the container ``command`` + ``args``: ``vllm serve
M``, ``python -m vllm.entrypoints.openai.api_server``, ``python3 -m sglang.launch_server``, a shell
string under ``sh -c``, or flags alone when the image's entrypoint starts the engine. Flags inside env
strings such as ``VLLM_ADDITIONAL_ARGS`` are appended, as the images' entrypoints do.
"""

from __future__ import annotations

from ..model import ServedModel, Setting
from ..yamlio import YNode
from .base import DocContext, finish, string_map, to_int
from .containers import container_model

MAX_SEARCH_DEPTH = 12


def pod_specs(node: YNode, trail: tuple[str, ...] = (), depth: int = 0):
    """Yield (pod spec mapping, key path) for every mapping that holds a ``containers`` list."""
    if depth > MAX_SEARCH_DEPTH or node.kind != "map":
        return
    containers = node.get("containers")
    if containers is not None and containers.kind == "seq":
        yield node, trail
    for key, value in node.items():
        if key.kind == "scalar" and value.kind == "map" and key.value != "containers":
            yield from pod_specs(value, trail + (str(key.value),), depth + 1)
        elif key.kind == "scalar" and value.kind == "seq" and key.value not in ("containers", "initContainers"):
            # lists of templates: StormService roles, RayCluster workerGroupSpecs, ...
            for index, item in enumerate(value.value):
                if item.kind == "map":
                    label = item.scalar("name", default=item.scalar("groupName", default=index))
                    yield from pod_specs(item, trail + (f"{key.value}[{label}]",), depth + 1)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    kind = root.scalar("kind")
    if not isinstance(kind, str) or root.get("apiVersion") is None:
        return []
    name = str(root.scalar("metadata", "name", default=kind.lower()))
    spec = root.get("spec")
    found: list[ServedModel] = []
    for pod_spec, trail in pod_specs(root):
        for container in pod_spec.get("containers").value:
            if container.kind != "map":
                continue
            container_name = str(container.scalar("name", default="container"))
            where = "/".join(trail + (container_name,))
            model = container_model(ctx, root=root, kind=kind, name=f"{name}/{container_name}",
                                    identity=f"{kind}/{name}/{where}", container=container, pod_spec=pod_spec)
            if model is None:
                continue
            _workload_facts(ctx, model, kind, spec, pod_spec)
            found.append(finish(model))
    return found


def _workload_facts(ctx: DocContext, model: ServedModel, kind: str, spec: YNode | None, pod_spec: YNode) -> None:
    model.node_selector = string_map(pod_spec.get("nodeSelector"))
    product = model.node_selector.get("nvidia.com/gpu.product") or model.node_selector.get(
        "cloud.google.com/gke-accelerator")
    if product:
        model.gpu_product = product
    if spec is None or spec.kind != "map":
        return
    model.replicas = ctx.field_setting(spec, "replicas", "replicas", "spec.replicas", to_int)
    if kind == "Deployment":
        strategy = spec.path("strategy", "type")
        if strategy is not None:
            model.strategy = ctx.setting("strategy", spec.path("strategy").key_node("type"), strategy, "spec.strategy.type")
        else:
            model.strategy = Setting("strategy", "RollingUpdate", model.location, "Deployment default")
    elif kind in ("StatefulSet", "Pod", "LeaderWorkerSet"):
        model.strategy = Setting("strategy", kind, model.location, kind)
