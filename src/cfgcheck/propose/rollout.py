"""How applying a proposal reaches the running engines: which served models restart, which of them
go down while they do, and how long a revert takes to recover. The PR body's "restarts?" column, the
outage items of the checklist and the ADR's rollback section read it, so an outage is announced only
where the rollout strategy really stops the old pods first.

Kubernetes semantics (https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#strategy):
``Recreate`` kills every old pod before it creates a new one; ``RollingUpdate`` keeps at least
``replicas - maxUnavailable`` pods available and adds up to ``maxSurge`` new ones, both 25% by default,
``maxSurge`` rounded up and ``maxUnavailable`` rounded down (a surge pod of a pod pinned to one host
must fit beside the old one there, which a single-GPU host cannot); a StatefulSet (and a LeaderWorkerSet's
groups) is replaced one pod at a time; a bare Pod is deleted and created again. Operators that run a
surge rollout of their own (KubeAI, KAITO, OME, llm-d, Dynamo) are recorded by their adapters as
``RollingUpdate``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import ServedModel
from ..settings import as_int, scaled_pods

ONE_BY_ONE = {"StatefulSet", "LeaderWorkerSet"}
ENGINE_START = "one engine start: model load, compile and CUDA-graph capture, minutes{}"


@dataclass
class Rollout:
    """What applying the change does to one served model."""

    restarts: str  # the "restarts?" cell: how the new pods replace the old
    outage: bool  # nothing serves while the new pod starts
    strategy: str | None
    replicas: int | None
    recovery: str  # how long a revert takes to serve again, and whether it is an outage again
    needs_free_gpus: int | None = None  # a surge pod that needs GPUs beside the old pods' (else Pending)
    name: str = ""  # the served model's name and file
    path: str = ""


def _start_time(model: ServedModel) -> str:
    """One engine start, with the time the startup (or liveness) probe allows it when there is one."""
    probes = model.pod.probes if model.pod is not None else {}
    probe = probes.get("startup") or probes.get("liveness")
    return ENGINE_START.format(f" (the {probe.kind} probe allows {probe.budget} s)" if probe is not None else "")


def _rolling(model: ServedModel, replicas: int, start: str) -> Rollout:
    pod = model.pod
    kubernetes = pod is not None and pod.format == "kubernetes"
    surge = scaled_pods(pod.max_surge if kubernetes else None, replicas, "25%", round_up=True)
    down = scaled_pods(pod.max_unavailable if kubernetes else None, replicas, "25%", round_up=False)
    if surge is None or down is None:
        return Rollout("yes, rolling update (its surge and availability are templated)", False, "RollingUpdate",
                       replicas, f"a revert rolls out the same way: {start}")
    if down >= replicas:
        return Rollout(f"yes, outage: RollingUpdate with maxUnavailable {down} of {replicas} replica"
                       f"{'s' if replicas != 1 else ''} stops the old pod first", True, "RollingUpdate", replicas,
                       f"a revert is the same outage again: {start}")
    gpus = as_int(model.gpus.value) if model.gpus is not None else None
    if down == 0 and surge >= 1 and kubernetes and gpus and pod.node:
        # pinned to one host: the new pod can only start beside the old one there; a host whose GPUs the
        # old pod holds (a single-GPU machine) keeps it Pending until someone deletes the old pod
        needs = gpus * surge
        return Rollout(f"yes, outage unless {pod.node} has {needs} more GPU{'s' if needs != 1 else ''} free: the new "
                       "pod must start beside the old one there", True, "RollingUpdate", replicas,
                       f"a revert is the same outage again unless the GPUs are free: {start}", needs)
    if down == 0 and surge >= 1:
        needs = gpus * surge if kubernetes and gpus else None
        text = "yes, rolling: the old pod serves until the new one is Ready"
        if needs:
            text += f" (the new pod needs {needs} free GPU{'s' if needs != 1 else ''} beside it, else it waits Pending)"
        return Rollout(text, False, "RollingUpdate", replicas,
                       f"no outage: a revert rolls out the same way, the current pods serving until the reverted "
                       f"ones are Ready after {start}", needs)
    return Rollout(f"yes, rolling: up to {down} of {replicas} replicas down at a time (less capacity, no outage)",
                   False, "RollingUpdate", replicas, f"no outage: a revert rolls out the same way, each pod back after {start}")


def rollout(model: ServedModel) -> Rollout:
    """How a change to ``model``'s engine settings, image or pod reaches it."""
    found = _by_strategy(model)
    found.name, found.path = model.name, model.path
    return found


def _by_strategy(model: ServedModel) -> Rollout:
    strategy = model.strategy.value if model.strategy is not None else None
    written = as_int(model.replicas.value) if model.replicas is not None else None
    replicas = 1 if model.replicas is None else written  # Kubernetes' default; None: templated
    start = _start_time(model)
    if strategy is None:
        return Rollout("yes (the rollout strategy is not in the configuration)", False, None, replicas,
                       f"a revert restarts it again: {start}; the configuration does not say whether that is an outage")
    if strategy == "RollingUpdate" and replicas is not None:
        return _rolling(model, replicas, start)
    if strategy == "Recreate" or (strategy not in ONE_BY_ONE and strategy != "RollingUpdate") or replicas == 1:
        many = "" if replicas == 1 else " (every replica stops first)"
        single = ", 1 replica" if replicas == 1 else ""
        return Rollout(f"yes, outage: {strategy}{single}{many}", True, strategy, replicas,
                       f"a revert is the same outage again: {start}")
    if strategy in ONE_BY_ONE:
        return Rollout(f"yes, {strategy}: one pod at a time (less capacity, no outage)", False, strategy, replicas,
                       f"no outage: a revert rolls out the same way, each pod back after {start}")
    return Rollout("yes, rolling update (the replica count is templated)", False, strategy, replicas,
                   f"a revert rolls out the same way, each pod back after {start}")
