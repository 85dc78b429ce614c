"""OME (``ome.io``) ClusterServingRuntime / ServingRuntime / InferenceService -> one served model per
engine ``runner``.

A runner is one container mapping, kept under ``spec.engineConfig`` and ``spec.decoderConfig`` (runtimes)
or ``spec.engine`` / ``spec.decoder`` (InferenceService), either directly or in ``leader`` / ``worker``
for multi-node serving. The router (``routerConfig`` / ``router``) is not an engine.
"""

from __future__ import annotations

from ...model import ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import finish, resource_spec, to_int
from ..launch.containers import container_model

API_GROUP = "ome.io/"
MARKERS = ("ome.io",)
COMPONENTS = (("engineConfig", "engine"), ("decoderConfig", "decoder"), ("engine", "engine"), ("decoder", "decoder"))


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    spec = resource_spec(root, API_GROUP)
    if spec is None:
        return []
    kind = str(root.scalar("kind", default="ome"))
    name = str(root.scalar("metadata", "name", default=kind.lower()))
    found: list[ServedModel] = []
    for key, role in COMPONENTS:
        component = spec.get(key)
        if component is None or component.kind != "map":
            continue
        for part, label in ((component, role), (component.get("leader"), f"{role}-leader"),
                            (component.get("worker"), f"{role}-worker")):
            if part is None or part.kind != "map":
                continue
            runner = part.get("runner")
            if runner is None or runner.kind != "map":
                continue
            path = f"spec.{key}" + ("" if part is component else f".{label.rsplit('-', 1)[1]}") + ".runner."
            model = container_model(ctx, root=root, kind=kind, name=f"{name}/{label}",
                                    identity=f"{kind}/{name}/{label}", container=runner, prefix=path,
                                    pod_spec=part)
            if model is None:
                continue
            size = part.get("size") if part is not component else None
            if size is not None:
                model.replicas = ctx.field_setting(part, "size", "replicas", path.replace(".runner.", ".size"), to_int)
            else:
                model.replicas = ctx.field_setting(component, "minReplicas", "replicas", f"spec.{key}.minReplicas", to_int)
            model.strategy = model.strategy or Setting("strategy", "RollingUpdate", model.location, "OME default")
            found.append(finish(model))
    return found
