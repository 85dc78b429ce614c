"""Flags a `CUDA_VISIBLE_DEVICES` value that hides every GPU from a GPU engine.

## What it flags
`CUDA_VISIBLE_DEVICES` set to `all` (not a valid CUDA device list), `none`, `void`, `-1` or an empty
value on a vLLM, SGLang or TokenSpeed engine that runs on a GPU (not a CPU, Neuron, TPU or Gaudi build).

## Why it matters
The CUDA programming guide (CUDA environment variables) documents that only the devices listed before
the first invalid entry of `CUDA_VISIBLE_DEVICES` are visible: with `all` (a value `NVIDIA_VISIBLE_DEVICES`
takes, not this variable) the engine finds no GPU and stops at start-up with `Failed to infer device
type`, however many GPUs the pod requested.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          env:
            - name: CUDA_VISIBLE_DEVICES
              value: all
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import Finding, RuleContext, ServedModel

from ._pod_rules import HIDING, runs_on_cpu, serves

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG507", "hidden-gpus", "error"
OPTIONS: dict = {}


def check(model: ServedModel, ctx: RuleContext) -> Iterator[Finding]:
    cuda = model.env.get("CUDA_VISIBLE_DEVICES")
    if not serves(model) or cuda is None or str(cuda.value).strip().lower() not in HIDING or runs_on_cpu(model):
        return
    value = str(cuda.value).strip()
    why = "is not a valid CUDA device list (indices or UUIDs)" if value.lower() == "all" else "hides every GPU"
    yield Finding(f"CUDA_VISIBLE_DEVICES={value!r} {why}: the engine sees no GPU and fails at start-up",
                  cuda.location, remediation="remove CUDA_VISIBLE_DEVICES (the device plugin or runtime already "
                  "limits the GPUs) or list device indices, e.g. 0,1", setting="CUDA_VISIBLE_DEVICES", model=model.name)
