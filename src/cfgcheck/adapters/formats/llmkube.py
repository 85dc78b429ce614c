"""LLMKube ``InferenceService`` (with the ``Model`` its ``modelRef`` names) -> one served model.

The operator turns typed fields into flags, then appends ``extraArgs`` last; its duplicate checks
match exact flag names only (``parallelSlots`` is skipped when extraArgs has an exact
``--max-num-seqs``). So argparse sees typed-field flags first and extraArgs after: the last wins.
"""

from __future__ import annotations

from ...engines.argv import apply_argv
from ...model import ArgToken, PodFacts, ServedModel, Setting
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.recognition import env_settings, finish, is_resource, operator_tokens, resource_spec, set_image, string_map, to_int
from ..launch.pods import add_volumes, kubernetes_shm, quantity_bytes, read_mounts
from ..core.resources import file_resources
from ..launch.shell import argv_tokens

API_GROUP = "inference.llmkube.dev/"
MARKERS = ("llmkube",)
INDEX_WORDS = ("llmkube",)  # Models are indexed and modelRefs followed in files of the API group

# The typed fields LLMKube's controller turns into flags (internal/controller/inferenceservice_controller.go),
# by where the InferenceService keeps them: field -> (flag the operator emits, canonical setting). Protocol
# member: the registry gathers every format's (``registry.operator_fields``).
OPERATOR_FIELDS = {
    "spec.vllmConfig": {
        "maxModelLen": ("--max-model-len", "max_model_len"),
        "gpuMemoryUtilization": ("--gpu-memory-utilization", "gpu_memory_utilization"),
        "tensorParallelSize": ("--tensor-parallel-size", "tensor_parallel_size"),
        "kvCacheDtype": ("--kv-cache-dtype", "kv_cache_dtype"),
        "maxNumBatchedTokens": ("--max-num-batched-tokens", "max_num_batched_tokens"),
        "dtype": ("--dtype", "dtype"),
        "quantization": ("--quantization", "quantization"),
        "enablePrefixCaching": ("--enable-prefix-caching", "enable_prefix_caching"),
        "enableChunkedPrefill": ("--enable-chunked-prefill", "enable_chunked_prefill")},
    "spec.sglangConfig": {
        "contextLength": ("--context-length", "max_model_len"),
        "maxRunningRequests": ("--max-running-requests", "max_num_seqs"),
        "memFractionStatic": ("--mem-fraction-static", "mem_fraction_static"),
        "tensorParallelSize": ("--tp", "tensor_parallel_size"),  # argparse resolves the abbreviation of --tp-size
        "kvCacheDtype": ("--kv-cache-dtype", "kv_cache_dtype"),
        "dtype": ("--dtype", "dtype"),
        "quantization": ("--quantization", "quantization"),
        "chunkedPrefillSize": ("--chunked-prefill-size", "chunked_prefill_size")},
    "spec": {"contextSize": ("--ctx-size", "max_model_len")},  # the llama.cpp runtime's, beside parallelSlots
}
# runtime -> (section of spec holding its typed fields, field -> (flag the operator emits, canonical setting))
TYPED_FIELDS = {
    "vllm": ("vllmConfig", OPERATOR_FIELDS["spec.vllmConfig"]),
    "sglang": ("sglangConfig", OPERATOR_FIELDS["spec.sglangConfig"]),
    "llama.cpp": (None, OPERATOR_FIELDS["spec"]),
}
# parallelSlots: which flag it becomes per runtime (None: the runtime ignores it)
PARALLEL_SLOTS = {"vllm": "--max-num-seqs", "llama.cpp": "--parallel", "sglang": None, "tokenspeed": None}
RUNTIMES = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llama.cpp", "llama.cpp": "llama.cpp",
            "llama-cpp": "llama.cpp", "tokenspeed": "tokenspeed"}


def _models(workspace: Workspace) -> dict[str, tuple[LoadedFile, YNode]]:
    """This format's index space: the LLMKube ``Model``s of every file, by name."""
    return workspace.space(__name__, dict)


def is_llmkube(root: YNode, kind: str) -> bool:
    return is_resource(root, API_GROUP, kind)


def index(workspace: Workspace, loaded) -> None:
    """Protocol hook: record every LLMKube ``Model`` of the file by name, for ``spec.modelRef``."""
    for _, root in file_resources(loaded):
        if is_llmkube(root, "Model"):
            name = root.scalar("metadata", "name")
            if isinstance(name, str):
                _models(workspace)[name] = (loaded, root)


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: an ``InferenceService`` whose ``modelRef`` names a Model not indexed yet."""
    return is_llmkube(root, "InferenceService") and root.scalar("spec", "modelRef") not in _models(workspace)


def setting_home(model: ServedModel, root: YNode, name: str, config: dict) -> tuple[YNode, list] | None:
    """Protocol hook for ``propose``: where an InferenceService keeps setting ``name`` as a field."""
    if not is_llmkube(root, "InferenceService"):
        return None
    if name == "extra_args":
        return root, ["spec", "extraArgs"]
    if name == "image":
        return root, ["spec", "image"]
    if name == "max_num_seqs" and PARALLEL_SLOTS.get(model.engine):
        return root, ["spec", "parallelSlots"]
    section, fields = TYPED_FIELDS.get(model.engine, (None, {}))
    for field, (_, canonical) in fields.items():
        if canonical == name:
            return root, ["spec"] + ([section] if section else []) + [field]
    return None


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    spec = resource_spec(root, API_GROUP, "InferenceService")
    if spec is None:
        return []
    model = ctx.resource_model(root, "InferenceService", "inferenceservice")
    model.annotations = string_map(root.path("metadata", "annotations"))
    runtime = RUNTIMES.get(str(spec.scalar("runtime", default="llamacpp")).lower(), "unknown")
    model.engine = runtime
    set_image(ctx, model, ctx.field_setting(spec, "image", "image", "spec.image"))
    model.engine = runtime  # the runtime field decides the engine, whatever the image is called
    _apply_model_ref(ctx, model, spec)

    synthetic: list[ArgToken] = []
    section, fields = TYPED_FIELDS.get(runtime, (None, {}))
    typed = spec.get(section) if section else spec
    extra = argv_tokens(ctx, spec.get("extraArgs"), "extraArgs")
    extra_texts = {t.text for t in extra}
    model.setting_keys.update({canonical: f"spec.{section + '.' if section else ''}{field}" for field, (_, canonical) in fields.items()},
                              extra_args="spec.extraArgs")
    if typed is not None and typed.kind == "map":
        for field, (flag, canonical) in fields.items():
            setting = ctx.field_setting(typed, field, canonical, f"spec.{section + '.' if section else ''}{field}")
            if setting is None:
                continue
            if canonical == "gpu_memory_utilization" and not _has_gpu(model):
                continue  # the operator passes it only with GPUs
            model.add(setting)
            synthetic.extend(operator_tokens(setting, flag))
    slots = ctx.field_setting(spec, "parallelSlots", "max_num_seqs", "spec.parallelSlots", to_int)
    if slots is not None:
        flag = PARALLEL_SLOTS.get(runtime)
        if flag is None:
            model.inert.append((slots, f"the {runtime} runtime ignores parallelSlots"))
        elif flag not in extra_texts:
            model.add(slots)
            synthetic.extend(operator_tokens(slots, flag))
    model.argv.extend(synthetic)
    if extra:
        model.argv.extend(extra)
        apply_argv(model, extra)
    model.env = env_settings(ctx, spec.get("env"))
    replicas = ctx.field_setting(spec, "replicas", "replicas", "spec.replicas", to_int)
    model.replicas = replicas
    model.strategy = Setting("strategy", "Recreate", model.location, "LLMKube InferenceService")
    model.node_selector = string_map(spec.get("nodeSelector"))
    gpu_product = model.node_selector.get("nvidia.com/gpu.product") or model.node_selector.get(
        "cloud.google.com/gke-accelerator")
    if gpu_product:
        model.gpu_product = gpu_product
    resources = spec.get("resources")
    if resources is not None and resources.kind == "map" and resources.get("gpu") is not None:
        model.gpus = ctx.field_setting(resources, "gpu", "gpus", "spec.resources.gpu", to_int)
    llmkube_pod(ctx, model, spec)
    return [finish(model)]


def _has_gpu(model: ServedModel) -> bool:
    return model.gpus is None or (isinstance(model.gpus.value, int) and model.gpus.value > 0)


def _apply_model_ref(ctx: DocContext, model: ServedModel, spec: YNode) -> None:
    ref = spec.scalar("modelRef")
    found = _models(ctx.workspace).get(ref) if isinstance(ref, str) else None
    if found is None:
        return
    loaded, root = found
    model_spec = root.get("spec")
    if model_spec is None or model_spec.kind != "map":
        return
    ref_ctx = DocContext(loaded, _document_of(loaded, root), ctx.workspace)
    source = ref_ctx.field_setting(model_spec, "source", "model", "Model.spec.source")
    if source is not None:
        model.model = source
        if isinstance(source.value, str) and "@" in source.value and source.value.startswith("hf://"):
            revision = source.value.rsplit("@", 1)[1]
            model.model_revision = Setting("model_revision", revision, source.location, source.source,
                                           source.comments, source.key_location, revision)
    quantization = ref_ctx.field_setting(model_spec, "quantization", "model_quantization", "Model.spec.quantization")
    if quantization is not None:
        model.settings.setdefault("model_quantization", quantization)
    gpu = model_spec.path("hardware", "gpu")
    if gpu is not None and gpu.kind == "map" and gpu.scalar("enabled", default=True) is not False:
        count = ref_ctx.field_setting(gpu, "count", "gpus", "Model.spec.hardware.gpu.count", to_int)
        if count is not None:
            model.gpus = count
        resource = gpu.scalar("resourceName")
        if isinstance(resource, str):
            model.gpu_resource = resource
        memory = gpu.scalar("memory")
        if isinstance(memory, str):
            model.gpu_memory_bytes = quantity_bytes(memory)
        vendor = gpu.scalar("vendor")
        if isinstance(vendor, str) and model.gpu_product is None:
            model.settings.setdefault("gpu_vendor", Setting("gpu_vendor", vendor, ref_ctx.location(gpu), "Model.spec.hardware.gpu.vendor"))
    if loaded is not ctx.loaded:
        model.directives.extend(ref_ctx.directives())


def _document_of(loaded, root: YNode):
    for document in loaded.documents:
        if document.root is root:
            return document
    return loaded.documents[0]


# ---------------------------------------------------------------- the pod

def llmkube_pod(ctx: DocContext, model: ServedModel, spec: YNode) -> PodFacts:
    """LLMKube's controller adds no ``/dev/shm`` of its own (defilantech/LLMKube 907ac8d: no shm volume
    anywhere in internal/controller); ``spec.extraVolumes`` / ``extraVolumeMounts`` are passed through."""
    pod = PodFacts("llmkube", ctx.location(spec))
    add_volumes(ctx, pod, spec.get("extraVolumes"))
    pod.mounts = read_mounts(ctx, spec.get("extraVolumeMounts"))
    pod.shm = kubernetes_shm(ctx, pod, spec)
    model.pod = pod
    return pod
