"""A sequence limit changed by more than 4x in one step.

## What it flags
In diff mode, `max_num_seqs` (or `parallelSlots`, SGLang `--max-running-requests`) multiplied or
divided by more than the `max-step` factor (default 4) in a single change.

## Why it matters
A benchmark after 4 -> 64 cannot say which step helped and which one started preemption or queueing.
Raising in attributable steps (4 -> 16 -> 32) turns each change into a measurement, and keeps a
rollback small.

## Example
Before:
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  parallelSlots: 4
```
After:
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  parallelSlots: 64
```

## Use instead
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  parallelSlots: 16
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from cfgcheck.api import Finding, Option

from ._change import effective_seqs, seqs_location
from ._steps import MAX_STEP

CODE, NAME, SEVERITY = "CFG206", "unattributable-step", "warning"
OPTIONS = {"max-step": Option(int, MAX_STEP, "the largest factor allowed in one change.")}
DIFF_ONLY = True


def check(model, ctx):
    if ctx.base is None:
        return
    before = effective_seqs(ctx.capacity(ctx.base))
    after = effective_seqs(ctx.capacity(model))
    if not before or not after or before == after:
        return
    factor = max(after / before, before / after)
    limit = float(ctx.options["max-step"])
    if factor > limit + 1e-9:
        step = int(before * limit) if after > before else max(int(before / limit), 1)
        yield Finding(f"max_num_seqs changed {before} -> {after} ({factor:.0f}x) in one step",
                      seqs_location(model),
                      remediation=f"change it in steps of at most {limit:g}x (next: {step}) and measure each",
                      setting="max_num_seqs")
