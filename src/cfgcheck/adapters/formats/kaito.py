"""KAITO ``Workspace`` and ``InferenceSet`` (``kaito.sh``) serving a preset model -> one vLLM served model,
with the vLLM settings of the inference ConfigMap it names.

A preset workspace (``inference.preset.name``) runs KAITO's vLLM server unless annotated
``kaito.sh/runtime: transformers``. ``inference.config`` names a ConfigMap whose ``inference_config.yaml``
key holds YAML with a ``vllm:`` mapping; KAITO's server (``presets/workspace/inference/vllm/inference_api.py``)
appends ``--<key>`` and ``str(value)`` for each entry to vLLM's argv, so keys are flag names (argparse
accepts abbreviations) and values are Python's text of the YAML value. The nodes are
``resource.count`` of ``resource.instanceType`` (a cloud VM size, resolved through the GPU table's
instance types). What KAITO decides itself comes from ``data/kaito.json`` (generated from KAITO's source
by ``scripts/build_operator_data.py``): the preset's Hugging Face model and pinned commit, the vLLM version
of its base image (assumed), and per supported VM size the GPUs that ``configureParallelism`` turns into
``--tensor-parallel-size`` (the node's GPUs) and ``--pipeline-parallel-size`` (the nodes, when several:
``resource.count``, raised by KAITO's node estimator to what the preset's weights need); a model under half
a GPU runs as data-parallel ranks instead, which the pool arithmetic treats alike.
An ``InferenceSet`` keeps the same fields under ``spec.template`` and its copies in
``spec.replicas``. A workspace with its own ``inference.template`` pod is read by the pod walker.

A ``MultiRoleInference`` (``kaito.sh/v1alpha1``) serves ``spec.model.name`` disaggregated: one served model
per entry of ``spec.roles`` (``type: prefill | decode``, ``replicas``, ``instanceType`` and a
``runtimeConfig`` ConfigMap of the same form), recorded as the prefill/decode halves of one graph.
"""

from __future__ import annotations

from ...capacity.local_configs import lookup_architecture
from ...capacity.gpus import accelerator_by_instance_type
from ...capacity.tables import bundled_table
from ...model import ArgToken, ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext, Workspace
from ..core.recognition import apply_launch, finish, is_resource, string_map, to_int
from ..core.yaml_in_strings import embedded_document
from ..launch.configmaps import configmaps

API_GROUP = "kaito.sh/"
MARKERS = ("kaito.sh", "inference_config")
INDEX_WORDS = ("kaito.sh",)  # a workspace of the API group may name a ConfigMap not read yet
CONFIG_KEY = "inference_config.yaml"
INSTANCE_LABEL = "node.kubernetes.io/instance-type"
NOT_VLLM_RUNTIMES = ("transformers",)
KINDS = ("Workspace", "InferenceSet", "MultiRoleInference")


def _is_kaito(root: YNode) -> bool:
    return is_resource(root, API_GROUP, KINDS)


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: a workspace naming an inference ConfigMap not indexed yet."""
    if not _is_kaito(root):
        return False
    return any(config.value not in configmaps(workspace) for config in _config_refs(root))


def _config_refs(root: YNode) -> list[YNode]:
    """The ConfigMap names a resource refers to: ``inference.config`` or each role's ``runtimeConfig``."""
    if root.scalar("kind") == "MultiRoleInference":
        roles = root.path("spec", "roles")
        refs = [role.get("runtimeConfig") for role in roles.value] if roles is not None and roles.kind == "seq" else []
    else:
        body = _body(root)
        refs = [body.path("inference", "config")] if body is not None and body.kind == "map" else []
    return [ref for ref in refs if ref is not None and ref.kind == "scalar"]


def _body(root: YNode) -> YNode | None:
    """Where ``resource`` and ``inference`` are: the root (Workspace), ``spec.template`` (InferenceSet)."""
    return root.path("spec", "template") if root.scalar("kind") == "InferenceSet" else root


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    if not _is_kaito(root):
        return []
    if root.scalar("kind") == "MultiRoleInference":
        return _roles(ctx, root)
    body = _body(root)
    preset = body.path("inference", "preset") if body is not None and body.kind == "map" else None
    annotations = string_map(root.path("metadata", "annotations"))
    if preset is None or preset.kind != "map" or annotations.get("kaito.sh/runtime") in NOT_VLLM_RUNTIMES:
        return []
    kind = str(root.scalar("kind"))
    name = str(root.scalar("metadata", "name", default=kind.lower()))
    model = _vllm_model(ctx, name, kind, root.path("metadata", "name") or root, f"{kind}/{name}",
                        ctx.field_setting(preset, "name", "model", "inference.preset.name"),
                        body.path("inference", "config"), body.path("resource", "instanceType"),
                        body.path("resource", "count"))
    model.annotations = annotations
    prefix = "spec." if kind == "InferenceSet" else ""
    spec = root.get("spec") if kind == "InferenceSet" else None
    model.replicas = ctx.field_setting(spec, "replicas", "replicas", f"{prefix}replicas", to_int) if spec else None
    model.strategy = Setting("strategy", "RollingUpdate", model.location, "KAITO workspace")
    return [finish(model)]


def _vllm_model(ctx: DocContext, name: str, kind: str, at: YNode, identity: str, preset: Setting | None,
                config: YNode | None, instance: YNode | None, nodes: YNode | None) -> ServedModel:
    """KAITO's vLLM server for ``preset`` on ``nodes`` x ``instance``, then ConfigMap ``config``'s flags."""
    model = ctx.new_model(name, kind, at, identity)
    model.engine = "vllm"
    data = bundled_table("kaito.json")
    if data.get("vllm_version"):
        model.engine_version, model.engine_version_confidence = data["vllm_version"], "assumed"
        model.engine_version_why = f"KAITO base image {data.get('base_image_tag')} (presets/workspace/models/supported_models.yaml)"
    tokens = [ArgToken("vllm", model.location, (), "kaito", True), ArgToken("serve", model.location, (), "kaito", True)]
    model_id = None
    if preset is not None:
        known = data["presets"].get(str(preset.value))
        model_id = known["model"] if known else str(preset.value)
        tokens.append(ArgToken(model_id, preset.location, preset.comments, "typed:preset", True))
        if known:
            model.model_revision = Setting("model_revision", known["revision"], preset.location, "KAITO preset",
                                           preset.comments, preset.key_location, None)
    tokens.extend(_parallel_tokens(ctx, model, instance, nodes, model_id))
    _runtime_defaults(model, instance)
    written = _config_tokens(ctx, model, config)
    # KAITO delegates the context length to vLLM's auto-fit (--max-model-len=auto) unless the ConfigMap
    # sets one, which wins: kaito-project/kaito@056b8280 pkg/workspace/inference/preset_inferences.go
    # (MaxModelLenAuto) and pkg/model/interface.go (GetInferenceCommand)
    if not any(token.text.startswith("--max-model") for token in written):
        tokens += [ArgToken(text, model.location, (), "kaito", True) for text in ("--max-model-len", "auto")]
    tokens.extend(written)
    apply_launch(ctx, model, tokens, "vllm")
    return model


def _parallel_tokens(ctx: DocContext, model: ServedModel, instance: YNode | None, nodes: YNode | None,
                    model_id: str | None) -> list[ArgToken]:
    """The VM size's GPUs and the parallel sizes KAITO passes for them (before the ConfigMap's flags)."""
    if instance is None or instance.kind != "scalar" or not isinstance(instance.value, str) or not instance.value:
        return []
    model.node_selector = {INSTANCE_LABEL: instance.value}
    sku = bundled_table("kaito.json")["skus"].get(instance.value)
    requested = to_int(nodes.value) if nodes is not None and nodes.kind == "scalar" else 1
    if sku is None or not isinstance(requested, int) or requested < 1:
        return []
    count = max(requested, estimated_nodes(model_id, sku))
    # the VM size names the GPU exactly (Standard_NC40ads_H100_v5: H100 NVL 94 GB); KAITO's "NVIDIA H100"
    # with a memory size would read as the common 80 GB H100
    known = accelerator_by_instance_type(instance.value)
    model.gpu_product = known[0].name if known and known[0] is not None else \
        f"{sku['gpu_model']} {round(sku['gpu_memory_bytes'] / 1024**3)}GB"
    where = ctx.location(instance)
    how = "written" if count == requested else "KAITO's node estimate for the preset's weights"
    model.gpus = Setting("gpus", sku["gpus"] * count, where,
                         f"resource.instanceType ({count} nodes, {how}, x {sku['gpus']} GPUs, KAITO SKU table)")
    model.gpus_span = "group"
    flags = [("--tensor-parallel-size", sku["gpus"])] if sku["gpus"] > 1 else []
    flags += [("--pipeline-parallel-size", count)] if count > 1 else []
    return [ArgToken(text, where, (), "typed:instanceType", True) for flag, value in flags for text in (flag, str(value))]


def _runtime_defaults(model: ServedModel, instance: YNode | None) -> None:
    """What KAITO passes vLLM unless the workspace's ConfigMap sets it: ``--gpu-memory-utilization`` 0.84, or
    the value its table gives the VM size's GPU model (kaito-project/kaito@056b8280 pkg/model/interface.go,
    defaultGPUMemoryUtilization and gpuMemoryUtilizationByGPUModel; ``data/kaito.json``)."""
    data = bundled_table("kaito.json")
    table = data.get("gpu_memory_utilization")
    if not table:
        return
    sku = data["skus"].get(instance.value) if instance is not None and isinstance(instance.value, str) else None
    value = table["by_gpu_model"].get(sku["gpu_model"], table["default"]) if sku else table["default"]
    model.operator_defaults["gpu_memory_utilization"] = (value, f"KAITO's runtime at {data.get('release') or 'its pinned commit'}")


def estimated_nodes(model_id: str | None, sku: dict) -> int:
    """The nodes KAITO's node estimator gives a preset (``nodesestimator/estimator.go``): the GPUs its
    weights need at the estimator's memory budget per GPU, in whole nodes; 1 when the weights are unknown."""
    arch = lookup_architecture(model_id) if model_id else None
    weights = arch.weight_bytes_for() if arch is not None else None
    if not weights:
        return 1
    k = bundled_table("kaito.json")["node_estimator"]
    available = sku["gpu_memory_bytes"] * k["gpuMemoryUtilization"] - k["baseOverheadGiB"] * 1024**3
    if available <= 0:
        return 1
    per_gpu = available / (1 + k["overheadWeightFactor"])
    gpus = int(weights * k["weightExpansionFactor"] / per_gpu) + 1
    return -(-gpus // sku["gpus"])


def _roles(ctx: DocContext, root: YNode) -> list[ServedModel]:
    name = str(root.scalar("metadata", "name", default="multiroleinference"))
    model_spec, roles = root.path("spec", "model"), root.path("spec", "roles")
    if model_spec is None or model_spec.kind != "map" or roles is None or roles.kind != "seq":
        return []
    found = []
    for index, role in enumerate(roles.value):
        kind_of = str(role.scalar("type", default=index)) if role.kind == "map" else None
        if kind_of is None:
            continue
        model = _vllm_model(ctx, f"{name}/{kind_of}", "MultiRoleInference", role, f"MultiRoleInference/{name}/{kind_of}",
                            ctx.field_setting(model_spec, "name", "model", "spec.model.name"), role.get("runtimeConfig"),
                            role.get("instanceType"), None)
        model.annotations = string_map(root.path("metadata", "annotations"))
        model.replicas = ctx.field_setting(role, "replicas", "replicas", f"spec.roles[{index}].replicas", to_int)
        model.strategy = Setting("strategy", "RollingUpdate", model.location, "KAITO multi-role inference")
        if kind_of in ("prefill", "decode"):
            model.disaggregation = (f"{ctx.path}#MultiRoleInference/{name}", kind_of)
        found.append(finish(model))
    return found


def _config_tokens(ctx: DocContext, model: ServedModel, config: YNode | None) -> list[ArgToken]:
    """``--key str(value)`` for each ``vllm:`` entry of the named ConfigMap, located in its file."""
    # ConfigMaps are indexed by name for every format (launch/configmaps.py)
    found = configmaps(ctx.workspace).get(config.value) if config is not None else None
    if found is None:
        return []
    loaded, document, data = found
    cm_ctx = DocContext(loaded, document, ctx.workspace)
    inner = embedded_document(cm_ctx, data.get(CONFIG_KEY))
    if inner is None:
        return []
    inner_ctx, settings_root = inner
    vllm = settings_root.get("vllm")
    tokens: list[ArgToken] = []
    for key, value in vllm.items() if vllm is not None else []:
        if key.kind != "scalar" or value.kind != "scalar":
            continue
        origin = f"configmap:{config.value}"
        tokens.append(ArgToken(f"--{key.value}", inner_ctx.location(key), inner_ctx.comments(key.line), origin))
        tokens.append(ArgToken(str(value.value), inner_ctx.location(value), inner_ctx.comments(value.line), origin))
    if loaded is not ctx.loaded:
        model.directives.extend(cm_ctx.directives())
    return tokens
