"""A local model path that is a model folder the repository itself holds: a compose service that
bind-mounts it (``./models/qwen:/models/qwen`` with ``vllm serve /models/qwen``; compose resolves a
relative source against the compose file's folder, docs.docker.com "Volumes", short syntax), or a script
run on the host that serves it by a relative path (``vllm serve ./models/qwen``, from the script's folder
or the repository root). When Git holds the folder's ``config.json``, that file is what the engine loads
(transformers reads ``config.json`` from a local folder before any hub lookup): the served model is named
by the folder (``model_named``) and its architecture comes from the config (``model_folder``, read by
``capacity.local_configs``). The files are read through ``named_files`` only (docs/SECURITY.md, promise 13).

A Kubernetes ``hostPath`` is the node's folder, not the repository's, and an absolute or ``~`` compose
source is the host's: neither is read. Registered for its settle hook only: it owns no document.
"""

from __future__ import annotations

import posixpath
import re

from ...model import Location, RepositoryModel, ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext, Workspace
from . import named_files

MARKERS: tuple[str, ...] = ()  # reads no document as its own
# the checkpoint index beside config.json: the weight size (as for a model_configs folder)
_INDEX = "model.safetensors.index.json"
# a relative path shaped like a hub id (``models/Qwen3-8B``, ``weights/llama/8b``)
_RELATIVE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(?:/[\w.-]+)*/?$")


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def settle(workspace: Workspace, models: list[ServedModel]) -> None:
    """Protocol hook, once every served model is known: a local path that is a model folder of the
    repository whose config.json Git holds."""
    for model in models:
        path = model.model.value if model.model is not None else None
        if model.model_named is not None or model.template or not isinstance(path, str) or not path.strip():
            continue
        for rel, location, how in _folders(workspace, model, path.strip()):
            config = named_files.read_text(workspace, posixpath.join(rel, "config.json"))
            if config is None:
                continue
            model.model_folder = RepositoryModel(rel, config, named_files.read_text(workspace, posixpath.join(rel, _INDEX)))
            model.model_named = Setting("model", posixpath.basename(rel), location,
                                        f"{how} {rel} and its config.json", origin="repository")
            break
        else:
            _name_relative_folder(workspace, model, path.strip())


def _name_relative_folder(workspace: Workspace, model: ServedModel, path: str) -> None:
    """A relative ``a/b`` path whose first folder the repository holds (beside the file, or at the root) is
    that folder's model, not the hub's ``a/b``, even when Git holds no config.json there (weights are
    rarely committed): named by its last folder."""
    if not _RELATIVE.match(path):
        return
    first = path.split("/", 1)[0]
    for rel in dict.fromkeys(filter(None, (named_files.repo_path(model.path, first), first))):
        if model.path.startswith(rel + "/"):
            continue  # the folder holds the file itself: a layout by hub id (meta-llama/Llama-3.1-8B/deploy.yaml)
        if named_files.holds_folder(workspace, rel):
            model.model_named = Setting("model", posixpath.basename(path.rstrip("/")), model.model.location,
                                        f"the repository's folder {rel}/", origin="repository")
            return


def _folders(workspace: Workspace, model: ServedModel, path: str) -> list[tuple[str, Location, str]]:
    """(repository folder, where the link is written, what links it) for each folder of the repository
    the served ``path`` may be, best first."""
    if any(mark in path for mark in ("$", "{{", "://")) or path.endswith(".gguf"):
        return []
    if model.pod is not None and model.pod.format == "compose" and path.startswith("/"):
        return _bind_mounted(model, posixpath.normpath(path))
    if model.pod is None and model.image is None and model.kind in named_files.HOST_KINDS and \
            not path.startswith(("/", "~")):
        text = named_files.read_text(workspace, model.path)
        if text is None or named_files.changes_folder(text):
            return []  # after a cd the path is relative to a folder the repository does not show
        found = [named_files.repo_path(model.path, path), named_files.repo_path("", path)]
        return [(rel, model.model.location, "the host script's relative path to the repository's folder") for rel in dict.fromkeys(found) if rel]
    return []


def _bind_mounted(model: ServedModel, path: str) -> list[tuple[str, Location, str]]:
    """The repository folder a compose bind mount puts at ``path``: a relative source only (``./models``,
    ``../weights``), resolved against the compose file's folder."""
    mount = model.pod.mount_at(path)
    volume = model.pod.volumes.get(mount.volume) if mount is not None else None
    if volume is None or volume.type != "bind" or not volume.name.startswith("."):
        return []
    below = path[len(mount.path.rstrip("/")):].strip("/")
    rel = named_files.repo_path(model.path, posixpath.join(volume.name, below) if below else volume.name)
    return [(rel, mount.location, "the compose bind mount of the repository's folder")] if rel else []
