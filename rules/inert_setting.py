"""A setting the engine ignores where it is written.

## What it flags
- `parallelSlots` on an LLMKube InferenceService whose runtime is SGLang: the operator does not pass
  it to SGLang (use `sglangConfig.maxRunningRequests`).
- `gpu_memory_utilization` beside `--kv-cache-memory-bytes` on vLLM: an explicit KV size skips the
  memory profiler and does not respect the utilization.

## Why it matters
An inert setting looks like a control but changes nothing. Reviewers reason about it, tune it, and
write it into ADRs, while the engine runs with something else.

## Example
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: sglang
  parallelSlots: 16
```

## Use instead
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: sglang
  sglangConfig:
    # 16 running requests fit the measured pool at context 32K.
    maxRunningRequests: 16
```

## Options
None.
"""

from cfgcheck.api import Finding

CODE, NAME, SEVERITY = "CFG107", "inert-setting", "warning"
OPTIONS: dict = {}


def check(model, ctx):
    for setting, why in model.inert:
        yield Finding(f"{setting.source} has no effect: {why}", setting.location,
                      remediation="use the runtime's own setting, or remove it", setting=setting.source)
    utilization, explicit = model.setting("gpu_memory_utilization"), model.setting("kv_cache_memory_bytes")
    if model.engine == "vllm" and utilization is not None and explicit is not None:
        yield Finding(f"{utilization.source} has no effect beside {explicit.source}: the KV size is explicit",
                      utilization.location,
                      remediation="remove one of them; an explicit KV size skips memory profiling",
                      setting="gpu_memory_utilization", related=(explicit.location,))
