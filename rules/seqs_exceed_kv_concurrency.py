"""Flags a sequence limit above the number of full-length requests the KV pool can hold.

## What it flags
`max_num_seqs` (vLLM `--max-num-seqs`, SGLang `--max-running-requests`, LLMKube `parallelSlots`) set above
`pool / max_model_len`: the pool-limited concurrency that vLLM logs as
`Maximum concurrency for L tokens per request: X.XXx`. The pool is a documented measurement when there
is one, else the exact `--kv-cache-memory-bytes`, else an estimate.

Not on AWS Neuron with an estimated pool: there the engine allocates the KV cache for the compiled
batch and sequence buckets, so the window always fits.

## Why it matters
The admission window lets more requests run than the pool can keep at full length. When they grow, the
scheduler preempts and recomputes: throughput drops and time-to-first-token explodes, exactly when load
is highest. Cap the context in the same change that raises the window, so that
`max_num_seqs x max_model_len` stays inside the pool, or size the pool for the window.

## Example
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: qwen36-27b-vllm
spec:
  modelRef: qwen36-27b-vllm
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0
  # 32 slots doubled aggregate throughput at concurrency 16.
  # kv pool: 121,302 tokens (GPU KV cache size from the startup log)
  parallelSlots: 32
  vllmConfig:
    maxModelLen: 64000
```

## Use instead
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: qwen36-27b-vllm
spec:
  modelRef: qwen36-27b-vllm
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0
  # 8 slots: all of them fit the measured pool at this context length.
  # kv pool: 121,302 tokens (GPU KV cache size from the startup log)
  parallelSlots: 8
  vllmConfig:
    maxModelLen: 15000
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

from typing import Iterator

from cfgcheck.api import Finding, Option, cap_for, concurrency_at, kv_from_compiled_buckets

CODE = "CFG203"
NAME = "seqs-exceed-kv-concurrency"
SEVERITY = "warning"
OPTIONS = {
    "include-defaults": Option(bool, False, "also flag the engine's default sequence limit when none is set."),
    "estimate-margin": Option(float, 0.10, "for an estimated pool, flag only when the limit exceeds the estimated "
                              "concurrency by more than this fraction."),
}


def check(model, ctx) -> Iterator[Finding]:
    options = ctx.options
    setting = model.setting("max_num_seqs") or model.setting("max_running_requests")
    if setting is not None and any(s is setting for s, _ in getattr(model, "inert", []) or []):
        return
    if setting is None and not options["include-defaults"]:
        return
    est = ctx.capacity(model)
    if est.kv_pool_source == "estimated" and kv_from_compiled_buckets(model):
        return  # the Neuron KV cache holds the compiled batch x sequence buckets by construction
    seqs = setting.value if setting is not None else est.max_num_seqs
    try:
        seqs = int(seqs)
    except (TypeError, ValueError):
        return
    length = est.max_model_len
    if length is None or est.kv_pool_source == "unknown":
        return
    conc = concurrency_at(est, length)
    if conc is None or conc < 1:  # CFG202 reports a pool that cannot hold even one request
        return
    limit = conc * (1 + float(options["estimate-margin"])) if est.kv_pool_source == "estimated" else conc
    if seqs <= limit:
        return
    prefix = {"measured": "pool", "explicit": "explicit pool", "estimated": "estimated pool ~"}[est.kv_pool_source]
    pool = f"{prefix}{'' if prefix.endswith('~') else ' '}{est.kv_pool_tokens:,} tokens"
    label = "max_num_seqs" if setting is not None else "default max_num_seqs"
    cap = cap_for(est, seqs)
    if cap:
        remedy = f"cap max_model_len at {cap:,} in the same change (keeps {seqs} full-length requests inside the pool)"
    else:
        remedy = f"no max_model_len keeps {seqs} requests inside this pool"
    remedy += f", or lower the sequence limit to {max(1, int(conc))}, or grow the pool"
    yield Finding(
        message=f"{label} {seqs} > {conc:.2f} full-length requests ({pool} / max_model_len {length:,})",
        location=setting.location if setting is not None else model.location,
        remediation=remedy,
        setting="max_num_seqs",
        model=model.name,
    )
