"""docker-compose files -> one served model per service whose ``entrypoint`` + ``command`` starts an
engine (a string or a list; flags only when the image's entrypoint starts it).

Compose interpolation ``${VAR:-default}`` is read as its default (what runs when the variable is
unset), located at the default's text. GPUs come from ``deploy.resources.reservations.devices``; a
count or device list that holds a variable is unknown, not 1. A service with ``build:`` runs the
image it builds: nothing to pin, and its engine version is unknown unless a directive states it.
"""

from __future__ import annotations

from ..engines.images import parse_image
from ..model import ServedModel, Setting
from ..yamlio import YNode
from .base import ENGINE_MARKERS, DocContext, finish, to_int
from .containers import container_model, interpolate
from .pods import compose_pod

MARKERS = ENGINE_MARKERS


def _is_compose(root: YNode) -> bool:
    if root.get("apiVersion") is not None or root.get("kind") is not None:
        return False
    services = root.get("services")
    if services is None or services.kind != "map":
        return False
    return any(v.kind == "map" and (v.get("image") is not None or v.get("build") is not None)
               for _, v in services.items())


def _image(ctx: DocContext, service: YNode, path: str) -> Setting | None:
    node = service.get("image")
    if node is None or node.kind != "scalar" or not isinstance(node.value, str):
        return None
    setting = ctx.setting("image", service.key_node("image"), node, f"{path}.image")
    token = ctx.shell_tokens(node, "image", segment=False)
    if len(token) == 1:
        resolved = interpolate(token[0])
        if resolved is not token[0]:
            setting.value, setting.location, setting.text = resolved.text, resolved.location, resolved.text
    return setting


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    if not _is_compose(root):
        return []
    found: list[ServedModel] = []
    for key, service in root.get("services").items():
        if key.kind != "scalar" or service.kind != "map":
            continue
        name = str(key.value)
        path = f"services.{name}"
        image = _image(ctx, service, path)
        tokens = ctx.tokens(service.get("entrypoint"), "entrypoint") + ctx.tokens(service.get("command"), "command")
        texts = [t.text for t in tokens]
        if len(texts) >= 3 and texts[0] in ("sh", "bash", "/bin/sh", "/bin/bash") and texts[1] in ("-c", "-lc", "-ec"):
            node = service.get("command") if service.get("command") is not None else service.get("entrypoint")
            script = node.value[-1] if node.kind == "seq" else None
            if script is not None and script.kind == "scalar":
                tokens = ctx.shell_tokens(script, "shell")
        tokens = [interpolate(t) for t in tokens]
        engine = parse_image(image.value).engine if image is not None and isinstance(image.value, str) else None
        model = container_model(ctx, root=None, kind="docker-compose", name=name, identity=f"compose/{name}",
                                container=service, at=key, prefix=f"{path}.", image=image,
                                default_engine=engine, tokens=tokens, env_key="environment")
        if model is None:
            continue
        if service.get("build") is not None:
            _built_here(model)
        _environment_list(ctx, model, service.get("environment"), path)
        model.gpus = _gpus(ctx, service, path) or model.gpus
        replicas = service.path("deploy")
        if replicas is not None and replicas.kind == "map":
            model.replicas = ctx.field_setting(replicas, "replicas", "replicas", f"{path}.deploy.replicas", to_int)
        model.strategy = Setting("strategy", "Recreate", model.location, "docker compose")
        compose_pod(ctx, model, service, path)
        found.append(finish(model))
    return found


def _built_here(model: ServedModel) -> None:
    if model.image is not None:
        model.image.origin = "build"
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


def _gpus(ctx: DocContext, service: YNode, path: str) -> Setting | None:
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
        count = ctx.field_setting(device, "count", "gpus",
                                  f"{path}.deploy.resources.reservations.devices[{index}].count", to_int)
        if count is not None:
            return count
        ids = device.get("device_ids")
        if ids is not None and ids.kind == "seq":
            if any("$" in str(item.value) for item in ids.value):
                return None  # ["${GPU_IDS}"]: how many GPUs the variable lists is unknown
            return Setting("gpus", len(ids.value), ctx.location(ids), f"{path}.deploy.resources.reservations.devices[{index}].device_ids")
    return None
