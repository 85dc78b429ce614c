"""Flags engines placed on the same GPU whose memory fractions add up to more than the GPU, and
device lists that hide every GPU.

## What it flags
- Several engines on one physical GPU whose memory fractions (vLLM `--gpu-memory-utilization`, its
  default from the engine version when unset; SGLang `--mem-fraction-static` when set) sum above 1.0,
  or above `max-total-fraction`, or above a ceiling documented for that GPU in a comment on or above
  a sharing engine's device list (`# cfgcheck: ceiling=0.85`, or the free-text forms CFG204 reads,
  such as "ceiling 0.85" or "85% ceiling"). Engines share a GPU when they name the same physical device: the same
  compose `device_ids` in one compose file, or the same `NVIDIA_VISIBLE_DEVICES` (or, for a container
  that sees every GPU, `CUDA_VISIBLE_DEVICES`) index, UUID or MIG slice on the same pinned node
  (`nodeName` / `kubernetes.io/hostname`). A tensor-parallel engine takes its fraction on each of its
  devices. Indices inside a device-plugin allocation are relative to the container and are not compared.
- `CUDA_VISIBLE_DEVICES` values that hide every GPU from a GPU engine: `all` (not a valid CUDA
  device list; CUDA stops at the first invalid entry, so no device is visible), `none`, `void`,
  `-1` or an empty value.

## Why it matters
vLLM reserves `gpu_memory_utilization x total memory` on each of its GPUs at start-up and refuses to
start when less is free (`Free memory on device ... is less than desired GPU memory utilization`,
`vllm/v1/worker/utils.py: request_memory`, vLLM 0.26.0); two engines at 0.6 on one GPU cannot both run, and whichever restarts last loses
(vllm-project/vllm#10533, #14376, #19125). The CUDA programming guide (CUDA environment variables)
documents that only the devices listed before the first invalid entry of `CUDA_VISIBLE_DEVICES` are
visible: with `all` the engine finds no GPU and stops with `Failed to infer device type`.

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

from cfgcheck.engines.defaults import default_gpu_memory_utilization
from cfgcheck.model import Finding
from cfgcheck.registry import Option

from ._ceilings import from_comments
from ._pod_rules import as_int, runs_on_cpu, serves

CODE, NAME, SEVERITY = "CFG209", "gpu-oversubscribed", "error"
OPTIONS = {
    "max-total-fraction": Option(float, 1.0,
        "the most the fractions on one GPU may add up to (a ceiling documented for that GPU, for "
        "instance 0.9 to leave room for the CUDA contexts)."),
}

HIDING = ("all", "none", "void", "-1", "")
FRACTIONS = ("gpu_memory_utilization", "mem_fraction_static")


def _fraction(model) -> tuple[float | None, object]:
    """The engine's memory fraction and the setting that gives it (None: the version default)."""
    for name in FRACTIONS:
        setting = model.setting(name)
        if setting is not None:
            try:
                return float(setting.value), setting
            except (TypeError, ValueError):
                return None, setting
    return default_gpu_memory_utilization(model.engine, model.engine_version), None


def physical_devices(model) -> tuple[str, list[str], object] | None:
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


def _placements(ctx) -> dict[tuple[str, str], list]:
    """Engines by (host, physical device), computed once per run."""
    cache = ctx.cache if getattr(ctx, "cache", None) is not None else {}
    if "gpu_placements" not in cache:
        groups: dict[tuple[str, str], list] = {}
        for other in getattr(ctx, "models", None) or []:
            placed = physical_devices(other) if serves(other) else None
            for device in placed[1] if placed else []:
                groups.setdefault((placed[0], device), []).append(other)
        cache["gpu_placements"] = groups
    return cache["gpu_placements"]


def check(model, ctx) -> Iterator[Finding]:
    if not serves(model):
        return
    yield from _hidden_devices(model)
    placed = physical_devices(model)
    if placed is None:
        return
    for device in placed[1]:
        sharing = _placements(ctx).get((placed[0], device), [])
        if len(sharing) < 2 or sharing[0] is model:
            continue  # reported once, on each engine after the first
        parts = [(other, *_fraction(other)) for other in sharing]
        known = [(other, value, setting) for other, value, setting in parts if value is not None]
        total = sum(value for _, value, _ in known)
        limit, documented = _limit(float(ctx.options["max-total-fraction"]), sharing)
        if total <= limit:
            continue
        own_setting = _fraction(model)[1]
        listed = ", ".join(f"{other.name} {value:g}{'' if setting else ' (default)'}"
                           for other, value, setting in known)
        where = "" if documented is None else \
            f" (the ceiling documented at {documented.location.path}:{documented.location.line})"
        yield Finding(
            f"GPU {device} on {placed[0]} is shared by {len(sharing)} engines whose memory fractions sum to "
            f"{total:.2f} ({listed}), above {limit:g}{where}: "
            + ("the last to start fails" if documented is None or total > 1 else "the headroom kept on this GPU is gone"),
            own_setting.location if own_setting is not None else model.location,
            remediation="lower the fractions so that they sum to at most "
                        f"{limit:g} on this GPU, or give the engines different GPUs",
            setting="gpu_memory_utilization", related=tuple(o.location for o in sharing if o is not model),
            model=model.name)
        return


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


def _hidden_devices(model) -> Iterator[Finding]:
    cuda = model.env.get("CUDA_VISIBLE_DEVICES")
    if cuda is None or str(cuda.value).strip().lower() not in HIDING or runs_on_cpu(model):
        return
    value = str(cuda.value).strip()
    why = "is not a valid CUDA device list (indices or UUIDs)" if value.lower() == "all" else "hides every GPU"
    yield Finding(f"CUDA_VISIBLE_DEVICES={value!r} {why}: the engine sees no GPU and fails at start-up",
                  cuda.location, remediation="remove CUDA_VISIBLE_DEVICES (the device plugin or runtime already "
                  "limits the GPUs) or list device indices, e.g. 0,1", setting="CUDA_VISIBLE_DEVICES", model=model.name)
