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


def _is_kaito(root: YNode) -> bool:
    api = root.scalar("apiVersion", default="")
    return isinstance(api, str) and api.startswith(API_GROUP) and root.scalar("kind") in ("Workspace", "InferenceSet")


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
    config = _body(root).path("inference", "config") if _body(root) is not None else None
    return config is not None and config.value not in workspace.indexed.get(INDEX, {})


def _body(root: YNode) -> YNode | None:
    """Where ``resource`` and ``inference`` are: the root (Workspace), ``spec.template`` (InferenceSet)."""
    return root.path("spec", "template") if root.scalar("kind") == "InferenceSet" else root


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    if not _is_kaito(root):
        return []
    body = _body(root)
    preset = body.path("inference", "preset") if body is not None and body.kind == "map" else None
    annotations = string_map(root.path("metadata", "annotations"))
    if preset is None or preset.kind != "map" or annotations.get("kaito.sh/runtime") in NOT_VLLM_RUNTIMES:
        return []
    kind = str(root.scalar("kind"))
    name = str(root.scalar("metadata", "name", default=kind.lower()))
    model = ctx.new_model(name, kind, root.path("metadata", "name") or root, f"{kind}/{name}")
    model.annotations = annotations
    model.engine = "vllm"
    preset_name = ctx.field_setting(preset, "name", "model", "inference.preset.name")
    tokens = [ArgToken("vllm", model.location, (), "kaito", True), ArgToken("serve", model.location, (), "kaito", True)]
    if preset_name is not None:
        tokens.append(ArgToken(str(preset_name.value), preset_name.location, preset_name.comments, "kaito", True))
    tokens.extend(_config_tokens(ctx, model, body.path("inference", "config")))
    apply_launch(ctx, model, tokens, "vllm")
    _resource(ctx, model, body.get("resource"))
    prefix = "spec." if kind == "InferenceSet" else ""
    spec = root.get("spec") if kind == "InferenceSet" else None
    model.replicas = ctx.field_setting(spec, "replicas", "replicas", f"{prefix}replicas", to_int) if spec else None
    model.strategy = Setting("strategy", "RollingUpdate", model.location, "KAITO workspace")
    return [finish(model)]


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


def _resource(ctx: DocContext, model: ServedModel, resource: YNode | None) -> None:
    if resource is None or resource.kind != "map":
        return
    instance = resource.scalar("instanceType")
    if isinstance(instance, str) and instance:
        model.node_selector = {INSTANCE_LABEL: instance}
