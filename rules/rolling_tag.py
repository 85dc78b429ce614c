"""An engine image with a rolling tag (latest, nightly, dev) or no tag.

## What it flags
Images whose tag names no version: `latest`, `nightly`, `dev`, `main`, a missing tag, or a bare
digest with no versioned tag beside it.

## Why it matters
The engine version decides which flags exist, their defaults and the KV-pool arithmetic. A rolling
tag hides it: nightlies even self-report stale version strings, and tags are not version-ordered.
cfgcheck then has to assume the newest catalog, and so does every reviewer.

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
          image: vllm/vllm-openai:nightly
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
          args: ["--model", "Qwen/Qwen3-8B"]
```

## Options
None.
"""

from cfgcheck.engines.images import parse_image
from cfgcheck.model import Finding

CODE, NAME, SEVERITY = "CFG302", "rolling-tag", "warning"
OPTIONS: dict = {}


def check(model, ctx):
    image = model.image
    if image is None or not isinstance(image.value, str) or "{{" in image.value:
        return
    ref = parse_image(image.value)
    if not ref.rolling:
        return
    what = f"tag '{ref.tag}'" if ref.tag else "no tag"
    yield Finding(f"image {ref.repository} has {what}: the engine version cannot be known", image.location,
                  remediation="use a versioned tag (for example v0.26.0) pinned by digest", setting="image")
