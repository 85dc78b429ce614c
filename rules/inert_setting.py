"""A setting the engine ignores where it is written.

## What it flags
- `parallelSlots` on an LLMKube InferenceService whose runtime is SGLang: the operator does not pass
  it to SGLang (use `sglangConfig.maxRunningRequests`).

Not inert: `gpu_memory_utilization` beside `--kv-cache-memory-bytes` on vLLM. The explicit size skips the
memory profiler and sizes the pool, but vLLM's worker still refuses to start unless that share of the
GPU is free (vllm/v1/worker/utils.py `request_memory`), so a ceiling documented for it still holds (CFG204).

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
