"""Pod facts for the runtime rules (CFG5xx, CFG209): volumes and mounts, ``/dev/shm``, probes,
container ports, resources, explicit GPU ids, and the Services of the run.

A Kubernetes pod spec, a docker-compose service, or the pod an operator builds from its own fields
(the production-stack chart, LLMKube, KServe's LLMInferenceService templates) each become one
``PodFacts``; the rules read only that. Services are indexed in the first pass over every file, so a
Service in any file of the run is seen by every served model.
"""

from __future__ import annotations

import re
from typing import Any

from ...model import Location, Mount, PodFacts, Port, Probe, ServedModel, Service, Setting, Volume
from ...yamlio import LoadedFile, YNode, scalar_text_location
from ..core.contexts import DocContext, Workspace
from ..core.recognition import string_map
from .containers import env_value_nodes
from ..core.resources import file_resources

SHM_PATH = "/dev/shm"
PROBES = (("livenessProbe", "liveness"), ("readinessProbe", "readiness"), ("startupProbe", "startup"))
PROBE_HANDLERS = ("httpGet", "tcpSocket", "grpc", "exec")
PROBE_FIELDS = (("initialDelaySeconds", "initial_delay"), ("periodSeconds", "period"),
                ("timeoutSeconds", "timeout"), ("failureThreshold", "failure_threshold"))


# ---------------------------------------------------------------- Services


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
        workspace.services.append(Service(
            str(root.scalar("metadata", "name", default="service")), root.scalar("metadata", "namespace"),
            string_map(root.path("spec", "selector")), targets, root.location(loaded.path)))


# ---------------------------------------------------------------- Kubernetes pods


def kubernetes_pod(ctx: DocContext, model: ServedModel, container: YNode, pod_spec: YNode,
                   root: YNode | None = None, labels: YNode | None = None) -> PodFacts:
    """The facts of a pod spec around ``container``; ``root`` supplies namespace and StatefulSet claims."""
    pod = PodFacts("kubernetes", ctx.location(pod_spec), services=ctx.workspace.services)
    pod.namespace = root.scalar("metadata", "namespace") if root is not None else None
    pod.labels = string_map(labels)
    node = pod_spec.scalar("nodeName") or string_map(pod_spec.get("nodeSelector")).get("kubernetes.io/hostname")
    pod.node = str(node) if node else None
    volumes = pod_spec.get("volumes")
    for item in volumes.value if volumes is not None and volumes.kind == "seq" else []:
        volume = _volume(ctx, item)
        if volume is not None:
            pod.volumes[volume.name] = volume
    claims = root.path("spec", "volumeClaimTemplates") if root is not None else None
    for item in claims.value if claims is not None and claims.kind == "seq" else []:
        name = item.scalar("metadata", "name") if item.kind == "map" else None
        if isinstance(name, str):
            pod.volumes[name] = Volume(name, "volumeClaimTemplate", ctx.location(item))
    pod.mounts = _mounts(ctx, container.get("volumeMounts"))
    pod.probes = {kind: probe for key, kind in PROBES
                  if (probe := _probe(ctx, kind, container.get(key))) is not None}
    pod.ports = _ports(ctx, container.get("ports"))
    for key in ("containers", "initContainers"):  # native sidecars are initContainers that keep running
        siblings = pod_spec.get(key)
        for other in siblings.value if siblings is not None and siblings.kind == "seq" else []:
            if other is not container and other.kind == "map":
                pod.sibling_ports.extend(_ports(ctx, other.get("ports")))
    resources = container.get("resources")
    pod.requests = _quantities(ctx, resources.get("requests") if resources is not None else None, "requests")
    pod.limits = _quantities(ctx, resources.get("limits") if resources is not None else None, "limits")
    pod.memory_limit = _kubernetes_bytes(pod.limits.get("memory"))
    storage = pod.requests.get("ephemeral-storage") or pod.limits.get("ephemeral-storage")
    pod.ephemeral_storage = _kubernetes_bytes(storage)
    pod.shm = _kubernetes_shm(ctx, pod, pod_spec)
    pod.gpu_access = _kubernetes_gpu_access(ctx, container, pod_spec)
    rolling = root.path("spec", "strategy", "rollingUpdate") if root is not None else None
    if rolling is not None and rolling.kind == "map":
        pod.max_surge = ctx.field_setting(rolling, "maxSurge", "max_surge", "spec.strategy.rollingUpdate.maxSurge")
        pod.max_unavailable = ctx.field_setting(rolling, "maxUnavailable", "max_unavailable",
                                                "spec.strategy.rollingUpdate.maxUnavailable")
    model.pod = pod
    return pod


def _kubernetes_gpu_access(ctx: DocContext, container: YNode, pod_spec: YNode) -> tuple[str, Location] | None:
    """GPUs without a device-plugin count: a DRA claim, the NVIDIA runtime class (it exposes what
    ``NVIDIA_VISIBLE_DEVICES`` names, every GPU in the CUDA images), or that variable set explicitly."""
    claims = pod_spec.get("resourceClaims") or container.path("resources", "claims")
    if claims is not None and claims.kind == "seq" and claims.value:
        return "resourceClaims", ctx.location(claims)
    runtime = pod_spec.get("runtimeClassName")
    if runtime is not None and runtime.kind == "scalar" and "nvidia" in str(runtime.value).lower():
        return f"runtimeClassName: {runtime.value}", ctx.location(runtime)
    for name, value in env_value_nodes(container.get("env")):
        # an explicit device list: the author relies on the runtime exposing GPUs without a device-plugin count
        if name in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") and \
                str(value.value).lower() not in ("", "void", "none", "-1"):
            return f"{name}={value.value}", ctx.location(value)
    return None


def _volume(ctx: DocContext, item: YNode) -> Volume | None:
    name = item.scalar("name") if item.kind == "map" else None
    if not isinstance(name, str):
        return None
    kind = next((str(k.value) for k, _ in item.items() if k.kind == "scalar" and k.value != "name"), "unknown")
    empty = item.get("emptyDir")
    medium = empty.scalar("medium") if empty is not None and empty.kind == "map" else None
    size = empty.scalar("sizeLimit") if empty is not None and empty.kind == "map" else None
    return Volume(name, kind, ctx.location(item), medium, None if size is None else str(size))


def _mounts(ctx: DocContext, node: YNode | None) -> list[Mount]:
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


def _kubernetes_bytes(setting: Setting | None) -> int | None:
    from ..formats.llmkube import quantity_bytes  # imported here: llmkube imports this module

    return quantity_bytes(str(setting.value)) if setting is not None else None


def _kubernetes_shm(ctx: DocContext, pod: PodFacts, pod_spec: YNode) -> tuple[str, Location] | None:
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


# ---------------------------------------------------------------- docker-compose


def compose_pod(ctx: DocContext, model: ServedModel, service: YNode, path: str) -> PodFacts:
    pod = PodFacts("compose", ctx.location(service), node=f"the compose file {ctx.path}")
    pod.mounts, pod.volumes = _compose_volumes(ctx, service.get("volumes"))
    for item in _seq_or_scalar(service.get("tmpfs")):
        if item.kind == "scalar" and str(item.value).split(":", 1)[0].rstrip("/") == SHM_PATH:
            pod.mounts.append(Mount(SHM_PATH, "tmpfs", ctx.location(item)))
            pod.volumes["tmpfs"] = Volume("tmpfs", "tmpfs", ctx.location(item), "Memory")
    host_network = str(service.scalar("network_mode", default="")) == "host"  # published ports are then ignored
    for item in [] if host_network else _seq_or_scalar(service.get("ports")) + _seq_or_scalar(service.get("expose")):
        number = _compose_container_port(item)
        if number is not None:
            pod.ports.append(Port(number, ctx.location(item)))
    memory = service.path("deploy", "resources", "limits", "memory") or service.get("mem_limit")
    if memory is not None and memory.kind == "scalar":
        pod.limits["memory"] = ctx.setting("memory", None, memory, f"{path}.deploy.resources.limits.memory")
        pod.memory_limit = docker_bytes(str(memory.value))
    pod.devices = _compose_device_ids(ctx, service, path)
    pod.shm = _compose_shm(ctx, pod, service)
    pod.gpu_access = _compose_gpu_access(ctx, service)
    model.pod = pod
    return pod


_DOCKER_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def docker_bytes(text: str) -> int | None:
    """A compose byte value (``16g``, ``512m``, ``1gb``: binary units, case-blind) in bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?\s*", text.lower())
    return int(float(match.group(1)) * _DOCKER_UNITS[match.group(2)]) if match else None


def _seq_or_scalar(node: YNode | None) -> list[YNode]:
    if node is None:
        return []
    return list(node.value) if node.kind == "seq" else [node] if node.kind == "scalar" else []


def _compose_volumes(ctx: DocContext, node: YNode | None) -> tuple[list[Mount], dict[str, Volume]]:
    """Short (``src:dst[:mode]``) and long (``{type, source, target}``) volume syntax."""
    mounts: list[Mount] = []
    volumes: dict[str, Volume] = {}
    for item in _seq_or_scalar(node):
        if item.kind == "scalar" and isinstance(item.value, str):
            parts = _volume_fields(item.value)
            source, target = (parts[0], parts[1]) if len(parts) >= 2 else (None, parts[0])
            kind = "anonymous" if source is None else "bind" if source[:1] in ("/", ".", "~", "$") else "named"
        elif item.kind == "map":
            source, target = item.scalar("source"), item.scalar("target")
            kind = str(item.scalar("type", default="volume"))
            kind = "named" if kind == "volume" and source else "anonymous" if kind == "volume" else kind
        else:
            continue
        if not isinstance(target, str):
            continue
        name = str(source) if source else target
        location = ctx.location(item)
        mounts.append(Mount(target, name, location))
        volumes[name] = Volume(name, kind, location, "Memory" if kind == "tmpfs" else None)
    return mounts, volumes


def _volume_fields(text: str) -> list[str]:
    """``src:dst[:mode]`` split on the colons outside ``${VAR:-default}`` interpolations."""
    fields, current, depth = [], "", 0
    for index, char in enumerate(text):
        if char == "{" and index and text[index - 1] == "$":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == ":" and not depth:
            fields.append(current)
            current = ""
        else:
            current += char
    return fields + [current]


def _compose_container_port(item: YNode) -> int | None:
    """The container side of ``[ip:]host:container[/proto]``, ``container``, or ``{target: N}``."""
    if item.kind == "map":
        value = item.scalar("target")
    elif item.kind == "scalar":
        value = str(item.value).split("/", 1)[0].rsplit(":", 1)[-1]
    else:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None  # a range or an interpolation


def _compose_device_ids(ctx: DocContext, service: YNode, path: str) -> Setting | None:
    devices = service.path("deploy", "resources", "reservations", "devices")
    for index, device in enumerate(devices.value if devices is not None and devices.kind == "seq" else []):
        ids = device.get("device_ids") if device.kind == "map" else None
        if ids is not None and ids.kind == "seq":
            setting = ctx.setting("device_ids", device.key_node("device_ids"), ids,
                                  f"{path}.deploy.resources.reservations.devices[{index}].device_ids")
            setting.value = [str(i.value) for i in ids.value if i.kind == "scalar"]
            return setting
    return None


def _compose_gpu_access(ctx: DocContext, service: YNode) -> tuple[str, Location] | None:
    """GPUs given to a compose service: ``runtime: nvidia``, ``gpus:``, a GPU device reservation
    (``count`` defaults to all), or ``/dev/nvidia*``, ``/dev/dri``, ``/dev/kfd`` devices."""
    runtime = service.get("runtime")
    if runtime is not None and runtime.kind == "scalar" and "nvidia" in str(runtime.value).lower():
        return f"runtime: {runtime.value}", ctx.location(runtime)
    if service.get("gpus") is not None:
        return "gpus", ctx.location(service.get("gpus"))
    devices = service.path("deploy", "resources", "reservations", "devices")
    for device in devices.value if devices is not None and devices.kind == "seq" else []:
        capabilities = device.get("capabilities") if device.kind == "map" else None
        listed = capabilities is not None and capabilities.kind == "seq"
        names = [str(c.value) for c in capabilities.value] if listed else []
        if "gpu" in names or (device.kind == "map" and device.scalar("driver") in ("nvidia", "amd", "cdi")):
            return "a GPU device reservation", ctx.location(device)
    for item in _seq_or_scalar(service.get("devices")):
        text = str(item.value) if item.kind == "scalar" else str(item.scalar("source", default=""))
        if text.startswith(("/dev/nvidia", "/dev/dri", "/dev/kfd", "nvidia.com/gpu", "amd.com/gpu")):
            return f"device {text}", ctx.location(item)
    return None


def _compose_shm(ctx: DocContext, pod: PodFacts, service: YNode) -> tuple[str, Location] | None:
    size = service.get("shm_size")
    if size is not None and size.kind == "scalar" and size.value not in (None, ""):
        return f"shm_size: {size.value}", ctx.location(size)
    ipc = service.get("ipc")
    # host: the host's /dev/shm; container:/service: another container's, whose size is not ours to judge
    if ipc is not None and ipc.kind == "scalar" and str(ipc.value).startswith(("host", "container:", "service:")):
        return f"ipc: {ipc.value}", ctx.location(ipc)
    for mount in pod.mounts:
        if mount.path.rstrip("/") == SHM_PATH:
            return f"{mount.volume} at {SHM_PATH}", mount.location
    return None


# ---------------------------------------------------------------- pods that operators build

# vllm-project/production-stack helm/templates/deployment-vllm-multi.yaml (a6c01db, lines 426-429 and
# 483-488): the chart mounts an emptyDir {medium: Memory, sizeLimit: shmSize | 20Gi} at /dev/shm only
# when vllmConfig has the key tensorParallelSize; the pod gets HF_HOME=/data when pvcStorage is set.
PRODUCTION_STACK_QUANTITIES = (("requestMemory", "requests", "memory"), ("requestCPU", "requests", "cpu"),
                               ("limitMemory", "limits", "memory"), ("limitCPU", "limits", "cpu"))


def production_stack_pod(ctx: DocContext, model: ServedModel, entry: YNode, path: str, values: YNode) -> PodFacts:
    pod = PodFacts("production-stack", ctx.location(entry))
    config = entry.get("vllmConfig")
    key = config.key_node("tensorParallelSize") if config is not None and config.kind == "map" else None
    if key is not None:
        pod.shm = "the production-stack chart's shm emptyDir (vllmConfig.tensorParallelSize is set)", ctx.location(key)
    storage = entry.get("pvcStorage")
    if storage is not None:
        kind = "emptyDir" if storage.kind == "map" and storage.get("emptyDir") is not None else "persistentVolumeClaim"
        pod.volumes["storage"] = Volume("storage", kind, ctx.location(storage))
        pod.mounts.append(Mount("/data", "storage", ctx.location(storage)))
    shared = values.path("sharedPvcStorage", "enabled")
    if shared is not None and shared.kind == "scalar" and shared.value is True:
        pod.volumes["shared"] = Volume("shared", "persistentVolumeClaim", ctx.location(shared))
        pod.mounts.append(Mount("/data/shared-pvc-storage", "shared", ctx.location(shared)))
    # the chart's HF_HOME: the shared claim, else the model's own storage, else /tmp
    home = "/data/shared-pvc-storage" if "shared" in pod.volumes else "/data" if storage is not None else "/tmp"
    at = shared if "shared" in pod.volumes else storage if storage is not None else entry
    model.env.setdefault("HF_HOME", Setting("HF_HOME", home, ctx.location(at), "production-stack chart HF_HOME",
                                            origin="env"))
    devices = entry.path("lmcacheConfig", "cudaVisibleDevices")  # the chart sets CUDA_VISIBLE_DEVICES from it
    if devices is not None and devices.kind == "scalar" and devices.value not in (None, ""):
        pod.gpu_access = f"lmcacheConfig.cudaVisibleDevices {devices.value}", ctx.location(devices)
    for field, section, resource in PRODUCTION_STACK_QUANTITIES:
        setting = ctx.field_setting(entry, field, resource, f"{path}.{field}")
        if setting is not None:
            getattr(pod, section)[resource] = setting
    pod.memory_limit = _kubernetes_bytes(pod.limits.get("memory"))
    _production_stack_lmcache(ctx, model, entry, path)
    model.pod = pod
    return pod


def _production_stack_lmcache(ctx: DocContext, model: ServedModel, entry: YNode, path: str) -> None:
    """The chart sets LMCACHE_MAX_LOCAL_CPU_SIZE from lmcacheConfig.cpuOffloadingBufferSize when LMCache
    is enabled and the size is above 0 (deployment-vllm-multi.yaml, lines 336-343 at a6c01db)."""
    config = entry.get("lmcacheConfig")
    if config is None or config.kind != "map" or config.scalar("enabled") is not True:
        return
    size = ctx.field_setting(config, "cpuOffloadingBufferSize", "LMCACHE_MAX_LOCAL_CPU_SIZE",
                             f"{path}.lmcacheConfig.cpuOffloadingBufferSize")
    try:
        positive = size is not None and int(float(str(size.value))) > 0  # Helm's int, as the template
    except ValueError:
        positive = False
    if positive:
        model.env.setdefault("LMCACHE_MAX_LOCAL_CPU_SIZE", size)


def llmkube_pod(ctx: DocContext, model: ServedModel, spec: YNode) -> PodFacts:
    """LLMKube's controller adds no ``/dev/shm`` of its own (defilantech/LLMKube 907ac8d: no shm volume
    anywhere in internal/controller); ``spec.extraVolumes`` / ``extraVolumeMounts`` are passed through."""
    pod = PodFacts("llmkube", ctx.location(spec))
    volumes = spec.get("extraVolumes")
    for item in volumes.value if volumes is not None and volumes.kind == "seq" else []:
        volume = _volume(ctx, item)
        if volume is not None:
            pod.volumes[volume.name] = volume
    pod.mounts = _mounts(ctx, spec.get("extraVolumeMounts"))
    pod.shm = _kubernetes_shm(ctx, pod, spec)
    model.pod = pod
    return pod


# kserve/kserve charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml (aaac4e2): every
# LLMInferenceServiceConfig template (kserve-config-llm-template, -decode-, -prefill-, -worker-) mounts
# an emptyDir "dshm" (medium Memory) at /dev/shm, merged into the LLMInferenceService's pod.
KSERVE_LLM_SHM = "KServe's LLMInferenceService config template (dshm emptyDir at /dev/shm)"


def kserve_llm_pod(ctx: DocContext, model: ServedModel, container: YNode, pod_spec: YNode,
                   root: YNode) -> PodFacts:
    pod = kubernetes_pod(ctx, model, container, pod_spec, root)
    pod.format = "kserve-llm"
    if pod.shm is None:
        pod.shm = KSERVE_LLM_SHM, ctx.location(pod_spec)
    return pod
