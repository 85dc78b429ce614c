"""Helm chart values wherever GitOps keeps them, and the bjw-s ``app-template`` chart's containers.

Values are found where ``launch/held_values.py`` finds them: in a Flux ``HelmRelease``
(``spec.values``), an Argo CD ``Application`` (``spec.source(s).helm.valuesObject``, and the ``values``
string, which is parsed as YAML and located at its lines in the file), or a plain values file. In them:

* app-template: ``controllers.<controller>.containers.<container>`` with ``image: {repository, tag}``,
  ``command`` / ``args`` (list or string) and ``env`` (map or list) -> one served model per container
  that starts an engine. The engine comes from the argv and image, never from the release or
  controller name (a release named "vllm" that runs llama.cpp is llama.cpp).
* vLLM production-stack ``servingEngineSpec.modelSpec[]`` inside an Argo CD values string or a
  multi-source Application (the inline cases are the production_stack adapter's).
"""

from __future__ import annotations

from pathlib import Path

from ...paths import escapes, read_beyond
from ...model import ServedModel, Setting
from ...yamlio import YamlError, YNode, load_data
from . import production_stack
from ..core.contexts import DocContext
from ..core.recognition import ENGINE_MARKERS, finish, to_int
from ..launch.containers import container_model
from ..launch.held_values import Values, values_sources

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

MARKERS = ENGINE_MARKERS + production_stack.MARKERS


def dependency_values(ctx: DocContext, root: YNode) -> list[Values]:
    """An umbrella chart's values file: the values of each chart it depends on, under the dependency's
    alias or name (its ``Chart.yaml``), read as that chart's own values."""
    if root.get("apiVersion") is not None or root.get("kind") is not None:
        return []
    found: list[Values] = []
    for key in dependency_keys(ctx.workspace.config, ctx.path):
        values = root.get(key)
        if values is not None and values.kind == "map":
            found.append((ctx, values, f"{key}.", key))
    return found


def dependency_keys(config: dict[str, Any], values_path: str) -> list[str]:
    """The keys under which a chart's values file holds the values of the charts it depends on: each
    ``Chart.yaml`` ``dependencies[]`` entry's ``alias``, else its ``name`` (Helm's rule), for the
    ``Chart.yaml`` beside ``values_path``; [] when there is none (or it cannot be read)."""
    root = config.get("root")
    if not root:
        return []
    repo = Path(str(root))
    folder = values_path.rsplit("/", 1)[0] if "/" in values_path else "."
    chart = repo / folder / "Chart.yaml"
    read_beyond(chart)
    if not chart.is_file() or escapes(chart, repo):
        return []
    try:
        data = load_data(chart)
    except YamlError:
        return []  # the Chart.yaml is linted on its own: its CFG000 says what is wrong
    entries = data.get("dependencies") if isinstance(data, dict) else None
    keys = [entry.get("alias") or entry.get("name") for entry in entries or () if isinstance(entry, dict)]
    return [key for key in keys if isinstance(key, str) and key]


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    found: list[ServedModel] = []
    for values_ctx, values, prefix, release in values_sources(ctx, root) + dependency_values(ctx, root):
        models = app_template_models(values_ctx, values, prefix, release)
        specs = values.path("servingEngineSpec", "modelSpec")
        # inline values of one source are the production_stack adapter's; strings, sources[] and an
        # umbrella chart's dependency values are ours
        if specs is not None and specs.kind == "seq" and (values_ctx is not ctx or values is not _inline(root)):
            for index, entry in enumerate(specs.value):
                if entry.kind == "map":
                    models.append(production_stack._model(
                        values_ctx, values, entry, f"{prefix}servingEngineSpec.modelSpec[{index}]", release))
        if values_ctx is not ctx:  # parsed from a string: the enclosing document's directives apply too
            for model in models:
                model.directives.extend(ctx.directives())
                model.comments = sorted(set(model.comments) | set(ctx.document_comments()))
        found.extend(models)
    return found


def _inline(root: YNode) -> YNode | None:
    """The values the production_stack adapter reads inline in this document (its ``values_roots``)."""
    inline = production_stack.values_roots(root)
    return inline[0][0] if inline else None


def _image(ctx: DocContext, container: YNode, prefix: str) -> Setting | None:
    image = container.get("image")
    if image is None:
        return None
    if image.kind == "scalar":
        return ctx.setting("image", container.key_node("image"), image, f"{prefix}image") if image.value else None
    if image.kind != "map":
        return None
    repository, tag, digest = image.get("repository"), image.get("tag"), image.get("digest")
    if repository is None or repository.kind != "scalar" or not repository.value:
        return None
    text = str(repository.value)
    if tag is not None and tag.kind == "scalar" and tag.value is not None:
        text += f":{tag.value}"
    if digest is not None and digest.kind == "scalar" and digest.value:
        text += f"@{digest.value}"
    anchor = "tag" if tag is not None and tag.kind == "scalar" else "repository"
    setting = ctx.setting("image", image.key_node(anchor), image.get(anchor), f"{prefix}image.{anchor}")
    setting.value = text
    return setting


def _readable(*parts: str | None) -> str:
    names: list[str] = []
    for part in parts:
        if part and (not names or names[-1] != part) and part not in ("app", "main"):
            names.append(part)
    return "/".join(names) or "app"


def app_template_models(ctx: DocContext, values: YNode, prefix: str, release: str | None) -> list[ServedModel]:
    controllers = values.get("controllers")
    if controllers is None or controllers.kind != "map":
        return []
    default_pod = values.get("defaultPodOptions")
    found: list[ServedModel] = []
    for key, controller in controllers.items():
        if key.kind != "scalar" or controller.kind != "map":
            continue
        containers = controller.get("containers")
        if containers is None or containers.kind != "map":
            continue
        controller_name = str(key.value)
        pod = controller.get("pod")
        for ckey, container in containers.items():
            if ckey.kind != "scalar" or container.kind != "map":
                continue
            container_name = str(ckey.value)
            path = f"{prefix}controllers.{controller_name}.containers.{container_name}."
            model = container_model(
                ctx, root=None, kind="app-template", name=_readable(release, controller_name, container_name),
                identity=f"app-template/{release or '-'}/{controller_name}/{container_name}", container=container,
                at=ckey, prefix=path, image=_image(ctx, container, path),
                pod_spec=pod if pod is not None and pod.kind == "map" else default_pod)
            if model is None:
                continue
            model.replicas = ctx.field_setting(controller, "replicas", "replicas",
                                               f"{prefix}controllers.{controller_name}.replicas", to_int)
            kind = str(controller.scalar("type", default="deployment")).lower()
            strategy = controller.get("strategy")
            if kind == "statefulset":
                model.strategy = Setting("strategy", "StatefulSet", model.location, "app-template statefulset")
            elif strategy is not None and strategy.kind == "scalar":
                model.strategy = ctx.setting("strategy", controller.key_node("strategy"), strategy,
                                             f"{prefix}controllers.{controller_name}.strategy")
            else:
                model.strategy = Setting("strategy", "Recreate", model.location, "app-template default")
            found.append(finish(model))
    return found
