"""What every adapter shares: locating nodes, comments, argv tokens and directives of one document."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from ...capacity.gpus import GPU_LABELS, HINT_LABELS, RESOURCE_KINDS, Claim, label_claims
from ...engines import argv as argv_mod
from ...engines.images import image_engine, parse_image, placeholder
from ...model import ArgToken, Directive, Location, ServedModel, Setting
from ...yamlio import Document, LoadedFile, YNode, scalar_text_location
from .protocol import has_serving_marker  # noqa: F401  (the prefilter: lint reads it from here)

_DIRECTIVE = re.compile(r"cfgcheck:\s*([a-z][a-z0-9-]*)\s*=\s*(\S+)\s*(.*)$")
# The engine names (launcher, module or image) that mark a file for the adapters that find engines in
# containers and commands; each adapter declares its own MARKERS (see ``protocol``).
ENGINE_MARKERS = ("vllm", "sglang", "tokenspeed", "llama")


# Device-plugin resources that give the engine its accelerators (capacity.gpus.RESOURCE_KINDS says what
# each counts); MIG slices are ``nvidia.com/mig-<profile>`` resources, matched by prefix.
GPU_RESOURCES = tuple(RESOURCE_KINDS)
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


@dataclass(eq=False)  # one per run, never compared: no value __eq__ to create at import
class Workspace:
    """Cross-file facts adapters need: LLMKube Models by name, and the user's configuration."""

    llmkube_models: dict[str, tuple[LoadedFile, YNode]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    services: list = field(default_factory=list)  # Kubernetes Services of every file read (pods.Service)
    # ConfigMap name -> (file, document, data node): env taken from them (envlaunch), engine --config files
    configmaps: dict = field(default_factory=dict)
    config_readers: set = field(default_factory=set)  # ids of documents that may read --config from a ConfigMap
    # DRA ResourceClaimTemplates and ResourceClaims by "Kind/name" (dra.DeviceRequests), DeviceClass selectors by name
    device_claims: dict[str, Any] = field(default_factory=dict)
    device_classes: dict[str, list[str]] = field(default_factory=dict)
    files: dict = field(default_factory=dict)  # repository files read for context (repofiles), by path
    serving_runtimes: dict = field(default_factory=dict)  # KServe (Cluster)ServingRuntime name -> [(file, document, root)]
    build_links: dict = field(default_factory=dict)  # folder -> [(image name, Dockerfile)] its files state (builds.py)
    deployed_dockerfiles: set = field(default_factory=set)  # Dockerfiles whose image a workload runs: its launch


@dataclass(eq=False)
class DocContext:
    loaded: LoadedFile
    document: Document
    workspace: Workspace
    first_line: int = 1  # the first line that belongs to this document (comments above its root count)

    @property
    def path(self) -> str:
        return self.loaded.path

    def location(self, node: YNode) -> Location:
        if node.kind == "scalar":
            return scalar_text_location(self.path, node)
        return node.location(self.path)

    def comments(self, line: int) -> tuple[str, ...]:
        return self.loaded.comments_for(line)

    def source(self, node: YNode) -> str:
        return self.loaded.source(node)

    def setting(self, name: str, key: YNode | None, value: YNode, source: str, convert=None,
                origin: str = "field") -> Setting:
        raw = value.value if value.kind == "scalar" else value.to_python()
        converted = convert(raw) if convert else raw
        line = key.line if key is not None else value.line
        comments = self.comments(line)
        if value.line != line:
            comments = comments + self.comments(value.line)
        text = self.source(value) if value.kind == "scalar" and value.line == value.end_line else None
        if text is not None and value.style in ("'", '"'):
            text = text[1:-1]
        return Setting(name, converted, self.location(value), source, comments,
                       self.location(key) if key is not None else None, text, origin)

    def field_setting(self, parent: YNode, key: str, name: str, source: str, convert=None) -> Setting | None:
        value = parent.get(key) if parent is not None else None
        if value is None or (value.kind == "scalar" and value.value is None):
            return None
        return self.setting(name, parent.key_node(key), value, source, convert)

    def token(self, node: YNode, origin: str) -> ArgToken:
        text = node.value if node.kind == "scalar" else self.source(node)
        return ArgToken(str(text) if text is not None else "", self.location(node), self.comments(node.line), origin)

    @functools.cached_property
    def _comments(self) -> list:
        """This document's comments, in line order: computed once, shared by its served models."""
        end = self.document.root.end_line if self.document.root is not None else self.first_line
        return [c for line, c in sorted(self.loaded.comments.items()) if self.first_line <= line <= end]

    def directives(self) -> list[Directive]:
        return directives_of(self.path, self._comments)

    def document_comments(self) -> list[tuple[int, str]]:
        return [(c.line, c.text) for c in self._comments]

    def new_model(self, name: str, kind: str, at: YNode, identity: str) -> ServedModel:
        model = ServedModel(name=name, kind=kind, path=self.path, document=self.document.index,
                            location=self.location(at), identity=f"{self.path}#{identity}")
        model.directives = self.directives()
        model.comments = self.document_comments()
        return model


def directives_of(path: str, comments) -> list[Directive]:
    """``# cfgcheck: key=value reason`` directives among ``comments`` (in line order)."""
    found = []
    for comment in comments:
        match = _DIRECTIVE.search(comment.text) if "cfgcheck" in comment.text else None
        if match and match.group(1) != "ignore":
            found.append(Directive(match.group(1), match.group(2), match.group(3).strip(),
                                   Location(path, comment.line, comment.column)))
    return found


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
            if key.kind == "scalar" and (str(key.value) in GPU_RESOURCES or str(key.value).startswith(MIG_RESOURCE_PREFIX)):
                return key, value
    return None, None


def to_int(value: Any) -> Any:
    if isinstance(value, str) and value.strip().isdigit():
        try:
            return int(value.strip())
        except ValueError:  # "²" is a digit to isdigit(), and Python refuses ints of over 4,300 digits
            return value
    return value


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
    model.engine = launch.engine
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
    if model.model is not None and isinstance(model.model.value, str) and placeholder(model.model.value):
        model.model = None  # a sample's <MODEL_NAME> or ${MODEL}: the model is not known
    if model.model_revision is None and "model_revision" in model.settings:
        model.model_revision = model.settings["model_revision"]
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
