"""Flags a max-model-len that one request cannot fit into the KV pool: vLLM refuses to start, SGLang longer requests.

## What it flags
A served model whose `max_model_len` (vLLM `--max-model-len`, SGLang `--context-length`, LLMKube
`vllmConfig.maxModelLen`) needs more KV cache for a single full-length request than the pool holds.
The pool is a documented measurement when there is one (`# cfgcheck: kv-pool-tokens=N`, or a comment
quoting the startup log's `GPU KV cache size: N tokens`), else the exact `--kv-cache-memory-bytes`,
else an estimate from the GPU memory, the utilization and the model's weights. Estimated pools are
a range (the measured error of the model's class in bench/accuracy.py, at least option `estimate-margin`):
the finding is an error only when the length does not fit even at the range's top, and a warning saying
it may not fit when it is within the range.

On a TPU an estimated pool is a warning: the estimate's runtime overheads are measured on CUDA GPUs.
On a Gaudi card the pool is not estimated (vLLM runs there through the vllm-gaudi plugin, whose
warm-up memory reserve cfgcheck does not model): only a documented or explicit pool is checked. On AWS Neuron an estimated pool is not checked: the KV cache is allocated for the
compiled batch and sequence buckets, not carved from a memory fraction
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/nxd-inference/developer_guides/vllm-user-guide.html).
An estimated or explicit pool is also a warning, saying so, when the model is known only by its name (a
local path, or the same name under another organisation).

When the workload names no GPU (a bare `nvidia.com/gpu: 1`), no GPU is guessed: the length is flagged
only when not even the largest GPU of the bundled table from the workload's vendor (the device resource,
else a ROCm image) holds the weights shard and one full-length request at the configured memory
fraction, e.g. a 405B bf16 model on one GPU. It is an error when the weights' size is a fact (the model
matched by its id, its dtype or checkpoint size stated) and a warning that says what was assumed
otherwise. `cfgcheck capacity` prints what one GPU needs and which bundled GPUs hold it. On a GPU that is only
assumed (read from a comment or a README) the finding is a warning, unless not even that largest GPU holds
the request: then it is an error whatever the GPU is.

## Why it matters
vLLM checks at start-up that one request of `max_model_len` tokens fits the pool and stops with
`To serve at least one request with the model's max seq len ... KV cache is needed, which is larger
than the available KV cache memory`. The pod crash-loops; nothing is served. SGLang starts and caps
each request at the pool instead (python/sglang/srt/managers/tp_worker.py: `max_req_len =
min(context_len - 1, max_total_num_tokens - 1)`), refusing longer prompts: a warning that says so (an
error only when not even a short request fits: it then stops with `Memory pool size is too small`).

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
  # kv pool: 48,000 tokens (GPU KV cache size from the startup log)
  parallelSlots: 1
  vllmConfig:
    maxModelLen: 180000
    gpuMemoryUtilization: 0.875
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
  # kv pool: 48,000 tokens (GPU KV cache size from the startup log)
  parallelSlots: 1
  vllmConfig:
    # one full-length request fits the measured pool
    maxModelLen: 32768
    gpuMemoryUtilization: 0.875
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

from cfgcheck.api import (DEVICE, ESTIMATE_MARGIN, Finding, GiB, Option, accelerator_kind, concurrency_at,
                          kv_from_compiled_buckets, longest_fitting_len, on_largest_gpu, vendor_label, vendor_of,
                          weight_assumptions)

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE = "CFG202"
NAME = "context-exceeds-kv-pool"
SEVERITY = "error"
OPTIONS = {
    "estimate-margin": Option(float, ESTIMATE_MARGIN,
        "for an estimated pool (no measurement, no explicit bytes), flag only when "
        "`max_model_len` exceeds the longest length that fits by more than this fraction, because "
        "the estimate itself can be off by about that much. Measured and explicit pools are "
        "exact."),
}


def _pool_text(est) -> str:
    tokens = f"{est.kv_pool_tokens:,} tokens" if est.kv_pool_tokens is not None else "unknown tokens"
    if est.kv_pool_source == "measured":
        return f"measured pool {tokens}"
    if est.kv_pool_source == "explicit":
        gib = (est.pool_bytes or 0) / 1024**3
        return f"explicit {gib:.2f} GiB pool, {tokens}"
    return f"estimated pool ~{tokens}"


def check(model, ctx) -> Iterator[Finding]:
    options = ctx.options
    est = ctx.capacity(model)
    length = est.max_model_len
    if length is not None and est.kv_pool_source == "unknown":
        yield from _on_no_known_gpu(model, ctx, est, length)
    if length is None or est.kv_pool_source == "unknown":
        return
    if est.kv_pool_source == "estimated" and kv_from_compiled_buckets(model):
        return
    conc = concurrency_at(est, length)
    if conc is None or conc >= 1:
        return
    fit = longest_fitting_len(est) or 0
    where, given, fit_text, stops = _request_terms(model, est, length, fit)
    # an estimated pool is a range (its class's measured error, at least the estimate-margin option): an error
    # only when the request does not fit even at the range's top, a warning that it may not fit inside it
    width = max(est.kv_pool_error or 0.0, float(options["estimate-margin"])) if est.kv_pool_source == "estimated" else 0.0
    in_range = length <= fit * (1 + width)
    if in_range:
        stops += f"; it may fit: the estimate's range is ±{width:.0%}"
    kind = accelerator_kind(model)
    # the estimate's runtime overheads are calibrated on CUDA GPUs: on a TPU, Neuron or Gaudi it is an assumption
    assumed = est.kv_pool_source == "estimated" and kind != "gpu" or in_range
    if assumed:
        stops += f"; estimated with GPU overheads, which a {DEVICE[kind]} does not share exactly"
    gpu_assumed = est.gpu_resolution.assumed if est.gpu_resolution is not None else None
    if est.kv_pool_source == "estimated" and gpu_assumed:  # a GPU read from a comment or the only GPU pool
        beyond = _beyond_largest_gpu(model, ctx, length, assumed=True)
        if beyond is not None and not weight_assumptions(model, beyond[1]):  # no GPU holds it: sure whatever it is
            stops += f"; the GPU is assumed ({gpu_assumed}), but not even {beyond[0].label} holds it"
        else:
            assumed = True
            stops += f"; assumed: the GPU ({gpu_assumed})"
    arch = est.architecture
    if est.kv_pool_source != "measured" and arch is not None and arch.assumed:
        # a model matched by its name alone (a local path, another organisation) may not be that model
        assumed = True
        stops += f"; assumed: {arch.resolution}"
    yield Finding(
        message=f"{given} does not fit one request into the KV pool ({_pool_text(est)}): {fit_text}{stops}",
        location=where,
        remediation=(
            f"cap max_model_len at {fit:,} or below, or grow the pool (fp8 KV cache, --kv-cache-memory-bytes, "
            "a higher gpu_memory_utilization within any documented ceiling, more tensor parallelism)"
            if fit else f"grow the pool or serve the model on a larger {DEVICE[kind]}"
        ),
        setting="max_model_len",
        model=model.name,
        severity="warning" if assumed or _capped(est, fit) else "",
    )


def _request_terms(model, est, length: int, fit: int) -> tuple:
    """Where the length is set, how it was given, the longest that fits, and whether the engine stops."""
    setting = model.setting("max_model_len")
    where = setting.location if setting is not None else (model.model.location if model.model is not None else model.location)
    given = f"max_model_len {length:,}" if est.max_model_len_source == "explicit" else f"the model's default max_model_len {length:,}"
    fit_text = f"the longest that fits is {fit:,}" if fit else "not even a short request fits"
    stops = " (the engine will not start)" if est.engine in ("vllm", "unknown") else ""
    if _capped(est, fit):
        stops = f" (SGLang starts and refuses requests longer than {fit - 1:,} tokens)"
    return where, given, fit_text, stops


def _capped(est, fit: int) -> bool:
    """SGLang caps each request at the pool rather than stop (tp_worker.py: ``max_req_len =
    min(context_len - 1, max_total_num_tokens - 1)``); it stops only when that leaves nothing."""
    return est.engine == "sglang" and fit > 1


def _beyond_largest_gpu(model, ctx, length: int, assumed: bool = False) -> tuple | None:
    """(GPU, its estimate, the longest length that fits) when not even the largest bundled GPU of the
    workload's vendor holds one request of ``length`` at the configured memory fraction; else None.
    ``assumed``: the model names a GPU, only as an assumption."""
    found = on_largest_gpu(model, ctx.config, assumed)
    if found is None:
        return None
    gpu, trial = found
    conc = concurrency_at(trial, length)
    fit = longest_fitting_len(trial) or 0
    if conc is None or conc >= 1 or length <= fit * (1 + float(ctx.options["estimate-margin"])):
        return None
    return gpu, trial, fit


def _on_no_known_gpu(model, ctx, est, length: int) -> Iterator[Finding]:
    """The GPU is not stated: flag a length (or weights shard) that not even the largest bundled GPU of the
    workload's vendor holds at the configured memory fraction."""
    beyond = _beyond_largest_gpu(model, ctx, length)
    if beyond is None:
        return
    gpu, trial, fit = beyond
    where, given, fit_text, stops = _request_terms(model, est, length, fit)
    vendor = vendor_label(vendor_of(model))
    weights = f"weights {trial.weight_bytes_per_gpu / GiB:.1f} GiB per GPU at parallel size {trial.tensor_parallel_size * trial.pipeline_parallel_size}"
    util = f"{trial.gpu_memory_utilization:g}" if trial.gpu_memory_utilization else "its default"
    assumed = weight_assumptions(model, trial)
    capped = _capped(est, fit)
    yield Finding(
        message=(f"{given} does not fit one request on any {vendor}GPU cfgcheck knows (none is stated): on the largest, "
                 f"{gpu.label} at memory fraction {util}, {weights}, {fit_text}{stops}"
                 + (f"; assumed: {'; '.join(assumed)}" if assumed else "")),
        location=where,
        remediation=(f"cap max_model_len at {fit:,} or below and state the GPU, or shard the model over more GPUs"
                     if fit else "shard the model over more GPUs (tensor or pipeline parallelism, and the GPU request "
                     "to match), or serve a smaller or quantized checkpoint"),
        setting="max_model_len",
        model=model.name,
        severity="warning" if assumed or capped else "",
    )
