"""Pod facts for the runtime rules (CFG5xx, CFG209): volumes and mounts, ``/dev/shm``, probes,
container ports, resources, explicit GPU ids, and the Services of the run.

A Kubernetes pod spec becomes one ``PodFacts`` here, for every format that delivers one
(``containers.container_model`` builds it); the rules read only that. A format whose pod is not a
Kubernetes pod spec (a docker-compose service) or is built by an operator from its own fields (the
production-stack chart, LLMKube, KServe's LLMInferenceService templates) builds its ``PodFacts`` itself,
with the helpers here. Services are indexed in the first pass over every file, so a Service in any file
of the run is seen by every served model.
"""

from __future__ import annotations

from ...model import GroupPod, Location, Mount, PodFacts, Port, Probe, ServedModel, Service, Setting, Volume
from ...yamlio import LoadedFile, YNode, scalar_text_location
from ..core.contexts import DocContext, Workspace
from ..core.recognition import env_map_settings, env_value_nodes, string_map
from ..core.resources import file_resources

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

SHM_PATH = "/dev/shm"
PROBES = (("livenessProbe", "liveness"), ("readinessProbe", "readiness"), ("startupProbe", "startup"))
PROBE_HANDLERS = ("httpGet", "tcpSocket", "grpc", "exec")
PROBE_FIELDS = (("initialDelaySeconds", "initial_delay"), ("periodSeconds", "period"),
                ("timeoutSeconds", "timeout"), ("failureThreshold", "failure_threshold"))


# ---------------------------------------------------------------- Services


def services(workspace: Workspace) -> list[Service]:
    """This module's index space: the Kubernetes Services of every file read."""
    return workspace.space(__name__, list)


def index_services(workspace: Workspace, loaded: LoadedFile) -> None:
    """Record every ``v1`` Service of the file: selector and target ports (``targetPort`` defaults to ``port``)."""
    for _, root in file_resources(loaded):
        if root.scalar("kind") != "Service":
            continue
        ports = root.path("spec", "ports")
        targets: list[tuple[Any, Location]] = []
        for item in ports.value if ports is not None and ports.kind == "seq" else []:
            node = item.get("targetPort") or item.get("port") if item.kind == "map" else None
            if node is not None and node.kind == "scalar" and node.value is not None:
                targets.append((node.value, scalar_text_location(loaded.path, node)))
        services(workspace).append(Service(
            str(root.scalar("metadata", "name", default="service")), root.scalar("metadata", "namespace"),
            string_map(root.path("spec", "selector")), targets, root.location(loaded.path)))


# ---------------------------------------------------------------- Kubernetes pods


def kubernetes_pod(ctx: DocContext, model: ServedModel, container: YNode, pod_spec: YNode,
                   root: YNode | None = None, labels: YNode | None = None) -> PodFacts:
    """The facts of a pod spec around ``container``; ``root`` supplies namespace and StatefulSet claims."""
    model.pod = pod_facts(ctx, container, pod_spec, root, labels)
    return model.pod


def ray_worker_pods(ctx: DocContext, cluster: YNode | None) -> dict[str, PodFacts]:
    """The pods of a KubeRay cluster spec's worker groups that request GPUs, by group name: where Ray
    places the engine's workers, each loading the weights (its first container, with its env)."""
    found: dict[str, PodFacts] = {}
    groups = cluster.get("workerGroupSpecs") if cluster is not None and cluster.kind == "map" else None
    for index, group in enumerate(groups.value if groups is not None and groups.kind == "seq" else ()):
        pod_spec = group.path("template", "spec") if group.kind == "map" else None
        containers = pod_spec.get("containers") if pod_spec is not None and pod_spec.kind == "map" else None
        if containers is None or containers.kind != "seq" or not containers.value or containers.value[0].kind != "map":
            continue
        pod = pod_facts(ctx, containers.value[0], pod_spec, None, group.path("template", "metadata", "labels"))
        if any(name.endswith("/gpu") for name in (*pod.requests, *pod.limits)):
            pod.env = env_map_settings(ctx, containers.value[0].get("env"), "")
            pod.location = ctx.location(group.get("groupName") or group)  # findings name the group
            found[str(group.scalar("groupName", default=f"workerGroupSpecs[{index}]"))] = pod
    return found


def pod_facts(ctx: DocContext, container: YNode, pod_spec: YNode, root: YNode | None = None,
              labels: YNode | None = None) -> PodFacts:
    """The facts of the pod spec ``pod_spec`` around ``container``."""
    pod = PodFacts("kubernetes", ctx.location(pod_spec), services=services(ctx.workspace))
    pod.namespace = root.scalar("metadata", "namespace") if root is not None else None
    pod.labels = string_map(labels)
    node = pod_spec.scalar("nodeName") or string_map(pod_spec.get("nodeSelector")).get("kubernetes.io/hostname") \
        or _affinity_host(pod_spec)
    pod.node = str(node) if node else None
    add_volumes(ctx, pod, pod_spec.get("volumes"))
    claims = root.path("spec", "volumeClaimTemplates") if root is not None else None
    for item in claims.value if claims is not None and claims.kind == "seq" else []:
        name = item.scalar("metadata", "name") if item.kind == "map" else None
        if isinstance(name, str):
            pod.volumes[name] = Volume(name, "volumeClaimTemplate", ctx.location(item))
    pod.mounts = read_mounts(ctx, container.get("volumeMounts"))
    pod.probes = {kind: probe for key, kind in PROBES
                  if (probe := _probe(ctx, kind, container.get(key))) is not None}
    by_container, pod.pod_ports = _pod_ports(ctx, pod_spec)
    pod.ports = by_container.get(id(container)) or _ports(ctx, container.get("ports"))
    resources = container.get("resources")
    pod.requests = _quantities(ctx, resources.get("requests") if resources is not None else None, "requests")
    pod.limits = _quantities(ctx, resources.get("limits") if resources is not None else None, "limits")
    key = resources.key_node("limits") if resources is not None and resources.kind == "map" else None
    pod.resources_at = ctx.location(key or container.key_node("resources") or container)
    pod.memory_limit = kubernetes_bytes(pod.limits.get("memory"))
    storage = pod.requests.get("ephemeral-storage") or pod.limits.get("ephemeral-storage")
    pod.ephemeral_storage = kubernetes_bytes(storage)
    pod.shm = kubernetes_shm(ctx, pod, pod_spec)
    pod.gpu_access = _kubernetes_gpu_access(ctx, container, pod_spec)
    pod.host_gpus = pod.gpu_access if pod.gpu_access is not None and pod.gpu_access[0] != "resourceClaims" else None
    rolling = root.path("spec", "strategy", "rollingUpdate") if root is not None else None
    if rolling is not None and rolling.kind == "map":
        pod.max_surge = ctx.field_setting(rolling, "maxSurge", "max_surge", "spec.strategy.rollingUpdate.maxSurge")
        pod.max_unavailable = ctx.field_setting(rolling, "maxUnavailable", "max_unavailable",
                                                "spec.strategy.rollingUpdate.maxUnavailable")
    return pod


def _pod_ports(ctx: DocContext, pod_spec: YNode) -> tuple[dict[int, list[Port]], list[Port]]:
    """The ports of each container of the pod (by node id) and of them all, read once per pod spec and
    shared by its engine containers: a pod of thousands of containers is not walked again for each."""
    found = ctx.shared.get(("pod-ports", id(pod_spec)))  # ctx lives as long as the document's nodes
    if found is None:
        by_container: dict[int, list[Port]] = {}
        for name in ("containers", "initContainers"):  # native sidecars are initContainers that keep running
            listed = pod_spec.get(name)
            for other in listed.value if listed is not None and listed.kind == "seq" else []:
                if other.kind == "map":
                    by_container[id(other)] = _ports(ctx, other.get("ports"))
        found = ctx.shared[("pod-ports", id(pod_spec))] = (
            by_container, [port for ports in by_container.values() for port in ports])
    return found


def _affinity_host(pod_spec: YNode) -> str | None:
    """The one node a required node affinity allows (``kubernetes.io/hostname In [x]``, a single term)."""
    terms = pod_spec.path("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                          "nodeSelectorTerms")
    if terms is None or terms.kind != "seq" or len(terms.value) != 1 or terms.value[0].kind != "map":
        return None
    expressions = terms.value[0].get("matchExpressions")
    for expression in expressions.value if expressions is not None and expressions.kind == "seq" else ():
        values = expression.get("values") if expression.kind == "map" else None
        if expression.kind == "map" and expression.scalar("key") == "kubernetes.io/hostname" and \
                expression.scalar("operator") == "In" and values is not None and values.kind == "seq" and \
                len(values.value) == 1 and values.value[0].kind == "scalar":
            return str(values.value[0].value)
    return None


def _kubernetes_gpu_access(ctx: DocContext, container: YNode, pod_spec: YNode) -> tuple[str, Location] | None:
    """GPUs without a device-plugin count: a DRA claim, the NVIDIA runtime class (it exposes what
    ``NVIDIA_VISIBLE_DEVICES`` names, every GPU in the CUDA images), or that variable set explicitly."""
    claims = pod_spec.get("resourceClaims") or container.path("resources", "claims")
    if claims is not None and claims.kind == "seq" and claims.value:
        return "resourceClaims", ctx.location(claims)
    runtime = pod_spec.get("runtimeClassName")
    if runtime is not None and runtime.kind == "scalar" and "nvidia" in str(runtime.value).lower():
        return f"runtimeClassName: {runtime.value}", ctx.location(runtime)
    privileged = container.path("securityContext", "privileged")
    if privileged is not None and privileged.kind == "scalar" and privileged.value is True:
        # a privileged container gets every device node of the host, the GPUs' among them (Kubernetes
        # "Configure a Security Context": privileged is root on the host's devices)
        return "privileged: true, with every device of the node", ctx.location(privileged)
    for name, value in env_value_nodes(container.get("env")):
        # an explicit device list: the author relies on the runtime exposing GPUs without a device-plugin count
        if name in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") and \
                str(value.value).lower() not in ("", "void", "none", "-1"):
            return f"{name}={value.value}", ctx.location(value)
    return None


def add_volumes(ctx: DocContext, pod: PodFacts, volumes: YNode | None) -> None:
    """Every volume of the list ``volumes`` (a pod spec's, an operator's extra volumes) into ``pod`` by name."""
    for item in volumes.value if volumes is not None and volumes.kind == "seq" else []:
        volume = read_volume(ctx, item)
        if volume is not None:
            pod.volumes[volume.name] = volume


def read_volume(ctx: DocContext, item: YNode) -> Volume | None:
    name = item.scalar("name") if item.kind == "map" else None
    if not isinstance(name, str):
        return None
    kind = next((str(k.value) for k, _ in item.items() if k.kind == "scalar" and k.value != "name"), "unknown")
    empty = item.get("emptyDir")
    medium = empty.scalar("medium") if empty is not None and empty.kind == "map" else None
    size = empty.scalar("sizeLimit") if empty is not None and empty.kind == "map" else None
    claim = item.path("persistentVolumeClaim", "claimName")
    return Volume(name, kind, ctx.location(item), medium, None if size is None else str(size),
                  str(claim.value) if claim is not None and claim.kind == "scalar" else None)


def read_mounts(ctx: DocContext, node: YNode | None) -> list[Mount]:
    found = []
    for item in node.value if node is not None and node.kind == "seq" else []:
        path, name = (item.scalar("mountPath"), item.scalar("name")) if item.kind == "map" else (None, None)
        if isinstance(path, str) and isinstance(name, str):
            found.append(Mount(path, name, ctx.location(item)))
    return found


def _probe(ctx: DocContext, kind: str, node: YNode | None) -> Probe | None:
    """A probe with Kubernetes defaults; None when absent or when a timing is not a literal number."""
    if node is None or node.kind != "map":
        return None
    handler = next((h for h in PROBE_HANDLERS if node.get(h) is not None), "unknown")
    probe = Probe(kind, handler, ctx.location(node))
    action = node.get(handler)
    if action is not None and action.kind == "map":
        path = action.scalar("path")
        probe.path = path if isinstance(path, str) else None
        port = action.get("port")
        if port is not None and port.kind == "scalar":
            probe.port, probe.port_location = port.value, ctx.location(port)
    for key, attribute in PROBE_FIELDS:
        value = node.get(key)
        if value is None:
            continue
        if value.kind != "scalar" or not isinstance(value.value, int) or isinstance(value.value, bool):
            return None
        setattr(probe, attribute, value.value)
        if attribute == "timeout":
            probe.timeout_location = ctx.location(value)
    return probe


def _ports(ctx: DocContext, node: YNode | None) -> list[Port]:
    found = []
    for item in node.value if node is not None and node.kind == "seq" else []:
        number = item.get("containerPort") if item.kind == "map" else None
        if number is not None and number.kind == "scalar":
            name = item.scalar("name")
            found.append(Port(number.value, ctx.location(number), name if isinstance(name, str) else None))
    return found


def _quantities(ctx: DocContext, node: YNode | None, section: str) -> dict[str, Setting]:
    found: dict[str, Setting] = {}
    for key, value in node.items() if node is not None else []:
        if key.kind == "scalar" and value.kind == "scalar" and value.value is not None:
            found[str(key.value)] = ctx.setting(str(key.value), key, value, f"resources.{section}.{key.value}")
    return found


def kubernetes_bytes(setting: Setting | None) -> int | None:
    return quantity_bytes(str(setting.value)) if setting is not None else None


_UNITS = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4, "K": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4}


def quantity_bytes(text: str) -> int | None:
    """A Kubernetes quantity (``32Gi``) in bytes."""
    text = text.strip()
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            number = text[: -len(unit)]
            try:
                return int(float(number) * _UNITS[unit])
            except ValueError:
                return None
    try:
        return int(text)
    except ValueError:
        return None


def group_pod(ctx: DocContext, name: str, pod_spec: YNode, gpus: int | None) -> GroupPod:
    """Another pod of an engine's group (a Ray worker, an LWS worker): its GPUs and the RAM-backed ``/dev/shm``
    any of its containers mounts (the engine's ranks there run in the Ray node or worker container)."""
    pod = PodFacts("kubernetes", ctx.location(pod_spec))
    add_volumes(ctx, pod, pod_spec.get("volumes"))
    containers = pod_spec.get("containers")
    for container in containers.value if containers is not None and containers.kind == "seq" else []:
        pod.mounts += read_mounts(ctx, container.get("volumeMounts")) if container.kind == "map" else []
    return GroupPod(name, gpus, kubernetes_shm(ctx, pod, pod_spec), pod.location)


def kubernetes_shm(ctx: DocContext, pod: PodFacts, pod_spec: YNode) -> tuple[str, Location] | None:
    host_ipc = pod_spec.get("hostIPC")
    if host_ipc is not None and host_ipc.kind == "scalar" and host_ipc.value is True:
        return "hostIPC: true", ctx.location(host_ipc)
    for mount in pod.mounts:
        if mount.path.rstrip("/") == SHM_PATH:
            volume = pod.volumes.get(mount.volume)
            how = f"volume {mount.volume!r} mounted at {SHM_PATH}"
            if volume is not None and volume.type == "emptyDir" and volume.medium == "Memory":
                how = f"emptyDir medium Memory {mount.volume!r} at {SHM_PATH}"
            return how, mount.location
    return None
