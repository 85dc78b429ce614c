"""The served models of every pod spec under a resource: one per container that starts an engine.

Read by the Kubernetes workloads format (``formats/workloads.py``, the generic walker registered last) and
by formats whose resources embed workloads (llm-d's DisaggregatedSet); Ray cluster and LeaderWorkerSet
GPU counts are read by the Ray Serve format too. Pod templates are found wherever a resource keeps them (Deployment, StatefulSet, DaemonSet, Job,
CronJob, Pod, LeaderWorkerSet leader/worker templates, and operator resources that embed a pod spec),
by looking for ``containers`` lists. The engine argv is the container ``command`` + ``args``: ``vllm serve
M``, ``python -m vllm.entrypoints.openai.api_server``, ``python3 -m sglang.launch_server``, a shell
string under ``sh -c``, or flags alone when the image's entrypoint starts the engine. Flags inside env
strings such as ``VLLM_ADDITIONAL_ARGS`` are appended, as the images' entrypoints do.
"""

from __future__ import annotations

from ...engines.images import image_engine, parse_image
from ...model import ArgToken, GroupPod, ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import finish, gpu_count, ray_worker_claims, ray_worker_images, string_map, to_int
from ..core.registry import launch_helper
from . import engine_pins
from .containers import container_model, container_tokens
from .pods import group_pod, ray_worker_pods
from .shell import shell_tokens

MAX_SEARCH_DEPTH = 12
# Pod templates that are completed elsewhere (RoleBasedGroup roles patch them): not a whole pod
PARTIAL_TEMPLATES = ("roleTemplates",)
# Resources that run one engine across several pods: a GPU count read from one of their pod templates
# is not the engine's, unless ``_topology_gpus`` counts the whole group.
MULTI_POD_KINDS = ("LeaderWorkerSet", "RayService", "RayCluster", "RayJob", "RayClusterFleet")


def pod_specs(node: YNode, trail: tuple[str, ...] = (), depth: int = 0,
              found: list[tuple[YNode, tuple[str, ...]]] | None = None) -> list[tuple[YNode, tuple[str, ...]]]:
    """(pod spec mapping, key path) of every mapping that holds a ``containers`` list, in document order
    (``found``: the list they are added to; a list, not a generator: a generator's frame for each mapping
    walked, and each pod spec handed up through every level above it, cost more than the walk)."""
    found = [] if found is None else found
    if depth > MAX_SEARCH_DEPTH or node.kind != "map":
        return found
    containers = node.get("containers")
    if containers is not None and containers.kind == "seq":
        found.append((node, trail))
    for key, value in node.value:  # a mapping's (key, value) pairs
        if key.kind != "scalar":
            continue
        if value.kind == "map" and key.value != "containers":
            pod_specs(value, trail + (str(key.value),), depth + 1, found)
        elif value.kind == "seq" and key.value not in ("containers", "initContainers"):
            # lists of templates: StormService roles, RayCluster workerGroupSpecs, ...
            for index, item in enumerate(value.value):
                if item.kind == "map":
                    label = item.scalar("name", default=item.scalar("groupName", default=index))
                    pod_specs(item, trail + (f"{key.value}[{label}]",), depth + 1, found)
    return found


def workload_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    """One served model per container of every pod spec of ``root`` that starts an engine."""
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
            tokens = _ray_node_tokens(ctx, root, trail, container)
            if tokens == []:
                continue
            built = _built_here(ctx, container) if tokens is None else None
            if built is not None:
                tokens = _image_launch(ctx, container, built)
            labels = root.path(*trail[:-1], "metadata", "labels") if trail else root.path("metadata", "labels")
            model = container_model(ctx, root=root, kind=kind, name=f"{name}/{container_name}",
                                    identity=f"{kind}/{name}/{where}", container=container, pod_spec=pod_spec,
                                    tokens=tokens, default_engine=built.engine if built is not None else None,
                                    pod_labels=labels, whole_pod=not any(part.startswith(PARTIAL_TEMPLATES) for part in trail))
            if model is None:
                continue
            for env_name, setting in built.env.items() if built is not None else ():
                model.env.setdefault(env_name, setting)  # the image's ENV, unless the container sets it
            engine_pins.apply(model, built.pin if built is not None else None)
            _workload_facts(ctx, model, kind, spec, pod_spec)
            _topology_gpus(ctx, model, root, trail)
            if "headGroupSpec" in trail:
                model.accelerator_claims += ray_worker_claims(find_key(root, "headGroupSpec"))
                model.worker_images = ray_worker_images(ctx, find_key(root, "headGroupSpec"))
                model.worker_pods = ray_worker_pods(ctx, find_key(root, "headGroupSpec"))
            found.append(finish(model))
    return found


def _built_here(ctx: DocContext, container: YNode):
    """The Dockerfile of this repository that builds the container's image, as the repository states it
    (``image_builds.py``); its own served model is then this container's launch, not a second one."""
    image = container.scalar("image")
    if not isinstance(image, str) or image_engine(parse_image(image)).known:
        return None  # a public engine image (vllm/vllm-openai) is pulled, not built here
    built = launch_helper("deployed_dockerfile")(ctx.workspace, ctx.path, image)
    if built is not None:
        ctx.workspace.held.add(built.path)
    return built


def _image_launch(ctx: DocContext, container: YNode, built) -> list[ArgToken] | None:
    """What the container runs when its image is ``built``: ``command`` replaces the ENTRYPOINT and
    ``args`` the CMD (Kubernetes "Define a Command and Arguments for a Container"); a shell-form
    ENTRYPOINT ignores both CMD and args. None: the container's own command + args, as without it."""
    if container.get("command") is not None or not (built.entrypoint or built.command):
        return None
    if built.shell_entrypoint:
        return list(built.entrypoint)
    args = container_tokens(ctx, container) if container.get("args") is not None else list(built.command)
    return list(built.entrypoint) + args


def _workload_facts(ctx: DocContext, model: ServedModel, kind: str, spec: YNode | None, pod_spec: YNode) -> None:
    model.node_selector = string_map(pod_spec.get("nodeSelector"))
    product = model.node_selector.get("nvidia.com/gpu.product") or model.node_selector.get(
        "cloud.google.com/gke-accelerator")
    if product:
        model.gpu_product = product
    if kind in MULTI_POD_KINDS:
        model.gpus_span = "unknown"
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


def _ray_node_tokens(ctx: DocContext, root: YNode, trail: tuple[str, ...], container: YNode) -> list | None:
    """A Ray head or worker container without command/args runs what KubeRay generates (``ray start``),
    not the image's entrypoint: no engine, whatever the image is called. On the head, a RayJob's
    ``spec.entrypoint`` is the engine's argv; a RayService's engines are in its ``serveConfigV2``
    (formats/rayserve.py). None: use the container's own argv (a head running a script of its own)."""
    if container.get("command") is not None or container.get("args") is not None:
        return None
    if any(part.startswith("workerGroupSpecs") for part in trail):
        return []
    if "headGroupSpec" not in trail:
        return None
    entrypoint = root.path("spec", "entrypoint")
    if entrypoint is not None and entrypoint.kind == "scalar" and isinstance(entrypoint.value, str):
        return shell_tokens(ctx, entrypoint, "entrypoint")
    return []


def _pod_gpus(pod_spec: YNode | None) -> int | None:
    """GPUs one pod requests (every container); None when a count is not a literal number."""
    containers = pod_spec.get("containers") if pod_spec is not None and pod_spec.kind == "map" else None
    if containers is None or containers.kind != "seq":
        return 0
    total = 0
    for container in containers.value:
        _, value = gpu_count(container.get("resources")) if container.kind == "map" else (None, None)
        count = to_int(value.value) if value is not None and value.kind == "scalar" else 0
        if not isinstance(count, int):
            return None
        total += count
    return total


def find_key(node: YNode, key: str, depth: int = 0) -> YNode | None:
    if depth > MAX_SEARCH_DEPTH or node.kind != "map":
        return None
    if node.get(key) is not None:
        return node
    for _, value in node.items():
        found = find_key(value, key, depth + 1) if value.kind == "map" else None
        if found is not None:
            return found
    return None


def ray_cluster_gpus(cluster: YNode) -> tuple[int | None, str]:
    """GPUs of a KubeRay cluster spec: the head pod plus replicas x GPUs of every worker group."""
    head = _pod_gpus(cluster.path("headGroupSpec", "template", "spec"))
    if head is None:
        return None, ""
    total, parts = head, [f"head {head}"]
    groups = cluster.get("workerGroupSpecs")
    for group in groups.value if groups is not None and groups.kind == "seq" else []:
        replicas = to_int(group.scalar("replicas", default=group.scalar("minReplicas", default=1)))
        per_pod = _pod_gpus(group.path("template", "spec")) if group.kind == "map" else 0
        if not isinstance(replicas, int) or per_pod is None:
            return None, ""
        total += replicas * per_pod
        parts.append(f"{group.scalar('groupName', default='workers')} {replicas} x {per_pod}")
    return total, " + ".join(parts)


def _lws_gpus(root: YNode) -> tuple[int | None, str]:
    """GPUs of one LeaderWorkerSet group: the leader plus (size - 1) workers."""
    template = root.path("spec", "leaderWorkerTemplate")
    size = to_int(template.scalar("size", default=1)) if template is not None else 1
    if template is None or not isinstance(size, int):
        return None, ""
    worker = _pod_gpus(template.path("workerTemplate", "spec"))
    leader_spec = template.path("leaderTemplate", "spec")
    leader = _pod_gpus(leader_spec) if leader_spec is not None else worker
    if worker is None or leader is None:
        return None, ""
    return leader + (size - 1) * worker, f"leader {leader} + {size - 1} workers x {worker}"


def _group_pods(ctx: DocContext, root: YNode, trail: tuple[str, ...]) -> list[GroupPod]:
    """The pods of the group other than the engine's: a Ray cluster's worker groups, an LWS leader's workers
    (an LWS without a leader template runs the worker template as its leader: the same pod)."""
    if "headGroupSpec" in trail:
        groups = find_key(root, "headGroupSpec").get("workerGroupSpecs")
        return [group_pod(ctx, f"Ray worker group {group.scalar('groupName', default='workers')}", spec, _pod_gpus(spec))
                for group in (groups.value if groups is not None and groups.kind == "seq" else [])
                if group.kind == "map" and (spec := group.path("template", "spec")) is not None and spec.kind == "map"]
    spec = root.path("spec", "leaderWorkerTemplate", "workerTemplate", "spec")
    if "leaderTemplate" in trail and spec is not None and spec.kind == "map":
        return [group_pod(ctx, "LeaderWorkerSet workers", spec, _pod_gpus(spec))]
    return []


def _topology_gpus(ctx: DocContext, model: ServedModel, root: YNode, trail: tuple[str, ...]) -> None:
    """The GPUs an engine started on a Ray head or an LWS leader spans: every pod of its group.

    Only the head/leader runs the engine; the other pods join it (``ray start``, ``--node-rank``)."""
    if model.gpus is None and "headGroupSpec" not in trail:
        return
    if "headGroupSpec" in trail and not model.argv:
        model.gpus = None  # Ray Serve starts the engine from its own config: its parallel sizes are not here
        return
    if "headGroupSpec" in trail:
        total, how = ray_cluster_gpus(find_key(root, "headGroupSpec"))
    elif "leaderTemplate" in trail or (root.scalar("kind") == "LeaderWorkerSet" and "workerTemplate" in trail):
        total, how = _lws_gpus(root)
    else:
        return
    model.gpus_span = "group"
    model.group_pods = _group_pods(ctx, root, trail)
    # an engine started on a head that requests no GPU itself still spans the workers' GPUs
    location, source = (model.gpus.location, model.gpus.source) if model.gpus is not None else \
        (model.location, "rayClusterSpec")
    if total is None:
        model.gpus = Setting("gpus", None, location, f"{source} (topology: not literal)")
    else:
        model.gpus = Setting("gpus", total, location, f"{source} (topology: {how})")
