"""One container-shaped mapping -> one served model: shared by the operator and chart adapters.

A container here is any mapping with ``image`` / ``command`` / ``args`` / ``env`` / ``resources`` (a
Kubernetes container, an OME ``runner``, a KServe ``predictor.model``, an app-template container, a
docker-compose service). Differences between formats are passed in: the image setting (app-template
splits it into repository/tag), a default engine (the runtime a CRD implies when the image does not
say), and the key path used as each setting's ``source``.
"""

from __future__ import annotations

import re

from ... import lazy
from ...engines.argv import apply_argv, find_launch
from ...engines.images import parse_image
from ...model import ArgToken, ServedModel, Setting
from ...yamlio import YNode
from . import env_argv, llama_env
from .expansion import substitute
from .shell import SHELLS, SHELL_C, Spliced, argv_tokens, environment_settings, shell_tokens
from .device_claims import pod_claims
from .downloads import pod_downloads
from .pods import kubernetes_pod
from ..core.contexts import DocContext
from ..core.fleet import placement
from ..core.recognition import (affinity_claims, apply_launch, env_map_settings, env_value_nodes, gpu_count, operator_tokens,
                                set_image, string_map, to_int)

GPU_PRODUCT_LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator")
# the keys of a container (Kubernetes) or service (compose) that hold the argv the engine starts with
LAUNCH_KEYS = ("command", "args", "entrypoint")
ARGS_ENV_SUFFIXES = ("_ADDITIONAL_ARGS", "_EXTRA_ARGS", "_SERVE_ARGS", "_ENGINE_ARGS")


def container_tokens(ctx: DocContext, container: YNode, env_key: str = "env",
                     values: dict[str, env_argv.EnvValue | None] | None = None,
                     exports: dict[str, ArgToken] | None = None) -> list[ArgToken]:
    """command + args as the container runtime joins them, ``$(VAR)`` expanded as the kubelet does,
    shell strings split and located with their literal variables expanded (the container's own
    variables by ``env_argv.splice``, so that their words are located in the env value); ``exports``
    receives what a shell script gives the engine's environment (``export``, ``NAME=value`` before it)."""
    if values is None:
        values = env_argv.container_env(ctx, container, env_key)
    literal = {name: value.setting(name) for name, value in values.items() if value is not None}
    environment = {name: Spliced(value.text) if value is not None and env_argv.inline(value.text) else None
                   for name, value in values.items()}
    joined, script = _command(ctx, container)
    if script is not None:
        joined = shell_tokens(ctx, script, "shell", env=environment, exports=exports)
    return [kubelet_expand(t, literal) for t in env_argv.splice(joined, values)]


def _command(ctx: DocContext, container: YNode) -> tuple[list[ArgToken], YNode | None]:
    """command + args as written, and the shell script they run (``sh -c SCRIPT``, or one ``args``
    string with spaces), if any."""
    command = argv_tokens(ctx, container.get("command"), "command") if container.get("command") is not None else []
    args_node = container.get("args")
    args = argv_tokens(ctx, args_node, "args")
    joined = command + args
    texts = [t.text for t in joined]
    flag = next((t for t in texts[1:3] if SHELL_C.match(t)), None) if texts and texts[0] in SHELLS else None
    if len(texts) >= 3 and flag is not None:
        script_index = texts.index(flag) + 1
        if texts[script_index] == "--" and script_index + 1 < len(texts):
            script_index += 1  # bash -lc -- SCRIPT
        script_node = _node_for(container, joined[script_index])
        if script_node is not None:
            return joined, script_node
    if not command and args_node is not None and args_node.kind == "seq" and len(args) == 1 and " " in texts[0]:
        return joined, args_node.value[0]
    return joined, None


_KUBELET_REFERENCE = lazy.Pattern(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def kubelet_expand(token: ArgToken, env: dict[str, Setting]) -> ArgToken:
    """``$(VAR)`` in command/args replaced by the container's literal ``env`` value, as the kubelet does
    (``$$`` escapes a ``$``; an undefined name stays as written). A token that is exactly one
    reference is located at the env value, where the engine's value is written."""
    if "$" not in token.text:
        return token
    whole = _KUBELET_REFERENCE.fullmatch(token.text)
    if whole and whole.group(1) in env and env[whole.group(1)].value is not None:
        setting = env[whole.group(1)]
        return ArgToken(str(setting.value), setting.location, setting.comments, token.origin, token.synthetic)

    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        found = env.get(match.group(1))
        return str(found.value) if found is not None and found.value is not None else match.group(0)

    text = substitute(_KUBELET_REFERENCE, token.text, replace)
    return token if text is None else ArgToken(text, token.location, token.comments, token.origin, token.synthetic)


def _node_for(container: YNode, token: ArgToken) -> YNode | None:
    for key in ("command", "args"):
        node = container.get(key)
        if node is None or node.kind != "seq":
            continue
        for child in node.value:
            if child.kind == "scalar" and child.line == token.location.line and str(child.value) == token.text:
                return child
    return None


def env_arg_tokens(ctx: DocContext, env: YNode | None, spliced: set[str] | frozenset[str] = frozenset()) -> list[ArgToken]:
    """Flags inside ``*_ADDITIONAL_ARGS``-style env strings, each located in the file; not those of the
    strings whose tokens (origin ``env:NAME``, as each of these is) the command spliced in already."""
    tokens: list[ArgToken] = []
    for name, value in env_value_nodes(env):
        if name.endswith(ARGS_ENV_SUFFIXES) and isinstance(value.value, str) and f"env:{name}" not in spliced:
            tokens.extend(shell_tokens(ctx, value, f"env:{name}", segment=False))
    return tokens


def container_model(ctx: DocContext, *, root: YNode | None, kind: str, name: str, identity: str,
                    container: YNode, at: YNode | None = None, prefix: str = "",
                    image: Setting | None = None, default_engine: str | None = None,
                    tokens: list[ArgToken] | None = None, pod_spec: YNode | None = None,
                    env_key: str = "env", pod_labels: YNode | None = None,
                    whole_pod: bool | None = None) -> ServedModel | None:
    """A served model for ``container`` if it starts an engine, else None.

    ``default_engine`` is what the resource runs when neither the argv nor the image names an engine
    (KServe's LLM runtime is vLLM); an argv of flags only is then that engine's own argv. ``pod_spec``:
    the mapping around the container (a Kubernetes pod spec, or an operator's pod fields). A pod spec (a
    mapping holding ``containers``) gives the model its pod facts, with ``pod_labels`` (the template's
    ``metadata.labels``); ``whole_pod`` says otherwise: False for a template another resource completes,
    True for a pod spec whose engine container the format keeps elsewhere (Dynamo's ``mainContainer``).
    """
    if image is None:
        image_node = container.get("image")
        if image_node is not None and image_node.kind == "scalar" and isinstance(image_node.value, str):
            image = ctx.setting("image", container.key_node("image"), image_node, f"{prefix}image")
    image_text = image.value if image is not None and isinstance(image.value, str) else None
    image_engine = parse_image(image_text).engine if image_text is not None else None
    values = env_argv.container_env(ctx, container, env_key)
    exports: dict[str, ArgToken] = {}
    if tokens is None:
        tokens = container_tokens(ctx, container, env_key, values, exports)
        if pod_spec is not None and not launches(tokens, image_engine or default_engine):
            tokens = env_argv.mounted_script(ctx, container, pod_spec, tokens, values, exports) or tokens
    wrapper = env_argv.wrapper_for(image_text, values)
    engine = image_engine or default_engine or (wrapper["engine"] if wrapper else None) or \
        (env_argv.engine_from_env(values, image_text) if not tokens else None)
    model = ctx.new_model(name, kind, at or container.path("name") or container, identity)
    model.launch_comments = ctx.heading_comments(container, LAUNCH_KEYS, at)
    if root is not None:
        model.annotations = string_map(root.path("metadata", "annotations"))
    if image is not None:
        set_image(ctx, model, image)
    if not apply_launch(ctx, model, tokens, engine):
        return None
    env = container.get(env_key)
    model.env = env_map_settings(ctx, env, prefix)
    model.env.update(environment_settings(exports))  # what the container's script exports comes after
    llama_env.env_args(model)
    spliced = {token.origin for token in tokens}  # an env string the script already spliced in
    extra = env_arg_tokens(ctx, env, spliced)
    env_argv.apply_wrapper(model, wrapper, values)
    if extra:
        model.argv.extend(extra)
        apply_argv(model, extra)
    key, value = gpu_count(container.get("resources"))
    if value is not None:
        model.gpus = ctx.setting("gpus", key, value, f"{prefix}resources.{key.value}", to_int)
        model.gpu_resource = str(key.value)
    if pod_spec is not None:
        _pod(ctx, model, container, pod_spec, root, pod_labels, whole_pod)
    return model


def _pod(ctx: DocContext, model: ServedModel, container: YNode, pod_spec: YNode, root: YNode | None,
         labels: YNode | None, whole_pod: bool | None) -> None:
    """What the pod around the engine tells: the node selector, affinity and DRA claims that name the
    accelerator, and, for a Kubernetes pod spec (a mapping holding ``containers``), the pod facts the
    CFG5xx rules read (``pods.kubernetes_pod``), whatever format delivered it."""
    model.node_selector = string_map(pod_spec.get("nodeSelector"))
    model.placement = placement(ctx, pod_spec)
    dra_claims, dra_count = pod_claims(ctx.workspace, pod_spec)
    model.accelerator_claims = affinity_claims(pod_spec) + dra_claims
    model.gpus = model.gpus or dra_count
    for label in GPU_PRODUCT_LABELS:
        if label in model.node_selector:
            model.gpu_product = model.node_selector[label]
            break
    containers = pod_spec.get("containers")
    if whole_pod or whole_pod is None and containers is not None and containers.kind == "seq":
        kubernetes_pod(ctx, model, container, pod_spec, root, labels)
    model.downloads = pod_downloads(ctx, pod_spec, container)


def launches(tokens: list[ArgToken], engine: str | None) -> bool:
    return find_launch(tokens, engine) is not None


def typed_setting(ctx: DocContext, model: ServedModel, parent: YNode | None, key: str, canonical: str,
                  flag: str | None, source: str, convert=None, first: bool = False) -> Setting | None:
    """A typed field the operator turns into ``flag``: recorded as a setting and as synthetic argv.

    ``first``: the operator passes it before the argv already recorded, so a flag there wins.
    """
    if parent is None or parent.kind != "map":
        return None
    setting = ctx.field_setting(parent, key, canonical, source, convert)
    if setting is None:
        return None
    if first and canonical in model.settings:
        model.occurrences.setdefault(canonical, []).insert(0, setting)
    else:
        model.add(setting)
    if flag:
        model.argv.extend(operator_tokens(setting, flag))
    return setting


def as_float(value):
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value
