"""Flags a vLLM precision that the model's known GPU cannot run: bfloat16 or FP8 below compute capability 8.0.

## What it flags
A vLLM served model whose GPU is known (a `nvidia.com/gpu.product` or GKE accelerator node label,
a `# cfgcheck: gpu=NAME` directive, or `gpu:` in `.cfgcheck.yaml`) and whose compute capability,
from NVIDIA's CUDA GPUs table, is below what vLLM requires for

- an explicit `--dtype bfloat16`: compute capability 8.0 (Ampere); T4 (7.5) and V100 (7.0) have none;
- `--quantization fp8`: compute capability 8.0 (vLLM's `Fp8Config.get_min_capability()`; Ampere
  runs FP8 weights through its weight-only Marlin kernel, Ada/Hopper natively).

`--dtype auto` is not flagged (vLLM casts a bfloat16 checkpoint to float16 on such GPUs and warns);
an unknown GPU, an AMD GPU, and other engines are not judged.

## Why it matters
vLLM refuses to start: "Bfloat16 is only supported on GPUs with compute capability of at least
8.0" (`vllm/platforms/cuda.py`, `check_if_supports_dtype`; earlier `vllm/worker/worker.py`), and
"The quantization method fp8 is not supported for the current GPU. Minimum capability: 80"
(`vllm/config`, quantization verification). The pod crash-loops after the image pull and weight
download, on every replica of the node pool.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen-t4
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: Tesla-T4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--dtype", "bfloat16"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen-t4
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: Tesla-T4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--dtype", "float16"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

from typing import Iterator

from cfgcheck.capacity import resolve_gpu
from cfgcheck.model import Finding

CODE, NAME, SEVERITY = "CFG211", "precision-unsupported-on-gpu", "error"
OPTIONS: dict = {}

# (setting, value, minimum compute capability, what to use instead). Both minimums
# hold in every catalogued vLLM version (0.6.6 onwards): bfloat16 in check_if_supports_dtype
# (vllm/platforms/cuda.py), FP8 in Fp8Config.get_min_capability() == 80
# (vllm/model_executor/layers/quantization/fp8.py).
_REQUIREMENTS = (
    ("dtype", "bfloat16", (8, 0), "--dtype float16 (or a GPU of compute capability 8.0 or newer)"),
    ("quantization", "fp8", (8, 0),
     "an unquantized or GPTQ checkpoint (vLLM runs GPTQ from compute capability 6.0), or a GPU of "
     "compute capability 8.0 or newer"),
)


def _capability(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def check(model, ctx) -> Iterator[Finding]:
    if (model.engine or "").lower() != "vllm":
        return
    gpu, origin = resolve_gpu(model, getattr(ctx, "config", None))
    if gpu is None or gpu.vendor != "nvidia" or not gpu.compute_capability:
        return
    have = _capability(gpu.compute_capability)
    for name, wanted, minimum, instead in _REQUIREMENTS:
        setting = model.setting(name)
        if setting is None or not isinstance(setting.value, str) or setting.value.strip().lower() != wanted:
            continue
        if have >= minimum:
            continue
        need = f"{minimum[0]}.{minimum[1]}"
        yield Finding(f"{setting.source} {setting.value} needs compute capability {need}; {gpu.name} ({origin}) "
                      f"has {gpu.compute_capability}: vLLM refuses to start", setting.location,
                      remediation=f"use {instead}", setting=name, model=model.name)
