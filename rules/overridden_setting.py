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

import re

from cfgcheck.api import Finding, secret_name

CODE, NAME, SEVERITY = "CFG106", "overridden-setting", "warning"
OPTIONS: dict = {}


# compiled by re (and cached there) when first used: only once a setting is overridden
_SECRET_VALUE = r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})"


def _shown(name: str, value) -> str:
    """A value as the message may show it: never a secret (it would land in PR comments and logs)."""
    if secret_name(name) or re.search(_SECRET_VALUE, str(value)):
        return "<redacted>"
    return str(value)


def check(model, ctx):
    for name, occurrences in model.occurrences.items():
        if len(occurrences) < 2 or name in ("model",):
            continue
        winner = occurrences[-1]
        for loser in occurrences[:-1]:
            lose, win = _shown(name, loser.value), _shown(name, winner.value)
            yield Finding(
                f"{name} is set twice: {loser.source}={lose} is overridden by "
                f"{winner.source}={win} (line {winner.location.line}), which wins",
                loser.location,
                remediation=f"keep one of them; the engine uses {win}",
                setting=name, related=(winner.location,))
