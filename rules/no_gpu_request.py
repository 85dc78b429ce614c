"""Flags a GPU engine whose pod requests no GPU.

## What it flags
A vLLM, SGLang or TokenSpeed container built for GPUs whose pod (or compose service) asks for none: no
`nvidia.com/gpu`, `amd.com/gpu` or other device-plugin resource in its requests or limits, no Dynamic
Resource Allocation claim, no NVIDIA runtime class and no explicit `NVIDIA_VISIBLE_DEVICES` or
`CUDA_VISIBLE_DEVICES` (the author relies on the runtime); in docker-compose no GPU device
reservation (a `deploy.resources.reservations.devices` block commented out is none), no swarm
`generic_resources` GPU, `gpus:`, `runtime: nvidia` or `/dev/nvidia*` device. An image whose tag alone
is chosen at deploy time (`vllm/vllm-openai:${VLLM_TAG}`) is still the engine's GPU build: a warning
that says it assumed so. A `nvidia.com/gpu: 0` counts as
none. A Kubernetes container is reported where its request belongs: its `resources.limits` key (a GPU
limit commented out there), else `resources`, else the container itself. In production-stack values a `requestGPU` that is missing, 0 or a fraction such as 0.5 renders
no GPU request at all (helm/templates/_helpers.tpl renders it only when `int requestGPU > 0`).

The engine's own platform builds speak of their accelerator: a TPU image (`vllm/vllm-tpu`) whose pod
requests no `google.com/tpu`, a Neuron image (the Neuron deep-learning containers, `vllm-neuron`) with
no `aws.amazon.com/neuron`, `neurondevice` or `neuroncore`, a Gaudi image with no `habana.ai/gaudi` is
flagged the same way, in those words (Kubernetes pods only: compose passes Neuron and TPU devices as
`devices:` paths).

A Kubernetes pod that reaches the node's GPUs outside the scheduler's count (the NVIDIA runtime class
or `NVIDIA_VISIBLE_DEVICES` without a device-plugin request, a privileged container) is a warning
that says so: when the pod is privileged, or when another engine runs on the same node (`nodeName` or
`kubernetes.io/hostname`), since the device plugin counts the GPUs this engine uses as free.

Quiet when the engine runs on CPU (`--device cpu`, CPU, Xeon or OpenVINO images, `VLLM_TARGET_DEVICE=cpu`
on an image that is not a published GPU build: on `vllm/vllm-openai` the variable only chose what was
built), when the image is chosen at deploy time (`${VLLM_IMAGE}`, a template), for
ServingRuntimes (KServe merges the InferenceService's resources into them), for Ray resources (the
engine's actors run on worker groups), for RoleBasedGroup `roleTemplates` (the roles patch them),
for pods an operator builds from its own GPU fields (LLMKube), and for GPUs given by a Dynamic
Resource Allocation claim.

## Why it matters
The scheduler places the pod on any node and the device plugin gives it no GPU: the engine stops at
start-up with `RuntimeError: Failed to infer device type` / `No platform detected`
(vllm-project/vllm#8885, #13946, llm-d/llm-d-deployer#273). Where the NVIDIA runtime is the node's
default, the container sees every GPU of the node instead, unaccounted, and competes with the pods
that did request them.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          resources:
            limits:
              memory: 32Gi
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          resources:
            limits:
              memory: 32Gi
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import (DEVICE, UNIT, Finding, accelerator_kind, as_int, image_engine, int_value, parse_image,
                          placement)

from ._pod_rules import cpu_target_ignored, runs_on_cpu, serves

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG504", "no-gpu-request", "error"
OPTIONS: dict = {}

CHECKED_FORMATS = ("kubernetes", "kserve-llm", "compose", "production-stack")
# ServingRuntimes get their resources from the InferenceService; Ray places the engine's actors on
# worker groups, not necessarily in the pod whose command starts it.
NOT_THE_GPU_POD = ("ServingRuntime", "ClusterServingRuntime", "RayService", "RayCluster", "RayJob")
NON_DEVICE_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def _device_resource(pod) -> bool:
    """Any extended resource (a device-plugin name such as nvidia.com/mig-1g.10gb) with a count above 0."""
    for section in (pod.requests, pod.limits):
        for name, setting in section.items():
            if name not in NON_DEVICE_RESOURCES and not name.startswith("hugepages-") and "/" in name \
                    and not name.startswith("rdma/") and as_int(setting.value, 1) != 0:
                return True
    return False


def check(model, ctx) -> Iterator[Finding]:
    pod = model.pod
    if pod is None or pod.format not in CHECKED_FORMATS or not serves(model):
        return
    kind = accelerator_kind(model)
    if model.kind in NOT_THE_GPU_POD or (kind == "gpu" and runs_on_cpu(model)):
        return
    if pod.gpu_access is not None:
        yield from _outside_the_scheduler(model, pod, ctx)
        return
    if kind != "gpu":
        yield from _no_accelerator_request(model, pod, kind)
        return
    image = str(model.image.value) if model.image is not None else ""
    chosen = _tag_chosen_at_deploy(image)
    if not image or chosen is None and any(mark in image for mark in ("$", "{{")):
        return  # an image chosen at deploy time may be a simulator or a CPU build
    gpus = model.gpus
    if pod.format == "production-stack":
        rendered = int_value(gpus.value) if gpus is not None else 0  # Helm's int: 0.5 -> 0
        if rendered is None or rendered > 0:
            return
    elif gpus is not None:
        count = as_int(gpus.value)
        if count is None or count > 0:
            return  # a count we cannot read (all, a template) or a real one
    elif _device_resource(pod):
        return
    engine = {"vllm": "vLLM", "sglang": "SGLang", "tokenspeed": "TokenSpeed"}[model.engine]
    if gpus is not None and pod.format == "production-stack":
        what = f"requestGPU {gpus.value} renders no GPU request (the chart emits one only when int(requestGPU) > 0)"
    elif gpus is not None:
        what = f"{gpus.source} {gpus.value} requests no GPU"
    else:
        what = "no GPU resource is requested"
    target = cpu_target_ignored(model)
    built = "" if target is None else f" (VLLM_TARGET_DEVICE={target.value} chooses what vLLM is built for; " \
        f"{model.image.value} is the CUDA build)"
    if chosen is not None:
        built += f"; assumed: {chosen} is its GPU build whatever tag is chosen at deploy time"
    yield Finding(
        message=f"{engine} GPU image but {what}: the {'container' if pod.format == 'compose' else 'pod'} "
                f"gets no GPU and the engine fails at start-up "
                f"(or sees every GPU of the node unaccounted){built}",
        location=_request_place(model, pod),
        remediation="request the GPUs the engine uses (nvidia.com/gpu: N), or run a CPU build with --device cpu",
        setting="gpus", related=(pod.location,), model=model.name, severity="warning" if chosen else "")


def _tag_chosen_at_deploy(image: str) -> str | None:
    """The repository of an image whose tag alone is a variable (``vllm/vllm-openai:${VLLM_TAG}``) when
    that repository is an engine's GPU build under any plain tag (the image table names no variant for
    it); else None. A tag may still select another build (``-cpu``): the finding says it assumed."""
    repository, colon, tag = image.rpartition(":")
    if not colon or "/" in tag or any(mark in repository for mark in ("$", "{{")) or \
            not any(mark in tag for mark in ("$", "{{")):
        return None
    found = image_engine(parse_image(f"{repository}:latest"))
    return repository if found.known and found.engine and found.variant is None else None


def _outside_the_scheduler(model, pod, ctx) -> Iterator[Finding]:
    """A Kubernetes pod that reaches the node's GPUs without a device-plugin request (the NVIDIA runtime
    class or variables, a privileged container): the scheduler does not count them. Said when the pod
    is privileged (it gets the GPUs whether the author meant it or not) or when another engine runs on
    the same node: the device plugin counts the GPUs this one uses as free."""
    if pod.format != "kubernetes" or pod.host_gpus is None or _device_resource(pod) or \
            model.gpus is not None and (as_int(model.gpus.value) or 0) > 0:
        return
    how, where = pod.host_gpus
    privileged = how.startswith("privileged")
    beside = [other for other in ctx.models if other is not model and serves(other) and pod.node is not None
              and (placed := placement(other)) is not None and placed.host == pod.node]
    if not beside and not privileged:
        return  # GPUs given by the runtime on a node where nothing else is seen to run
    engine = {"vllm": "vLLM", "sglang": "SGLang", "tokenspeed": "TokenSpeed"}[model.engine]
    names = ", ".join(other.name for other in beside[:3]) + (" and others" if len(beside) > 3 else "")
    also = f"; {names} on {pod.node} {'use' if len(beside) > 1 else 'uses'} its GPUs too" if beside else ""
    yield Finding(
        message=f"{engine} pod requests no GPU and reaches the node's GPUs outside the scheduler ({how}): "
                f"the device plugin does not count them and may give the same GPU to another pod{also}",
        location=where,
        remediation="request the GPUs the engine uses (nvidia.com/gpu: N) so that the scheduler counts them"
                    + ("; a GPU does not need privileged: true" if privileged else ""),
        setting="gpus", related=tuple(placement(other).location for other in beside[:3]), severity="warning",
        model=model.name)


# The device-plugin resource each accelerator's pods request (the names the remediation gives).
REQUEST = {"tpu": "google.com/tpu", "neuron": "aws.amazon.com/neuron", "gaudi": "habana.ai/gaudi"}


def _no_accelerator_request(model, pod, kind: str) -> Iterator[Finding]:
    """A TPU, Neuron or Gaudi build whose Kubernetes pod requests none of its devices."""
    if pod.format == "compose" or _device_resource(pod):
        return
    gpus = model.gpus
    if gpus is not None and (as_int(gpus.value) is None or as_int(gpus.value) > 0):
        return
    engine = {"vllm": "vLLM", "sglang": "SGLang", "tokenspeed": "TokenSpeed"}[model.engine]
    what = f"{gpus.source} {gpus.value} requests none" if gpus is not None else f"no {REQUEST[kind]} is requested"
    yield Finding(
        message=f"{engine} {DEVICE[kind]} image but {what}: the pod gets no {UNIT[kind]} and the engine fails at start-up",
        location=_request_place(model, pod),
        remediation=f"request the {UNIT[kind]}s the engine uses ({REQUEST[kind]}: N)",
        setting="gpus", related=(pod.location,), model=model.name)


def _request_place(model, pod):
    """Where the finding goes: the count written (the line to fix), else where the request belongs (the
    container's ``resources.limits``, ``resources``, else the container), else the image."""
    if model.gpus is not None:
        return model.gpus.location
    if pod.resources_at is not None:
        return pod.resources_at
    return model.image.location if model.image is not None else model.location
