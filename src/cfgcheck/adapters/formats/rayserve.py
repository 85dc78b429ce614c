"""Ray Serve applications -> served models: a KubeRay ``RayService`` (its ``spec.serveConfigV2``, a YAML
string whose lines are the file's) or a Serve config file (``applications:``, for ``serve deploy``).

- ``import_path: ray.serve.llm:build_openai_app`` (or ``build_llm_deployment``) with ``args.llm_configs``
  (or an application of its own handed configs of that shape): one vLLM engine per LLM config.
  ``engine_kwargs`` are keyword arguments to vLLM's ``EngineArgs``, not argv: each key must name a
  field exactly (underscores, no prefix), so they become tokens of origin ``kwargs:`` that the catalog
  walk matches exactly (an unknown key fails at start-up). The model is
  ``model_loading_config.model_source`` (else ``model_id``); ``accelerator_type`` names the GPU;
  ``deployment_config`` holds ``num_replicas`` or ``autoscaling_config``.
- any other application whose ``runtime_env.env_vars`` name models (``MODEL_ID``, ``MODEL_1_ID`` ...,
  one served model each) and that installs an engine (``pip: [vllm==X]``) or runs on an engine image:
  served models whose engine the application's own code starts. Its settings are read from the env
  variables named after the engine setting they carry, as such applications pass them on
  (``MAX_MODEL_LEN``, ``GPU_MEMORY_UTILIZATION``, ``TENSOR_PARALLEL_SIZE`` or ``TENSOR_PARALLELISM``;
  ``MODEL_1_MAX_MODEL_LEN`` for the model of ``MODEL_1_ID``); what the code does not pass on is not
  visible here.

The cluster's GPUs are counted over the head and every worker group (replicas x GPUs per pod); Ray places
the engine replicas on them, so the count is the cluster's, not one engine's (``gpus_span`` unknown).
"""

from __future__ import annotations

import json
import re

from ...engines.argv import KEYWORD_ORIGIN
from ...engines.images import parse_image
from ...model import ArgToken, ServedModel, Setting
from ...settings import FLOAT_SETTINGS, INT_SETTINGS, parse
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import (apply_launch, finish, ray_worker_claims, ray_worker_images, set_image, string_map,
                                to_int)
from ..core.yaml_in_strings import embedded_document
from ..launch.pod_specs import find_key, ray_cluster_gpus
from ..launch.pods import ray_worker_pods

MARKERS = ("serveconfigv2", "llm_configs", "import_path")
LLM_BUILDERS = ("ray.serve.llm:build_openai_app", "ray.serve.llm:build_llm_deployment")
# the env a Serve application of its own reads its model from: MODEL_ID, HF_MODEL_ID, MODEL_NAME,
# ASSIST_MODEL_ID, MODEL_1_ID (one model per variable)
_MODEL_ENV = re.compile(r"^(?!SERVED_)(?:[A-Z0-9]+_)?MODEL(?:_[0-9]+)?_(?:ID|NAME)$|^MODEL$")
ENGINE_PACKAGES = ("vllm", "sglang")
# numeric engine settings such an application passes on from its env, by the variable's name (the GKE
# Ray Serve samples read TENSOR_PARALLELISM, ai-on-eks's vllm_serve.py MAX_MODEL_LEN, TENSOR_PARALLEL_SIZE)
_ENV_SETTINGS = {name.upper(): name for name in INT_SETTINGS | FLOAT_SETTINGS} | \
    {"TENSOR_PARALLELISM": "tensor_parallel_size"}
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.-]*)(?:\[[^\]]*\])?\s*([=<>!~]*)\s*(.*)$")  # name[extras] op version


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    kind = root.scalar("kind")
    if kind == "RayService":
        inner = embedded_document(ctx, root.path("spec", "serveConfigV2"))
        cluster = root.path("spec", "rayClusterConfig")
        name = str(root.scalar("metadata", "name", default="rayservice"))
    elif root.get("applications") is not None and root.get("apiVersion") is None:
        inner, cluster, name, kind = (ctx, root), None, ctx.path.rsplit("/", 1)[-1], "ServeConfig"
    else:
        return []
    if inner is None:
        return []
    serve_ctx, serve = inner
    applications = serve.get("applications")
    if applications is None or applications.kind != "seq":
        return []
    found: list[ServedModel] = []
    for app in applications.value:
        if app.kind != "map":
            continue
        app_name = str(app.scalar("name", default="app"))
        configs = _llm_configs(app)
        for index, config in enumerate(configs):
            found.append(_llm_model(serve_ctx, ctx, config, f"{name}/{app_name}/{index}", kind))
        if not configs:
            found.extend(_custom_app_models(serve_ctx, ctx, app, f"{name}/{app_name}", kind, cluster))
    for model in found:
        model.annotations = string_map(root.path("metadata", "annotations"))
        _cluster(ctx, model, cluster)
    return [finish(model) for model in found]


def _llm_configs(app: YNode) -> list[YNode]:
    """The LLM configs of an application: ``args.llm_configs`` of the Ray Serve LLM builders, or of an
    application of its own whose configs have the ``LLMConfig`` shape (a ``model_loading_config``)."""
    configs = app.path("args", "llm_configs")
    items = [c for c in configs.value if c.kind == "map"] if configs is not None and configs.kind == "seq" else []
    if app.scalar("import_path") in LLM_BUILDERS:
        return items
    return [c for c in items if c.get("model_loading_config") is not None]


def _llm_model(ctx: DocContext, outer: DocContext, config: YNode, name: str, kind: str) -> ServedModel:
    model = _new_model(ctx, outer, name, kind, config)
    model.engine = "vllm"
    loading = config.get("model_loading_config")
    source = None
    if loading is not None and loading.kind == "map":
        source = ctx.field_setting(loading, "model_source", "model", "model_loading_config.model_source") or \
            ctx.field_setting(loading, "model_id", "model", "model_loading_config.model_id")
    tokens = [ArgToken("vllm", model.location, (), "rayserve", True), ArgToken("serve", model.location, (), "rayserve", True)]
    if source is not None and isinstance(source.value, str):
        tokens.append(ArgToken(source.value, source.location, source.comments, "model_loading_config", True))
    kwargs, falses = engine_kwarg_tokens(ctx, config.get("engine_kwargs"))
    apply_launch(ctx, model, tokens + kwargs, "vllm")
    false_at = {ctx.location(key) for key in falses}
    for setting in model.settings.values():
        if setting.key_location in false_at:
            setting.value = False
    accelerator = ctx.field_setting(config, "accelerator_type", "gpu_product", "accelerator_type")
    if accelerator is not None and isinstance(accelerator.value, str):
        model.gpu_product = accelerator.value
    model.replicas = _replicas(ctx, config.get("deployment_config"))
    model.strategy = Setting("strategy", "RollingUpdate", model.location, "Ray Serve")
    return model


def _new_model(ctx: DocContext, outer: DocContext, name: str, kind: str, at: YNode) -> ServedModel:
    """A model located in the serve config, belonging to the outer document (its directives too)."""
    model = ctx.new_model(name, kind, at, f"{kind}/{name}")
    model.document = outer.document.index
    model.directives, model.comments = outer.directives(), outer.document_comments()
    return model


def engine_kwarg_tokens(ctx: DocContext, kwargs: YNode | None) -> tuple[list[ArgToken], list[YNode]]:
    """``engine_kwargs`` as argv tokens of origin ``kwargs:`` (``--key`` as written, at the key; the value
    at the value; mappings and lists as JSON), and the keys set to ``false``. A boolean is the bare
    switch, so that its key is still checked; the value of a false one is set after the walk."""
    tokens: list[ArgToken] = []
    falses: list[YNode] = []
    for key, value in kwargs.items() if kwargs is not None and kwargs.kind == "map" else []:
        if key.kind != "scalar" or not isinstance(key.value, str) or value.kind == "scalar" and value.value is None:
            continue
        origin = f"{KEYWORD_ORIGIN}engine_kwargs.{key.value}"
        tokens.append(ArgToken(f"--{key.value}", ctx.location(key), ctx.comments(key.line), origin))
        if value.kind == "scalar" and isinstance(value.value, bool):
            falses.extend([] if value.value else [key])
            continue
        text = str(value.value) if value.kind == "scalar" else json.dumps(value.to_python())
        tokens.append(ArgToken(text, ctx.location(value), ctx.comments(value.line), origin))
    return tokens, falses


def _replicas(ctx: DocContext, deployment: YNode | None) -> Setting | None:
    if deployment is None or deployment.kind != "map":
        return None
    fixed = ctx.field_setting(deployment, "num_replicas", "replicas", "deployment_config.num_replicas", to_int)
    autoscaling = deployment.get("autoscaling_config")
    if fixed is not None or autoscaling is None or autoscaling.kind != "map":
        return fixed
    return ctx.field_setting(autoscaling, "min_replicas", "replicas",
                             "deployment_config.autoscaling_config.min_replicas", to_int)


def _custom_app_models(ctx: DocContext, outer: DocContext, app: YNode, name: str, kind: str,
                       cluster: YNode | None) -> list[ServedModel]:
    """A Serve application of its own code that loads an engine: one model per model variable of its
    env (``MODEL_ID``, ``ASSIST_MODEL_ID``, ``MODEL_1_ID`` ...), the engine and version from the packages
    it installs, else from the cluster's image."""
    env = app.path("runtime_env", "env_vars")
    if env is None or env.kind != "map":
        return []
    keys = [(k, v) for k, v in env.items() if k.kind == "scalar" and v.kind == "scalar" and
            _MODEL_ENV.match(str(k.value))]
    deployments = app.get("deployments")
    first = deployments.value[0] if deployments is not None and deployments.kind == "seq" and deployments.value else None
    found = []
    for key, value in keys:
        label = name if len(keys) == 1 else f"{name}/{key.value}"
        model = _new_model(ctx, outer, label, kind, app)
        _engine_of_app(ctx, outer, model, app, cluster)
        if model.engine == "unknown":
            return []
        model.model = ctx.setting("model", key, value, f"runtime_env.env_vars.{key.value}")
        prefix = re.sub(r"(ID|NAME)$", "", str(key.value))
        _env_settings(ctx, model, env, (prefix,) if len(keys) > 1 else (prefix, ""))
        model.replicas = _replicas(ctx, first)
        model.strategy = Setting("strategy", "RollingUpdate", model.location, "Ray Serve")
        found.append(model)
    return found


def _env_settings(ctx: DocContext, model: ServedModel, env: YNode, prefixes: tuple[str, ...]) -> None:
    """The engine settings the application passes on from env variables named after them (the model's
    own prefix first: MODEL_1_TENSOR_PARALLELISM before TENSOR_PARALLELISM)."""
    for prefix in prefixes:
        for key, value in env.items():
            name = str(key.value)
            if key.kind != "scalar" or value.kind != "scalar" or not name.startswith(prefix):
                continue
            setting = _ENV_SETTINGS.get(name[len(prefix):])
            if setting is not None and setting not in model.settings:
                model.add(ctx.setting(setting, key, value, f"runtime_env.env_vars.{name}",
                                      lambda raw, dest=setting: parse(dest, str(raw), model.engine)))


def _engine_of_app(ctx: DocContext, outer: DocContext, model: ServedModel, app: YNode, cluster: YNode | None) -> None:
    pip = app.path("runtime_env", "pip")
    for item in pip.value if pip is not None and pip.kind == "seq" else []:
        text = str(item.value) if item.kind == "scalar" else ""
        package, operator, version = (part.strip() for part in _REQUIREMENT.match(text).groups())
        if package.lower() in ENGINE_PACKAGES:
            model.engine = package.lower()
            if operator == "==" and version:
                model.engine_version, model.engine_version_confidence = version, "exact"
                model.engine_version_why = f"runtime_env pip {text}"
            return
    head = find_key(cluster, "headGroupSpec") if cluster is not None else None
    containers = head.path("headGroupSpec", "template", "spec", "containers") if head is not None else None
    image = containers.value[0].get("image") if containers is not None and containers.kind == "seq" and \
        containers.value and containers.value[0].kind == "map" else None
    if image is not None and image.kind == "scalar" and isinstance(image.value, str) and parse_image(image.value).engine:
        set_image(outer, model, outer.setting("image", None, image, "headGroupSpec...image"))


def _cluster(ctx: DocContext, model: ServedModel, cluster: YNode | None) -> None:
    """The cluster's GPUs (head + worker groups) and what its worker groups' labels and affinity say
    about the accelerator (``accelerator_type`` in the config comes first)."""
    head = find_key(cluster, "headGroupSpec") if cluster is not None else None
    if head is None:
        return
    total, how = ray_cluster_gpus(head)
    if total:
        model.gpus = Setting("gpus", total, ctx.location(head), f"rayClusterConfig ({how})")
        model.gpus_span = "unknown"
    model.accelerator_claims += ray_worker_claims(head)
    model.worker_images = ray_worker_images(ctx, head)
    model.worker_pods = ray_worker_pods(ctx, head)
