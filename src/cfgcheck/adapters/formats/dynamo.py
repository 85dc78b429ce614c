"""NVIDIA Dynamo ``DynamoGraphDeployment`` (``nvidia.com/v1alpha1`` and ``v1beta1``) and the older
``DynamoComponentDeployment`` -> one served model per engine worker.

A graph is a set of services: a frontend (the HTTP router, no engine), a planner, and workers that run
``python3 -m dynamo.vllm`` / ``dynamo.sglang`` with the engine's own arguments (``dynamo.trtllm`` is
TensorRT-LLM: recognised by ``engines.argv`` as no engine cfgcheck checks). Two layouts:

- ``v1alpha1``: ``spec.services.<Name>`` with ``componentType`` (``frontend`` | ``worker`` | ``planner``),
  ``subComponentType`` (``prefill`` | ``decode``), ``replicas``, ``resources.limits.gpu`` (GPUs per
  node), ``multinode.nodeCount`` and the container in ``extraPodSpec.mainContainer``;
- ``v1beta1``: ``spec.components[]`` with ``name``, ``type`` (``frontend`` | ``worker`` | ``prefill`` |
  ``decode`` …), ``replicas``, ``multinode.nodeCount`` and a pod template (``podTemplate.spec``).

Dynamo 0.3 graphs (``dynamo serve graphs.<graph>:<Service>``) keep each service's engine arguments in the
``DYN_DEPLOYMENT_CONFIG`` env JSON: they are read from there, each located at its key in that string.

A worker is a prefill or decode worker by its sub-type, else by its flags (``--is-prefill-worker``,
``--is-decode-worker``, ``--disaggregation-mode prefill|decode``); the pair is recorded on the model
(``disaggregation``) so that a rule can check both halves serve the same model.
"""

from __future__ import annotations

import json

from ...engines.images import parse_image
from ...model import ArgToken, Location, ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import apply_launch, env_value_nodes, finish, resource_spec, set_image, string_map, to_int
from ..launch.containers import container_model, container_tokens

API_GROUP = "nvidia.com/"
MARKERS = ("dynamographdeployment", "dynamocomponentdeployment")
KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")
NOT_ENGINES = ("frontend", "planner", "router", "epp")
ROLE_FLAGS = {"--is-prefill-worker": "prefill", "--is-decode-worker": "decode"}


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    spec = resource_spec(root, API_GROUP, KINDS)
    if spec is None:
        return []
    kind = root.scalar("kind")
    name = str(root.scalar("metadata", "name", default=kind.lower()))
    found = []
    for service_name, service, key_path in _services(spec, kind):
        model = _worker(ctx, root, kind, name, service_name, service, key_path)
        if model is not None:
            found.append(finish(model))
    prefill = next((m.disaggregation for m in found if m.disaggregation and m.disaggregation[1] == "prefill"), None)
    for model in found:
        if prefill is not None and model.disaggregation is None:
            model.disaggregation = (prefill[0], "decode")  # beside a prefill worker, a plain worker decodes
    return found


def _services(spec: YNode, kind: str):
    """(name, service mapping, key path) of every service of the graph (or the one component)."""
    if kind == "DynamoComponentDeployment":
        yield str(spec.scalar("serviceName", default=spec.scalar("name", default="component"))), spec, "spec"
        return
    services = spec.get("services")
    for key, service in services.items() if services is not None and services.kind == "map" else []:
        if service.kind == "map":
            yield str(key.value), service, f"spec.services.{key.value}"
    components = spec.get("components")
    for index, component in enumerate(components.value if components is not None and components.kind == "seq" else []):
        if component.kind == "map":
            yield str(component.scalar("name", default=index)), component, f"spec.components[{index}]"


def _container(service: YNode) -> tuple[YNode | None, YNode | None]:
    """(the main container, the pod spec around it) of a service in either layout."""
    extra = service.get("extraPodSpec")
    if extra is not None and extra.kind == "map" and extra.get("mainContainer") is not None:
        return extra.get("mainContainer"), extra
    pod_spec = service.path("podTemplate", "spec")
    containers = pod_spec.get("containers") if pod_spec is not None else None
    if containers is None or containers.kind != "seq":
        return None, None
    mains = [c for c in containers.value if c.kind == "map"]
    main = next((c for c in mains if c.scalar("name") == "main"), mains[0] if mains else None)
    return main, pod_spec


def _worker(ctx: DocContext, root: YNode, kind: str, name: str, service_name: str, service: YNode,
            key_path: str) -> ServedModel | None:
    role = str(service.scalar("componentType", default=service.scalar("type", default="worker"))).lower()
    if role in NOT_ENGINES:
        return None
    container, pod_spec = _container(service)
    if container is None or container.kind != "map":
        return None
    model = container_model(ctx, root=root, kind=kind, name=f"{name}/{service_name}",
                            identity=f"{kind}/{name}/{service_name}", container=container, pod_spec=pod_spec,
                            prefix=f"{key_path}.", at=service, whole_pod=True)
    if model is None:
        model = graph_service_model(ctx, root, container, service, f"{name}/{service_name}", f"{kind}/{name}/{service_name}", kind)
    if model is None or not model.argv and (container.get("command") is None and container.get("args") is None):
        return None  # the image alone (a runtime image) starts no engine: the operator gives it a command
    model.replicas = ctx.field_setting(service, "replicas", "replicas", f"{key_path}.replicas", to_int)
    model.strategy = Setting("strategy", "RollingUpdate", model.location, "Dynamo operator")
    _operator_shm(ctx, model, service)
    _gpus(ctx, model, service, key_path)
    sub = str(service.scalar("subComponentType", default=role)).lower()
    disaggregated = sub if sub in ("prefill", "decode") else _role_from_flags(model)
    if disaggregated:
        model.disaggregation = (f"{ctx.path}#{kind}/{name}", disaggregated)
    return model


# ai-dynamo/dynamo deploy/cloud/operator/docs/footer.md (ac09daa), "Shared Memory Configuration": every
# component gets an 8Gi emptyDir (medium Memory) at /dev/shm unless v1alpha1's sharedMemory.disabled is
# true; v1beta1 writes it as sharedMemorySize, where 0 is disabled (api/v1alpha1 ConvertFromSharedMemorySpec).
OPERATOR_SHM = "the Dynamo operator's shared memory ({size} emptyDir at /dev/shm)"


def _operator_shm(ctx: DocContext, model: ServedModel, service: YNode) -> None:
    """The /dev/shm the operator adds to the pod it builds around the component's pod template."""
    if model.pod is None or model.pod.shm is not None:
        return
    shared = service.get("sharedMemory")
    if shared is not None and shared.kind == "map":
        if shared.scalar("disabled") is True:
            return
        size = shared.get("size")
    else:
        size = service.get("sharedMemorySize")
        if size is not None and size.kind == "scalar" and str(size.value).strip() in ("0", "0Gi", "0Mi", "0Ki"):
            return
    written = size is not None and size.kind == "scalar" and size.value not in (None, "")
    where = size if written else service
    model.pod.shm = OPERATOR_SHM.format(size=size.value if written else "8Gi"), ctx.location(where)


def graph_service_model(ctx: DocContext, root: YNode, container: YNode, service: YNode, name: str, identity: str,
                        kind: str) -> ServedModel | None:
    """Dynamo 0.3's ``dynamo serve graphs.<graph>:<Service>``: the service's engine arguments are its
    section of the ``DYN_DEPLOYMENT_CONFIG`` JSON (plus the ``Common`` keys it lists in ``common-configs``),
    each ``--key value``, located at the key inside the env value. Only a service that requests a GPU
    runs an engine (the Processor and Frontend sections name the model too)."""
    texts = [token.text for token in container_tokens(ctx, container)]
    if "serve" not in texts or texts[max(texts.index("serve") - 1, 0)] != "dynamo" or texts.index("serve") + 1 >= len(texts):
        return None
    graph_service = texts[texts.index("serve") + 1].rpartition(":")[2]
    service_name = texts[texts.index("--service-name") + 1] if "--service-name" in texts[:-1] else graph_service
    node = _deployment_config(root, container)
    try:
        config = json.loads(node.value) if node is not None else None
    except (ValueError, RecursionError) as exc:  # json's decoder recurses: deep nesting is a RecursionError
        _not_json(ctx, node, exc)
        return None
    section = config.get(service_name) if isinstance(config, dict) else None
    if not isinstance(section, dict) or not _requests_gpu(section, service):
        return None
    common = config.get("Common") if isinstance(config.get("Common"), dict) else {}
    entries = [(key, common[key], "Common") for key in section.get("common-configs", []) if key in common]
    entries += [(key, value, service_name) for key, value in section.items() if key not in ("ServiceArgs", "common-configs")]
    image = parse_image(str(container.scalar("image", default="")))
    engine = image.engine or "vllm"
    model = ctx.new_model(name, kind, service, identity)
    set_image(ctx, model, ctx.field_setting(container, "image", "image", "extraPodSpec.mainContainer.image"))
    source = ctx.source(node)
    tokens = [ArgToken(text, ctx.location(node), (), "dynamo", True) for text in ("python3", "-m", f"dynamo.{engine}")]
    for key, value, where in entries:
        text = json.dumps(value) if isinstance(value, (dict, list)) else str(value)
        at = _json_key_location(ctx, node, source, where, key)
        tokens += [ArgToken(f"--{key}", at, (), "env:DYN_DEPLOYMENT_CONFIG")] + \
            ([] if value is True else [ArgToken(text, at, (), "env:DYN_DEPLOYMENT_CONFIG")])
    if not apply_launch(ctx, model, tokens, engine):
        return None
    if service_name == "PrefillWorker" or section.get("remote-prefill") is True:
        model.disaggregation = (f"{ctx.path}#{identity.rsplit('/', 1)[0]}", "prefill" if service_name == "PrefillWorker" else "decode")
    return model


def _not_json(ctx: DocContext, node: YNode, exc: Exception) -> None:
    """DYN_DEPLOYMENT_CONFIG that is not JSON hides every engine of the graph: the document's CFG000
    (once, whichever service met it first), naming the error's class, not the text it quotes."""
    problem = (f"DYN_DEPLOYMENT_CONFIG is not JSON ({type(exc).__name__}): the engine arguments of the graph's "
               "services are not read", node.line, node.column)
    if problem not in ctx.document.problems:
        ctx.document.problems.append(problem)


def _deployment_config(root: YNode, container: YNode) -> YNode | None:
    for env in (root.path("spec", "envs"), container.get("env")):
        for name, value in env_value_nodes(env):
            if name == "DYN_DEPLOYMENT_CONFIG" and isinstance(value.value, str):
                return value
    return None


def _requests_gpu(section: dict, service: YNode) -> bool:
    declared = (section.get("ServiceArgs") or {}).get("resources", {}).get("gpu") if isinstance(section.get("ServiceArgs"), dict) else None
    written = service.path("resources", "limits", "gpu") or service.path("resources", "requests", "gpu")
    count = to_int(str(declared)) if declared is not None else (to_int(written.value) if written is not None else 0)
    return isinstance(count, int) and count > 0


def _json_key_location(ctx: DocContext, node: YNode, source: str, section: str, key: str) -> Location:
    """Where ``"key":`` is written after ``"section":`` in a one-line env string; the string itself else."""
    start = source.find(f'"{section}"')
    found = source.find(f'"{key}"', max(start, 0))
    if node.line != node.end_line or start < 0 or found < 0:
        return ctx.location(node)
    column = node.column + found + 1
    return Location(ctx.path, node.line, column, node.line, column + len(key))


def _gpus(ctx: DocContext, model: ServedModel, service: YNode, key_path: str) -> None:
    """``resources.limits.gpu`` (v1alpha1) per node, times ``multinode.nodeCount``."""
    resources = service.get("resources")
    for section in ("limits", "requests"):
        block = resources.get(section) if resources is not None and resources.kind == "map" else None
        if block is not None and block.kind == "map" and block.get("gpu") is not None:
            model.gpus = ctx.field_setting(block, "gpu", "gpus", f"{key_path}.resources.{section}.gpu", to_int)
            model.gpu_resource = "nvidia.com/gpu"
            break
    nodes = to_int(service.scalar("multinode", "nodeCount", default=1))
    if model.gpus is not None and isinstance(nodes, int) and nodes > 1:
        per_node = model.gpus.value
        total = per_node * nodes if isinstance(per_node, int) else None
        model.gpus = Setting("gpus", total, model.gpus.location,
                             f"{model.gpus.source} (multinode: {nodes} nodes x {per_node})", model.gpus.comments,
                             model.gpus.key_location, model.gpus.text)
        model.gpus_span = "group"
    selector = string_map(service.path("extraPodSpec", "nodeSelector"))
    model.node_selector = {**selector, **model.node_selector}


def _role_from_flags(model: ServedModel) -> str | None:
    texts = [token.text for token in model.argv]
    for index, text in enumerate(texts):
        if text in ROLE_FLAGS:
            return ROLE_FLAGS[text]
        flag, _, value = text.partition("=")
        if flag == "--disaggregation-mode":
            value = value or (texts[index + 1] if index + 1 < len(texts) else "")
            if value in ("prefill", "decode"):
                return value
    return None
