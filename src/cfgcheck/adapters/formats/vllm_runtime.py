"""vLLM production-stack operator ``VLLMRuntime`` (``production-stack.vllm.ai``) -> one served model.

Two layouts exist: the current one (``spec.model``, ``spec.vllmConfig``, ``spec.deploymentConfig``)
and the older flat one (``spec.tensorParallelSize``, ``spec.image``, ``spec.resources``...). The
operator passes ``modelURL`` as the model, the typed fields as flags, then ``extraArgs`` last.
"""

from __future__ import annotations

from ...engines.argv import apply_argv
from ...model import ServedModel, Setting
from ...settings import BY_NAME, FLOAT, INT, SIZE
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import env_map_settings, finish, resource_spec, set_image, to_int
from ..launch.containers import as_float, typed_setting
from ..launch.shell import argv_tokens

API_GROUP = "production-stack.vllm.ai/"
MARKERS = ("vllm",)
# The typed fields the operator turns into flags (production-stack operator, VLLMRuntime): field -> (flag the
# operator passes, canonical setting). Protocol member: the registry gathers every format's.
MODEL_FIELDS = {
    "maxModelLen": ("--max-model-len", "max_model_len"),
    "maxNumSeqs": ("--max-num-seqs", "max_num_seqs"),
    "dtype": ("--dtype", "dtype"),
    "enableLoRA": ("--enable-lora", "enable_lora"),
}
CONFIG_FIELDS = {
    "maxModelLen": ("--max-model-len", "max_model_len"),
    "maxNumSeqs": ("--max-num-seqs", "max_num_seqs"),
    "gpuMemoryUtilization": ("--gpu-memory-utilization", "gpu_memory_utilization"),
    "tensorParallelSize": ("--tensor-parallel-size", "tensor_parallel_size"),
    "kvCacheDtype": ("--kv-cache-dtype", "kv_cache_dtype"),
    "maxNumBatchedTokens": ("--max-num-batched-tokens", "max_num_batched_tokens"),
    "pipelineParallelSize": ("--pipeline-parallel-size", "pipeline_parallel_size"),
    "quantization": ("--quantization", "quantization"),
    "enablePrefixCaching": ("--enable-prefix-caching", "enable_prefix_caching"),
    "enableChunkedPrefill": ("--enable-chunked-prefill", "enable_chunked_prefill"),
    "maxLoras": ("--max-loras", "max_loras"),
}
OPERATOR_FIELDS = {"spec.model": MODEL_FIELDS, "spec.vllmConfig": CONFIG_FIELDS}
# how a typed field's YAML value becomes the setting's value, by the setting's type
_FIELD_CONVERTERS = {INT: to_int, SIZE: to_int, FLOAT: as_float}


def _typed_fields(ctx: DocContext, model: ServedModel, parent: YNode, fields: dict, prefix: str) -> None:
    for key, (flag, canonical) in fields.items():
        model.setting_keys.setdefault(canonical, f"{prefix}{key}")
        convert = _FIELD_CONVERTERS.get(BY_NAME[canonical].type)
        typed_setting(ctx, model, parent, key, canonical, flag, f"{prefix}{key}", convert)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    spec = resource_spec(root, API_GROUP, "VLLMRuntime")
    if spec is None:
        return []
    model = ctx.resource_model(root, "VLLMRuntime", "vllmruntime")
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
        _typed_fields(ctx, model, block, MODEL_FIELDS, "spec.model.")
    config = spec.get("vllmConfig") if spec.get("vllmConfig") is not None else spec
    if config is spec:  # the flat layout keeps maxNumSeqs and maxModelLen under spec.model only
        _typed_fields(ctx, model, config, {k: v for k, v in CONFIG_FIELDS.items() if k not in MODEL_FIELDS}, "spec.")
    else:
        _typed_fields(ctx, model, config, CONFIG_FIELDS, "spec.vllmConfig.")
    extra = argv_tokens(ctx, config.get("extraArgs"), "extraArgs")
    model.setting_keys["extra_args"] = f"{'spec.vllmConfig.' if config is not spec else 'spec.'}extraArgs"
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
