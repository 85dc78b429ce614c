"""A change that restarts the only replica of a GPU workload that cannot roll.

## What it flags
In diff mode, a change to an engine setting, flag, image, model or env of a GPU workload whose
rollout cannot keep serving on its own GPUs:
- one replica that cannot roll over: a Deployment with `strategy: Recreate`, a StatefulSet, a
  LeaderWorkerSet, a Pod, an LLMKube InferenceService (its GPU is released before the new pod starts):
  the change is an outage;
- a Deployment rolling update of whole-GPU pods whose `maxUnavailable` rounds down to 0 (the
  default 25% does for fewer than 4 replicas) while `maxSurge` allows a new pod: the new pod needs its
  GPUs on top of the old pod's, and where no node has them free it stays `Pending` forever while the
  old pod keeps its GPUs (defilantech/LLMKube#192, bayesimpact/bayes-platform#776,
  ai-runway/airunway#400).

Either way the author has to choose: spare capacity (a second replica, or GPUs kept free for the
surge pod) or a planned restart (`Recreate`, or `maxSurge: 0` with `maxUnavailable: 1`). The finding
is a note: the cluster's free GPUs are not in the config.

## Why it matters
A restart is minutes of outage (model load, compile, CUDA-graph capture), so related changes belong in
one pull request; a rollout that waits for GPUs nobody frees never finishes and leaves the old
version running while the change looks applied.

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


from cfgcheck.api import Finding, as_int, request_unit, scaled_pods

from ._change import changed_settings


CODE, NAME, SEVERITY = "CFG401", "outage-on-apply", "note"
OPTIONS: dict = {}
DIFF_ONLY = True
NO_ROLL = {"Recreate", "StatefulSet", "LeaderWorkerSet", "Pod"}


def check(model, ctx):
    if ctx.base is None:
        return
    changed = changed_settings(ctx.base, model)
    if not changed:
        return
    first = model.settings.get(changed[0]) or (model.image if changed[0] == "image" else None)
    location = first.location if first is not None else model.location
    what = ", ".join(changed[:4])
    replicas = model.replicas.value if model.replicas is not None else 1
    strategy = model.strategy.value if model.strategy is not None else None
    if strategy in NO_ROLL and replicas == 1:
        yield Finding(f"changing {what} restarts the only replica ({strategy}): expect minutes of outage",
                      location, remediation="choose: put related changes in this pull request and announce the "
                      "restart, or keep spare capacity (a second replica with a rolling update)", setting="restart")
        return
    deadlock = _surge_without_room(model, replicas, strategy)
    if deadlock is not None:
        gpus, surge = deadlock
        unit = request_unit(model)
        units = f"{gpus * surge} {unit}{'s' if gpus * surge > 1 else ''}"
        yield Finding(f"changing {what} rolls out {surge} new pod{'s' if surge > 1 else ''} needing {units} while the "
                      f"old pods keep theirs (RollingUpdate, maxUnavailable 0): without {units} free on a node the "
                      "rollout stays Pending", location,
                      remediation=f"choose: keep {units} free for the surge pod, or accept a restart (strategy "
                      "Recreate, or maxSurge 0 with maxUnavailable 1)", setting="restart")


def _surge_without_room(model, replicas, strategy) -> tuple[int, int] | None:
    """(GPUs per pod, surge pods) of a whole-GPU RollingUpdate that cannot make room by itself."""
    pod = model.pod
    gpus = as_int(model.gpus.value) if model.gpus is not None else None
    if strategy != "RollingUpdate" or pod is None or pod.format != "kubernetes" or not gpus or gpus < 1:
        return None
    if not isinstance(replicas, int) or replicas < 1:
        return None
    surge = scaled_pods(pod.max_surge, replicas, "25%", round_up=True)
    unavailable = scaled_pods(pod.max_unavailable, replicas, "25%", round_up=False)
    if surge is None or unavailable is None or surge < 1 or unavailable > 0:
        return None
    return gpus, surge
