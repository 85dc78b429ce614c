"""KServe (``serving.kserve.io``): InferenceService, ServingRuntime / ClusterServingRuntime,
LLMInferenceService and LLMInferenceServiceConfig -> one served model per engine container.

* ``InferenceService``: ``spec.predictor.containers[]`` and ``spec.predictor.model`` (or the older
  ``spec.predictor.huggingface``). A ``model`` with the Hugging Face format or runtime runs KServe's
  huggingfaceserver, whose default backend is vLLM: its ``args`` are vLLM engine args.
* ``ServingRuntime`` / ``ClusterServingRuntime``: ``spec.containers[]`` (the huggingfaceserver image
  is vLLM too, unless ``--backend=huggingface``). A runtime is a template, not a served model: only
  what is wrong in its own text is checked on it. An InferenceService's ``model`` that names a
  runtime of the run (``runtime:``, else the one runtime that auto-selects its ``modelFormat``) runs
  that runtime's container with its own ``args`` appended and its ``resources`` and ``env`` over the
  runtime's, as KServe's controller merges them (pkg/controller/v1beta1/inferenceservice/utils/utils.go,
  MergeRuntimeContainers).
* ``LLMInferenceService`` / ``LLMInferenceServiceConfig``: the pod templates ``spec.template``
  (decode when there is a prefill), ``spec.worker``, ``spec.prefill.template``, ``spec.prefill.worker``.
  The runtime is vLLM (the ``main`` container; ``VLLM_ADDITIONAL_ARGS`` is appended by the launch
  script); ``spec.model.uri`` is the model and ``spec.parallelism`` the parallel sizes.
"""

from __future__ import annotations

from ...capacity.tables import bundled_table
from ...model import ServedModel, Setting, unresolved
from ...settings import INT_SETTINGS
from ...yamlio import YNode
from ..core.contexts import DocContext, Workspace
from ..core.references import record
from ..core.recognition import finish, gpu_count, is_resource, resource_spec, to_int
from ..launch.containers import container_model, container_tokens, typed_setting
from ..core.resources import file_resources
from ..launch.shell import argv_tokens

API_GROUP = "serving.kserve.io/"
HF_SERVER = "huggingfaceserver"
MARKERS = ("inferenceservice", "servingruntime")
INDEX_WORDS = MARKERS  # runtimes indexed, and followed from InferenceServices, by kind
# The LLMInferenceService launch template's parallel sizes (spec.parallelism key -> (flag passed, canonical
# setting)). Protocol member: the registry gathers every format's.
PARALLELISM = {
    "tensor": ("--tensor-parallel-size", "tensor_parallel_size"),
    "pipeline": ("--pipeline-parallel-size", "pipeline_parallel_size"),
    "data": ("--data-parallel-size", "data_parallel_size"),
    "dataLocal": ("--data-parallel-size-local", "data_parallel_size_local"),
    "expert": ("--enable-expert-parallel", "enable_expert_parallel"),
}
OPERATOR_FIELDS = {"spec.parallelism": PARALLELISM}


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    spec = resource_spec(root, API_GROUP)
    if spec is None:
        return []
    kind = root.scalar("kind")
    name = str(root.scalar("metadata", "name", default=str(kind).lower()))
    if kind == "LLMInferenceServiceConfig":
        return _as_templates(_llm_inference_service(ctx, root, kind, name, spec))
    if kind == "LLMInferenceService":
        return _llm_inference_service(ctx, root, kind, name, spec)
    if kind == "InferenceService":
        return _inference_service(ctx, root, name, spec)
    if kind in ("ServingRuntime", "ClusterServingRuntime"):
        return _as_templates(_containers(ctx, root, kind, name, spec, "spec", None))
    return []


def _as_templates(models: list[ServedModel]) -> list[ServedModel]:
    """A runtime (or LLMInferenceServiceConfig) is what an InferenceService that names it runs, not a
    served model by itself: its model is a placeholder and its GPUs are the service's."""
    for model in models:
        model.template = True
    return models


def _runtimes(workspace: Workspace) -> dict[str, list]:
    """This format's index space: (Cluster)ServingRuntime name -> [(file, document, root)] of every file."""
    return workspace.space(__name__, dict)


RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")


def index(workspace: Workspace, loaded) -> None:
    """Protocol hook: every (Cluster)ServingRuntime by name, for the InferenceServices that use it."""
    for document, root in file_resources(loaded):
        if root.scalar("kind") not in RUNTIME_KINDS:
            continue
        name = root.scalar("metadata", "name")
        if is_resource(root, API_GROUP) and isinstance(name, str):
            _runtimes(workspace).setdefault(name, []).append((loaded, document, root))


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: an InferenceService naming a runtime not indexed yet, or leaving KServe to pick one
    by model format (any runtime of the run may be the one): read once every file is indexed."""
    if root.scalar("kind") != "InferenceService" or root.path("spec", "predictor", "model") is None:
        return False
    runtime = root.scalar("spec", "predictor", "model", "runtime")
    return runtime not in _runtimes(workspace) if isinstance(runtime, str) else True


def _runtime_for(ctx: DocContext, block: YNode):
    """The runtime an InferenceService's ``model`` runs: the one it names, else a runtime that
    auto-selects its model format. A repository of examples holds one runtime name (or format) many
    times, one per namespace: the nearest is taken (same file, then same folder), and none when that
    leaves several (KServe picks by namespace and priority: not guessed here)."""
    named = block.scalar("runtime")
    if isinstance(named, str):
        own = _runtimes_of_file(ctx, named)
        if len(own) == 1:
            return own[0]
        defined = _runtimes(ctx.workspace)
        if named not in defined:
            _dangling_runtime(ctx, block, named, defined)
        return _nearest(ctx, defined.get(named, []))
    wanted = str(block.scalar("modelFormat", "name", default="") or "").lower()
    matches = [entry for entries in _runtimes(ctx.workspace).values() for entry in entries
               if wanted and _selects(entry[2], wanted)]
    return _nearest(ctx, matches)


def _runtimes_of_file(ctx: DocContext, named: str | None) -> list:
    """The runtimes named ``named`` (None: every one) that the InferenceService's own file (or rendering)
    defines: what ``kubectl apply`` of that file, or of a kustomization's output with its ``namePrefix``
    applied to both, creates beside the service. The run's index holds the repository's files only, not a
    rendering's copies."""
    return [(ctx.loaded, document, root) for document in ctx.loaded.documents
            if (root := document.root) is not None and root.kind == "map" and root.scalar("kind") in RUNTIME_KINDS
            and (named is None or root.scalar("metadata", "name") == named) and is_resource(root, API_GROUP)]


def _dangling_runtime(ctx: DocContext, block: YNode, named: str, defined: dict[str, list]) -> None:
    """A runtime named that the repository does not define, in a repository that keeps its runtimes (it
    defines some), and that KServe does not install itself (``data/kserve.json``, generated from KServe's
    ``config/runtimes``): a reference that leads nowhere."""
    if not defined or named in bundled_table("kserve.json")["cluster_serving_runtimes"] or unresolved(named):
        return
    names = sorted(set(defined) | {str(entry[2].scalar("metadata", "name")) for entry in _runtimes_of_file(ctx, None)})
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    record(ctx.workspace, ctx.location(block.get("runtime")), f"runtime '{named}'",
           f"looked among the repository's ServingRuntimes and ClusterServingRuntimes ({shown}) and those KServe installs",
           "name a runtime the repository or KServe defines, or add the ServingRuntime")


def _selects(runtime: YNode, model_format: str) -> bool:
    formats = runtime.path("spec", "supportedModelFormats")
    return formats is not None and formats.kind == "seq" and any(
        f.kind == "map" and str(f.scalar("name", default="")).lower() == model_format and f.scalar("autoSelect") is True
        for f in formats.value)


def _nearest(ctx: DocContext, entries: list):
    folder = ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else ""
    for near in ([e for e in entries if e[0].path == ctx.path],
                 [e for e in entries if (e[0].path.rsplit("/", 1)[0] if "/" in e[0].path else "") == folder],
                 entries):
        if near:
            return near[0] if len(near) == 1 else None
    return None


def _runtime_container(workspace: Workspace, entry) -> tuple[DocContext, YNode] | None:
    loaded, document, root = entry
    containers = root.path("spec", "containers")
    found = [c for c in containers.value if c.kind == "map"] if containers is not None and containers.kind == "seq" else []
    if not found:
        return None
    main = next((c for c in found if c.scalar("name") == "kserve-container"), found[0])
    return DocContext(loaded, document, workspace), main


def _is_hf_server(container: YNode, image: object) -> bool:
    texts = [str(t.value) for key in ("command", "args") if (node := container.get(key)) is not None
             and node.kind == "seq" for t in node.value if t.kind == "scalar"]
    return (isinstance(image, str) and HF_SERVER in image) or HF_SERVER in texts


def _hf_backend_engine(model: ServedModel) -> None:
    """huggingfaceserver: ``--model_id`` names the model; ``--backend=huggingface`` is not vLLM."""
    backend = model.settings.get("backend")
    if backend is not None and str(backend.value).lower() == "huggingface":
        model.engine = "unknown"
    model_id = model.settings.get("model_id")
    if model_id is not None and "model" not in model.settings:
        model.add(Setting("model", model_id.value, model_id.location, model_id.source, model_id.comments,
                          model_id.key_location, model_id.text, model_id.origin))


def _containers(ctx, root, kind, name, parent: YNode, where: str, default_engine) -> list[ServedModel]:
    found = []
    containers = parent.get("containers")
    if containers is None or containers.kind != "seq":
        return found
    for container in containers.value:
        if container.kind != "map":
            continue
        cname = str(container.scalar("name", default="container"))
        tokens = None
        engine = default_engine
        if _is_hf_server(container, container.scalar("image")):

            tokens = [t for t in container_tokens(ctx, container) if t.text not in ("python", "python3", "-m", HF_SERVER)]
            engine = "vllm"
        model = container_model(ctx, root=root, kind=kind, name=f"{name}/{cname}",
                                identity=f"{kind}/{name}/{where}/{cname}", container=container,
                                default_engine=engine, tokens=tokens, pod_spec=parent)
        if model is not None:
            if engine == "vllm" and tokens is not None:
                model.engine_version = None  # the image tag is KServe's version, not vLLM's
                _hf_backend_engine(model)
            found.append(finish(model))
    return found


def _inference_service(ctx, root, name, spec) -> list[ServedModel]:
    predictor = spec.get("predictor")
    if predictor is None or predictor.kind != "map":
        return []
    found = _containers(ctx, root, "InferenceService", name, predictor, "predictor", None)
    for key in ("model", "huggingface"):
        block = predictor.get(key)
        if block is None or block.kind != "map":
            continue
        runtime = str(block.scalar("runtime", default="") or "")
        model_format = str(block.scalar("modelFormat", "name", default="") or "")
        engine = None
        lowered = f"{runtime} {model_format} {key}".lower()
        if "sglang" in lowered:
            engine = "sglang"
        elif "vllm" in lowered or "huggingface" in lowered:
            engine = "vllm"
        where = f"predictor/{key}"
        runtime = _runtime_container(ctx.workspace, entry) if key == "model" and \
            (entry := _runtime_for(ctx, block)) is not None else None
        merged = _with_runtime(ctx, block, runtime) if runtime is not None else {}
        model = container_model(ctx, root=root, kind="InferenceService", name=f"{name}/{key}",
                                identity=f"InferenceService/{name}/{where}", container=block,
                                at=root.path("metadata", "name") or block, default_engine=merged.get("engine", engine),
                                prefix=f"spec.predictor.{key}.", pod_spec=predictor, image=merged.get("image"),
                                tokens=merged.get("tokens"))
        if model is None:
            continue
        if runtime is not None:
            _runtime_resources(model, *runtime)
        _hf_backend_engine(model)
        uri = ctx.field_setting(block, "storageUri", "model", f"spec.predictor.{key}.storageUri")
        served = model.settings.get("model")
        # the runtime's model argument is a placeholder ({{.Name}}) or where KServe mounts storageUri
        if uri is not None and (served is None or _mount_or_placeholder(served.value)):
            model.add(uri)
            model.model = uri
        model.replicas = ctx.field_setting(predictor, "minReplicas", "replicas", "spec.predictor.minReplicas", to_int)
        found.append(finish(model))
    return found


def _with_runtime(ctx: DocContext, block: YNode, runtime: tuple[DocContext, YNode]) -> dict:
    """The merged launch: the runtime container's command and args, then the InferenceService's args
    (KServe appends them); the image is the runtime's unless the service gives one."""
    rctx, container = runtime
    image_node = container.get("image")
    merged: dict = {}
    if block.get("image") is None and image_node is not None and image_node.kind == "scalar":
        merged["image"] = rctx.setting("image", container.key_node("image"), image_node, "runtime image")
    tokens = container_tokens(rctx, container)
    if _is_hf_server(container, container.scalar("image")):
        tokens = [t for t in tokens if t.text not in ("python", "python3", "-m", HF_SERVER)]
        merged["engine"] = "vllm"
    block_args = block.get("args")
    merged["tokens"] = tokens + (argv_tokens(ctx, block_args, "args") if block_args is not None else [])
    return merged


def _runtime_resources(model: ServedModel, rctx: DocContext, container: YNode) -> None:
    """GPUs from the runtime container when the InferenceService requests none of its own."""
    if model.gpus is None:
        key, value = gpu_count(container.get("resources"))
        if value is not None:
            model.gpus = rctx.setting("gpus", key, value, f"runtime resources.{key.value}", to_int)
            model.gpu_resource = str(key.value)
    if model.image is not None and HF_SERVER in str(model.image.value):
        model.engine_version = None  # the image tag is KServe's version, not vLLM's


def _mount_or_placeholder(value: object) -> bool:
    """The runtime's model argument stands for storageUri: KServe's mount point itself (a path under it
    names a model inside the storage, and stays) or a template such as ``{{.Name}}``."""
    text = str(value)
    return text.rstrip("/") == "/mnt/models" or "{{" in text


ROLES = (  # (path under spec, role label)
    (("template",), "template"),
    (("worker",), "worker"),
    (("prefill", "template"), "prefill"),
    (("prefill", "worker"), "prefill-worker"),
)


def _llm_inference_service(ctx, root, kind, name, spec) -> list[ServedModel]:
    found: list[ServedModel] = []
    has_prefill = spec.get("prefill") is not None
    for path, role in ROLES:
        pod = spec.path(*path)
        if pod is None or pod.kind != "map":
            continue
        containers = pod.get("containers")
        if containers is None or containers.kind != "seq":
            continue
        label = "decode" if role == "template" and has_prefill else ("decode-worker" if role == "worker" and has_prefill else role)
        section = spec.get("prefill") if path[0] == "prefill" else spec
        for container in containers.value:
            if container.kind != "map":
                continue
            cname = str(container.scalar("name", default="container"))
            # the engine container is "main"; sidecars (routing proxy) are engines only if they say so
            default_engine = "vllm" if cname == "main" else None
            prefix = "spec." + ".".join(path) + f".containers[{cname}]."
            model = container_model(ctx, root=root, kind=kind, name=f"{name}/{label}" + ("" if cname == "main" else f"/{cname}"),
                                    identity=f"{kind}/{name}/{'/'.join(path)}/{cname}", container=container,
                                    default_engine=default_engine, prefix=prefix, pod_spec=pod)
            if model is None:
                continue
            _typed(ctx, model, spec, section, path)
            if kind == "LLMInferenceService":
                kserve_llm_pod(ctx, model, pod)
            found.append(finish(model))
    return found


def _typed(ctx, model: ServedModel, spec: YNode, section: YNode, path: tuple[str, ...]) -> None:
    """spec.model and spec(.prefill).parallelism / replicas, as the controller passes them."""
    model_block = spec.get("model")
    if model_block is not None and model_block.kind == "map":
        uri = ctx.field_setting(model_block, "uri", "model", "spec.model.uri")
        served = model.settings.get("model")
        if uri is not None and (served is None or str(served.value).startswith("/mnt/models")):
            model.add(uri)
            model.model = uri
        name = ctx.field_setting(model_block, "name", "served_model_name", "spec.model.name")
        if name is not None:
            model.settings.setdefault("served_model_name", name)
    prefix = "spec.prefill." if path[0] == "prefill" else "spec."
    model.setting_keys.update({canonical: f"{prefix}parallelism.{key}" for key, (_, canonical) in PARALLELISM.items()})
    parallelism = section.get("parallelism") if section is not None else None
    if parallelism is not None and parallelism.kind == "map":
        for key, (flag, canonical) in PARALLELISM.items():
            typed_setting(ctx, model, parallelism, key, canonical, flag, f"{prefix}parallelism.{key}",
                          to_int if canonical in INT_SETTINGS else None, first=True)
    if section is not None:
        model.replicas = ctx.field_setting(section, "replicas", "replicas", f"{prefix}replicas", to_int)


# ---------------------------------------------------------------- the pod

# kserve/kserve charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml (aaac4e2): every
# LLMInferenceServiceConfig template (kserve-config-llm-template, -decode-, -prefill-, -worker-) mounts
# an emptyDir "dshm" (medium Memory) at /dev/shm, merged into the LLMInferenceService's pod.
KSERVE_LLM_SHM = "KServe's LLMInferenceService config template (dshm emptyDir at /dev/shm)"


def kserve_llm_pod(ctx: DocContext, model: ServedModel, pod_spec: YNode) -> None:
    """The pod facts ``container_model`` read from the LLMInferenceService's template, with what KServe's
    config templates merge into it."""
    if model.pod is None:
        return
    model.pod.format = "kserve-llm"
    if model.pod.shm is None:
        model.pod.shm = KSERVE_LLM_SHM, ctx.location(pod_spec)
