"""A model pulled from a hub without a pinned revision.

## What it flags
A Hugging Face model id (`org/name`, `hf://org/name`) served without a revision: no `@<sha>` in an
LLMKube `Model.spec.source`, and no `--revision` flag for vLLM or SGLang. Local paths, URLs to files
and templated values are not flagged.
A note in the `recommended` profile (the default), a warning in `strict`.

## Why it matters
Model repositories change in place: new weights, a new tokenizer, a changed `config.json` with a
different context length. An unpinned model means a restart can serve something nobody reviewed, and
the capacity arithmetic silently stops matching.

## Example
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
          args: ["--model", "Qwen/Qwen3-8B"]
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
          args: ["--model", "Qwen/Qwen3-8B", "--revision", "b968826d9c46dd6066d109eabc6255188de91218"]
```

## Options
None.
"""

import re

from cfgcheck.api import Finding

from ._pod_rules import how_to_pass

CODE, NAME, SEVERITY = "CFG303", "unpinned-model-revision", "warning"
# a note in the default profile: a repository opts into pinning advice with `profile: strict` (or
# `rules: {CFG303: {severity: warning}}`), as kube-linter's and Checkov's defaults leave it to be chosen
PROFILES = {"recommended": "note"}
OPTIONS: dict = {}
_HUB_ID = re.compile(r"^(hf://)?[A-Za-z0-9][\w.-]*/[\w.-]+$")


def check(model, ctx):
    source = model.model
    if source is None or not isinstance(source.value, str) or model.model_revision is not None:
        return
    if model.engine not in ("vllm", "sglang", "tokenspeed"):
        return
    if not _HUB_ID.match(source.value.strip()):
        return
    if source.value.startswith("hf://"):
        where = "add @<commit sha> to the source"
    else:
        where = how_to_pass(model, "model_revision", "<commit sha>")
    yield Finding(f"model {source.value} has no pinned revision", source.location, remediation=where,
                  setting="model_revision")
