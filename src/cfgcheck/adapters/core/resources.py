"""The Kubernetes resources a YAML document holds: the document itself, or the objects of a wrapper of
resources, each read as if it were a document of its own. Served models and the index hooks (ConfigMaps,
Services, runtimes, LLMKube Models, DRA claims) read documents through this one iterator, so an object
inside a wrapper is found as a served model and as a related object alike.

Wrappers: an OpenShift ``Template`` (template.openshift.io/v1 ``objects``: each is a resource
``oc process`` creates) and a ``List`` (``v1`` ``items``: what ``kubectl get -o yaml`` writes and
``kubectl apply`` accepts).
"""

from __future__ import annotations

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

_MAX_NESTING = 4  # a List of Templates is real (oc get templates -o yaml); deeper is no resource file
# Keys under which no pod spec is: walks that look for pod specs anywhere in a resource skip them (most of
# a manifest is in them).
NO_POD_SPEC = frozenset(("containers", "initContainers", "ephemeralContainers", "metadata", "status", "data",
                         "stringData", "volumes", "tolerations", "affinity", "securityContext"))


def resources(root, depth: int = 0) -> list:
    """The resources of one document root (a map), wrappers expanded; [] for anything else."""
    if root is None or root.kind != "map":
        return []
    members = _members(root)
    if members is None or depth >= _MAX_NESTING:
        return [root]
    return [resource for item in members for resource in resources(item, depth + 1)]


def file_resources(loaded) -> Iterator[tuple]:
    """(document, resource) for every resource of every document of ``loaded``."""
    for document in loaded.documents:
        for resource in resources(document.root):
            yield document, resource


def _members(root) -> list | None:
    """The objects a wrapper holds, or None when ``root`` is no wrapper."""
    kind, api = root.scalar("kind"), root.scalar("apiVersion", default="")
    if not isinstance(api, str):
        return None
    if kind == "Template" and api.startswith("template.openshift.io/"):
        held = root.get("objects")
    elif kind == "List" and api == "v1":
        held = root.get("items")
    else:
        return None
    return [item for item in held.value if item.kind == "map"] if held is not None and held.kind == "seq" else None
