"""A comment that still describes a flag the change removed.

## What it flags
In diff mode, a comment in the changed served model's document that names an engine flag
(`--max-num-seqs`) which the base set and the head no longer sets: a pin removed while the comment
explaining it stayed behind.

## Why it matters
Comments next to serving settings are read as documentation of why things are the way they are. A
comment describing a pin that no longer exists misleads the next reviewer into restoring it, or into
reasoning about limits that are gone.

## Example
Before:
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
          command: ["vllm", "serve", "/models/qwen"]
          # --max-num-seqs is pinned to 4 to keep the e2e runner inside its memory.
          args: ["--max-num-seqs", "4"]
```
After:
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
          command: ["vllm", "serve", "/models/qwen"]
          # --max-num-seqs is pinned to 4 to keep the e2e runner inside its memory.
          args: []
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
          command: ["vllm", "serve", "/models/qwen"]
          args: []
```

## Options
None.
"""

import re

from cfgcheck.model import Finding, Location

CODE, NAME, SEVERITY = "CFG402", "stale-flag-reference", "warning"
OPTIONS: dict = {}
DIFF_ONLY = True
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")


def _flags(model) -> set[str]:
    return {s.source for occurrences in model.occurrences.values() for s in occurrences if s.source.startswith("--")}


def check(model, ctx):
    if ctx.base is None:
        return
    removed = _flags(ctx.base) - _flags(model)
    if not removed:
        return
    for line, text in model.comments:
        for flag in _FLAG.findall(text):
            if flag in removed:
                yield Finding(f"comment still describes {flag}, which this change removed",
                              Location(model.path, line, 1), remediation="update or remove the comment",
                              setting=f"comment:{flag}")
                break
