"""Flags engines placed on the same GPU whose memory fractions add up to more than the GPU.

## What it flags
Several engines on one physical GPU whose memory fractions sum above 1.0, or above
`max-total-fraction`, or above a ceiling documented for that GPU in a comment on or above a sharing
engine's device list (`# cfgcheck: ceiling=0.85`, or the free-text forms CFG204 reads, such as
"ceiling 0.85" or "85% ceiling"). Each engine's fraction is the one it runs with, as the capacity
estimate uses it: vLLM's and TokenSpeed's `--gpu-memory-utilization`, SGLang's `--mem-fraction-static`,
as written, else the default of the engine version (vLLM 0.9, 0.92 from 0.20.0; TokenSpeed 0.95, 0.9 for
a vision model), else SGLang's start-up derivation from the GPU's memory and the parallel ranks (on a GPU not known, the
least it derives on any catalogued GPU: a warning, said to be assumed, when only that bound takes the sum
above the limit); the message says which for each. Engines share a GPU when they use the same physical device of one
machine (a node they are pinned to by `nodeName`, a `kubernetes.io/hostname` selector or a required
node affinity for that one host, a compose file's host,
or the host whose ports one load-balancer upstream lists). An engine uses, among the devices its
container sees, those `CUDA_VISIBLE_DEVICES` (`HIP_VISIBLE_DEVICES` on ROCm) selects, else the first:
as many as its ranks (SGLang from `--base-gpu-id`). What a container sees: compose `device_ids`; a
compose `count: N` (docker gives devices 0 to N-1 whichever other service has them);
`NVIDIA_VISIBLE_DEVICES` without a device-plugin request; every GPU of the machine for `gpus: all`,
the NVIDIA runtime (class) without a device list, a privileged container, AMD's `/dev/kfd`, or a
process started on the host. Compose services of different profiles are alternatives (those of no
profile start with every profile); an engine scaled to 0 or built for CPU takes no GPU memory. Indices inside a device-plugin allocation are relative to the container
and are not compared; but an engine that gets its GPU from the device plugin on a node where others use
GPUs outside the plugin's count may be given one of theirs: a warning, since which GPU the plugin picks
is not in the configuration. Engines that request a GPU resource the device plugin time-slices
(`sharing.timeSlicing.resources[].replicas` in its configuration anywhere in the repository) get
shares of a GPU whose memory is not divided: when the two largest fractions among them sum above the
limit, a warning for engines pinned to one node, a note otherwise (they may land on different GPUs).
Scripts of one folder that each start an engine in the background on the machine itself (no container, no
`CUDA_VISIBLE_DEVICES`), where the machine's GPU is stated (a script that starts the host, a README), start
on its first GPU: fractions that reach 1.0 (or pass `max-total-fraction`) fail, since each engine's CUDA
context is outside its fraction; a warning, as the scripts may not be run together. Fractions that sum above
1.0 were not chosen to run together (a folder of one `serve-<model>.sh` per model, each sized for the whole
GPU): such scripts are read as alternatives.

## Why it matters
vLLM reserves `gpu_memory_utilization x total memory` on each of its GPUs at start-up and refuses to
start when less is free (`Free memory on device ... is less than desired GPU memory utilization`,
`vllm/v1/worker/utils.py: request_memory`, vLLM 0.26.0); two engines at 0.6 on one GPU cannot both run, and whichever restarts last loses
(vllm-project/vllm#10533, #14376, #19125). SGLang sizes its static pool as `mem_fraction_static x total
memory` the same way (`sglang/srt/model_executor/model_runner.py`, 0.5.23), and its default leaves only
the headroom its own process needs.

## Example
```yaml
services:
  chat:
    image: vllm/vllm-openai:v0.26.0
    command: ["--model", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.6"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
  embed:
    image: vllm/vllm-openai:v0.26.0
    command: ["--model", "Qwen/Qwen3-Embedding-0.6B", "--gpu-memory-utilization", "0.5"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
```

## Use instead
```yaml
services:
  chat:
    image: vllm/vllm-openai:v0.26.0
    command: ["--model", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.6"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
  embed:
    image: vllm/vllm-openai:v0.26.0
    command: ["--model", "Qwen/Qwen3-Embedding-0.6B", "--gpu-memory-utilization", "0.3"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

import posixpath

from cfgcheck.api import (Fact, Finding, MEMORY_FRACTION, Option, Placement, RuleContext, SELECTORS, ServedModel,
                          placement, resolve_gpu)

from ._ceilings import from_comments
from ._pod_rules import runs_on_cpu, serves

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG209", "gpu-oversubscribed", "error"
OPTIONS = {
    "max-total-fraction": Option(float, 1.0,
        "the most the fractions on one GPU may add up to (a ceiling documented for that GPU, for "
        "instance 0.9 to leave room for the CUDA contexts)."),
}
SCOPE = "run"  # engines of every file of the run are placed on the GPUs once


def check(models: list[ServedModel], ctx: RuleContext) -> Iterator[Finding]:
    on_gpu: dict[int, bool] = {}
    for model in (*ctx.models, *models):  # asked of each model once (a lint's models are all in ctx.models)
        if id(model) not in on_gpu:
            on_gpu[id(model)] = _on_gpu(model)
    on_device: dict[tuple[str, str], list[ServedModel]] = {}  # engines by (host, physical device)
    for other in ctx.models:
        placed = placement(other) if on_gpu[id(other)] else None
        for device in placed.devices or () if placed is not None else ():
            on_device.setdefault((placed.host, device), []).append(other)
    sliced: dict[tuple, list[ServedModel]] = {}  # engines on time-sliced GPUs, by configuration and node
    for other in ctx.models:
        if on_gpu[id(other)] and other.pod is not None and other.pod.shared_gpus is not None:
            sliced.setdefault((other.pod.shared_gpus[1], other.pod.node), []).append(other)
    for model in models:
        placed = placement(model) if on_gpu[id(model)] else None
        if placed is not None and placed.devices is not None:
            yield from _shared(model, placed, on_device, ctx)
        elif placed is not None:
            yield from _beside_unscheduled(model, placed, on_device, ctx)
        if on_gpu[id(model)] and model.pod is not None and model.pod.shared_gpus is not None:
            yield from _time_sliced(model, sliced[model.pod.shared_gpus[1], model.pod.node], ctx)
    beside: dict[str, list[ServedModel]] = {}  # engines scripts start in the background on their machine, by folder
    for other in ctx.models:
        if on_gpu[id(other)] and _in_background_on_host(other):
            beside.setdefault(posixpath.dirname(other.path), []).append(other)
    for model in models:
        if on_gpu[id(model)] and _in_background_on_host(model):
            yield from _scripts_beside(model, beside[posixpath.dirname(model.path)], ctx)


def _together(model: ServedModel, engines: list[ServedModel]) -> list[ServedModel]:
    """``engines`` that may run at the same time as ``model`` and as each other (compose profiles), in order."""
    kept: list[ServedModel] = []
    for other in engines:
        placed = placement(other)
        if other is model or placement(model).runs_with(placed) and all(placement(k).runs_with(placed) for k in kept):
            kept.append(other)
    return kept


def _on_gpu(model: ServedModel) -> bool:
    return serves(model) and not runs_on_cpu(model)


def _shared(model: ServedModel, placed: Placement, on_device: dict, ctx: RuleContext) -> Iterator[Finding]:
    for device in placed.devices or ():
        sharing = _together(model, on_device.get((placed.host, device), []))
        if len(sharing) < 2 or sharing[0] is model:
            continue  # reported once, on each engine after the first
        fractions = [(other, ctx.effective(other, MEMORY_FRACTION)) for other in sharing]
        total = _sum(fractions)
        limit, documented = _limit(float(ctx.options["max-total-fraction"]), sharing)
        if total <= limit:
            continue
        own = next(fact for other, fact in fractions if other is model)
        listed = ", ".join(_part(other, fact) for other, fact in fractions)
        where = "" if documented is None else \
            f" (the ceiling documented at {documented.location.path}:{documented.location.line})"
        bounded = _bounded(fractions)
        assumed = bounded and _sum(fractions, bounds=False) <= limit  # the bound alone takes it above the limit
        yield Finding(
            f"GPU {device} on {placed.host} is shared by {len(sharing)} engines whose memory fractions sum to "
            f"{'at least ' if bounded else ''}{total:.2f} ({listed}), above {limit:g}{where}: "
            + ("the last to start fails" if documented is None or total > 1 else "the headroom kept on this GPU is gone")
            + _hows(sharing)
            + (" (assumed: the GPU is not known, and a default derived from its memory is counted at the least "
               "it is on any catalogued GPU)" if assumed else ""),
            own.location or model.location,
            remediation="lower the fractions so that they sum to at most "
                        f"{limit:g} on this GPU, or give the engines different GPUs",
            setting="gpu_memory_utilization", related=_related(model, sharing),
            severity="warning" if assumed else "", model=model.name, model_identity=model.identity)
        return


def _beside_unscheduled(model: ServedModel, placed: Placement, on_device: dict,
                        ctx: RuleContext) -> Iterator[Finding]:
    """An engine whose GPUs a device plugin chooses, on a node where other engines use GPUs outside the
    plugin's count: the plugin may hand it one of those (it counts them as free)."""
    for (host, device), users in sorted(on_device.items(), key=lambda item: item[0]):
        if host != placed.host:
            continue
        fractions = [(other, ctx.effective(other, MEMORY_FRACTION)) for other in [model, *users]]
        total = _sum(fractions)
        limit, _ = _limit(float(ctx.options["max-total-fraction"]), users)
        if total <= limit:
            continue
        outside = ", ".join(f"{other.name} ({placement(other).how})" for other in users)
        yield Finding(
            f"{model.name} gets its GPU from the device plugin ({placed.how}) on {host}, where {outside} "
            f"use{'s' if len(users) == 1 else ''} GPU {device} outside the plugin's count: the plugin may give "
            f"{model.name} that GPU, and the memory fractions then sum to {total:.2f} "
            f"({', '.join(_part(other, fact) for other, fact in fractions)}), above {limit:g} "
            "(assumed: which GPU the plugin picks is not in the configuration)",
            fractions[0][1].location or placed.location,
            remediation="request the GPUs of every engine on this node from the device plugin "
                        "(nvidia.com/gpu), or pin this engine to another node",
            setting="gpu_memory_utilization", related=_related(model, users), severity="warning",
            model=model.name, model_identity=model.identity)
        return


def _time_sliced(model: ServedModel, sharing: list[ServedModel], ctx: RuleContext) -> Iterator[Finding]:
    """Engines that request a time-sliced GPU resource: the device plugin may hand them shares of one GPU,
    each engine then reserving its fraction of the whole GPU's memory."""
    if len(sharing) < 2 or sharing[0] is model:
        return  # reported once, on each engine after the first
    fractions = [(other, ctx.effective(other, MEMORY_FRACTION)) for other in sharing]
    own = next(fact for other, fact in fractions if other is model)
    others = [(fact.value, other, fact) for other, fact in fractions if other is not model and isinstance(fact.value, float)]
    if not isinstance(own.value, float) or not others:
        return
    largest, beside, fact = max(others, key=lambda item: item[0])
    total, limit = own.value + largest, float(ctx.options["max-total-fraction"])
    if total <= limit:
        return
    how, where = model.pod.shared_gpus
    node = model.pod.node
    yield Finding(
        f"{how} ({where.path}:{where.line}) makes each request a share of one GPU whose memory is not divided: "
        f"{_part(model, own)} and {_part(beside, fact)} ask for {total:.2f} of one GPU, above {limit:g}, and the "
        f"last to start fails when the device plugin gives them the same GPU"
        + (f" on {node}" if node else "") + " (assumed: which GPU the plugin picks is not in the configuration)",
        own.location or model.location,
        remediation="lower the fractions so that engines that may share a GPU sum to at most "
                    f"{limit:g}, or request whole GPUs (a resource that is not time-sliced)",
        setting="gpu_memory_utilization", related=(where, beside.location),
        severity="warning" if node else "note", model=model.name, model_identity=model.identity)


def _in_background_on_host(model: ServedModel) -> bool:
    """An engine a script starts on its machine in the background (no container, no machine named, no
    ``CUDA_VISIBLE_DEVICES``): it takes the first GPUs, and the script goes on."""
    return model.kind == "shell script" and model.in_background and model.pod is None and model.host is None \
        and model.image is None and not any(name in model.env for name in SELECTORS)


def _scripts_beside(model: ServedModel, engines: list[ServedModel], ctx: RuleContext) -> Iterator[Finding]:
    """Scripts of one folder that each start an engine in the background on a machine whose GPU is stated: run
    on that machine, they start on its first GPU. The sum may not reach 1.0: each engine's CUDA context is outside
    its fraction (vLLM's budget is measured from the snapshot its worker takes once the context exists), so the
    second start finds less free than it asks."""
    scripts = list(dict.fromkeys(other.path for other in engines))
    if len(scripts) < 2 or model.path == scripts[0] or resolve_gpu(model, ctx.config)[0] is None:
        return  # reported once, on the engines of each script after the first
    sharing = [next(other for other in engines if other.path == path) for path in scripts]
    sharing[scripts.index(model.path)] = model
    fractions = [(other, ctx.effective(other, MEMORY_FRACTION)) for other in sharing]
    total = _sum(fractions, bounds=False)
    limit = float(ctx.options["max-total-fraction"])
    if total < min(limit, 1.0) or total <= limit < 1.0 or total > 1.0 + 1e-9:
        return  # within the GPU, or more than all of it: alternatives, not engines meant to share it
    gpu, origin = resolve_gpu(model, ctx.config)
    own = next(fact for other, fact in fractions if other is model)
    yield Finding(
        f"{len(scripts)} scripts of {posixpath.dirname(model.path) or 'the top folder'} start engines in the background "
        f"on the machine's first GPU ({gpu.name}: {origin}) with memory fractions that sum to {total:.2f} "
        f"({', '.join(_part(other, fact) for other, fact in fractions)}): if they run at once, the last to start "
        "fails (each engine's CUDA context is outside its fraction); assumed: the scripts run on one machine together",
        own.location or model.location,
        remediation="give each script its own GPU (CUDA_VISIBLE_DEVICES), or lower the fractions so that they and "
                    "the CUDA contexts fit on one GPU",
        setting="gpu_memory_utilization", related=tuple(other.location for other in sharing if other is not model),
        severity="warning", model=model.name, model_identity=model.identity)


def _sum(fractions: list[tuple[ServedModel, Fact]], bounds: bool = True) -> float:
    """The fractions' sum; one not known counted at its bound on every catalogued GPU (SGLang's default
    derived from a GPU's memory) with ``bounds``, else not at all."""
    return sum(_least(fact, bounds) for _, fact in fractions)


def _least(fact: Fact, bounds: bool) -> float:
    if isinstance(fact.value, float):
        return fact.value
    return fact.at_least if bounds and isinstance(fact.at_least, float) else 0.0


def _bounded(fractions: list[tuple[ServedModel, Fact]]) -> bool:
    """Whether the sum counts a fraction at its bound rather than its value."""
    return any(not isinstance(fact.value, float) and isinstance(fact.at_least, float) for _, fact in fractions)


def _hows(sharing: list[ServedModel]) -> str:
    """How each engine comes to this GPU, when one of them reaches it other than by naming it."""
    hows = [placement(other).how for other in sharing]
    named = all(how.startswith(("device_ids", "NVIDIA_VISIBLE_DEVICES")) and "," not in how[len("device_ids"):]
                for how in hows)
    return "" if named else " (" + "; ".join(f"{other.name}: {how}" for other, how in zip(sharing, hows)) + ")"


def _related(model: ServedModel, others: list[ServedModel]) -> tuple:
    return tuple(dict.fromkeys(placement(other).location for other in others if other is not model))


def _part(model: ServedModel, fact: Fact) -> str:
    """One engine's share as the message lists it: its name, fraction and where the fraction comes from."""
    if fact.value is None and isinstance(fact.at_least, float):
        return f"{model.name} at least {fact.at_least:g} ({fact.who}'s default on any catalogued GPU)"
    if fact.value is None:
        return f"{model.name} {fact.describe()}"
    return f"{model.name} {fact.value:g} ({fact.describe()})"


def _limit(configured: float, sharing: list) -> tuple[float, object]:
    """The most the fractions on a shared GPU may sum to: ``max-total-fraction``, or lower where a
    comment on a sharing engine's device list documents a ceiling (``# cfgcheck: ceiling=0.85``, or
    the free-text forms CFG204 reads: "ceiling 0.85", "85% ceiling"); with the ceiling, when it is one."""
    lowest, documented = configured, None
    for other in sharing:
        setting = placement(other).setting
        ceiling = from_comments(setting) if getattr(setting, "comments", None) else None
        if ceiling is not None and ceiling.value is not None and ceiling.value < lowest:
            lowest, documented = ceiling.value, ceiling
    return lowest, documented
