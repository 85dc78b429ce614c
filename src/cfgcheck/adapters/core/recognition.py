"""What every format shares to recognise its documents and build their served models: which API group
and kind a resource is, the engine an image names, the engine launch in an argv, GPU requests, env
values, node affinity, and ``finish`` (what is derived once every source of a model has been read)."""

from __future__ import annotations

import posixpath

from ... import lazy
from ...capacity.gpus import GPU_LABELS, HINT_LABELS, RESOURCE_KINDS, Claim, label_claims
from ...engines import argv as argv_mod
from ...engines.images import folder_under_variable, image_engine, parse_image, placeholder
from ...model import ArgToken, Download, ServedModel, Setting
from ...settings import as_int
from ...yamlio import YNode
from .contexts import DocContext

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

# The engine names (launcher, module or image) that mark a file for the adapters that find engines in
# containers and commands; each adapter declares its own MARKERS (see ``protocol``).
ENGINE_MARKERS = ("vllm", "sglang", "tokenspeed", "llama")


# Device-plugin resources that give the engine its accelerators (capacity.gpus.RESOURCE_KINDS says what
# each counts); MIG slices are ``nvidia.com/mig-<profile>`` resources, matched by prefix.
GPU_RESOURCES = tuple(RESOURCE_KINDS)
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


def is_resource(root: YNode, group: str, kinds: str | tuple[str, ...] | None = None) -> bool:
    """Whether ``root`` is a resource of the API ``group`` (its ``apiVersion`` starts with it: a group
    with its slash, ``serving.kserve.io/``) and, when ``kinds`` is given, of that kind or one of them:
    the first question of every operator format."""
    api = root.scalar("apiVersion", default="")
    if not isinstance(api, str) or not api.startswith(group):
        return False
    return kinds is None or root.scalar("kind") in ((kinds,) if isinstance(kinds, str) else kinds)


def resource_spec(root: YNode, group: str, kinds: str | tuple[str, ...] | None = None) -> YNode | None:
    """The ``spec`` mapping of a resource ``is_resource`` recognises, else None (not one, or no spec)."""
    spec = root.get("spec") if is_resource(root, group, kinds) else None
    return spec if spec is not None and spec.kind == "map" else None


def set_image(ctx: DocContext, model: ServedModel, setting: Setting | None) -> None:
    """Record the image, and the engine and version it names (the engine only if not already known)."""
    if setting is None or not isinstance(setting.value, str):
        return
    model.image = setting
    found = image_engine(parse_image(setting.value))
    if model.engine == "unknown" and found.engine:
        model.engine = found.engine
    model.engine_version, model.engine_variant = found.version, found.variant
    model.engine_version_confidence, model.engine_version_why = found.confidence, found.why


def gpu_count(resources: YNode | None) -> tuple[YNode | None, YNode | None]:
    """The GPU request of a container's ``resources``: (key node, value node) from limits or requests."""
    if resources is None:
        return None, None
    for section in ("limits", "requests"):
        block = resources.get(section)
        if block is None or block.kind != "map":
            continue
        for key, value in block.items():
            name = str(key.value) if key.kind == "scalar" else ""
            # ``nvidia.com/gpu.shared``: the device plugin's time-sliced GPUs under renameByDefault
            if name.removesuffix(".shared") in GPU_RESOURCES or name.startswith(MIG_RESOURCE_PREFIX):
                return key, value
    return None, None


def to_int(value: Any) -> Any:
    """Digits written as a string (``"8"``) as the int; anything else as it is (``settings.as_int``)."""
    return as_int(value, value) if isinstance(value, str) else value


def string_map(node: YNode | None) -> dict[str, str]:
    if node is None or node.kind != "map":
        return {}
    return {str(k.value): str(v.value) for k, v in node.items() if k.kind == "scalar" and v.kind == "scalar"}


def env_settings(ctx: DocContext, env: YNode | None) -> dict[str, Setting]:
    """Literal ``env`` values by name (``valueFrom`` references are not literal and are skipped)."""
    found: dict[str, Setting] = {}
    if env is None or env.kind != "seq":
        return found
    for item in env.value:
        name, value = (item.scalar("name"), item.get("value")) if item.kind == "map" else (None, None)
        if isinstance(name, str) and value is not None and value.kind == "scalar":
            found[name] = ctx.setting(name, item.key_node("value"), value, f"env.{name}", origin="env")
    return found


def env_map_settings(ctx: DocContext, env: YNode | None, prefix: str) -> dict[str, Setting]:
    """Literal env values from a list (``- name: X / value: Y``) or a map (``X: Y`` / ``X: {value: Y}``)."""
    if env is None:
        return {}
    if env.kind == "seq":
        found = env_settings(ctx, env)
        for setting in found.values():
            setting.source = f"{prefix}{setting.source}" if prefix else setting.source
        return found
    found: dict[str, Setting] = {}
    for key, value in env.items():
        if key.kind != "scalar" or not isinstance(key.value, str):
            continue
        node, key_node = value, key
        if value.kind == "map":
            node, key_node = value.get("value"), value.key_node("value")
        if node is not None and node.kind == "scalar" and node.value is not None:
            found[key.value] = ctx.setting(key.value, key_node, node, f"{prefix}env.{key.value}", origin="env")
    return found


def env_value_nodes(env: YNode | None) -> list[tuple[str, YNode]]:
    """(name, value node) of literal env entries, list or map form."""
    pairs: list[tuple[str, YNode]] = []
    if env is None:
        return pairs
    if env.kind == "seq":
        for item in env.value:
            if item.kind == "map":
                name, value = item.scalar("name"), item.get("value")
                if isinstance(name, str) and value is not None and value.kind == "scalar":
                    pairs.append((name, value))
    elif env.kind == "map":
        for key, value in env.items():
            if value.kind == "map":
                value = value.get("value")
            if key.kind == "scalar" and isinstance(key.value, str) and value is not None and value.kind == "scalar":
                pairs.append((key.value, value))
    return pairs


def literal_env(node: YNode | None, inherited: dict[str, str | None]) -> dict[str, str | None]:
    env = dict(inherited)
    for name, value in env_value_nodes(node):
        text = value.value
        env[name] = None if text is None or "${{" in str(text) else str(text)
    return env


def operator_tokens(setting: Setting, flag: str) -> list[ArgToken]:
    """The argv an operator or chart emits for a typed field: ``flag value``, or the bare flag for a
    true switch (nothing for a false one). Marked synthetic: no one wrote them as tokens."""
    origin = f"typed:{setting.source}"
    if isinstance(setting.value, bool):
        return [ArgToken(flag, setting.location, setting.comments, origin, True)] if setting.value else []
    return [ArgToken(flag, setting.location, setting.comments, origin, True),
            ArgToken(str(setting.value), setting.location, setting.comments, origin, True)]


def apply_launch(ctx: DocContext, model: ServedModel, tokens: list[ArgToken], image_engine: str | None) -> bool:
    """Find the engine in ``tokens``; record engine, positional model, argv and its settings."""
    launch = argv_mod.find_launch(tokens, image_engine)
    if launch is None:
        return False
    model.engine, model.launched_by = launch.engine, launch.by
    if launch.model is not None:
        model.add(Setting("model", launch.model.text, launch.model.location, "serve MODEL",
                          launch.model.comments, launch.model.location, launch.model.text, launch.model.origin))
    model.argv.extend(launch.args)
    argv_mod.apply_argv(model, launch.args)
    return True


def finish(model: ServedModel) -> ServedModel:
    """Derive model id and revision from the settings once every source has been applied; a
    ``# cfgcheck: engine-version=X`` directive states the engine version exactly."""
    stated = model.directive("engine-version")
    if stated is not None:
        model.engine_version, model.engine_version_confidence = stated.value.lstrip("vV"), "exact"
        model.engine_version_why = f"directive on line {stated.location.line}"
    model.gpu_labels = [(label, model.node_selector[label]) for label in GPU_LABELS if model.node_selector.get(label)]
    if model.model is None and "model" in model.settings:
        model.model = model.settings["model"]
    if model.model is not None and isinstance(model.model.value, str) and placeholder(model.model.value) and \
            not folder_under_variable(model.model.value):
        model.model = None  # a sample's <MODEL_NAME> or ${MODEL}: the model is not known
    if model.model_revision is None and "model_revision" in model.settings:
        model.model_revision = model.settings["model_revision"]
    name_local_model(model)
    _url_source(model)
    if model.model is not None and isinstance(model.model.value, str) and model.model_revision is None:
        source = model.model.value
        if "@" in source and source.startswith("hf://"):
            revision = source.rsplit("@", 1)[1]
            model.model_revision = Setting("model_revision", revision, model.model.location, model.model.source,
                                           model.model.comments, model.model.key_location, revision)
    return model


def affinity_claims(pod_spec: YNode | None) -> list[Claim]:
    """What a pod's node affinity says about the accelerator: the ``In`` values of each label, required
    (every ``nodeSelectorTerms`` entry names it: the pod lands only on such nodes) or preferred (a hint).
    Terms are alternatives, so a label only some required terms name is a hint too."""
    affinity = pod_spec.path("affinity", "nodeAffinity") if pod_spec is not None and pod_spec.kind == "map" else None
    if affinity is None or affinity.kind != "map":
        return []
    claims: list[Claim] = []
    required = affinity.path("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    terms = [t for t in required.value if t.kind == "map"] if required is not None and required.kind == "seq" else []
    per_term = [_in_values(term.get("matchExpressions")) for term in terms]
    for label in dict.fromkeys(label for values in per_term for label in values):
        values = tuple(dict.fromkeys(v for term in per_term for v in term.get(label, ())))
        firm = all(label in term for term in per_term)
        claims.append(Claim(label, values, "required nodeAffinity" if firm else "nodeAffinity term", "required" if firm else "hint"))
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    for item in preferred.value if preferred is not None and preferred.kind == "seq" else []:
        expressions = item.path("preference", "matchExpressions") if item.kind == "map" else None
        for label, values in _in_values(expressions).items():
            claims.append(Claim(label, values, "preferred nodeAffinity", "hint"))
    return [c for c in claims if c.label in GPU_LABELS or c.label in HINT_LABELS]


def _in_values(expressions: YNode | None) -> dict[str, tuple[str, ...]]:
    """label -> the values an ``In`` expression allows (other operators do not name a value)."""
    found: dict[str, tuple[str, ...]] = {}
    for expr in expressions.value if expressions is not None and expressions.kind == "seq" else []:
        if expr.kind != "map" or expr.scalar("operator") != "In":
            continue
        key, values = expr.scalar("key"), expr.get("values")
        if isinstance(key, str) and values is not None and values.kind == "seq":
            found[key] = tuple(str(v.value) for v in values.value if v.kind == "scalar" and v.value is not None)
    return found


def ray_worker_claims(cluster: YNode | None) -> list[Claim]:
    """What a KubeRay cluster's worker groups say about the accelerator: the engine started on the head
    runs its ranks on them (the head usually has no accelerator of its own)."""
    groups = cluster.get("workerGroupSpecs") if cluster is not None and cluster.kind == "map" else None
    claims: list[Claim] = []
    for group in groups.value if groups is not None and groups.kind == "seq" else []:
        pod_spec = group.path("template", "spec") if group.kind == "map" else None
        if pod_spec is None or pod_spec.kind != "map":
            continue
        where = f"Ray worker group {group.scalar('groupName', default='workers')}"
        claims += [Claim(c.label, c.values, f"{where} {c.how}", c.strength)
                   for c in label_claims(string_map(pod_spec.get("nodeSelector"))) + affinity_claims(pod_spec)]
    return claims


def ray_worker_images(ctx: DocContext, cluster: YNode | None) -> list[Setting]:
    """The image of each worker group's Ray container (KubeRay runs the first container of the pod as the
    Ray node): the engine started on the head runs its workers in it."""
    groups = cluster.get("workerGroupSpecs") if cluster is not None and cluster.kind == "map" else None
    found: list[Setting] = []
    for index, group in enumerate(groups.value if groups is not None and groups.kind == "seq" else []):
        containers = group.path("template", "spec", "containers") if group.kind == "map" else None
        first = containers.value[0] if containers is not None and containers.kind == "seq" and containers.value else None
        image = first.get("image") if first is not None and first.kind == "map" else None
        if image is not None and image.kind == "scalar" and isinstance(image.value, str):
            found.append(ctx.setting("image", first.key_node("image"), image,
                                     f"workerGroupSpecs[{index}].template.spec.containers[0].image"))
    return found


_REPO = lazy.Pattern(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# https://huggingface.co/ORG/NAME[.git][/resolve/REV/FILE] (the hub's file URLs): models only, not datasets/ spaces/;
# compiled on first use: most model sources are hub ids, not URLs
HUB_URL = lazy.Pattern(r"^https?://(?:www\.)?(?:huggingface\.co|hf\.co)/(?!datasets/|spaces/)"
                       r"([A-Za-z0-9][\w.-]*/[\w.-]+?)(?:\.git)?(?:/(?:resolve|blob)/([^/?#]+)/([^?#]+))?/?(?:[?#].*)?$")


def _url_source(model: ServedModel) -> None:
    """A model source that is a hub file URL (an operator's ``source: https://huggingface.co/.../resolve/
    main/x.gguf``) is a download the operator makes: its revision is the URL's."""
    source = model.model.value if model.model is not None else None
    written = source.strip() if isinstance(source, str) else ""
    match = HUB_URL.match(written) if written.startswith("http") else None
    if match is not None and match.group(3) and all(d.location != model.model.location for d in model.downloads):
        model.downloads.append(Download(match.group(1), match.group(2), source, None, model.model.location,
                                        f"the model source ({model.model.source})"))


def name_local_model(model: ServedModel) -> None:
    """``model_named`` for a served model whose model is a local path: the repository a download writes
    there (the same path, or the same place on a volume the engine mounts elsewhere), else an
    ``org/name`` served-model name whose name is the folder's. A script on a host names a folder relative to
    where it runs, or under a variable (``$HOME/llm_model``), as its download does: the same words."""
    path = model.model.value if model.model is not None and isinstance(model.model.value, str) else None
    if path is None or model.model_named is not None:
        return
    path = posixpath.normpath(path)
    for download in model.downloads:
        if download.repo and _holds(model, download, path):
            model.model_named = Setting("model", download.repo, download.location, download.how, origin="download")
            return
    if not path.startswith("/"):
        return
    served = model.setting("served_model_name")
    name = str(served.value).strip() if served is not None and served.value is not None else ""
    if _REPO.match(name) and name.rsplit("/", 1)[1].lower() == posixpath.basename(path).lower():
        model.model_named = Setting("model", name, served.location, f"{served.source} (the folder's name)",
                                    origin="served_model_name")


def _holds(model: ServedModel, download: Download, path: str) -> bool:
    """The download wrote ``path`` (or the folder a GGUF file at ``path`` is in)."""
    candidates = {path, posixpath.dirname(path)} if path.endswith(".gguf") else {path}
    if download.target is not None and download.target in candidates:
        return True
    mount = model.pod.mount_at(path) if model.pod is not None and download.volume is not None and path.startswith("/") \
        else None
    if mount is None:
        return False
    inside = {c[len(mount.path.rstrip("/")):].strip("/") for c in candidates}
    return download.volume[0] == mount.volume and download.volume[1] in inside
