"""vLLM production-stack operator ``VLLMRuntime`` (``production-stack.vllm.ai``) -> one served model.

Two layouts exist: the current one (``spec.model``, ``spec.vllmConfig``, ``spec.deploymentConfig``)
and the older flat one (``spec.tensorParallelSize``, ``spec.image``, ``spec.resources``...). The
operator passes ``modelURL`` as the model, the typed fields as flags, then ``extraArgs`` last.
"""

from __future__ import annotations

from ..engines.argv import apply_argv
from ..model import ServedModel, Setting
from ..yamlio import YNode
from .base import DocContext, finish, set_image, to_int
from .containers import as_float, env_map_settings, typed_setting

API_GROUP = "production-stack.vllm.ai/"
MARKERS = ("vllm",)
MODEL_FIELDS = {
    "maxModelLen": ("max_model_len", "--max-model-len", to_int),
    "maxNumSeqs": ("max_num_seqs", "--max-num-seqs", to_int),
    "dtype": ("dtype", "--dtype", None),
    "enableLoRA": ("enable_lora", "--enable-lora", None),
}
CONFIG_FIELDS = {
    "tensorParallelSize": ("tensor_parallel_size", "--tensor-parallel-size", to_int),
    "pipelineParallelSize": ("pipeline_parallel_size", "--pipeline-parallel-size", to_int),
    "gpuMemoryUtilization": ("gpu_memory_utilization", "--gpu-memory-utilization", as_float),
    "enableChunkedPrefill": ("enable_chunked_prefill", "--enable-chunked-prefill", None),
    "enablePrefixCaching": ("enable_prefix_caching", "--enable-prefix-caching", None),
    "maxLoras": ("max_loras", "--max-loras", to_int),
    "maxNumSeqs": ("max_num_seqs", "--max-num-seqs", to_int),
    "maxModelLen": ("max_model_len", "--max-model-len", to_int),
    "maxNumBatchedTokens": ("max_num_batched_tokens", "--max-num-batched-tokens", to_int),
    "kvCacheDtype": ("kv_cache_dtype", "--kv-cache-dtype", None),
    "quantization": ("quantization", "--quantization", None),
}


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    api = root.scalar("apiVersion", default="")
    if not (isinstance(api, str) and api.startswith(API_GROUP) and root.scalar("kind") == "VLLMRuntime"):
        return []
    spec = root.get("spec")
    if spec is None or spec.kind != "map":
        return []
    name = str(root.scalar("metadata", "name", default="vllmruntime"))
    model = ctx.new_model(name, "VLLMRuntime", root.path("metadata", "name") or root, f"VLLMRuntime/{name}")
    model.engine = "vllm"
    deployment = spec.get("deploymentConfig") if spec.get("deploymentConfig") is not None else spec
    prefix = "spec.deploymentConfig." if deployment is not spec else "spec."
    image = deployment.get("image")
    if image is not None and image.kind == "map" and image.get("name") is not None:
        node = image.get("name")
        setting = ctx.setting("image", image.key_node("name"), node, f"{prefix}image.name")
        registry = image.scalar("registry")
        if isinstance(registry, str) and registry and isinstance(setting.value, str) \
                and registry not in ("docker.io", "index.docker.io"):
            setting.value = f"{registry}/{setting.value}"
        set_image(ctx, model, setting)
        model.engine = "vllm"
    block = spec.get("model")
    if block is not None and block.kind == "map":
        url = ctx.field_setting(block, "modelURL", "model", "spec.model.modelURL")
        if url is not None:
            model.add(url)
        for key, (canonical, flag, convert) in MODEL_FIELDS.items():
            typed_setting(ctx, model, block, key, canonical, flag, f"spec.model.{key}", convert)
    config = spec.get("vllmConfig") if spec.get("vllmConfig") is not None else spec
    config_prefix = "spec.vllmConfig." if config is not spec else "spec."
    for key, (canonical, flag, convert) in CONFIG_FIELDS.items():
        if config is spec and key in ("maxNumSeqs", "maxModelLen"):
            continue
        typed_setting(ctx, model, config, key, canonical, flag, f"{config_prefix}{key}", convert)
    extra = ctx.tokens(config.get("extraArgs"), "extraArgs")
    if extra:
        model.argv.extend(extra)
        apply_argv(model, extra)
    model.env = env_map_settings(ctx, config.get("env") if config.get("env") is not None else spec.get("env"), "")
    resources = deployment.get("resources")
    if resources is not None and resources.kind == "map":
        model.gpus = ctx.field_setting(resources, "gpu", "gpus", f"{prefix}resources.gpu", to_int)
    model.replicas = ctx.field_setting(deployment, "replicas", "replicas", f"{prefix}replicas", to_int)
    strategy = deployment.get("deploymentStrategy")
    if strategy is not None and strategy.kind == "scalar":
        model.strategy = ctx.setting("strategy", deployment.key_node("deploymentStrategy"), strategy,
                                     f"{prefix}deploymentStrategy")
    else:
        model.strategy = Setting("strategy", "RollingUpdate", model.location, "operator default")
    return [finish(model)]
