"""Flags host memory the engine is told to use that is above the container's memory limit.

## What it flags
The host (CPU) memory an engine's own settings reserve, added up and compared with the container's
memory limit (`resources.limits.memory`, compose `deploy.resources.limits.memory` / `mem_limit`,
production-stack `limitMemory`):
- vLLM `--cpu-offload-gb` (GiB per GPU, so times the tensor x pipeline ranks in the pod);
- vLLM `--swap-space` (GiB per GPU), when set and the engine version still has the flag;
- vLLM `--kv-offloading-size` (GiB, the total over the ranks);
- SGLang `--cpu-offload-gb` and `--hicache-size` (GB of host KV pool);
- LMCache `LMCACHE_MAX_LOCAL_CPU_SIZE` (GB, unless `LMCACHE_LOCAL_CPU` is false), including the one
  the production-stack chart sets from `lmcacheConfig.cpuOffloadingBufferSize`.
Only what is written counts (no defaults), each at its lowest reading, so the sum is a lower bound of
what the engine takes; the engine's own process memory comes on top.

## Why it matters
These buffers are pinned host memory allocated at start-up. Above the cgroup limit the kernel kills
the container (`OOMKilled`, exit 137) while it loads, and it restarts into the same kill: vLLM's
swap space is pinned with `torch.zeros` at start-up without a check of free memory
(ai-dynamo/dynamo#356); `--cpu-offload-gb 12` in a 12 GiB container was OOM-killed
(vllm-project/vllm#9339), and the offload takes about 1.9x what it asks for (vllm-project/vllm#56410).

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct",
                    "--tensor-parallel-size", "2", "--cpu-offload-gb", "40"]
          resources:
            limits:
              nvidia.com/gpu: 2
              memory: 64Gi
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct",
                    "--tensor-parallel-size", "2", "--cpu-offload-gb", "40"]
          resources:
            limits:
              nvidia.com/gpu: 2
              memory: 128Gi
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import Finding, catalog_for, float_value

from ._pod_rules import local_ranks, serves

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG506", "host-memory-overcommit", "error"
OPTIONS: dict = {}

GiB, GB = 1024**3, 10**9
# (setting, engine, unit bytes, multiplied by the ranks in the pod)
ENGINE_BUFFERS = (
    ("cpu_offload_gb", "vllm", GiB, True),  # vllm/config: "The space in GiB to offload to CPU, per GPU"
    ("swap_space", "vllm", GiB, True),  # "CPU swap space size (GiB) per GPU" (removed in 0.26)
    ("kv_offloading_size", "vllm", GiB, False),  # "the total buffer size summed across all TP ranks"
    ("cpu_offload_gb", "sglang", GB, False),  # "How many GBs of RAM to reserve for CPU offloading"
    ("hicache_size", "sglang", GB, False),  # "The size of host KV cache memory pool in gigabytes"
)
FLAGS = {"swap_space": "--swap-space"}


def host_buffers(model) -> list[tuple[str, int, object]]:
    """(description, bytes, setting) of every host buffer the engine's settings reserve."""
    ranks = local_ranks(model)[0]
    found = []
    for name, engine, unit, per_rank in ENGINE_BUFFERS:
        setting = model.setting(name)
        amount = float_value(setting.value) if setting is not None and model.engine == engine else None
        if not amount or amount <= 0:
            continue
        if name in FLAGS:
            catalog = catalog_for(model.engine, model.engine_version)
            if catalog is None or catalog.option(FLAGS[name]) is None:
                continue  # a version without the flag: CFG104 reports it, nothing is reserved
        times = ranks if per_rank and ranks > 1 else 1
        label = f"{setting.source} {setting.value}" + (f" x {times} ranks" if times > 1 else "")
        found.append((label, int(amount * unit * times), setting))
    lmcache = model.env.get("LMCACHE_MAX_LOCAL_CPU_SIZE")
    local = model.env.get("LMCACHE_LOCAL_CPU")
    amount = float_value(lmcache.value) if lmcache is not None else None
    if amount and amount > 0 and (local is None or str(local.value).lower() not in ("false", "0")):
        found.append((f"LMCACHE_MAX_LOCAL_CPU_SIZE {lmcache.value} GB", int(amount * GB), lmcache))
    return found


def check(model, ctx) -> Iterator[Finding]:
    pod = model.pod
    if pod is None or pod.memory_limit is None or not serves(model):
        return
    buffers = host_buffers(model)
    total = sum(size for _, size, _ in buffers)
    if not buffers or total <= pod.memory_limit:
        return
    limit = pod.limits.get("memory")
    parts = " + ".join(label for label, _, _ in buffers)
    largest = max(buffers, key=lambda item: item[1])[2]
    yield Finding(
        f"the engine reserves {total / GiB:.1f} GiB of host memory ({parts}) but the container's memory limit "
        f"is {limit.value} ({pod.memory_limit / GiB:.1f} GiB): it is OOM-killed while it starts",
        largest.location,
        remediation=f"raise the memory limit above {total / GiB:.0f} GiB plus the engine's own memory, "
                    "or reserve less host memory",
        setting="host_memory", related=(limit.location,), model=model.name)
