"""Flags tensor or pipeline parallelism inside one pod without a RAM-backed `/dev/shm`.

## What it flags
A vLLM, SGLang or TokenSpeed engine whose tensor x pipeline parallel ranks inside one pod (or compose
service) are more than one, while the pod gives the container no `/dev/shm` of its own: no volume
mounted at `/dev/shm` (an `emptyDir` with `medium: Memory`) and no `hostIPC: true`; in docker-compose
neither `shm_size`, `ipc: host` nor a `tmpfs`/volume at `/dev/shm`.

Operators that build the pod are taken at their word where their source shows a `/dev/shm`:
KServe's `LLMInferenceService` (every `kserve-config-llm-*` template mounts a `dshm` Memory emptyDir,
charts/kserve-runtime-configs/files/llmisvcconfigs/resources.yaml), and the production-stack chart
when `vllmConfig.tensorParallelSize` is set (helm/templates/deployment-vllm-multi.yaml mounts its
`shm` emptyDir only then, so parallelism passed in `extraArgs` alone gets none). LLMKube's
controller adds no `/dev/shm` (none in internal/controller), so only `extraVolumes` +
`extraVolumeMounts` count there. A KServe `InferenceService` whose pod comes from a ServingRuntime is
not judged here (the runtime's own pod is: KServe's huggingfaceserver runtime has `devShm.enabled:
false` by default). Ascend, Gaudi, Neuron and TPU builds (collectives other than NCCL/RCCL) are
skipped (and Intel XPU builds, oneCCL); the CPU backend is not (its tensor-parallel all-reduce goes through shared memory too).

An engine whose ranks spread over the pods of a Ray cluster or a LeaderWorkerSet group is judged pod by
pod: the ranks one pod runs (its own GPUs) share that pod's `/dev/shm`, and ranks in different pods talk
over the network. A Ray head that requests no GPU runs no rank; workers of one GPU each need none.

## Why it matters
The ranks exchange tensors through shared memory (NCCL's SHM transport and vLLM's shared-memory
message queue and custom all-reduce buffers), and a container gets only the runtime's 64 MiB
`/dev/shm`. The engine then dies at start-up with `NCCL error ... unhandled system error` /
`Error while creating shared memory segment /dev/shm/nccl-... (size N)`, or hangs (vllm-project/vllm#1710,
sgl-project/sgl-project.github.io#5, MiniMax-AI/MiniMax-01#42). vLLM's Docker guide requires
`--ipc=host` or `--shm-size` for the same reason.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct"]
          args: ["--tensor-parallel-size", "4"]
          resources:
            limits:
              nvidia.com/gpu: 4
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct"]
          args: ["--tensor-parallel-size", "4"]
          resources:
            limits:
              nvidia.com/gpu: 4
          volumeMounts:
            - name: dshm
              mountPath: /dev/shm
      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
            sizeLimit: 16Gi
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import Finding

from ._pod_rules import local_ranks, serves

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG501", "missing-shm", "error"
OPTIONS: dict = {}

REMEDIATION = {
    "compose": "add `shm_size: 16gb` (or `ipc: host`) to the service",
    "production-stack": "set vllmConfig.tensorParallelSize (the chart then mounts a Memory emptyDir at /dev/shm, "
                        "sized by shmSize) instead of passing the parallel size in extraArgs",
    "llmkube": "add an emptyDir {medium: Memory} to spec.extraVolumes and mount it at /dev/shm in "
               "spec.extraVolumeMounts",
}
# Builds whose collectives are not NCCL/RCCL (Ascend and Gaudi use HCCL, Intel XPU oneCCL, Neuron and TPU their own
# runtimes): what they need from /dev/shm is not established here.
NON_NCCL_IMAGES = ("ascend", "neuron", "tpu", "hpu", "gaudi", "xpu")
KUBERNETES_REMEDIATION = "mount an emptyDir {medium: Memory, sizeLimit: 16Gi} at /dev/shm (or set hostIPC: true)"


def check(model, ctx) -> Iterator[Finding]:
    pod = model.pod
    if pod is None or not serves(model):
        return
    image = str(model.image.value).lower() if model.image is not None else ""
    if any(marker in image for marker in NON_NCCL_IMAGES):
        return
    ranks, at = local_ranks(model)
    if at is None:
        return
    if ranks > 1 and pod.shm is None:
        where = "service" if pod.format == "compose" else "pod"
        yield Finding(
            message=f"{ranks} parallel ranks ({at.source} {at.value}) in one {where} without a RAM-backed /dev/shm: "
                    f"the container gets the runtime's 64 MiB and NCCL fails at start-up",
            location=at.location, remediation=REMEDIATION.get(pod.format, KUBERNETES_REMEDIATION),
            setting="shm", related=(pod.location,), model=model.name)
    layout = ctx.topology(model)
    for other in model.group_pods:  # the group's other pods: their ranks share their own /dev/shm
        ranks = layout.ranks_in(other.gpus)
        if ranks > 1 and other.shm is None:
            yield Finding(
                message=f"{ranks} parallel ranks ({at.source} {at.value}) in each pod of {other.name} without a "
                        f"RAM-backed /dev/shm: the container gets the runtime's 64 MiB and NCCL fails at start-up",
                location=at.location, remediation=f"{KUBERNETES_REMEDIATION} in the pod template of {other.name}",
                setting=f"shm:{other.name}", related=(other.location,), model=model.name)

