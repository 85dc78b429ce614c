"""vLLM production-stack Helm values -> one served model per ``servingEngineSpec.modelSpec[]`` entry.

Found in a values file at its root, or inline in a Flux ``HelmRelease`` (``spec.values``) or an
Argo CD ``Application`` (``spec.source.helm.valuesObject``). The chart passes ``modelURL`` as the
model, the typed ``vllmConfig`` fields as flags, then ``extraArgs`` after them.
"""

from __future__ import annotations

from ...engines.argv import apply_argv
from ...model import Mount, PodFacts, ServedModel, Setting, Volume
from ...settings import parse
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import env_map_settings, gpu_count, operator_tokens, finish, set_image, to_int
from ..launch.pods import kubernetes_bytes, read_mounts, read_volume
from ..launch.held_values import argo_sources, argo_values
from ..launch.post_renderers import patched_env
from ..core.node_at_location import map_holding
from ..launch.shell import argv_tokens

MARKERS = ("servingenginespec",)

# The typed fields the chart turns into flags (helm/templates/deployment-vllm-multi.yaml): field -> (flag the
# chart passes, canonical setting). Protocol member: the registry gathers every format's.
VLLM_CONFIG_FIELDS = {
    "maxModelLen": ("--max-model-len", "max_model_len"),
    "maxNumSeqs": ("--max-num-seqs", "max_num_seqs"),
    "gpuMemoryUtilization": ("--gpu-memory-utilization", "gpu_memory_utilization"),
    "tensorParallelSize": ("--tensor-parallel-size", "tensor_parallel_size"),
    "kvCacheDtype": ("--kv-cache-dtype", "kv_cache_dtype"),
    "maxNumBatchedTokens": ("--max-num-batched-tokens", "max_num_batched_tokens"),
    "pipelineParallelSize": ("--pipeline-parallel-size", "pipeline_parallel_size"),
    "dtype": ("--dtype", "dtype"),
    "quantization": ("--quantization", "quantization"),
    "enablePrefixCaching": ("--enable-prefix-caching", "enable_prefix_caching"),
    "enableChunkedPrefill": ("--enable-chunked-prefill", "enable_chunked_prefill"),
}
OPERATOR_FIELDS = {"servingEngineSpec.modelSpec[].vllmConfig": VLLM_CONFIG_FIELDS}


def values_roots(root: YNode) -> list[tuple[YNode, str]]:
    """Chart values held by this document: the document itself, or a HelmRelease's values, or the
    ``valuesObject`` of an Application's one source (``launch/held_values.py`` reads where they sit; its
    other sources and its values string are ``chart_values``')."""
    kind = root.scalar("kind")
    if kind == "HelmRelease":
        values = root.path("spec", "values")
        return [(values, "spec.values.")] if values is not None and values.kind == "map" else []
    if kind == "Application":
        return [(node, f"{path}.{key}.") for source, path in argo_sources(root.get("spec")) if path == "spec.source"
                for node, key in argo_values(source) if key == "helm.valuesObject" and node.kind == "map"]
    if root.get("apiVersion") is not None and kind is not None:
        return []
    return [(root, "")]


def setting_home(model: ServedModel, root: YNode, name: str, config: dict) -> tuple[YNode, list] | None:
    """Protocol hook for ``propose``: a ``modelSpec[]`` entry keeps settings under ``vllmConfig``."""
    entry = map_holding(root, model.location, model.path) if model.kind == "production-stack" else None
    if entry is None:
        return None
    if name == "extra_args":
        return entry, ["vllmConfig", "extraArgs"]
    for field, (_, canonical) in VLLM_CONFIG_FIELDS.items():
        if canonical == name:
            return entry, ["vllmConfig", field]
    return None


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    found: list[ServedModel] = []
    release = root.scalar("metadata", "name") if root.get("apiVersion") is not None else None
    for values, prefix in values_roots(root):
        specs = values.path("servingEngineSpec", "modelSpec")
        if specs is None or specs.kind != "seq":
            continue
        for index, entry in enumerate(specs.value):
            if entry.kind == "map":
                model = _model(ctx, values, entry, f"{prefix}servingEngineSpec.modelSpec[{index}]", release)
                # a Flux post-renderer's patch of the rendered Deployment applies over the values
                model.env.update(patched_env(ctx, root, str(entry.scalar("name", default="")), len(specs.value) == 1))
                # the chart renders nothing for `enabled: false` (deployment-vllm-multi.yaml: `if ne
                # $modelSpec.enabled false`): an example, checked only for what its own text gets wrong
                model.template = entry.scalar("enabled") is False
                found.append(model)
    return found


def _ray_cluster_gpus(model: ServedModel, entry: YNode) -> None:
    """With ``raySpec.enabled`` the chart runs the engine on a RayCluster (helm/templates/ray-cluster.yaml):
    a head with ``raySpec.headNode.requestGPU`` and ``replicaCount`` workers with ``requestGPU`` each."""
    ray = entry.get("raySpec")
    if ray is None or ray.kind != "map" or ray.scalar("enabled") is not True or model.gpus is None:
        return
    head, workers = to_int(ray.scalar("headNode", "requestGPU", default=0)), to_int(entry.scalar("replicaCount", default=1))
    per_worker = model.gpus.value
    model.gpus_span = "group"
    if not all(isinstance(n, int) for n in (head, workers, per_worker)):
        model.gpus = Setting("gpus", None, model.gpus.location, f"{model.gpus.source} (topology: ray cluster, not literal)")
        return
    model.gpus = Setting("gpus", head + workers * per_worker, model.gpus.location,
                         f"{model.gpus.source} (topology: ray head {head} + {workers} workers x {per_worker})")


def _model(ctx: DocContext, values: YNode, entry: YNode, path: str, release) -> ServedModel:
    name = str(entry.scalar("name", default=path))
    label = f"{release}/{name}" if release else name
    model = ctx.new_model(label, "production-stack", entry.path("name") or entry, f"production-stack/{path}/{name}")
    model.engine = "vllm"
    repository, tag = entry.get("repository"), entry.get("tag")
    if repository is not None and repository.kind == "scalar":
        image_text = f"{repository.value}:{tag.value}" if tag is not None and tag.kind == "scalar" else str(repository.value)
        anchor = tag if tag is not None else repository
        image = ctx.setting("image", entry.key_node("tag") if tag is not None else entry.key_node("repository"),
                            anchor, f"{path}.tag")
        image.value = image_text
        set_image(ctx, model, image)
        model.engine = "vllm"
    model.setting_keys.update({canonical: f"{path}.vllmConfig.{field}" for field, (_, canonical) in VLLM_CONFIG_FIELDS.items()},
                              model=f"{path}.modelURL", extra_args=f"{path}.vllmConfig.extraArgs")
    url = ctx.field_setting(entry, "modelURL", "model", f"{path}.modelURL")
    if url is not None:
        model.add(url)
    config = entry.get("vllmConfig")
    if config is not None and config.kind == "map":
        for field, (flag, canonical) in VLLM_CONFIG_FIELDS.items():
            setting = ctx.field_setting(config, field, canonical, f"{path}.vllmConfig.{field}")
            if setting is None:
                continue
            if isinstance(setting.value, str):  # the chart renders it into the flag: vLLM parses the text
                setting.value = parse(canonical, setting.value, "vllm")
            model.add(setting)
            model.argv.extend(operator_tokens(setting, flag))
        extra = argv_tokens(ctx, config.get("extraArgs"), "extraArgs")
        if extra:
            model.argv.extend(extra)
            apply_argv(model, extra)
    model.gpus = ctx.field_setting(entry, "requestGPU", "gpus", f"{path}.requestGPU", to_int)
    resources = entry.get("resources")
    if resources is not None and resources.kind == "map" and resources.value:
        # "If specified, this takes priority over simplified resource fields" (helm/values.yaml, modelSpec.resources)
        key, value = gpu_count(resources)
        model.gpus = ctx.setting("gpus", key, value, f"{path}.resources.{key.value}", to_int) if key is not None else None
        model.gpu_resource = str(key.value) if key is not None else None
    # modelSpec[].env: the chart writes it into the container's env after its own HF_HOME (the last
    # entry of a name wins in Kubernetes)
    model.env.update(env_map_settings(ctx, entry.get("env"), f"{path}."))
    _ray_cluster_gpus(model, entry)
    model.replicas = ctx.field_setting(entry, "replicaCount", "replicas", f"{path}.replicaCount", to_int)
    production_stack_pod(ctx, model, entry, path, values)
    strategy = values.path("servingEngineSpec", "strategy", "type")
    if strategy is not None:
        model.strategy = ctx.setting("strategy", None, strategy, "servingEngineSpec.strategy.type")
    else:
        model.strategy = Setting("strategy", "RollingUpdate", model.location, "chart default")
    return finish(model)


# ---------------------------------------------------------------- the pod

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
    # the chart writes modelSpec.extraVolumes and extraVolumeMounts into the pod as they are
    # (helm/templates/deployment-vllm-multi.yaml: toYaml $modelSpec.extraVolumes / extraVolumeMounts)
    extra = entry.get("extraVolumes")
    for item in extra.value if extra is not None and extra.kind == "seq" else ():
        volume = read_volume(ctx, item)
        if volume is not None:
            pod.volumes[volume.name] = volume
    pod.mounts.extend(read_mounts(ctx, entry.get("extraVolumeMounts")))
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
    resources = entry.get("resources")
    if resources is not None and resources.kind == "map" and resources.value:  # over the request*/limit* fields
        for section in ("requests", "limits"):
            block = resources.get(section)
            for key, value in block.items() if block is not None and block.kind == "map" else ():
                if key.kind == "scalar" and value.kind == "scalar":
                    getattr(pod, section)[str(key.value)] = ctx.setting(
                        str(key.value), key, value, f"{path}.resources.{section}.{key.value}")
    else:
        for field, section, resource in PRODUCTION_STACK_QUANTITIES:
            setting = ctx.field_setting(entry, field, resource, f"{path}.{field}")
            if setting is not None:
                getattr(pod, section)[resource] = setting
    pod.memory_limit = kubernetes_bytes(pod.limits.get("memory"))
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
