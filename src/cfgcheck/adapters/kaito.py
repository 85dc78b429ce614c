"""KAITO ``Workspace`` and ``InferenceSet`` (``kaito.sh``) serving a preset model -> one vLLM served model,
with the vLLM settings of the inference ConfigMap it names.

A preset workspace (``inference.preset.name``) runs KAITO's vLLM server unless annotated
``kaito.sh/runtime: transformers``. ``inference.config`` names a ConfigMap whose ``inference_config.yaml``
key holds YAML with a ``vllm:`` mapping; KAITO's server (``presets/workspace/inference/vllm/inference_api.py``)
appends ``--<key>`` and ``str(value)`` for each entry to vLLM's argv, so keys are flag names (argparse
accepts abbreviations) and values are Python's text of the YAML value. The nodes are
``resource.count`` of ``resource.instanceType`` (a cloud VM size, resolved through the GPU table's
instance types); an ``InferenceSet`` keeps the same fields under ``spec.template`` and its copies in
``spec.replicas``. A workspace with its own ``inference.template`` pod is read by the pod walker.

A ``MultiRoleInference`` (``kaito.sh/v1alpha1``) serves ``spec.model.name`` disaggregated: one served model
per entry of ``spec.roles`` (``type: prefill | decode``, ``replicas``, ``instanceType`` and a
``runtimeConfig`` ConfigMap of the same form), recorded as the prefill/decode halves of one graph.
"""

from __future__ import annotations

from ..model import ArgToken, ServedModel, Setting
from ..yamlio import LoadedFile, YNode
from .base import DocContext, Workspace, apply_launch, finish, string_map, to_int
from .embedded import embedded_document

API_GROUP = "kaito.sh/"
MARKERS = ("kaito.sh", "inference_config")
CONFIG_KEY = "inference_config.yaml"
INDEX = "kaito-configmaps"
INSTANCE_LABEL = "node.kubernetes.io/instance-type"
NOT_VLLM_RUNTIMES = ("transformers",)
KINDS = ("Workspace", "InferenceSet", "MultiRoleInference")


def _is_kaito(root: YNode) -> bool:
    api = root.scalar("apiVersion", default="")
    return isinstance(api, str) and api.startswith(API_GROUP) and root.scalar("kind") in KINDS


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: ConfigMaps holding an ``inference_config.yaml`` key, by name."""
    for document in loaded.documents:
        root = document.root
        if root is None or root.kind != "map" or root.scalar("kind") != "ConfigMap" or \
                root.path("data", CONFIG_KEY) is None:
            continue
        name = root.scalar("metadata", "name")
        if isinstance(name, str):
            workspace.indexed.setdefault(INDEX, {})[name] = (loaded, document)


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: a workspace naming an inference ConfigMap not indexed yet."""
    if not _is_kaito(root):
        return False
    known = workspace.indexed.get(INDEX, {})
    return any(config.value not in known for config in _config_refs(root))


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
                        body.path("inference", "config"))
    model.annotations = annotations
    _instance(model, body.path("resource", "instanceType"))
    prefix = "spec." if kind == "InferenceSet" else ""
    spec = root.get("spec") if kind == "InferenceSet" else None
    model.replicas = ctx.field_setting(spec, "replicas", "replicas", f"{prefix}replicas", to_int) if spec else None
    model.strategy = Setting("strategy", "RollingUpdate", model.location, "KAITO workspace")
    return [finish(model)]


def _vllm_model(ctx: DocContext, name: str, kind: str, at: YNode, identity: str, preset: Setting | None,
                config: YNode | None) -> ServedModel:
    """KAITO's vLLM server for model ``preset`` with the settings of ConfigMap ``config``."""
    model = ctx.new_model(name, kind, at, identity)
    model.engine = "vllm"
    tokens = [ArgToken("vllm", model.location, (), "kaito", True), ArgToken("serve", model.location, (), "kaito", True)]
    if preset is not None:
        tokens.append(ArgToken(str(preset.value), preset.location, preset.comments, "kaito", True))
    tokens.extend(_config_tokens(ctx, model, config))
    apply_launch(ctx, model, tokens, "vllm")
    return model


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
                            ctx.field_setting(model_spec, "name", "model", "spec.model.name"), role.get("runtimeConfig"))
        model.annotations = string_map(root.path("metadata", "annotations"))
        _instance(model, role.get("instanceType"))
        model.replicas = ctx.field_setting(role, "replicas", "replicas", f"spec.roles[{index}].replicas", to_int)
        model.strategy = Setting("strategy", "RollingUpdate", model.location, "KAITO multi-role inference")
        if kind_of in ("prefill", "decode"):
            model.disaggregation = (f"{ctx.path}#MultiRoleInference/{name}", kind_of)
        found.append(finish(model))
    return found


def _config_tokens(ctx: DocContext, model: ServedModel, config: YNode | None) -> list[ArgToken]:
    """``--key str(value)`` for each ``vllm:`` entry of the named ConfigMap, located in its file."""
    found = ctx.workspace.indexed.get(INDEX, {}).get(config.value) if config is not None else None
    if found is None:
        return []
    loaded, document = found
    cm_ctx = DocContext(loaded, document, ctx.workspace)
    inner = embedded_document(cm_ctx, document.root.path("data", CONFIG_KEY))
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


def _instance(model: ServedModel, instance: YNode | None) -> None:
    """The VM size KAITO provisions: the node's well-known instance-type label names the GPU."""
    if instance is not None and instance.kind == "scalar" and isinstance(instance.value, str) and instance.value:
        model.node_selector = {INSTANCE_LABEL: instance.value}
