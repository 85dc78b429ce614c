"""Compose files that complete a service of another one beside them, and the image a service runs that
the repository builds.

docker compose merges the files given with ``-f`` (and ``docker-compose.override.yml`` by itself) by
service name: a later file's service adds its keys to the earlier one's ("Merge Compose files",
docs.docker.com). A file beside a base file (``compose.yaml``, ``docker-compose.yml``...) whose service of
the same name starts nothing of its own (no ``command`` or ``entrypoint``, the base's image or none)
only completes that service (a GPU reservation for GPU hosts): it is the same served model, not another,
and what it adds is the service's.

A service that runs an image the repository builds (``image: NAME`` with ``docker build -t NAME`` in a
README, Makefile or script: ``launch/image_builds.py``) runs that Dockerfile's entrypoint: the
Dockerfile and the entrypoint script it copies in start that service, not served models of their own.
"""

from __future__ import annotations

import posixpath

from ...engines.images import image_engine, parse_image
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.registry import launch_helper
from . import named_files

BASE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_OVERRIDE_SUFFIXES = (".yml", ".yaml")
_LAUNCH_KEYS = ("command", "entrypoint")


def _services(loaded) -> YNode | None:
    root = loaded.documents[0].root if loaded is not None and loaded.documents else None
    services = root.get("services") if root is not None and root.kind == "map" else None
    return services if services is not None and services.kind == "map" else None


def _completes(service: YNode, base: YNode) -> bool:
    """Whether ``service`` only adds to ``base`` (the same image or none, no launch of its own)."""
    if service.kind != "map" or base.kind != "map" or any(service.get(key) is not None for key in _LAUNCH_KEYS):
        return False
    image = service.scalar("image")
    return image is None or image == base.scalar("image")


def completes_base(ctx: DocContext, name: str, service: YNode) -> bool:
    """Whether this service of a file that is not a base file only completes the same service of a base
    compose file beside it."""
    folder, own = posixpath.split(ctx.path)
    if own in BASE_FILES:
        return False
    for base_name in BASE_FILES:
        services = _services(named_files.read_yaml(ctx.workspace, posixpath.join(folder, base_name)))
        base = services.get(name) if services is not None else None
        if base is not None and _completes(service, base):
            return True
    return False


def overrides(ctx: DocContext, name: str, service: YNode) -> list[tuple[DocContext, YNode]]:
    """For a service of a base compose file: the same service in each file beside it that completes it."""
    folder, own = posixpath.split(ctx.path)
    if own not in BASE_FILES:
        return []
    found = []
    for other in sorted(named_files.files_in(ctx.workspace, folder)):
        if other == own or other in BASE_FILES or not other.lower().startswith(("docker-compose", "compose")) \
                or not other.endswith(_OVERRIDE_SUFFIXES):
            continue
        loaded = named_files.read_yaml(ctx.workspace, posixpath.join(folder, other))
        services = _services(loaded)
        override = services.get(name) if services is not None else None
        if override is not None and _completes(override, service):
            found.append((DocContext(loaded, loaded.documents[0], ctx.workspace), override))
    return found


def hold_built_image(ctx: DocContext, image: str | None) -> None:
    """When the service's image is one the repository builds, hold the Dockerfile and the entrypoint
    script it copies in (found in the Dockerfile's folder by name): they start this service."""
    if not image or image_engine(parse_image(image)).known:
        return  # a public engine image is pulled, not built here
    built = launch_helper("deployed_dockerfile")(ctx.workspace, ctx.path, image)
    if built is None:
        return
    ctx.workspace.held.add(built.path)
    words = [token.text for token in built.entrypoint or built.command]
    script = next((word for word in words[:2] if word.endswith(".sh")), None)
    rel = posixpath.join(posixpath.dirname(built.path), posixpath.basename(script)) if script else None
    if rel is not None and named_files.read_text(ctx.workspace, rel) is not None:
        ctx.workspace.held.add(rel)
