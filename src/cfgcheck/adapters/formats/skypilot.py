"""SkyPilot task and service YAML (``sky launch`` / ``sky serve up``) whose ``run:`` starts an engine.

The ``run:`` commands are read as ``launch/scripts.py`` reads a script (``vllm serve $MODEL_NAME``,
``python -m sglang.launch_server ...``, ``docker run ... vllm/vllm-openai``), with the task's literal
``envs`` and the variables SkyPilot sets on every node (docs/source/running-jobs/environment-variables.rst
in skypilot-org/skypilot): ``SKYPILOT_NUM_GPUS_PER_NODE`` from ``resources.accelerators`` and
``SKYPILOT_NUM_NODES`` from ``num_nodes``. ``secrets`` and ``envs`` left empty are given at launch:
unknown values.

Topology, from the task YAML reference (docs/source/reference/yaml-spec.rst):

- ``resources.accelerators`` (or its alias ``resources.gpus``): ``NAME:COUNT`` per node, ``NAME`` for one;
  a set (``{L4:1, A10G:1}``), a list, or ``any_of`` / ``ordered`` alternatives let SkyPilot choose, so the
  accelerator is stated only when every alternative names the same one (the count likewise);
- ``num_nodes``: the engine a multi-node ``run:`` starts spans every node (``gpus_span`` group);
- ``service.replicas`` or ``service.replica_policy.min_replicas``: the replicas SkyServe keeps;
- ``resources.image_id: docker:IMAGE``: ``run:`` runs in that container, so an engine image names the
  engine version.
"""

from __future__ import annotations

from ...engines.images import parse_image
from ...model import ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import ENGINE_MARKERS, literal_env, set_image, to_int
from ..launch.scripts import scalar_launches, script_model

MARKERS = ENGINE_MARKERS
DOCUMENTS = "plain"  # never a Kubernetes resource: the registry does not try it on one
# keys only a SkyPilot task has beside ``run``; a document with apiVersion/kind, compose services or
# workflow jobs is another format's
_TASK_KEYS = ("resources", "envs", "setup", "num_nodes", "service", "workdir", "file_mounts", "secrets")


def _is_task(root: YNode) -> bool:
    run = root.get("run")
    return run is not None and run.kind == "scalar" and isinstance(run.value, str) and \
        all(root.get(key) is None for key in ("apiVersion", "kind", "jobs", "services", "steps")) and \
        any(root.get(key) is not None for key in _TASK_KEYS)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    if not _is_task(root):
        return []
    accelerator, per_node, where = _accelerators(root.get("resources"))
    nodes = to_int(root.scalar("num_nodes"))
    nodes = nodes if isinstance(nodes, int) and nodes > 0 else 1
    env = literal_env(root.get("secrets"), literal_env(root.get("envs"), {}))  # secrets: null, given at launch
    env["SKYPILOT_NUM_NODES"] = str(nodes)
    env["SKYPILOT_NUM_GPUS_PER_NODE"] = str(per_node) if per_node else None
    env["SKYPILOT_NODE_RANK"] = None  # each node's own: unknown here
    found: list[ServedModel] = []
    stem = str(root.scalar("name") or "") or None
    for number, launched in enumerate(scalar_launches(ctx, root.get("run"), env)):
        name = (f"{stem}#{number + 1}" if number else stem) if stem else None
        model = script_model(ctx.workspace, ctx.loaded, launched, "skypilot task", f"skypilot/{number}", number,
                             (ctx.first_line - 1, root.end_line), name)
        if model is None:
            continue
        if accelerator is not None:
            model.gpu_product = accelerator
        if per_node and where is not None:
            model.gpus = ctx.setting("gpus", where[0], where[1], "resources.accelerators",
                                     lambda _value: per_node * nodes)
            model.gpus_span = "group" if nodes > 1 else "pod"
        model.replicas = _replicas(ctx, root.get("service"))
        image = _image(ctx, root.get("resources"))
        if model.image is None and image is not None and parse_image(image.value).engine == model.engine:
            set_image(ctx, model, image)
        found.append(model)
    return found


def _accelerators(resources: YNode | None) -> tuple[str | None, int | None, tuple[YNode, YNode] | None]:
    """(accelerator, count per node, (key, value) nodes) from ``resources``; the name is None unless every
    alternative names the same accelerator, the count None unless every alternative has the same."""
    if resources is None or resources.kind != "map":
        return None, None, None
    choices: list[tuple[str, int]] = []
    where = None
    for mapping in [resources] + _alternatives(resources):
        for key in ("accelerators", "gpus"):
            value = mapping.get(key)
            if value is not None:
                choices.extend(_choices(value))
                where = where or (mapping.key_node(key), value)
    names = {name.lower() for name, _ in choices}
    counts = {count for _, count in choices}
    accelerator = choices[0][0] if len(names) == 1 else None
    return accelerator, (counts.pop() if len(counts) == 1 else None), (where if choices else None)


def _alternatives(resources: YNode) -> list[YNode]:
    found: list[YNode] = []
    for key in ("any_of", "ordered"):
        options = resources.get(key)
        if options is not None and options.kind == "seq":
            found.extend(option for option in options.value if option.kind == "map")
    return found


def _choices(node: YNode) -> list[tuple[str, int]]:
    """``H100:8`` / ``H100`` / ``{H100:8, A100-80GB:8}`` / ``[L4:1, A10G:1]`` / ``{H100: 8}`` -> (name, count)."""
    if node.kind == "scalar":
        return [_choice(str(node.value))] if node.value is not None else []
    if node.kind == "seq":
        return [_choice(str(item.value)) for item in node.value if item.kind == "scalar" and item.value is not None]
    if node.kind == "map":  # a flow set: ``{L4:8}`` is the key "L4:8"; ``{L4: 8}`` a key and its count
        return [_choice(f"{key.value}:{value.value}" if value.kind == "scalar" and value.value not in (None, "")
                        else str(key.value)) for key, value in node.items() if key.kind == "scalar"]
    return []


def _choice(text: str) -> tuple[str, int]:
    name, _, count = text.strip().partition(":")
    number = to_int(count.strip()) if count else 1
    return name.strip(), number if isinstance(number, int) else 0


def _image(ctx: DocContext, resources: YNode | None) -> Setting | None:
    """``image_id: docker:vllm/vllm-openai:v0.10.0`` -> the image, located at its name after ``docker:``."""
    image = ctx.field_setting(resources, "image_id", "image", "resources.image_id") \
        if resources is not None and resources.kind == "map" else None
    if image is None or not isinstance(image.value, str) or not image.value.startswith("docker:"):
        return None
    image.value = image.value.removeprefix("docker:")
    return image


def _replicas(ctx: DocContext, service: YNode | None) -> Setting | None:
    if service is None or service.kind != "map":
        return None
    replicas = ctx.field_setting(service, "replicas", "replicas", "service.replicas", to_int)
    policy = service.get("replica_policy")
    if replicas is None and policy is not None and policy.kind == "map":
        replicas = ctx.field_setting(policy, "min_replicas", "replicas", "service.replica_policy.min_replicas", to_int)
    return replicas
