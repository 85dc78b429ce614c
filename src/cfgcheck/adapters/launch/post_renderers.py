"""A Flux ``HelmRelease``'s ``spec.postRenderers``: the kustomize patches Flux applies to what the chart
renders (Flux helm-controller API, ``PostRenderer.Kustomize``: ``patches`` of strategic-merge or JSON 6902
patch strings, and the older ``patchesStrategicMerge`` objects). The container env a strategic-merge patch
gives a Deployment or StatefulSet is the engine's, over what the chart's values give: a cache directory
(``HF_HOME``) set there is where the weights go.
"""

from __future__ import annotations

from ...model import Setting
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import env_map_settings
from ..core.yaml_in_strings import embedded_document

WORKLOADS = ("Deployment", "StatefulSet")


def patched_env(ctx: DocContext, root: YNode, workload: str, only: bool) -> dict[str, Setting]:
    """The env the release's post-renderer patches give the containers of the rendered workload of
    ``workload`` (a patch whose target names it, or names none; any patch of a workload when the release
    renders ``only`` one engine), each value located in the patch."""
    found: dict[str, Setting] = {}
    renderers = root.path("spec", "postRenderers") if root.scalar("kind") == "HelmRelease" else None
    for renderer in renderers.value if renderers is not None and renderers.kind == "seq" else ():
        kustomize = renderer.get("kustomize") if renderer.kind == "map" else None
        if kustomize is None or kustomize.kind != "map":
            continue
        for patch_ctx, patch in _strategic_patches(ctx, kustomize, workload, only):
            containers = patch.path("spec", "template", "spec", "containers")
            for container in containers.value if containers is not None and containers.kind == "seq" else ():
                if container.kind == "map":
                    found.update(env_map_settings(patch_ctx, container.get("env"), "postRenderers patch "))
    return found


def _strategic_patches(ctx: DocContext, kustomize: YNode, workload: str, only: bool):
    """(context, patch root) of each strategic-merge patch of a workload this release renders."""
    patches = kustomize.get("patches")
    for item in patches.value if patches is not None and patches.kind == "seq" else ():
        if item.kind != "map":
            continue
        target = item.get("target")
        named = target.scalar("name") if target is not None and target.kind == "map" else None
        kind = target.scalar("kind") if target is not None and target.kind == "map" else None
        inner = embedded_document(ctx, item.get("patch"))
        if inner is None or kind not in (None, *WORKLOADS):
            continue
        if inner[1].scalar("kind") in WORKLOADS and _targets(named or inner[1].scalar("metadata", "name"), workload, only):
            yield inner
    merges = kustomize.get("patchesStrategicMerge")
    for item in merges.value if merges is not None and merges.kind == "seq" else ():
        if item.kind == "map" and item.scalar("kind") in WORKLOADS and \
                _targets(item.scalar("metadata", "name"), workload, only):
            yield ctx, item


def _targets(name: object, workload: str, only: bool) -> bool:
    """Whether a patch of the rendered object ``name`` reaches the engine of ``workload``: the chart's
    object names hold the values' name of the engine, which cfgcheck does not render (so: contained)."""
    return only or not isinstance(name, str) or bool(workload) and workload.lower() in name.lower()
