"""KubeAI ``Model`` (``kubeai.org/v1``) -> one served model when its engine is vLLM.

The KubeAI controller (``internal/modelcontroller/engine_vllm.go``) starts
``python3 -m vllm.entrypoints.openai.api_server --model=<url ref> --served-model-name=<name>`` and then
``spec.args`` in order, with ``spec.env`` as the container env. The pod's devices, node placement and
default image come from the chart's resource profile named by ``spec.resourceProfile: <profile>:<count>``
(limits multiplied by the count); the defaults are in ``data/kubeai.json``, generated from the chart
by ``scripts/build_operator_data.py``; a profile's ``imageName`` and the images the repository's own
KubeAI values set (``modelServers.VLLM.images``, read by the ``index`` hook) come first, and a profile
the chart does not define is the repository's (its devices, and the GPU its name or nodeSelector names,
assumed). Any file may hold those values: a Model is built once every file is indexed
(``refers_forward``), and a Model linted alone finds them in the repository's other files. OLlama,
Infinity and FasterWhisper models are not engines cfgcheck checks: recognised and left alone. Values of KubeAI's ``models`` chart (``catalog.<name>``
entries, rendered as Models when ``enabled``) are read the same way.
"""

from __future__ import annotations


from ...capacity.gpus import Claim
from ...capacity.tables import bundled_table
from ...engines.images import image_engine, parse_image
from ...model import ArgToken, ServedModel, Setting
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.recognition import (apply_launch, env_map_settings, finish, gpu_count, is_resource, set_image, string_map,
                                to_int)
from ..launch.held_values import values_sources
from ..launch.shell import argv_tokens

API_GROUP = "kubeai.org/"
MARKERS = ("kubeai.org", "resourceprofile")
# the chart values the index hook reads, and the Models that wait for them (``refers_forward``)
INDEX_WORDS = ("modelservers", "resourceprofile", "kubeai.org")
# spec.engine -> cfgcheck engine; None: a server cfgcheck does not check
ENGINES = {"vllm": "vllm", "ollama": None, "infinity": None, "fasterwhisper": None}
# url scheme -> what vLLM's --model becomes (engine_vllm.go): the ref, or the mounted path for a PVC
URL_SCHEMES = ("hf", "pvc", "s3", "gs", "oss", "ollama")
PVC_MODEL_PATH = "/model"


def is_kubeai_model(root: YNode) -> bool:
    return is_resource(root, API_GROUP, "Model")


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    found = []
    for spec, name, at, kind, prefix in _entries(root):
        model = _model(ctx, spec, name, at, kind, prefix)
        if model is None:
            continue
        if kind == "Model":
            model.annotations = string_map(root.path("metadata", "annotations"))
        found.append(finish(model))
    return found


def _entries(root: YNode) -> list[tuple[YNode | None, str, YNode, str, str]]:
    """(spec, name, where it is named, kind, key prefix) of each Model the document holds: a ``Model``
    resource, or the values of KubeAI's ``models`` chart, each ``catalog.<name>`` entry a Model when it is
    enabled (or ``all.enabled`` is), with the entry's fields as the Model's spec."""
    if is_kubeai_model(root):
        name = str(root.scalar("metadata", "name", default="model"))
        return [(root.get("spec"), name, root.path("metadata", "name") or root, "Model", "spec.")]
    catalog = root.get("catalog")
    if root.get("apiVersion") is not None or catalog is None or catalog.kind != "map":
        return []
    every = root.scalar("all", "enabled", default=False) is True
    return [(entry, str(key.value), key, "kubeai-catalog", f"catalog.{key.value}.") for key, entry in catalog.items()
            if entry.kind == "map" and entry.get("engine") is not None and (every or entry.scalar("enabled") is True)]


def _engine(spec: YNode | None) -> str | None:
    if spec is None or spec.kind != "map":
        return None
    return ENGINES.get(str(spec.scalar("engine", default="")).lower().replace("-", ""))


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: a vLLM Model takes its image, and the devices of a profile the chart does not define,
    from the repository's KubeAI values, which any file of the run may hold: it waits until every file is
    indexed, and then refers forward still when no file of the run held any (the run looks for them in the
    repository's other files: ``related_files.related_paths``)."""
    if not any(_engine(spec) == "vllm" for spec, *_ in _entries(root)):
        return False
    return not workspace.indexed or not workspace.space(__name__, dict)


def _model(ctx: DocContext, spec: YNode | None, name: str, at: YNode, kind: str, prefix: str) -> ServedModel | None:
    engine = _engine(spec)
    if spec is None or engine is None:
        return None
    model = ctx.new_model(name, kind, at, f"{kind}/{name}")
    model.engine = engine
    _image(ctx, model, spec, prefix)
    url = ctx.field_setting(spec, "url", "model", f"{prefix}url")
    tokens = [ArgToken(text, model.location, (), "kubeai", True)
              for text in ("python3", "-m", "vllm.entrypoints.openai.api_server")]
    if url is not None:  # --model=<ref>, written as two tokens so that the value is located at the url
        tokens += [ArgToken("--model", url.location, url.comments, f"typed:{prefix}url", True),
                   ArgToken(model_ref(str(url.value)), url.location, url.comments, f"typed:{prefix}url", True)]
        if str(url.value).startswith("s3://"):
            tokens.append(ArgToken("--load-format=runai_streamer", url.location, (), "kubeai", True))
    tokens.append(ArgToken(f"--served-model-name={name}", model.location, (), "kubeai", True))
    tokens.extend(argv_tokens(ctx, spec.get("args"), "args"))
    model.setting_keys["extra_args"] = f"{prefix}args"
    apply_launch(ctx, model, tokens, engine)
    model.env = env_map_settings(ctx, spec.get("env"), prefix)
    _profile(ctx, model, spec, prefix)
    model.replicas = ctx.field_setting(spec, "replicas", "replicas", f"{prefix}replicas", to_int) or \
        ctx.field_setting(spec, "minReplicas", "replicas", f"{prefix}minReplicas", to_int)
    model.strategy = Setting("strategy", "RollingUpdate", model.location, "KubeAI Model (surge rollout)")
    return model


def model_ref(url: str) -> str:
    """What the controller passes as ``--model``: the reference after the scheme, ``/model`` for a PVC,
    the whole URL for object storage (read with the Run:ai streamer)."""
    scheme, sep, ref = url.partition("://")
    if not sep or scheme not in URL_SCHEMES:
        return url
    if scheme == "pvc":
        return PVC_MODEL_PATH
    if scheme in ("s3", "gs", "oss"):
        return url
    return ref


def _image(ctx: DocContext, model: ServedModel, spec: YNode, prefix: str) -> None:
    """``spec.image`` when written; else the image the repository's own KubeAI values give the profile's
    ``imageName``; else the chart's default vLLM image for the profile (assumed)."""
    image = ctx.field_setting(spec, "image", "image", f"{prefix}image")
    name = str(spec.scalar("resourceProfile", default="")).partition(":")[0]
    image = image or _repository_image(ctx.workspace.space(__name__, dict), name)
    if image is not None:
        set_image(ctx, model, image)
        return
    profile = _profile_entry(name)
    images = bundled_table("kubeai.json")["vllm_images"]
    default = images.get((profile or {}).get("image_name", "default")) or images.get("default")
    found = image_engine(parse_image(default)) if default else None
    if found is not None and found.engine == model.engine and found.version:
        model.engine_version, model.engine_version_confidence = found.version, "assumed"
        model.engine_version_why = f"the KubeAI chart's default image {default} (no spec.image)"


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """The repository's own KubeAI chart values, wherever a deployment keeps them (``values_sources``: a
    values file, a Flux HelmRelease, an Argo CD Application, a helmfile release) and under an umbrella
    chart's ``kubeai`` key there: each resource profile's ``imageName`` and definition, and the vLLM images
    by name (``modelServers.VLLM.images``), which Models that select the profile run. The index space is
    made only for a file that holds some: a Model's file built in a worker asks for none."""
    for document in loaded.documents:
        root = document.root
        if root is None or root.kind != "map":
            continue
        for ctx, values, prefix, _ in values_sources(DocContext(loaded, document, workspace), root, releases=True):
            for inner, at in ((values, prefix), (values.get("kubeai"), f"{prefix}kubeai.")):
                if inner is not None and inner.kind == "map":
                    _index_values(ctx, inner, at, workspace)


def _index_values(ctx: DocContext, values: YNode, prefix: str, workspace: Workspace) -> None:
    profiles, images = values.get("resourceProfiles"), values.path("modelServers", "VLLM", "images")
    for key, profile in profiles.items() if profiles is not None and profiles.kind == "map" else ():
        if profile.kind != "map":
            continue
        chosen = profile.scalar("imageName")
        if isinstance(chosen, str):
            workspace.space(__name__, dict).setdefault(("profile", str(key.value)), set()).add(chosen)
        # a profile's limits and requests are a container's (charts/kubeai/values.yaml: resourceProfiles)
        resource, request = gpu_count(profile)
        selector = tuple(sorted(string_map(profile.get("nodeSelector")).items()))
        workspace.space(__name__, dict).setdefault(("definition", str(key.value)), []).append(
            (str(resource.value) if resource is not None else None, to_int(request.value) if request is not None else None,
             selector, f"{ctx.path}:{key.line}"))
    for key, _ in images.items() if images is not None and images.kind == "map" else ():
        source = f"{prefix}modelServers.VLLM.images.{key.value}"
        setting = ctx.field_setting(images, str(key.value), "image", source)
        if setting is not None and isinstance(setting.value, str):
            workspace.space(__name__, dict).setdefault(("image", str(key.value)), []).append(setting)


def _repository_image(space: dict, profile: str) -> Setting | None:
    """The vLLM image the repository's KubeAI values give a Model of ``profile``: the profile's
    ``imageName`` (the repository's, else the chart's), its image in the repository's values, else their
    ``default`` when the chart has no image of that name ("default" is used when no imageName is
    specified or if a specific image is not found: the chart's values.yaml). None when the repository
    sets none, or sets it differently in two places (which one is deployed is not known)."""
    named = space.get(("profile", profile)) or {(_profile_entry(profile) or {}).get("image_name", "default")}
    if len(named) != 1:
        return None
    name = next(iter(named))
    if ("image", name) not in space and name in bundled_table("kubeai.json")["vllm_images"]:
        return None  # the chart's own image for that name (the caller's assumed default)
    found = space.get(("image", name)) or space.get(("image", "default")) or []
    if len({setting.value for setting in found}) != 1:
        return None
    return found[0].replaced()  # each Model's own: a rendering relocates its settings


def _profile_entry(name: str) -> dict | None:
    return bundled_table("kubeai.json")["profiles"].get(name)


def _profile(ctx: DocContext, model: ServedModel, spec: YNode, prefix: str) -> None:
    """``resourceProfile: <profile>:<count>``: the GPUs are the profile's per-unit devices x count, the
    GPU class the profile's (a profile the chart does not define is the cluster's own: unknown)."""
    setting = ctx.field_setting(spec, "resourceProfile", "resource_profile", f"{prefix}resourceProfile")
    if setting is None or not isinstance(setting.value, str):
        return
    name, _, count_text = setting.value.partition(":")
    count = to_int(count_text or "1")
    profile = _profile_entry(name)
    if profile is None:
        _repository_profile(ctx, model, setting, (name, count), prefix)
    if profile is None or "resource" not in profile or not isinstance(count, int):
        return
    model.gpu_resource = profile["resource"]
    model.gpus = Setting("gpus", profile["per_unit"] * count, setting.location,
                         f"{prefix}resourceProfile ({name}: {profile['per_unit']} {profile['resource']} x {count})",
                         setting.comments, setting.key_location, setting.text)
    selector = profile.get("gke_node_selector", {})
    if profile.get("gpu"):
        model.gpu_product = selector.get("cloud.google.com/gke-accelerator") or profile["gpu"]
    elif selector:  # a TPU slice: the GKE labels name it
        model.node_selector = {**selector, **model.node_selector}


def _repository_profile(ctx: DocContext, model: ServedModel, setting: Setting, selected: tuple[str, object],
                        prefix: str) -> None:
    """A profile the chart does not define, as the repository's KubeAI values define it (once, or alike
    in every place): its device request times the count, and the GPU its name or its nodeSelector names
    (``amd-gpu-rx-7900-xtx``), assumed: a hint, as a node pool's name is, since the name is the team's own
    and the values may not be the ones deployed."""
    name, count = selected
    found = ctx.workspace.space(__name__, dict).get(("definition", name), [])
    if len({entry[:3] for entry in found}) != 1:
        return
    resource, per_unit, selector, where = found[0]
    if resource is not None and isinstance(per_unit, int) and isinstance(count, int):
        model.gpu_resource = resource
        model.gpus = Setting("gpus", per_unit * count, setting.location,
                             f"{prefix}resourceProfile ({name} at {where}: {per_unit} {resource} x {count})",
                             setting.comments, setting.key_location, setting.text)
    how = f"the repository's KubeAI profile at {where}"
    model.accelerator_claims = [*model.accelerator_claims, Claim("resourceProfile", (name,), how, "hint"),
                                *(Claim(label, (value,), f"{how}, nodeSelector", "hint") for label, value in selector)]
