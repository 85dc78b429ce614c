"""Flags a sequence limit above the number of full-length requests the KV pool can hold.

## What it flags
`max_num_seqs` (vLLM `--max-num-seqs`, SGLang `--max-running-requests`, LLMKube `parallelSlots`) set above
`pool / max_model_len`: the pool-limited concurrency that vLLM logs as
`Maximum concurrency for L tokens per request: X.XXx`. The pool is a documented measurement when there
is one, else the exact `--kv-cache-memory-bytes`, else an estimate.

Not on AWS Neuron with an estimated pool: there the engine allocates the KV cache for the compiled
batch and sequence buckets, so the window always fits. A comment on or above the limit that states a
measurement of it (`# measured: 32 seqs at p99 TTFT 1.2 s on the H100`: a word such as measured,
benchmark, sweep, p99 or TTFT, and numbers) makes the finding a note that says the measurement was
respected. The advice to lower the limit keeps to the step CFG206 (unattributable-step) accepts: a
limit more than `max-step` times what fits is lowered in steps, not at once.

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

import re

from cfgcheck.api import (Finding, LazyPattern, Option, cap_for, concurrency_at, human_int,
                          kv_from_compiled_buckets)

from ._steps import step_limit

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

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
    if length is None:
        return
    if est.kv_pool_source == "unknown":
        yield from _above_stated_pool(model, setting, seqs, length)
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
    message = f"{label} {seqs} > {conc:.2f} full-length requests ({pool} / max_model_len {length:,})"
    measured = measurement(model, setting) if setting is not None else None
    if measured:  # a stated measurement of this limit is the reason for it: said, not overruled
        message += f"; kept as a note: the measurement beside it is respected (\"{measured[:80]}\")"
    gpu_assumed = est.gpu_resolution.assumed if est.gpu_resolution is not None and est.kv_pool_source == "estimated" \
        else None
    if gpu_assumed:  # the pool rests on a GPU read from a comment or the only GPU pool
        message += f"; a note: the GPU is assumed ({gpu_assumed})"
    yield Finding(
        message=message,
        location=setting.location if setting is not None else model.location,
        remediation=_remedy(est, seqs, conc, step_limit(ctx)),
        setting="max_num_seqs",
        model=model.name,
        severity="note" if measured or gpu_assumed else "",
    )


def _above_stated_pool(model, setting, seqs: int, length: int) -> Iterator[Finding]:
    """SGLang's and TokenSpeed's ``--max-total-tokens`` caps the pool (it can only lower what the memory
    budget gives: sglang ``model_runner.py`` ``profile_max_num_token``), so a window above cap / context
    overcommits whatever the architecture and the GPU: no estimate needed."""
    cap = human_int(model.value("max_total_tokens")) if model.engine in ("sglang", "tokenspeed") else None
    if setting is None or not cap or seqs * length <= cap:
        return
    conc = cap / length
    fits = max(1, int(conc))
    yield Finding(
        message=f"{setting.source} {seqs} > {conc:.2f} full-length requests (pool at most --max-total-tokens "
                f"{cap:,} tokens / context length {length:,})",
        location=setting.location,
        remediation=f"cap the context length at {cap // seqs:,} (keeps {seqs} full-length requests inside "
                    f"{cap:,} tokens), or lower the sequence limit to {fits}, or raise --max-total-tokens",
        setting="max_num_seqs", model=model.name)


def _remedy(est, seqs: int, conc: float, step: int) -> str:
    """Cap the context, else lower the limit, in a step CFG206 accepts (never more than ``step`` x at once)."""
    cap = cap_for(est, seqs)
    if cap:
        remedy = f"cap max_model_len at {cap:,} in the same change (keeps {seqs} full-length requests inside the pool)"
    else:
        remedy = f"no max_model_len keeps {seqs} requests inside this pool"
    fits, step = max(1, int(conc)), max(1, step)
    if seqs <= fits * step:
        lower = f"lower the sequence limit to {fits}"
    else:  # integers throughout: a limit of any size is a valid (absurd) value, not an overflow
        lower = f"lower the sequence limit in steps of at most {step}x (next: {max(fits, -(-seqs // step))}), " \
                f"measuring each, towards {fits}"
    return f"{remedy}, or {lower}, or grow the pool"


# what a comment says when it states a measurement: the word for it, and a number besides the marker's own
_MEASURED = LazyPattern(r"\b(?:measured|measurements?|benchmark(?:ed|s)?|load[- ]?test(?:ed|s)?|sweep|knee|"
                       r"p(?:50|90|95|99)|ttft|tpot|itl|goodput)\b", re.I)
_DIGIT = LazyPattern(r"\d")


def measurement(model, setting) -> str | None:
    """A comment on or above the sequence limit (or another place it is written) that states measured
    numbers ("measured: 32 seqs at p99 TTFT 1.2 s on the H100"), or None."""
    places = [setting] + [o for o in (model.occurrences.get(setting.name) or []) if o is not setting]
    for text in (comment for place in places for comment in place.comments):
        if _MEASURED.search(text) and _DIGIT.search(_MEASURED.sub(" ", text)):
            return text.strip()
    return None
