"""GPU memory utilization (or SGLang's mem-fraction-static) above a documented ceiling.

## What it flags
A `gpu_memory_utilization` / `--gpu-memory-utilization` or `mem_fraction_static` /
`--mem-fraction-static` value above the ceiling documented for it: a directive
`# cfgcheck: ceiling=0.875 <reason>`, a comment on or directly above the key that states a number as
a ceiling ("HARD CEILING 0.80", "ceiling: 0.85"), or a `ceilings:` entry in `.cfgcheck.yaml`.
In diff mode, a comment that calls the value a ceiling or says "never raise" without a number makes
the base value the ceiling. A ceiling documented on one served model applies to the others that run
on the same GPUs (same pinned node, GPU product or device resource), and the finding says where it
was documented.

## Why it matters
Operators write limits into comments so that nobody "optimizes" them away: the GPU is shared with
another workload (transcoding, a second model), or a higher value was measured to run out of memory.
Raising past it fails someone else's workload or the engine itself, and review rarely catches it
because the number looks like an ordinary tuning change.

## Example
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  vllmConfig:
    # HARD CEILING 0.875: the GPU is shared with Jellyfin transcoding.
    gpuMemoryUtilization: 0.95
```

## Use instead
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  vllmConfig:
    # HARD CEILING 0.875: the GPU is shared with Jellyfin transcoding.
    gpuMemoryUtilization: 0.875
```

## Options
None. Ceilings that are not written next to the key go in `.cfgcheck.yaml` under `ceilings:`.
"""

from cfgcheck.api import Finding, RuleContext, ServedModel

from ._ceilings import documented, gpu_pools

CODE, NAME, SEVERITY = "CFG204", "memory-above-ceiling", "error"
OPTIONS: dict = {}
SCOPE = "run"  # a ceiling documented on one served model holds for the others on its GPUs


def check(models: list[ServedModel], ctx: RuleContext):
    pools = gpu_pools(ctx.models)
    for model in models:
        yield from _above(model, ctx, pools)


def _above(model: ServedModel, ctx: RuleContext, pools: dict):
    for setting, ceiling in documented(model, ctx.config, pools):
        before = ctx.base_of(model)
        base = before.setting(setting.name) if before is not None else None
        limit = ceiling.limit(base.value if base is not None else None)
        if limit is None or not isinstance(setting.value, (int, float)) or setting.value <= limit + 1e-9:
            continue
        where = f" documented on {ceiling.documented_on}" if ceiling.documented_on else ""
        yield Finding(
            f"{setting.name} {setting.value:g} is above the ceiling {limit:g}{where or ' documented beside it'}"
            f"{_start_up_check(model, setting)}",
            setting.location,
            remediation=f"keep {setting.source} at or below {limit:g}, or change the documented ceiling "
                        f"with its reason (\"{ceiling.text[:80]}\")",
            setting=setting.name,
            related=(ceiling.location,),
            model=model.name, model_identity=model.identity,
        )


def _start_up_check(model: ServedModel, setting) -> str:
    """Why the ceiling still holds beside an explicit KV size: vLLM sizes the pool from the bytes, but its
    worker still demands ``gpu_memory_utilization`` x the GPU's memory free before it starts
    (vllm/v1/worker/gpu_worker.py init_device -> vllm/v1/worker/utils.py request_memory)."""
    if model.engine == "vllm" and setting.name == "gpu_memory_utilization" \
            and model.setting("kv_cache_memory_bytes") is not None:
        return ": beside an explicit KV size it no longer sizes the pool, but vLLM still refuses to start " \
               "unless that share of the GPU is free"
    return ""
