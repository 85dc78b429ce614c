"""GPU memory utilization (or SGLang's mem-fraction-static) above a documented ceiling.

## What it flags
A `gpu_memory_utilization` / `--gpu-memory-utilization` or `mem_fraction_static` /
`--mem-fraction-static` value above the ceiling documented for it: a directive
`# cfgcheck: ceiling=0.875 <reason>`, a comment on or directly above the key that states a number as
a ceiling ("HARD CEILING 0.80", "ceiling: 0.85"), or a `ceilings:` entry in `.cfgcheck.yaml`.
In diff mode, a comment that calls the value a ceiling or says "never raise" without a number makes
the base value the ceiling. A ceiling documented on one served model applies to the others that run
on the same GPUs (same pinned node, GPU product or device resource), and the finding says where it
was documented. In diff mode the value is also judged against the ceiling the base documents: a change
that raises the value while it deletes or raises the ceiling comment (or directive) is flagged against
the base's ceiling, and the message says the ceiling was removed or raised in this change.

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

from ._ceilings import MEMORY_SETTINGS, ceiling_for, gpu_pools

CODE, NAME, SEVERITY = "CFG204", "memory-above-ceiling", "error"
OPTIONS: dict = {}
SCOPE = "run"  # a ceiling documented on one served model holds for the others on its GPUs


def check(models: list[ServedModel], ctx: RuleContext):
    pools = gpu_pools(ctx.models)
    base_pools = gpu_pools(ctx.base_models) if ctx.base_models else {}
    for model in models:
        yield from _judged(model, ctx, pools, base_pools)


def _judged(model: ServedModel, ctx: RuleContext, pools: dict, base_pools: dict):
    """Each memory setting of ``model`` against its documented ceiling, and in diff mode against the
    ceiling the base documents (a change that raises the value and removes or raises the ceiling)."""
    before = ctx.base_of(model)
    for name in MEMORY_SETTINGS:
        setting = model.setting(name)
        if setting is None or not isinstance(setting.value, (int, float)):
            continue
        base = before.setting(name) if before is not None else None
        base_value = base.value if base is not None else None
        ceiling = ceiling_for(model, setting, ctx.config, pools)
        limit = ceiling.limit(base_value) if ceiling is not None else None
        if ceiling is not None and limit is not None and setting.value > limit + 1e-9:
            yield _above(model, setting, ceiling, limit, "")
            continue
        was = ceiling_for(before, base, ctx.config, base_pools) if before is not None and base is not None else None
        was_limit = was.limit(base_value) if was is not None else None
        if was is not None and was_limit is not None and setting.value > was_limit + 1e-9:  # the base's, moved here
            moved = "removed it" if limit is None else f"raised it to {limit:g}"
            yield _above(model, setting, was, was_limit, f" at the base (this change {moved})")


def _above(model: ServedModel, setting, ceiling, limit: float, when: str) -> Finding:
    where = f" documented on {ceiling.documented_on}" if ceiling.documented_on else ""
    return Finding(
        f"{setting.name} {setting.value:g} is above the ceiling {limit:g}{where or ' documented beside it'}{when}"
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
