"""A change that restarts the only replica of a GPU workload that cannot roll.

## What it flags
In diff mode, a change to an engine setting, flag, image, model or env of a served model that runs
one replica and cannot roll over: a Deployment with `strategy: Recreate`, a StatefulSet, or an
LLMKube InferenceService (its single GPU is released before the new pod starts).

## Why it matters
Every config change then means minutes of outage (model load, compile, CUDA-graph capture). Related
changes belong in the same pull request so the service restarts once; announce the window.

## Example
Before:
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  replicas: 1
  parallelSlots: 32
```
After:
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  replicas: 1
  parallelSlots: 16
```

## Use instead
Batch the related changes into this one pull request and announce the restart; or run two replicas
with a rolling update:
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  replicas: 2
  parallelSlots: 16
```

## Options
None.
"""

from cfgcheck.model import Finding

from ._change import changed_settings

CODE, NAME, SEVERITY = "CFG401", "outage-on-apply", "note"
OPTIONS: dict = {}
DIFF_ONLY = True
NO_ROLL = {"Recreate", "StatefulSet", "LeaderWorkerSet", "Pod"}


def check(model, ctx):
    if ctx.base is None:
        return
    replicas = model.replicas.value if model.replicas is not None else 1
    if not isinstance(replicas, int) or replicas != 1:
        return
    strategy = model.strategy.value if model.strategy is not None else None
    if strategy not in NO_ROLL:
        return
    changed = changed_settings(ctx.base, model)
    if not changed:
        return
    first = model.settings.get(changed[0]) or (model.image if changed[0] == "image" else None)
    location = first.location if first is not None else model.location
    kind = "Recreate" if strategy == "Recreate" else strategy
    yield Finding(f"changing {', '.join(changed[:4])} restarts the only replica ({kind}): expect minutes of outage",
                  location, remediation="put related changes in this same pull request and announce the restart",
                  setting="restart")
