"""The same engine setting given more than once.

## What it flags
A setting given twice for one served model: an operator's typed field and an `extraArgs` flag (the
operator appends extraArgs last, and its duplicate checks match exact names only), or a flag repeated
in the argv. The message says which value wins: for argparse engines, the last occurrence.

## Why it matters
Two values for one setting means a reader sees one number and the engine runs with the other.
Tuning the typed field then changes nothing, and a review of it approves a no-op.

## Example
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  vllmConfig:
    maxModelLen: 32768
  extraArgs: ["--max-model-len", "65536"]
```

## Use instead
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  vllmConfig:
    maxModelLen: 65536
```

## Options
None.
"""

from cfgcheck.model import Finding

CODE, NAME, SEVERITY = "CFG106", "overridden-setting", "warning"
OPTIONS: dict = {}


def check(model, ctx):
    for name, occurrences in model.occurrences.items():
        if len(occurrences) < 2 or name in ("model",):
            continue
        winner = occurrences[-1]
        for loser in occurrences[:-1]:
            yield Finding(
                f"{name} is set twice: {loser.source}={loser.value} is overridden by "
                f"{winner.source}={winner.value} (line {winner.location.line}), which wins",
                loser.location,
                remediation=f"keep one of them; the engine uses {winner.value}",
                setting=name, related=(winner.location,))
