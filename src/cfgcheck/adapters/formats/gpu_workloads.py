"""Every pod that requests a GPU, whatever it runs (a media server, a notebook, another engine): the host
it is pinned to, for ``cfgcheck init``'s list of nodes, and a GPU a comment on its node selector or its
GPU request names, about that host (or, unpinned, about the cluster's GPU node), which capacity may read,
as an assumption, for a served model on the same host (``capacity.evidence.noted_gpu``). Reads no
served model.
"""

from __future__ import annotations

from ...capacity.fleet import HOSTNAME
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import add_note, file_notes, note_hosts, pod_specs
from ..core.recognition import GPU_RESOURCES, gpu_count, string_map
from ..core.resources import file_resources

MARKERS = ("nvidia.com/gpu", "amd.com/gpu")
INDEX_WORDS = tuple(resource.lower() for resource in GPU_RESOURCES)  # index() returns at once without one


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # notes only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    if not any(resource in loaded.text for resource in GPU_RESOURCES):
        return
    for document, root in file_resources(loaded):
        for pod in pod_specs(root):
            containers = pod.get("containers")
            requests = [gpu_count(c.get("resources")) for c in containers.value if c.kind == "map"]
            keys = [key for key, value in requests if key is not None]
            host = pod.scalar("nodeName") or string_map(pod.get("nodeSelector")).get(HOSTNAME)
            if host:
                note_hosts(workspace, {str(host): pod.location(loaded.path)})
            if not keys:
                continue
            selector = pod.get("nodeSelector")
            lines = [key.line for key in keys] + [n.line for n in (pod.key_node("nodeSelector"), pod.key_node("nodeName"),
                                                                     pod.key_node("affinity")) if n is not None]
            lines += [key.line for key, _ in selector.items()] if selector is not None and selector.kind == "map" else []
            add_note(workspace, str(host) if host else None, file_notes(loaded, lines), document.index)
