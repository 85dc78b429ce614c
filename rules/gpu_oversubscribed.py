"""Flags engines placed on the same GPU whose memory fractions add up to more than the GPU.

## What it flags
Several engines on one physical GPU whose memory fractions sum above 1.0, or above
`max-total-fraction`, or above a ceiling documented for that GPU in a comment on or above a sharing
engine's device list (`# cfgcheck: ceiling=0.85`, or the free-text forms CFG204 reads, such as
"ceiling 0.85" or "85% ceiling"). Each engine's fraction is the one it runs with, as the capacity
estimate uses it: vLLM's and TokenSpeed's `--gpu-memory-utilization`, SGLang's `--mem-fraction-static`,
as written, else the default of the engine version (vLLM 0.9, 0.92 from 0.20.0; TokenSpeed 0.95, 0.9 for
a vision model), else SGLang's start-up derivation from the GPU's memory and the parallel ranks; the
message says which for each. Engines share a GPU when they name the same physical device: the same
compose `device_ids` in one compose file, or the same `NVIDIA_VISIBLE_DEVICES` (or, for a container
that sees every GPU, `CUDA_VISIBLE_DEVICES`) index, UUID or MIG slice on the same pinned node
(`nodeName` / `kubernetes.io/hostname`). A tensor-parallel engine takes its fraction on each of its
devices. Indices inside a device-plugin allocation are relative to the container and are not compared.

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

from typing import Iterator

from cfgcheck.api import Fact, Finding, MEMORY_FRACTION, Option, RuleContext, ServedModel, as_int

from ._ceilings import from_comments
from ._pod_rules import HIDING, serves

CODE, NAME, SEVERITY = "CFG209", "gpu-oversubscribed", "error"
OPTIONS = {
    "max-total-fraction": Option(float, 1.0,
        "the most the fractions on one GPU may add up to (a ceiling documented for that GPU, for "
        "instance 0.9 to leave room for the CUDA contexts)."),
}
SCOPE = "run"  # engines of every file of the run are placed on the GPUs once


def physical_devices(model: ServedModel) -> tuple[str, list[str], object] | None:
    """(host, physical device ids, the setting that names them) when this engine names the GPUs it
    runs on, else None."""
    pod = model.pod
    if pod is None or pod.node is None:
        return None
    if pod.devices is not None:
        return pod.node, [str(d) for d in pod.devices.value], pod.devices
    nvidia = model.env.get("NVIDIA_VISIBLE_DEVICES")
    counted = model.gpus is not None and as_int(model.gpus.value) is not None  # device-plugin / compose count
    if nvidia is not None and not counted and str(nvidia.value).strip().lower() not in ("all", *HIDING):
        return pod.node, _split(nvidia.value), nvidia
    cuda = model.env.get("CUDA_VISIBLE_DEVICES")
    sees_all = pod.gpu_access is not None and (nvidia is None or str(nvidia.value).strip().lower() == "all")
    if cuda is not None and sees_all and not counted and str(cuda.value).strip().lower() not in HIDING:
        return pod.node, _split(cuda.value), cuda
    return None


def _split(value) -> list[str]:
    return [part.strip() for part in str(value).split(",") if part.strip()]


def check(models: list[ServedModel], ctx: RuleContext) -> Iterator[Finding]:
    placements: dict[tuple[str, str], list[ServedModel]] = {}  # engines by (host, physical device)
    for other in ctx.models:
        placed = physical_devices(other) if serves(other) else None
        for device in placed[1] if placed else []:
            placements.setdefault((placed[0], device), []).append(other)
    for model in models:
        placed = physical_devices(model) if serves(model) else None
        if placed is not None:
            yield from _shared(model, placed, placements, ctx)


def _shared(model: ServedModel, placed: tuple[str, list[str], object], placements: dict,
            ctx: RuleContext) -> Iterator[Finding]:
    for device in placed[1]:
        sharing = placements.get((placed[0], device), [])
        if len(sharing) < 2 or sharing[0] is model:
            continue  # reported once, on each engine after the first
        fractions = [(other, ctx.effective(other, MEMORY_FRACTION)) for other in sharing]
        total = sum(fact.value for _, fact in fractions if isinstance(fact.value, float))
        limit, documented = _limit(float(ctx.options["max-total-fraction"]), sharing)
        if total <= limit:
            continue
        own = next(fact for other, fact in fractions if other is model)
        listed = ", ".join(_part(other, fact) for other, fact in fractions)
        where = "" if documented is None else \
            f" (the ceiling documented at {documented.location.path}:{documented.location.line})"
        yield Finding(
            f"GPU {device} on {placed[0]} is shared by {len(sharing)} engines whose memory fractions sum to "
            f"{total:.2f} ({listed}), above {limit:g}{where}: "
            + ("the last to start fails" if documented is None or total > 1 else "the headroom kept on this GPU is gone"),
            own.location or model.location,
            remediation="lower the fractions so that they sum to at most "
                        f"{limit:g} on this GPU, or give the engines different GPUs",
            setting="gpu_memory_utilization", related=tuple(o.location for o in sharing if o is not model),
            model=model.name, model_identity=model.identity)
        return


def _part(model: ServedModel, fact: Fact) -> str:
    """One engine's share as the message lists it: its name, fraction and where the fraction comes from."""
    if fact.value is None:
        return f"{model.name} {fact.describe()}"
    return f"{model.name} {fact.value:g} ({fact.describe()})"


def _limit(configured: float, sharing: list) -> tuple[float, object]:
    """The most the fractions on a shared GPU may sum to: ``max-total-fraction``, or lower where a
    comment on a sharing engine's device list documents a ceiling (``# cfgcheck: ceiling=0.85``, or
    the free-text forms CFG204 reads: "ceiling 0.85", "85% ceiling"); with the ceiling, when it is one."""
    lowest, documented = configured, None
    for other in sharing:
        setting = physical_devices(other)[2]
        ceiling = from_comments(setting) if getattr(setting, "comments", None) else None
        if ceiling is not None and ceiling.value is not None and ceiling.value < lowest:
            lowest, documented = ceiling.value, ceiling
    return lowest, documented
