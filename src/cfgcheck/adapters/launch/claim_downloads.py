"""Weights a Job of the repository downloads onto a PersistentVolumeClaim that an engine pod then mounts.

A pod's own init containers are read with the pod (``launch/downloads.py``); a team that fills the
weights once runs a Job (``hf download ORG/NAME --local-dir /weights/x``) whose volume is a claim, and
the engine's pod mounts the same claim (by ``claimName``) somewhere else. Kubernetes gives both pods
the one volume the claim is bound to (Kubernetes "Persistent Volumes": a claim binds one volume), so
the path the engine serves holds what the Job wrote at the same place inside the claim: the served
model is named by that download (``model_named``) and its revision is the download's (CFG303 reads it).

Registered for its index and settle hooks only: it owns no document.
"""

from __future__ import annotations

import posixpath

from ...model import Download, ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import pod_specs
from ..core.recognition import name_local_model
from ..core.resources import file_resources
from .downloads import container_downloads
from .pods import read_volume

MARKERS: tuple[str, ...] = ()  # indexes Jobs by what they download, reads no document as its own
INDEX_WORDS = ("persistentvolumeclaim",)  # index() returns at once for a file without the word
# the resources that run a download to completion; a Deployment's init containers are its own pod's
_JOBS = ("Job", "CronJob")
# words one of which every download command the downloads module reads has (hf/huggingface-cli download,
# a git clone or a file URL of the hub)
_WORDS = ("download", "clone", "huggingface.co", "hf.co")


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def _space(workspace: Workspace) -> list:
    """This module's index space: (namespace, claim name, path inside the claim, download) of the run's Jobs."""
    return workspace.space(__name__, list)


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: the downloads of the Jobs of ``loaded`` whose target is on a claim."""
    lowered = loaded.text.lower()
    if "persistentvolumeclaim" not in lowered or not any(word in lowered for word in _WORDS):
        return
    for document, root in file_resources(loaded):
        if root.scalar("kind") not in _JOBS:
            continue
        ctx = DocContext(loaded, document, workspace)
        name, namespace = root.scalar("metadata", "name"), root.scalar("metadata", "namespace")
        for pod_spec in pod_specs(root):
            claims = _claims(ctx, pod_spec)
            for key in ("initContainers", "containers"):
                listed = pod_spec.get(key)
                for container in listed.value if listed is not None and listed.kind == "seq" else []:
                    if container.kind != "map":
                        continue
                    where = f"{root.scalar('kind')} '{name}'"
                    for download in container_downloads(ctx, container, where):
                        if download.repo and download.volume is not None and download.volume[0] in claims:
                            _space(workspace).append((namespace, claims[download.volume[0]], download.volume[1], download))


def _claims(ctx: DocContext, pod_spec: YNode) -> dict[str, str]:
    """The pod's volumes that are claims: volume name -> claim name (``pods.read_volume``)."""
    volumes = pod_spec.get("volumes")
    read = [read_volume(ctx, item) for item in (volumes.value if volumes is not None and volumes.kind == "seq" else [])]
    return {volume.name: volume.claim for volume in read if volume is not None and volume.claim is not None}


def settle(workspace: Workspace, models: list[ServedModel]) -> None:
    """Protocol hook, once every served model is known: a local model path on a claim a Job filled."""
    jobs = _space(workspace)
    for model in models if jobs else ():
        path = model.model.value if model.model is not None else None
        if model.model_named is not None or model.pod is None or not isinstance(path, str) or not path.startswith("/"):
            continue
        mount = model.pod.mount_at(posixpath.normpath(path))
        volume = model.pod.volumes.get(mount.volume) if mount is not None else None
        if volume is None or volume.claim is None:
            continue
        for namespace, claim, inside, download in jobs:
            # a claim is its namespace's: one left unstated here may be given by a kustomization or the apply
            if claim == volume.claim and (None in (namespace, model.pod.namespace) or namespace == model.pod.namespace):
                _offer(model, download.replaced(volume=(volume.name, inside)))


def _offer(model: ServedModel, download: Download) -> None:
    """The Job's download, seen through the engine's volume: kept when it fills the served path."""
    model.downloads.append(download)
    name_local_model(model)
    if model.model_named is None or model.model_named.location != download.location:
        model.downloads.remove(download)
