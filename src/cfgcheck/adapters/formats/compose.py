"""docker-compose files -> one served model per service whose ``entrypoint`` + ``command`` starts an
engine (a string or a list; flags, or a model then flags, when the image's entrypoint starts it). The
services are those under ``services:``, or the top-level keys of a file in the docker-compose 1.x layout.

Variables are interpolated as docker compose does (``launch/dotenv.py``): from the ``.env`` file
beside the compose file, else a reference's default; an unset variable stays unknown. A repository
that keeps ``.env`` out of Git commits its template instead (``.env.example``, ``.env.sample``,
``.env.template``, ``example.env``, ``.env.dist``, ``.env-dist``, and the same without the leading dot): without a ``.env``, the template's values are the ones ``cp
.env.example .env`` runs with, except secrets (a name with KEY, TOKEN, SECRET, PASSWORD...:
``secret_names.secret_name``), whose template values are placeholders and are left unset. Each value is
located where it is written (the ``.env`` or template line, the default). ``env_file`` files add to the
container's environment. GPUs come from ``deploy.resources.reservations.devices`` (``count``, or
how many ``device_ids``); a count or device list that holds an unknown variable is unknown, not 1. A
service with ``build:`` runs the image it builds: its engine is the one the Dockerfile's ``FROM``
image runs (and its ``ENTRYPOINT``, unless the service sets one), its version unknown unless a
directive states it.
"""

from __future__ import annotations

import posixpath
import re

from ...engines.images import image_engine, parse_image
from ...model import ArgToken, Location, Mount, PodFacts, Port, ServedModel, Setting, Volume
from ...secret_names import secret_name
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import ENGINE_MARKERS, finish, to_int
from ..launch import compose_overrides, dockerfile, dotenv, engine_pins, env_argv, llama_env
from ..launch.containers import container_model, launches
from ..launch.scripts import env_settings, file_launch
from ..launch.dockerfile import Built
from ..launch import named_files
from ..launch.named_files import repo_path
from ..launch.pods import SHM_PATH
from ..launch.shell import SHELLS, argv_tokens, shell_tokens

MARKERS = ENGINE_MARKERS
DOCUMENTS = "plain"  # never a Kubernetes resource: the registry does not try it on one
# the templates a repository commits beside compose files in place of its .env (which it keeps out of Git)
# (a template without the leading dot too: ``env.example``, ``env-example``, ``env.sample``, which ``cp`` renames alike)
ENV_TEMPLATES = (".env.example", ".env.sample", ".env.template", "example.env", ".env.dist", ".env-dist",
                 "env.example", "env-example", "env.sample")
# keys a compose service has and a Helm value or other YAML mapping beside an ``image`` rarely does (the
# compose file reference's service attributes): one of them marks a 1.x layout file's top-level entry
_SERVICE_KEYS = frozenset({"command", "entrypoint", "deploy", "ports", "expose", "environment", "env_file",
                           "volumes", "runtime", "ipc", "shm_size", "restart", "devices", "network_mode",
                           "container_name", "depends_on", "links", "healthcheck", "profiles"})


def _services(root: YNode, path: str) -> tuple[YNode, str] | None:
    """The mapping of a compose file's services and the key path it sits at: ``services:``, or the
    top-level mapping itself in the docker-compose 1.x layout (no ``services:``, which Compose v2 no
    longer reads) in a file named as compose files are (``docker-compose.yml``, ``compose.gpu.yaml``)
    when every top-level value is a 1.x service and one has a key only a service has; None for any
    other YAML (a Kubernetes object, a Helm values file, whose ``image`` may even be a string)."""
    if root.kind != "map" or root.get("apiVersion") is not None or root.get("kind") is not None:
        return None
    services = root.get("services")
    if services is not None:
        found = services.kind == "map" and any(v.kind == "map" and (v.get("image") is not None or v.get("build") is not None)
                                               for _, v in services.items())
        return (services, "services.") if found else None
    values = [value for _, value in root.items()]
    if "compose" in posixpath.basename(path) and values and all(_v1_service(value) for value in values) and \
            any(str(key.value) in _SERVICE_KEYS for value in values for key, _ in value.items()):
        return root, ""
    return None


def _v1_service(node: YNode) -> bool:
    """A docker-compose 1.x service: a map naming its image as a string, or a ``build`` context."""
    if node.kind != "map":
        return False
    image, build = node.get("image"), node.get("build")
    return image is not None and image.kind == "scalar" and isinstance(image.value, str) or \
        build is not None and build.kind in ("scalar", "map")


def _substitute(token: ArgToken, variables: dict, references: dict) -> ArgToken:
    """``dotenv.substitute``, recording where a value written in an env file is referred to (the
    ``${VAR}`` in this file) when the token moves there."""
    resolved = dotenv.substitute(token, variables)
    if resolved.location.path != token.location.path:
        where = resolved.location
        references[where.path, where.line, where.column] = token.location
    return resolved


def _interpolated(ctx: DocContext, service: YNode, tokens: list[ArgToken], variables: dict,
                  references: dict) -> tuple[list[ArgToken], Setting | None]:
    """``tokens`` interpolated as compose does, and the model argument that vanished, as written. A word
    that is all variables set to nothing (``MODEL=`` in the env template) vanishes where compose, or the
    shell it starts, splits a string after the interpolation (``command: vllm serve ${MODEL}``); an item
    of a list, or an option's value, stays an empty argument. It is the model where the engine takes a
    positional one: after ``serve``, or first when the image's entrypoint receives the words."""
    listed = {ctx.location(item) for key in ("entrypoint", "command") if (node := service.get(key)) is not None
              and node.kind == "seq" for item in node.value}
    found, unset = [], None
    for index, token in enumerate(tokens):
        resolved = _substitute(token, variables, references)
        previous = tokens[index - 1].text if index else None
        if resolved.text or not token.text or token.location in listed or (previous or "").startswith("-"):
            found.append(resolved)
        elif unset is None and previous in (None, "serve"):
            unset = Setting("model", "", token.location, f"set to nothing at {resolved.location.path}:"
                            f"{resolved.location.line}", token.comments, token.location, token.text, "env")
    return found, unset


def _image(ctx: DocContext, service: YNode, path: str, variables: dict, references: dict) -> Setting | None:
    node = service.get("image")
    if node is None or node.kind != "scalar" or not isinstance(node.value, str):
        return None
    setting = ctx.setting("image", service.key_node("image"), node, f"{path}.image")
    token = shell_tokens(ctx, node, "image", segment=False)
    if len(token) == 1:
        resolved = _substitute(token[0], variables, references)
        if resolved is not token[0]:
            setting.value, setting.location, setting.text = resolved.text, resolved.location, resolved.text
    return setting


def _tokens(ctx: DocContext, service: YNode, built: Built | None) -> list[ArgToken]:
    """entrypoint + command as the container runs them (a ``sh -c`` script split into its commands);
    the Dockerfile's ENTRYPOINT when the service does not replace it, and its CMD when the service sets
    neither (an ``entrypoint`` resets the image's CMD, as ``docker run --entrypoint`` does)."""
    entrypoint, command = service.get("entrypoint"), service.get("command")
    tokens = argv_tokens(ctx, entrypoint, "entrypoint") if entrypoint is not None else list(built.entrypoint if built else [])
    if entrypoint is None and command is None and built is not None:
        tokens += built.command
    tokens += argv_tokens(ctx, command, "command")
    texts = [t.text for t in tokens]
    node = command if command is not None else entrypoint  # None: the words are the Dockerfile's, kept as written
    if len(texts) >= 3 and texts[0] in SHELLS and texts[1] in ("-c", "-lc", "-ec") and node is not None:
        own = argv_tokens(ctx, node, "shell") if node.kind == "scalar" else []
        if own and own[0].text in SHELLS:  # one string, ``/bin/bash -c "pip install ... && vllm serve ..."``
            tokens = shell_tokens(ctx, node, "shell", script_word=2) or tokens
        else:
            script = node.value[-1] if node.kind == "seq" else node if node.kind == "scalar" and entrypoint is not node else None
            if script is not None and script.kind == "scalar":
                tokens = shell_tokens(ctx, script, "shell")
    return tokens


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    services = _services(root, ctx.path)
    if services is None:
        return []
    found: list[ServedModel] = []
    variables = dotenv.read_env_file(ctx.workspace, _beside(ctx.path, ".env"))
    if variables is None:
        variables = _template_variables(ctx)
    for key, service in services[0].items():
        if key.kind != "scalar" or service.kind != "map" or compose_overrides.completes_base(ctx, str(key.value), service):
            continue
        model = _service_model(ctx, str(key.value), key, service, variables, services[1])
        if model is not None:
            found.append(finish(model))
    return found


def _service_model(ctx: DocContext, name: str, key: YNode, service: YNode, variables: dict,
                   under: str) -> ServedModel | None:
    path = f"{under}{name}"
    references: dict = {}
    image = _image(ctx, service, path, variables, references)
    build = service.get("build")
    built = dockerfile.read(ctx.workspace, ctx.path, build, _build_args(ctx, build, variables)) \
        if build is not None else None
    tokens, unset = _interpolated(ctx, service, _tokens(ctx, service, built), variables, references)
    engine = parse_image(image.value).engine if image is not None and isinstance(image.value, str) else None
    if engine is None and built is not None:
        engine = built.engine
    script = None if launches(tokens, engine) else _mounted_script(ctx, service, tokens, variables)
    model = container_model(ctx, root=None, kind="docker-compose", name=name, identity=f"compose/{name}",
                            container=service, at=key, prefix=f"{path}.", image=image,
                            default_engine=engine, tokens=script[1] if script else tokens, env_key="environment")
    if model is None:
        return None
    model.model_unset = unset if model.model is None and "model" not in model.settings else None
    if model.launched_by == "image" and service.get("command") is None and service.get("entrypoint") is None \
            and _beside_other_compose_files(ctx):
        model.launched_by = "image, or another compose file"  # its command may come from there: not known whole
    if script is not None:  # the script's engine start is this service's: not a served model of its own
        ctx.workspace.held.add(script[0])
    model.referenced_at = references
    if build is not None:
        _built_here(model, built)
    _environment_list(ctx, model, service.get("environment"), path)
    _env_files(ctx, model, service.get("env_file"))
    for env_name, setting in built.env.items() if built is not None else ():
        model.env.setdefault(env_name, setting)  # the built image's ENV, unless the service sets it
    for setting in model.env.values():
        if isinstance(setting.value, str) and "$" in setting.value and setting.origin == "env":
            resolved = _substitute(ArgToken(setting.value, setting.location), variables, references)
            setting.value, setting.location = resolved.text, resolved.location
    llama_env.env_args(model)  # the list form and env_file are read after the container's env
    if script is not None:
        model.env.update(script[2])  # what the script exports before it starts the engine
    model.gpus = _gpus(ctx, service, path, variables, references) or model.gpus
    overrides = compose_overrides.overrides(ctx, name, service)  # -f base.yml -f gpu.yml (listed once)
    for other, override in overrides:
        model.gpus = model.gpus or _gpus(other, override, path, variables, references)
    replicas = service.path("deploy")
    if replicas is not None and replicas.kind == "map":
        model.replicas = ctx.field_setting(replicas, "replicas", "replicas", f"{path}.deploy.replicas", to_int)
    model.strategy = Setting("strategy", "Recreate", model.location, "docker compose")
    pod = compose_pod(ctx, model, service, path, variables)
    for other, override in overrides:
        pod.gpu_access = pod.gpu_access or _compose_gpu_access(other, override)
    if build is None:
        compose_overrides.hold_built_image(ctx, image.value if image is not None else None)
    return model


def _beside_other_compose_files(ctx: DocContext) -> bool:
    """Whether the compose file's folder holds another one: compose merges ``docker-compose.override.yml``
    by itself, and a project passes others with ``-f`` (a file per host or GPU, a template that generates
    the override), any of which may give a service the command this file leaves out."""
    folder, own = posixpath.split(ctx.path)
    return any(name != own and name.lower().startswith(("docker-compose", "compose"))
               and name.endswith((".yml", ".yaml", ".yml.j2", ".yaml.j2")) for name in named_files.files_in(ctx.workspace, folder))


def _mounted_script(ctx: DocContext, service: YNode, tokens: list[ArgToken], variables: dict):
    """A service whose entrypoint or command runs a script bind-mounted from the repository
    (``entrypoint: [/bin/bash, /scripts/start.sh]`` with ``./start.sh:/scripts/start.sh``): the script's
    path in the repository, the engine argv it starts (the service's environment expanded in it,
    ``"$@"`` its arguments) and the variables it exports; None otherwise."""
    called = env_argv.script_call(tokens)
    rel = _bind_source(ctx, service, called[0], variables) if called is not None else None
    if rel is None:
        return None
    values = env_argv.container_env(ctx, service, "environment")
    literal = {name: value for name, value in values.items() if value is not None and "$" not in value.text}
    environment: dict[str, str | None] = {**env_argv.script_environment(values), **_listed_environment(service)}
    for name, value in values.items():  # compose interpolates ${VAR:-default} before the container starts
        if value is not None and "$" in value.text:
            environment[name] = dotenv.substitute(value.word("env"), variables).text
    launched = file_launch(ctx.workspace, rel, environment)
    if launched is None:
        return None
    return rel, env_argv.script_argv(launched.tokens, literal, called[1]), env_settings(launched)


def _bind_source(ctx: DocContext, service: YNode, path: str, variables: dict) -> str | None:
    """The repository file bind-mounted at ``path`` in the service's container (the file itself, or a
    folder that holds it), or None."""
    mounts, volumes = _compose_volumes(ctx, service.get("volumes"), variables)
    best = None
    for mount in mounts:
        root = mount.path.rstrip("/")
        if (path == root or path.startswith(root + "/")) and volumes[mount.volume].type == "bind" and \
                (best is None or len(root) > len(best.path.rstrip("/"))):
            best = mount
    if best is None:
        return None
    below = path[len(best.path.rstrip("/")):].lstrip("/")
    return repo_path(ctx.path, posixpath.join(best.volume, below) if below else best.volume)


def _listed_environment(service: YNode) -> dict[str, str | None]:
    """``environment: ["KEY=value"]``: the list form's literal values."""
    env = service.get("environment")
    items = env.value if env is not None and env.kind == "seq" else []
    return {str(item.value).split("=", 1)[0]: str(item.value).split("=", 1)[1] for item in items
            if item.kind == "scalar" and "=" in str(item.value) and "$" not in str(item.value)}


def _template_variables(ctx: DocContext) -> dict:
    """The values of the first env template beside the compose file, secrets left out."""
    for name in ENV_TEMPLATES:
        found = dotenv.read_env_file(ctx.workspace, _beside(ctx.path, name))
        if found is not None:
            return {k: v for k, v in found.items() if not secret_name(k)}
    return {}


def _beside(compose_file: str, name: str) -> str:
    return posixpath.join(posixpath.dirname(compose_file), name)


def _env_files(ctx: DocContext, model: ServedModel, node: YNode | None) -> None:
    """``env_file``: a path, a list of paths, or a list of ``{path, required}``; later files win, and
    ``environment`` wins over them all."""
    entries = node.value if node is not None and node.kind == "seq" else [node] if node is not None else []
    for entry in entries:
        written = entry.scalar("path") if entry.kind == "map" else entry.value if entry.kind == "scalar" else None
        if not isinstance(written, str):
            continue
        variables = dotenv.read_env_file(ctx.workspace, repo_path(ctx.path, written)) or {}
        for name, variable in variables.items():
            if name not in model.env or model.env[name].origin == "env_file":
                model.env[name] = Setting(name, variable.value, variable.location, f"env_file {written}",
                                          (), variable.location, variable.value, "env_file")


def _build_args(ctx: DocContext, build: YNode | None, variables: dict) -> dict[str, str]:
    """``build.args`` (``- NAME=value`` or ``NAME: value``), compose's variables expanded in each value;
    a name without a value takes the variable of that name (docs.docker.com, compose build ``args``)."""
    node = build.get("args") if build is not None and build.kind == "map" else None
    written: list[tuple[str, YNode | None, str | None]] = []
    if node is not None and node.kind == "seq":
        for item in node.value:
            if item.kind == "scalar" and isinstance(item.value, str):
                name, assigned, value = item.value.partition("=")
                written.append((name.strip(), item, value if assigned else None))
    elif node is not None and node.kind == "map":
        written = [(str(key.value), value, None if value.value is None else str(value.value))
                   for key, value in node.items() if key.kind == "scalar" and value.kind == "scalar"]
    found: dict[str, str] = {}
    for name, at, value in written:
        token = ArgToken(value if value is not None else f"${{{name}}}", ctx.location(at), (), "build-arg")
        resolved = dotenv.substitute(token, variables).text
        if "$" not in resolved:
            found[name] = resolved
    return found


def _built_here(model: ServedModel, built: Built | None) -> None:
    """A service that builds its image runs the engine its Dockerfile installs (``pip install vllm==X``)
    or that of its final ``FROM``: that image's version when it names one (``FROM
    vllm/vllm-openai:${VLLM_VERSION}`` with the build argument's value), else none known."""
    if model.image is not None:
        model.image.origin = "build"
    model.base_image = built.base if built is not None else None
    base = image_engine(parse_image(model.base_image.value)) if model.base_image is not None else None
    if built is not None and built.pin is not None and built.pin.engine == model.engine:
        engine_pins.apply(model, built.pin)  # a pip install replaces what the base image shipped
        return
    if base is not None and base.version is not None and base.engine == model.engine:
        model.engine_version, model.engine_variant = base.version, base.variant
        model.engine_version_confidence = base.confidence
        model.engine_version_why = f"the Dockerfile it builds: FROM {model.base_image.value} ({base.why})"
        return
    model.engine_version, model.engine_variant = None, "local build"
    model.engine_version_confidence = "unknown"
    model.engine_version_why = "the service builds its image (compose build:)"


def _environment_list(ctx: DocContext, model: ServedModel, env: YNode | None, path: str) -> None:
    """``environment: ["KEY=value"]``: the list form."""
    if env is None or env.kind != "seq":
        return
    for item in env.value:
        if item.kind == "scalar" and isinstance(item.value, str) and "=" in item.value:
            name = item.value.split("=", 1)[0]
            setting = ctx.setting(name, None, item, f"{path}.environment.{name}", origin="env")
            setting.value = item.value.split("=", 1)[1]
            model.env[name] = setting


def _gpus(ctx: DocContext, service: YNode, path: str, variables: dict, references: dict) -> Setting | None:
    devices = service.path("deploy", "resources", "reservations", "devices")
    if devices is None or devices.kind != "seq":
        return None
    for index, device in enumerate(devices.value):
        if device.kind != "map":
            continue
        capabilities = device.get("capabilities")
        caps = [str(c.value) for c in capabilities.value] if capabilities is not None and capabilities.kind == "seq" else []
        if "gpu" not in caps and device.scalar("driver") != "nvidia":
            continue
        where = f"{path}.deploy.resources.reservations.devices[{index}]"
        count = ctx.field_setting(device, "count", "gpus", f"{where}.count", to_int)
        if count is not None and isinstance(count.value, str) and "$" in count.value:
            resolved = _substitute(ArgToken(count.value, count.location), variables, references)
            count.value, count.location = to_int(resolved.text), resolved.location
        if count is not None:
            return count
        ids = device.get("device_ids")
        if ids is not None and ids.kind == "seq":
            values = [dotenv.substitute(ArgToken(str(item.value), ctx.location(item)), variables).text
                      for item in ids.value]
            if any("$" in value for value in values):
                return None  # ["${GPU_IDS}"]: how many GPUs the variable lists is unknown
            count = sum(len(value.split(",")) for value in values)  # "0,1" is two devices
            return Setting("gpus", count, ctx.location(ids), f"{where}.device_ids")
    return None


# ---------------------------------------------------------------- the pod

def compose_pod(ctx: DocContext, model: ServedModel, service: YNode, path: str, variables: dict) -> PodFacts:
    pod = PodFacts("compose", ctx.location(service), node=f"the compose file {ctx.path}")
    pod.profiles = tuple(sorted(str(item.value) for item in _seq_or_scalar(service.get("profiles"))
                                if item.kind == "scalar"))
    pod.mounts, pod.volumes = _compose_volumes(ctx, service.get("volumes"), variables)
    for item in _seq_or_scalar(service.get("tmpfs")):
        if item.kind == "scalar" and str(item.value).split(":", 1)[0].rstrip("/") == SHM_PATH:
            pod.mounts.append(Mount(SHM_PATH, "tmpfs", ctx.location(item)))
            pod.volumes["tmpfs"] = Volume("tmpfs", "tmpfs", ctx.location(item), "Memory")
    host_network = str(service.scalar("network_mode", default="")) == "host"  # published ports are then ignored
    for item in [] if host_network else _seq_or_scalar(service.get("ports")) + _seq_or_scalar(service.get("expose")):
        number = _compose_container_port(item)
        if number is not None:
            pod.ports.append(Port(number, ctx.location(item)))
    memory = service.path("deploy", "resources", "limits", "memory") or service.get("mem_limit")
    if memory is not None and memory.kind == "scalar":
        pod.limits["memory"] = ctx.setting("memory", None, memory, f"{path}.deploy.resources.limits.memory")
        pod.memory_limit = docker_bytes(str(memory.value))
    pod.devices = _compose_device_ids(ctx, service, path) or _counted_devices(model.gpus)
    pod.shm = _compose_shm(ctx, pod, service)
    pod.gpu_access = pod.host_gpus = _compose_gpu_access(ctx, service)  # no scheduler counts a host's GPUs
    pod.gpu_access = pod.gpu_access or _swarm_gpus(ctx, service)  # the swarm scheduler counts these
    model.pod = pod
    return pod


_DOCKER_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def docker_bytes(text: str) -> int | None:
    """A compose byte value (``16g``, ``512m``, ``1gb``: binary units, case-blind) in bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?\s*", text.lower())
    return int(float(match.group(1)) * _DOCKER_UNITS[match.group(2)]) if match else None


def _seq_or_scalar(node: YNode | None) -> list[YNode]:
    if node is None:
        return []
    return list(node.value) if node.kind == "seq" else [node] if node.kind == "scalar" else []


def _compose_volumes(ctx: DocContext, node: YNode | None, variables: dict) -> tuple[list[Mount], dict[str, Volume]]:
    """Short (``src:dst[:mode]``) and long (``{type, source, target}``) volume syntax, variables
    interpolated as compose does (``${HF_CACHE_DIR:-./cache}:/root/.cache/huggingface``)."""
    mounts: list[Mount] = []
    volumes: dict[str, Volume] = {}

    def value(text):
        return dotenv.substitute(ArgToken(text, ctx.location(item)), variables).text if isinstance(text, str) else text

    for item in _seq_or_scalar(node):
        if item.kind == "scalar" and isinstance(item.value, str):
            parts = _volume_fields(item.value)
            source, target = (value(parts[0]), value(parts[1])) if len(parts) >= 2 else (None, value(parts[0]))
            kind = "anonymous" if source is None else "bind" if source[:1] in ("/", ".", "~", "$") else "named"
        elif item.kind == "map":
            source, target = value(item.scalar("source")), value(item.scalar("target"))
            kind = str(item.scalar("type", default="volume"))
            kind = "named" if kind == "volume" and source else "anonymous" if kind == "volume" else kind
        else:
            continue
        if not isinstance(target, str):
            continue
        name = str(source) if source else target
        location = ctx.location(item)
        mounts.append(Mount(target, name, location))
        volumes[name] = Volume(name, kind, location, "Memory" if kind == "tmpfs" else None)
    return mounts, volumes


def _volume_fields(text: str) -> list[str]:
    """``src:dst[:mode]`` split on the colons outside ``${VAR:-default}`` interpolations."""
    fields, current, depth = [], "", 0
    for index, char in enumerate(text):
        if char == "{" and index and text[index - 1] == "$":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == ":" and not depth:
            fields.append(current)
            current = ""
        else:
            current += char
    return fields + [current]


def _compose_container_port(item: YNode) -> int | None:
    """The container side of ``[ip:]host:container[/proto]``, ``container``, or ``{target: N}``."""
    if item.kind == "map":
        value = item.scalar("target")
    elif item.kind == "scalar":
        value = str(item.value).split("/", 1)[0].rsplit(":", 1)[-1]
    else:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None  # a range or an interpolation


def _compose_device_ids(ctx: DocContext, service: YNode, path: str) -> Setting | None:
    devices = service.path("deploy", "resources", "reservations", "devices")
    for index, device in enumerate(devices.value if devices is not None and devices.kind == "seq" else []):
        ids = device.get("device_ids") if device.kind == "map" else None
        if ids is not None and ids.kind == "seq":
            setting = ctx.setting("device_ids", device.key_node("device_ids"), ids,
                                  f"{path}.deploy.resources.reservations.devices[{index}].device_ids")
            setting.value = [part.strip() for i in ids.value if i.kind == "scalar" for part in str(i.value).split(",")]
            return setting
    return None


def _counted_devices(gpus: Setting | None) -> Setting | None:
    """A GPU reservation by ``count: N`` gets the host's devices 0..N-1, whichever other service has them:
    docker sets ``NVIDIA_VISIBLE_DEVICES`` to ``countToDevices(N)`` (moby daemon/nvidia_linux.go,
    ``setNvidiaGPUs``); ``count: all`` sees every GPU."""
    count = gpus.value if gpus is not None and gpus.source.endswith(".count") else None
    if not isinstance(count, int) or isinstance(count, bool) or not 0 < count <= 64:
        return None
    given = "device 0" if count == 1 else f"devices 0-{count - 1}"
    return Setting("device_ids", [str(index) for index in range(count)], gpus.location,
                   f"count: {count} (docker gives {given})", gpus.comments, gpus.key_location, gpus.text, gpus.origin)


def _compose_gpu_access(ctx: DocContext, service: YNode) -> tuple[str, Location] | None:
    """GPUs given to a compose service: ``runtime: nvidia``, ``gpus:``, a GPU device reservation
    (``count`` defaults to all), or ``/dev/nvidia*``, ``/dev/dri``, ``/dev/kfd`` devices."""
    runtime = service.get("runtime")
    if runtime is not None and runtime.kind == "scalar" and "nvidia" in str(runtime.value).lower():
        return f"runtime: {runtime.value}", ctx.location(runtime)
    gpus = service.get("gpus")
    if gpus is not None:
        return f"gpus: {gpus.value}" if gpus.kind == "scalar" else "gpus", ctx.location(gpus)
    devices = service.path("deploy", "resources", "reservations", "devices")
    for device in devices.value if devices is not None and devices.kind == "seq" else []:
        capabilities = device.get("capabilities") if device.kind == "map" else None
        listed = capabilities is not None and capabilities.kind == "seq"
        names = [str(c.value) for c in capabilities.value] if listed else []
        if "gpu" in names or (device.kind == "map" and device.scalar("driver") in ("nvidia", "amd", "cdi")):
            return "a GPU device reservation", ctx.location(device)
    for item in _seq_or_scalar(service.get("devices")):
        text = str(item.value) if item.kind == "scalar" else str(item.scalar("source", default=""))
        if text.startswith(("/dev/nvidia", "/dev/dri", "/dev/kfd", "nvidia.com/gpu", "amd.com/gpu")):
            return f"device {text}", ctx.location(item)
    return None


def _swarm_gpus(ctx: DocContext, service: YNode) -> tuple[str, Location] | None:
    """A GPU reserved as a swarm generic resource (``docker stack deploy``: the compose-spec ``deploy``
    reference, ``generic_resources`` with a ``discrete_resource_spec`` of kind ``NVIDIA-GPU`` / ``gpu``
    and a value above 0, or a ``named_resource_spec`` naming one GPU)."""
    reserved = service.path("deploy", "resources", "reservations", "generic_resources")
    for item in reserved.value if reserved is not None and reserved.kind == "seq" else []:
        for spec in ("discrete_resource_spec", "named_resource_spec"):
            node = item.get(spec) if item.kind == "map" else None
            kind = str(node.scalar("kind", default="")) if node is not None and node.kind == "map" else ""
            value = node.scalar("value") if node is not None and node.kind == "map" else None
            if "gpu" in kind.lower() and str(value).strip() not in ("0", "None", ""):
                return f"a swarm generic resource {kind}", ctx.location(item)
    return None


def _compose_shm(ctx: DocContext, pod: PodFacts, service: YNode) -> tuple[str, Location] | None:
    size = service.get("shm_size")
    if size is not None and size.kind == "scalar" and size.value not in (None, ""):
        return f"shm_size: {size.value}", ctx.location(size)
    ipc = service.get("ipc")
    # host: the host's /dev/shm; container:/service: another container's, whose size is not ours to judge
    if ipc is not None and ipc.kind == "scalar" and str(ipc.value).startswith(("host", "container:", "service:")):
        return f"ipc: {ipc.value}", ctx.location(ipc)
    for mount in pod.mounts:
        if mount.path.rstrip("/") == SHM_PATH:
            return f"{mount.volume} at {SHM_PATH}", mount.location
    return None
