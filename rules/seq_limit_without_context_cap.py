"""The sequence limit raised without capping max-model-len enough to keep the window in the KV pool.

## What it flags
In diff mode (`cfgcheck lint --base REF`), a change that raises `max_num_seqs` (`--max-num-seqs`,
LLMKube `parallelSlots`, SGLang `--max-running-requests`) while `max_model_len` is not capped enough
to keep the new window inside the KV pool: afterwards `max_num_seqs` exceeds pool / max_model_len.
When the pool is unknown, a raise while max-model-len stays uncapped (unset, or the model's maximum)
is flagged. The message shows the arithmetic before and after and the cap that would fit.

Not on AWS Neuron: a new `--max-num-seqs` there is a new compiled batch size, whose KV cache is
allocated for it (batch x sequence buckets).

## Why it matters
`max_model_len` decides how much of the pool one request may take. Raise the window without capping
it and the engine admits more sequences than the pool can hold at full length: preemption, recompute,
and time-to-first-token that explodes under load. Capping the context in the same change that raises
the window keeps one restart and keeps the change attributable.

## Example
Before:
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  # cfgcheck: kv-pool-tokens=995932
  parallelSlots: 4
  vllmConfig:
    maxModelLen: 262144
```
After, raising the window alone:
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  # cfgcheck: kv-pool-tokens=995932
  parallelSlots: 16
  vllmConfig:
    maxModelLen: 262144
```

## Use instead
Cap the context in the same change (995,932 / 32,768 = 30.39 full-length requests >= 16):
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  # cfgcheck: kv-pool-tokens=995932
  parallelSlots: 16
  vllmConfig:
    maxModelLen: 32768
```

## Options
None.
"""

from cfgcheck.api import Finding, cap_for, concurrency_at, kv_from_compiled_buckets

from ._change import effective_seqs, seqs_location

CODE, NAME, SEVERITY = "CFG201", "seq-limit-without-context-cap", "error"
OPTIONS: dict = {}
DIFF_ONLY = True


def check(model, ctx):
    if ctx.base is None:
        return
    if kv_from_compiled_buckets(model):
        return  # Neuron: the window is the compiled batch size, recompiled with its KV cache
    before, after = ctx.capacity(ctx.base), ctx.capacity(model)
    seqs_before, seqs_after = effective_seqs(before), effective_seqs(after)
    if seqs_before is None or seqs_after is None or seqs_after <= seqs_before:
        return
    len_before, len_after = before.max_model_len, after.max_model_len
    fits_after = concurrency_at(after, len_after)
    if fits_after is not None:
        if seqs_after <= fits_after + 1e-9:
            return
        fits_before = concurrency_at(before, len_before)
        cap = cap_for(after, seqs_after)
        was = f"{fits_before:.2f}" if fits_before is not None else "?"
        before_len = f"{len_before:,}" if isinstance(len_before, int) else "?"
        message = (f"max_num_seqs raised {seqs_before} -> {seqs_after} but only {fits_after:.2f} full-length requests fit "
                   f"(pool {after.kv_pool_tokens:,} tokens / max_model_len {len_after:,}; was {was} at {before_len})")
        room = int(fits_after)
        other = (f"or raise max_num_seqs only to {room}" if room > seqs_before
                 else "or keep the window: at this context length the pool has no room for more sequences")
        fix = (f"cap max_model_len at {cap:,} in this change (then {concurrency_at(after, cap):.2f} fit), {other}"
               if cap else f"{other.removeprefix('or ')}, or grow the pool")
    else:
        model_max = after.architecture.max_position_embeddings if after.architecture is not None else None
        explicit_len = model.value("max_model_len")
        if isinstance(explicit_len, int) and (model_max is None or explicit_len < model_max):
            return
        message = (f"max_num_seqs raised {seqs_before} -> {seqs_after} while max_model_len stays uncapped "
                   f"({'the model maximum ' + format(model_max, ',') if model_max else 'unset'}); the pool is unknown")
        fix = "cap max_model_len in the same change, and document the measured pool (# cfgcheck: kv-pool-tokens=N)"
    yield Finding(message, seqs_location(model), remediation=fix, setting="max_num_seqs")
