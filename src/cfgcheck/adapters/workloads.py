"""Kubernetes workloads whose containers start an engine -> one served model per such container.

Pod templates are found wherever a resource keeps them (Deployment, StatefulSet, DaemonSet, Job,
CronJob, Pod, LeaderWorkerSet leader/worker templates, and operator resources that embed a pod spec),
by looking for ``containers`` lists. The engine argv is the container ``command`` + ``args``: ``vllm serve
M``, ``python -m vllm.entrypoints.openai.api_server``, ``python3 -m sglang.launch_server``, a shell
string under ``sh -c``, or flags alone when the image's entrypoint starts the engine. Flags inside env
strings such as ``VLLM_ADDITIONAL_ARGS`` are appended, as the images' entrypoints do.
"""

from __future__ import annotations

import re

from ..engines.images import parse_image
from ..model import ArgToken, ServedModel, Setting
from ..yamlio import YNode
from .base import DocContext, apply_launch, env_settings, finish, gpu_count, set_image, string_map, to_int

SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/usr/bin/env", "dash", "zsh"}
ARGS_ENV_SUFFIXES = ("_ADDITIONAL_ARGS", "_EXTRA_ARGS", "_SERVE_ARGS", "_ENGINE_ARGS")
MAX_SEARCH_DEPTH = 12
_SHELL_C = re.compile(r"^-[a-z]*c[a-z]*$")  # -c, -lc, -exc, -ec


def pod_specs(node: YNode, trail: tuple[str, ...] = (), depth: int = 0):
    """Yield (pod spec mapping, key path) for every mapping that holds a ``containers`` list."""
    if depth > MAX_SEARCH_DEPTH or node.kind != "map":
        return
    containers = node.get("containers")
    if containers is not None and containers.kind == "seq":
        yield node, trail
    for key, value in node.items():
        if key.kind == "scalar" and value.kind == "map" and key.value != "containers":
            yield from pod_specs(value, trail + (str(key.value),), depth + 1)
        elif key.kind == "scalar" and value.kind == "seq" and key.value not in ("containers", "initContainers"):
            # lists of templates: StormService roles, RayCluster workerGroupSpecs, ...
            for index, item in enumerate(value.value):
                if item.kind == "map":
                    label = item.scalar("name", default=item.scalar("groupName", default=index))
                    yield from pod_specs(item, trail + (f"{key.value}[{label}]",), depth + 1)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    kind = root.scalar("kind")
    if not isinstance(kind, str) or root.get("apiVersion") is None:
        return []
    name = str(root.scalar("metadata", "name", default=kind.lower()))
    spec = root.get("spec")
    found: list[ServedModel] = []
    for pod_spec, trail in pod_specs(root):
        for container in pod_spec.get("containers").value:
            if container.kind != "map":
                continue
            model = _container_model(ctx, root, kind, name, pod_spec, container, trail)
            if model is None:
                continue
            _workload_facts(ctx, model, kind, spec, pod_spec)
            found.append(finish(model))
    return found


def container_tokens(ctx: DocContext, container: YNode) -> list[ArgToken]:
    """command + args as the container runtime joins them, shell strings split and located."""
    command = ctx.tokens(container.get("command"), "command") if container.get("command") is not None else []
    args_node = container.get("args")
    args = ctx.tokens(args_node, "args")
    joined = command + args
    texts = [t.text for t in joined]
    flag = next((t for t in texts[1:3] if _SHELL_C.match(t)), None) if texts and texts[0] in SHELLS else None
    if len(texts) >= 3 and flag is not None:
        script_index = texts.index(flag) + 1
        if texts[script_index] == "--" and script_index + 1 < len(texts):
            script_index += 1  # bash -lc -- SCRIPT
        script_node = _node_for(container, joined[script_index])
        if script_node is not None:
            return ctx.shell_tokens(script_node, "shell")
    if not command and args_node is not None and args_node.kind == "seq" and len(args) == 1 and " " in texts[0]:
        return ctx.shell_tokens(args_node.value[0], "shell")
    return joined


def _node_for(container: YNode, token: ArgToken) -> YNode | None:
    for key in ("command", "args"):
        node = container.get(key)
        if node is None or node.kind != "seq":
            continue
        for child in node.value:
            if child.kind == "scalar" and child.line == token.location.line and str(child.value) == token.text:
                return child
    return None


def env_arg_tokens(ctx: DocContext, container: YNode) -> list[ArgToken]:
    env = container.get("env")
    tokens: list[ArgToken] = []
    if env is None or env.kind != "seq":
        return tokens
    for item in env.value:
        if item.kind != "map":
            continue
        env_name = item.scalar("name")
        value = item.get("value")
        if isinstance(env_name, str) and env_name.endswith(ARGS_ENV_SUFFIXES) and value is not None \
                and value.kind == "scalar" and isinstance(value.value, str):
            tokens.extend(ctx.shell_tokens(value, f"env:{env_name}", segment=False))
    return tokens


def _container_model(ctx, root, kind, name, pod_spec, container, trail) -> ServedModel | None:
    image_node = container.get("image")
    image = image_node.value if image_node is not None and image_node.kind == "scalar" else None
    image_engine = parse_image(image).engine if isinstance(image, str) else None
    tokens = container_tokens(ctx, container)
    container_name = str(container.scalar("name", default="container"))
    where = "/".join(trail + (container_name,))
    model = ctx.new_model(f"{name}/{container_name}", kind, container.path("name") or container,
                          f"{kind}/{name}/{where}")
    model.annotations = string_map(root.path("metadata", "annotations"))
    if image_node is not None:
        set_image(ctx, model, ctx.setting("image", container.key_node("image"), image_node, "image"))
    if not apply_launch(ctx, model, tokens, image_engine):
        return None
    model.env = env_settings(ctx, container.get("env"))
    env_tokens = env_arg_tokens(ctx, container)
    if env_tokens:
        from ..engines.argv import apply_argv

        model.argv.extend(env_tokens)
        apply_argv(model, env_tokens)
    key, value = gpu_count(container.get("resources"))
    if value is not None:
        model.gpus = ctx.setting("gpus", key, value, f"resources.{key.value}", to_int)
        model.gpu_resource = str(key.value)
    return model


def _workload_facts(ctx: DocContext, model: ServedModel, kind: str, spec: YNode | None, pod_spec: YNode) -> None:
    model.node_selector = string_map(pod_spec.get("nodeSelector"))
    product = model.node_selector.get("nvidia.com/gpu.product") or model.node_selector.get(
        "cloud.google.com/gke-accelerator")
    if product:
        model.gpu_product = product
    if spec is None or spec.kind != "map":
        return
    model.replicas = ctx.field_setting(spec, "replicas", "replicas", "spec.replicas", to_int)
    if kind == "Deployment":
        strategy = spec.path("strategy", "type")
        if strategy is not None:
            model.strategy = ctx.setting("strategy", spec.path("strategy").key_node("type"), strategy, "spec.strategy.type")
        else:
            model.strategy = Setting("strategy", "RollingUpdate", model.location, "Deployment default")
    elif kind in ("StatefulSet", "Pod", "LeaderWorkerSet"):
        model.strategy = Setting("strategy", kind, model.location, kind)
