"""llm-d model service values (the ``llm-d-modelservice`` chart of llm-d-incubation, used by the llm-d
guides) -> one served model per engine container of its ``decode`` and ``prefill`` pods.

The chart (``charts/llm-d-modelservice/templates/_helpers.tpl``) builds each container's argv from
``modelCommand``:

- ``vllmServe``: ``vllm serve <model> --port <port> [--tensor-parallel-size T] [--data-parallel-size D]
  [--data-parallel-size-local L] --served-model-name <modelArtifacts.name>`` then the container's ``args``
  (the port: ``routing.proxy.targetPort`` for decode behind the routing sidecar, else ``routing.servicePort``);
- ``imageDefault``: the same flags after ``--model <model>``, for the image's own entrypoint;
- ``custom`` (the default): the container's ``command`` and ``args`` as written.

The model comes from ``modelArtifacts.uri``: ``hf://<id>`` (the chart's default is
``hf://{{ .Values.modelArtifacts.name }}``), ``pvc://<claim>/<path>`` (mounted at
``modelArtifacts.mountPath``). Parallel sizes come from ``<role>.parallelism`` (a size of 1 is not
passed), and each pod requests ``tensor x dataLocal`` accelerators unless its ``resources`` say.
The vLLM version of an ``ghcr.io/llm-d/llm-d*`` image is the llm-d release's build: unknown here.

The earlier llm-d ``ModelService`` custom resource (``llm-d.ai/v1alpha1``, llm-d/llm-d-model-service) has
the same ``spec`` (``modelArtifacts``, ``decode``, ``prefill``, ``parallelism``); its containers carry
only the arguments the controller appends to the base config's ``vllm serve``, with ``{{ .HFModelName }}``
(the id of an ``hf://`` URI), ``{{ .ModelPath }}`` (that id, or the path of a ``pvc://`` URI) and
``{{ .MountedModelPath }}`` filled in, and ``acceleratorTypes`` (``labelKey: nvidia.com/gpu.product``,
``labelValues``) choosing the GPU; its GPU count is the base config's (not shown here). A container
that names an image of its own runs that image's argv instead.

The llm-d guides' ``DisaggregatedSet`` (``disaggregatedset.x-k8s.io``) holds one LeaderWorkerSet template
per role (``spec.roles[].name``: ``prefill``, ``decode``): its containers are read by the pod walker and
recorded as the prefill and decode halves of one set.
"""

from __future__ import annotations

import re

from ...model import ArgToken, Location, ServedModel, Setting
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import finish, is_resource, to_int
from ..launch.containers import GPU_PRODUCT_LABELS, container_model
from ..launch.expansion import substitute
from ..launch.pod_specs import workload_models
from ..launch.shell import argv_tokens

MARKERS = ("modelartifacts", "disaggregatedset")
DISAGGREGATED_SET_API = "disaggregatedset.x-k8s.io/"
MODEL_SERVICE_API = "llm-d.ai/"
# the controller's template variables for the model (llm-d-model-service internal/controller: HFModelName
# and ModelPath are the id of an hf:// URI, ModelPath the path after the claim of a pvc:// URI,
# MountedModelPath where that path is mounted)
_MODEL_VARIABLE = re.compile(r"\{\{\s*\.(HFModelName|ModelPath|MountedModelPath)\s*\}\}")
ROLES = ("decode", "prefill")
DEFAULT_PORT = "8000"
CHART_PROXY_TARGET_PORT = "8200"  # charts/llm-d-modelservice/values.yaml routing.proxy.targetPort
DEFAULT_MOUNT = "/model-cache"
NAME_TEMPLATE = "{{ .Values.modelArtifacts.name }}"


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    if is_resource(root, DISAGGREGATED_SET_API, "DisaggregatedSet"):
        return _disaggregated_set(ctx, root)
    if is_resource(root, MODEL_SERVICE_API, "ModelService"):
        spec = root.get("spec")
        name = f"ModelService/{root.scalar('metadata', 'name', default='modelservice')}"
        return _roles(ctx, spec, resource=name) if spec is not None and spec.kind == "map" else []
    return [] if root.get("apiVersion") is not None else _roles(ctx, root, resource=None)


def _roles(ctx: DocContext, root: YNode, resource: str | None) -> list[ServedModel]:
    """One served model per engine container of the decode and prefill sections of chart values
    (``resource`` None) or of the ModelService ``resource`` (its kind/name)."""
    artifacts = root.get("modelArtifacts")
    if artifacts is None or artifacts.kind != "map":
        return []
    found: list[ServedModel] = []
    for role in ROLES:
        section = root.get(role)
        if section is None or section.kind != "map" or section.scalar("create", default=True) is False:
            continue
        containers = section.get("containers")
        for index, container in enumerate(containers.value if containers is not None and containers.kind == "seq" else []):
            if container.kind == "map":
                model = _engine(ctx, root, artifacts, role, section, container, index, resource)
                if model is not None:
                    found.append(finish(model))
    return found


def _disaggregated_set(ctx: DocContext, root: YNode) -> list[ServedModel]:
    """The pod walker's models of each role, tagged with the role; a role of multi-pod groups (LWS
    ``size`` above 1) spans pods this count does not show."""
    name = str(root.scalar("metadata", "name", default="disaggregatedset"))
    roles = root.path("spec", "roles")
    by_name = {str(r.scalar("name")): r for r in roles.value if r.kind == "map"} if roles is not None and roles.kind == "seq" else {}
    models = workload_models(ctx, root)
    for model in models:
        role = next((r for r in by_name if f"roles[{r}]" in model.identity), None)
        if role is None:
            continue
        spec = by_name[role].get("spec")
        model.name = f"{name}/{role}/{model.name.rsplit('/', 1)[-1]}"
        if role in ("prefill", "decode"):
            model.disaggregation = (f"{ctx.path}#DisaggregatedSet/{name}", role)
        if spec is not None and spec.kind == "map":
            model.replicas = ctx.field_setting(spec, "replicas", "replicas", f"spec.roles[{role}].spec.replicas", to_int)
            if to_int(spec.scalar("leaderWorkerTemplate", "size", default=1)) != 1:
                model.gpus_span = "unknown"
    return models


def _engine(ctx: DocContext, root: YNode, artifacts: YNode, role: str, section: YNode, container: YNode,
            index: int, resource: str | None) -> ServedModel | None:
    name = str(container.scalar("name", default=index))
    command = str(container.scalar("modelCommand", default="custom"))
    prefix = f"{role}.containers[{index}]."
    tokens = None
    if command in ("vllmServe", "imageDefault"):
        tokens = _chart_tokens(ctx, root, artifacts, section, container, command, role, resource is None)
    elif resource is not None and container.get("image") is None:
        tokens = _resource_tokens(ctx, artifacts, container)
    label = f"{resource.split('/', 1)[1]}/{role}/{name}" if resource else f"{role}/{name}"
    # chart values are the pod (charts/llm-d-modelservice/templates/_helpers.tpl "modelPod": the role's
    # volumes and containers, no /dev/shm of its own); a ModelService's pod is its base config's, not here
    model = container_model(ctx, root=None, kind="llm-d", name=label,
                            identity=f"{resource or 'llm-d'}/{role}/{name}", container=container, prefix=prefix,
                            tokens=tokens, pod_spec=section, at=container, whole_pod=resource is None)
    if model is None:
        return None
    if resource is not None:
        _accelerator(model, section)
    model.replicas = ctx.field_setting(section, "replicas", "replicas", f"{role}.replicas", to_int)
    model.setting_keys["extra_args"] = f"{prefix}args"
    model.strategy = Setting("strategy", "RollingUpdate", model.location, "llm-d model service")
    # a ModelService's GPUs are the base config's resources (its controller does not read parallelism)
    if resource is None and model.gpus is None and root.scalar("accelerator", "type", default="nvidia") != "cpu":
        model.gpus = _parallel_gpus(ctx, section, role)
    if root.path("prefill", "create") is not False and root.get("prefill") is not None:
        model.disaggregation = (f"{ctx.path}#llm-d", role)
    return model


def _vllm_port(root: YNode, role: str, chart_values: bool) -> tuple[YNode | None, str]:
    """The port vLLM listens on (the values' node, else the default): the chart's "llm-d-modelservice.vllmPort"
    (templates/_helpers.tpl) is ``routing.servicePort`` for prefill and without the routing proxy, else the
    proxy's ``targetPort``, vLLM behind the sidecar that listens on the service port (chart values.yaml: 8000,
    proxy enabled, targetPort 8200). A ModelService resource: the proxy's target port when it names one."""
    proxied = root.path("routing", "proxy", "enabled") is not False
    if not chart_values:
        return (root.path("routing", "proxy", "targetPort") if proxied else None) or root.path("routing", "servicePort"), \
            DEFAULT_PORT
    if role == "prefill" or not proxied:
        return root.path("routing", "servicePort"), DEFAULT_PORT
    return root.path("routing", "proxy", "targetPort"), CHART_PROXY_TARGET_PORT


def _chart_tokens(ctx: DocContext, root: YNode, artifacts: YNode, section: YNode, container: YNode,
                  command: str, role: str, chart_values: bool) -> list[ArgToken]:
    where = ctx.location(container)
    tokens = [ArgToken("vllm", where, (), "llm-d", True), ArgToken("serve", where, (), "llm-d", True)] \
        if command == "vllmServe" else [ArgToken("--model", where, (), "llm-d", True)]
    model = _model_token(ctx, root, artifacts)
    if model is not None:
        tokens.append(model)
    port, default = _vllm_port(root, role, chart_values)
    tokens += [ArgToken("--port", where, (), "llm-d", True),
               _token(ctx, port) if port is not None else ArgToken(default, where, (), "llm-d", True)]
    parallelism = section.get("parallelism")
    for key, flag in (("tensor", "--tensor-parallel-size"), ("data", "--data-parallel-size"),
                      ("dataLocal", "--data-parallel-size-local")):
        node = parallelism.get(key) if parallelism is not None and parallelism.kind == "map" else None
        if node is not None and node.kind == "scalar" and isinstance(to_int(node.value), int) and to_int(node.value) > 1:
            tokens += [ArgToken(flag, ctx.location(node), ctx.comments(node.line), f"typed:{key}", True), _token(ctx, node)]
    served = artifacts.get("name")
    if served is not None and served.kind == "scalar":
        tokens += [ArgToken("--served-model-name", ctx.location(served), (), "typed:modelArtifacts.name", True),
                   _token(ctx, served)]
    return tokens + argv_tokens(ctx, container.get("args"), "args")


def _resource_tokens(ctx: DocContext, artifacts: YNode, container: YNode) -> list[ArgToken]:
    """``vllm serve`` of the base config, then the container's args with the model variables filled in."""
    where = ctx.location(container)
    scheme, _, rest = str(artifacts.scalar("uri", default="")).partition("://")
    path = rest.split("/", 1)[1] if scheme == "pvc" and "/" in rest else ""
    values = {"HFModelName": rest, "ModelPath": rest, "MountedModelPath": DEFAULT_MOUNT} if scheme == "hf" else \
        {"ModelPath": path, "MountedModelPath": f"{DEFAULT_MOUNT}/{path}"} if scheme == "pvc" else {}
    tokens = [ArgToken("vllm", where, (), "llm-d", True), ArgToken("serve", where, (), "llm-d", True)]
    for token in argv_tokens(ctx, container.get("args"), "args"):
        filled = substitute(_MODEL_VARIABLE, token.text, lambda m: values.get(m.group(1), m.group(0)))
        tokens.append(token if filled is None or filled == token.text else token.replaced(text=filled, synthetic=True))
    return tokens


def _accelerator(model: ServedModel, section: YNode) -> None:
    """The GPU a ModelService role asks for by node label, when it names one product."""
    types = section.get("acceleratorTypes")
    values = types.get("labelValues") if types is not None and types.kind == "map" else None
    if values is None or values.kind != "seq" or len(values.value) != 1 or model.gpu_product is not None:
        return
    if types.scalar("labelKey") in GPU_PRODUCT_LABELS and isinstance(values.value[0].value, str):
        model.gpu_product = values.value[0].value


def _token(ctx: DocContext, node: YNode) -> ArgToken:
    return ArgToken(str(node.value), ctx.location(node), ctx.comments(node.line), "typed", True)


def _model_token(ctx: DocContext, root: YNode, artifacts: YNode) -> ArgToken | None:
    """What the chart passes as the model, located at ``modelArtifacts.uri`` (or ``name`` for the default)."""
    uri = artifacts.get("uri")
    name = artifacts.scalar("name")
    text = str(uri.value) if uri is not None and uri.kind == "scalar" else f"hf://{NAME_TEMPLATE}"
    at: YNode = uri if uri is not None else artifacts
    scheme, _, rest = text.partition("://")
    rest = rest.strip('"')
    if NAME_TEMPLATE in rest and isinstance(name, str):
        rest = rest.replace(NAME_TEMPLATE, name)
        at = artifacts.get("name") if uri is None else at
    if scheme == "pvc":
        rest = f"{artifacts.scalar('mountPath', default=DEFAULT_MOUNT)}/{rest.split('/', 1)[1] if '/' in rest else ''}"
    elif scheme == "pvc+hf":
        rest = "/".join(rest.split("/")[-2:])
    elif scheme != "hf":
        return None
    location: Location = ctx.location(at)
    return ArgToken(rest, location, ctx.comments(at.line), "typed:modelArtifacts.uri", True)


def _parallel_gpus(ctx: DocContext, section: YNode, role: str) -> Setting | None:
    """The chart's accelerator request per pod: tensor x dataLocal (each 1 when unset)."""
    parallelism = section.get("parallelism")
    tensor = to_int(parallelism.scalar("tensor", default=1)) if parallelism is not None else 1
    local = to_int(parallelism.scalar("dataLocal", default=1)) if parallelism is not None else 1
    if not isinstance(tensor, int) or not isinstance(local, int):
        return None
    at = parallelism if parallelism is not None else section
    return Setting("gpus", tensor * local, ctx.location(at), f"{role}.parallelism (llm-d chart: tensor {tensor} x dataLocal {local})")
