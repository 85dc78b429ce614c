"""An engine image that is not pinned by digest.

## What it flags
The image of a served model (`spec.image`, a container `image`, production-stack
`repository`/`tag`), the images of the pods that run its workers (a Ray cluster's worker groups), and the
final `FROM` of the Dockerfile a compose service builds (its `ARG`s substituted: the build argument's
value, else the default), without an `@sha256:` digest. Local builds (the image a compose service
builds, a bare name such as `team-vllm:dev`, a `localhost` registry) have no registry digest and are skipped,
as are references still holding a variable or template. A rolling tag (`latest`, `nightly`, no tag)
is reported once, by CFG302 (rolling-tag), whose fix (a versioned tag pinned by digest) covers this one.
A note in the `recommended` profile (the default), a warning in `strict`.

## Why it matters
Tags move. The same `v0.26.0` tag can be rebuilt, and rolling tags change every day; a restart then
runs a different engine than the one that was reviewed and measured. A digest makes the rollout
reproducible; keep a versioned tag next to it so humans (and cfgcheck) can read the version.

## Example
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0
```

## Use instead
```yaml
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
```

## Options
None.
"""

from cfgcheck.api import Finding, parse_image

CODE, NAME, SEVERITY = "CFG301", "unpinned-image", "warning"
# a note in the default profile: a repository opts into pinning advice with `profile: strict` (or
# `rules: {CFG301: {severity: warning}}`), as kube-linter's and Checkov's defaults leave it to be chosen
PROFILES = {"recommended": "note"}
OPTIONS: dict = {}


def check(model, ctx):
    for image in [model.image, *model.worker_images, model.base_image]:
        if image is None or not isinstance(image.value, str) or image.origin == "build":
            continue
        ref = parse_image(image.value)
        # a local build has no digest to pin; a rolling tag is CFG302's finding (one per line, same fix)
        if ref.digest is None and not ref.local and not ref.templated and not ref.rolling:
            base = " (the base image of the Dockerfile the service builds)" if image is model.base_image else ""
            setting = "image" if image is model.image else "base_image" if image is model.base_image else \
                f"image:{image.source}"
            yield Finding(f"image {image.value} is not pinned by digest{base}", image.location,
                          remediation="append @sha256:<digest> to the versioned tag", setting=setting)
