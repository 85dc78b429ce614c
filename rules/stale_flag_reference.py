"""A comment that still describes a flag the change removed.

## What it flags
In diff mode, a comment anywhere in the repository (YAML, Python, CI workflows, shell scripts: any
tracked file) that names a setting or flag the change removed or changed, in any spelling
(`--max-num-seqs`, `max_num_seqs`, `maxNumSeqs`, LLMKube's `parallelSlots`), when its comment block
also names the same served model or engine (or is in the model's own file), or states the old value.
For a changed value only a comment stating the old value is stale; a comment on the changed line or
directly above it that states the old value (and not the new) is stale even when it names no flag
(`# 8 seqs: measured on the A100` above `maxNumSeqs: 16`), unless it tells the change's history on
the changed line itself (`# was 8`). The finding is at the comment's
line and names the file and line of the change that made it stale; comment lines the change itself
added are not reported.

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

from cfgcheck.api import Finding

CODE, NAME, SEVERITY = "CFG402", "stale-flag-reference", "warning"
OPTIONS: dict = {}
DIFF_ONLY = True
# diff mode (diff.py) finds the comments with ``git grep`` and leaves them here: rules open no files
EVIDENCE = "stale-comments"


def check(model, ctx):
    if ctx.base is None:
        return
    for stale in model.cache.get(EVIDENCE, ()):
        change = stale.setting
        at = change.changed_at
        what = f"{change.name} {change.old}" if change.old is not None and not isinstance(change.old, bool) \
            else change.name
        did = "removed" if change.removed else f"changed to {change.new}"
        yield Finding(f"comment still describes {what}, which this change {did} at {at.path}:{at.line}",
                      stale.location, remediation="update the comment to describe what applies now, or remove it",
                      setting=f"comment:{change.name}:{stale.location.path}:{stale.text}", related=(at,))
