"""Flags a tensor x pipeline (x data) parallel size that differs from the GPUs the workload requests.

## What it flags
A served model whose world size, `tensor_parallel_size x pipeline_parallel_size` (times
`data_parallel_size` where the engine starts one replica per DP rank in the same process group: vLLM, and
SGLang without `--enable-dp-attention`), differs from the GPUs its pod requests (`nvidia.com/gpu`,
`amd.com/gpu` limits, LLMKube `hardware.gpu.count`; a Slurm job's `#SBATCH --gres=gpu[:type]:N`, `--gpus`,
`--gpus-per-node`, `--gres=gpu` alone being one, also for an engine a script the batch script runs starts),
or the TPU chips (`google.com/tpu`) or
NeuronCores it gets: vLLM on AWS Neuron counts tensor parallelism in NeuronCores, so an
`aws.amazon.com/neuron` request of N devices gives N x the cores of one device (2 on Inferentia2 and
Trainium, 4 logical cores on Trainium2 at the default LNC=2), counted only when the Neuron device is
known from the instance type; `aws.amazon.com/neuroncore` counts cores directly
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/nxd-inference/developer_guides/vllm-user-guide.html).
The devices are counted across the topology the
engine spans: a KubeRay head plus its worker groups (replicas x GPUs), a LeaderWorkerSet group
(leader + `size - 1` workers), a production-stack `raySpec` (head + workers). Layouts split across
pods by `--nnodes N` count N pods of this one; other flags that split a layout across pods
(`--node-rank`, `--headless`, `--data-parallel-size-local`) without a known topology are skipped, and
so is a count or size that is not a literal number (`$TP`, `${GPU_IDS}`).

## Why it matters
Fewer GPUs than the world size fails at start-up (or hangs waiting for ranks that never come): an
error. More leaves expensive GPUs idle, usually because a `--tensor-parallel-size` was forgotten when
the GPU count was raised: a warning, since the engine still starts.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  replicas: 1
  selector:
    matchLabels:
      app: llama-70b
  template:
    metadata:
      labels:
        app: llama-70b
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct"]
          args:
            - --tensor-parallel-size
            - "4"
          resources:
            limits:
              nvidia.com/gpu: 2
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  replicas: 1
  selector:
    matchLabels:
      app: llama-70b
  template:
    metadata:
      labels:
        app: llama-70b
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct"]
          args:
            - --tensor-parallel-size
            - "4"
          resources:
            limits:
              nvidia.com/gpu: 4
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

from cfgcheck.api import Finding, Option, as_int, parallel_units, resolve_gpu

from ._pod_rules import how_to_pass

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE = "CFG208"
NAME = "parallel-size-gpu-mismatch"
SEVERITY = "error"
OPTIONS = {
    "allow-idle-gpus": Option(bool, False,
        "do not flag a world size smaller than the GPUs requested."),
}

_MULTI_NODE_FLAGS = ("--nnodes", "--headless", "--data-parallel-size-local", "--node-rank", "--dist-init-addr", "--data-parallel-address")


def _unknown(setting) -> bool:
    """A count that is not a literal number (a variable, a template): the arithmetic cannot be done."""
    return setting is not None and (setting.value is None or isinstance(setting.value, str) and not setting.value.strip().isdigit())


def _requested_gpus(model, requested: int | None, tokens: list[str]) -> tuple[int, str] | None:
    """The devices the world size spans and how they were counted; None when the layout is split across
    pods in a way this file does not show."""
    if requested is None or requested <= 0:
        return None
    if model.gpus_span == "group":  # the adapter counted every pod (Ray head + workers, an LWS group)
        return requested, ""
    if model.gpus_span == "unknown":
        return None  # a per-pod count of a resource of several pods whose topology is not known here
    nnodes = model.setting("nnodes")
    if nnodes is not None and not _unknown(nnodes) and as_int(nnodes.value, 1) > 1:
        return requested * as_int(nnodes.value, 1), f" ({as_int(nnodes.value, 1)} nodes x {requested})"
    if any(t.split("=", 1)[0] in _MULTI_NODE_FLAGS for t in tokens):
        return None
    return requested, ""


def check(model, ctx) -> Iterator[Finding]:
    options = ctx.options
    gpus = model.gpus
    sizes = [model.setting(n) for n in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")]
    if gpus is None or any(_unknown(s) for s in [gpus, *sizes]):
        return
    tokens = [t.text for t in getattr(model, "argv", []) or []]
    count, unit = parallel_units(model, resolve_gpu(model, ctx.config)[0])
    found = _requested_gpus(model, count, tokens)
    if found is None:
        return
    requested, across = found
    units = f"{unit}s" if requested != 1 else unit
    if (model.engine or "").lower() not in ("vllm", "sglang", "unknown"):
        return
    tp_s = model.setting("tensor_parallel_size")
    pp_s = model.setting("pipeline_parallel_size")
    dp_s = model.setting("data_parallel_size")
    layout = ctx.topology(model)
    tp, pp, dp = layout.tp, layout.pp, layout.dp
    dp_attention = "--enable-dp-attention" in tokens or bool(model.value("enable_dp_attention"))
    world = tp * pp * (1 if (model.engine == "sglang" and dp_attention) else dp)
    parts = [f"tensor {tp}"]
    if pp != 1:
        parts.append(f"pipeline {pp}")
    if dp != 1 and world != tp * pp:
        parts.append(f"data {dp}")
    product = " x ".join(parts)
    at = tp_s or pp_s or dp_s
    location = at.location if at is not None else gpus.location
    if world > requested:
        yield Finding(
            message=f"parallel size {world} ({product}) but {requested} {units} requested{across}: "
                    "the engine cannot start",
            location=location,
            remediation=f"request {world} {unit}s or lower the parallel sizes to fit {requested}",
            setting="tensor_parallel_size",
            related=(gpus.location,),
            model=model.name,
        )
    elif world < requested and not options["allow-idle-gpus"]:
        yield Finding(
            message=f"parallel size {world} ({product}) but {requested} {units} requested{across}: {requested - world} stay idle",
            location=location,
            remediation=f"{how_to_pass(model, 'tensor_parallel_size', requested // (pp * (dp if world != tp * pp else 1)) or 1)}, "
                        f"or request {world} {unit}{'s' if world != 1 else ''}",
            setting="tensor_parallel_size",
            related=(gpus.location,),
            model=model.name,
            severity="warning",  # idle GPUs waste money; the engine still starts
        )
