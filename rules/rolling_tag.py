"""An engine image with a rolling tag (latest, nightly, dev) or no tag.

## What it flags
Images whose tag names no version: `latest`, `nightly`, `dev`, `main`, a variant alias of numbered builds
(llama.cpp's `server-cuda`), or a missing tag; the engine's image and the images of the pods that run
its workers (a Ray cluster's worker groups). A per-commit tag (`nightly-<sha>`) names one build: not flagged. A digest
fixes the build such a tag named (`vllm/vllm-openai:nightly@sha256:...` does not roll) and a local
build (a compose `build:`, a bare `team-vllm:dev` or a `localhost` registry) has no registry tag to
roll: neither is flagged; their engine version is assumed or unknown, and version-dependent findings
say so. A local build tagged `latest` (or untagged, docker's `latest`) is flagged as such: it names
whatever was built last. A compose service that builds its image is checked at its Dockerfile's final
`FROM` (`FROM vllm/vllm-openai:latest`). A container of an engine image that a script runs with another
entrypoint (`docker run --entrypoint /bin/bash ... vllm/vllm-openai` kept up for `docker exec`, a Ray node, also
through a wrapper script that takes the image as an argument) is checked too: the engine started in it runs that image.

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

from cfgcheck.api import CONTAINER_KIND, DISPLAY, Finding, known_image, parse_image, versions

CODE, NAME, SEVERITY = "CFG302", "rolling-tag", "warning"
OPTIONS: dict = {}
# the container of an engine image that a script runs with another entrypoint (a shell kept up for `docker exec`, a
# Ray node) is a runtime template of kind "container": its image is the engine's; other templates are not checked
TEMPLATES = True


def check(model, ctx):
    if model.template and model.kind != CONTAINER_KIND:
        return
    for image in [model.image, *model.worker_images, model.base_image]:
        if image is None or not isinstance(image.value, str) or image.origin == "build":
            continue
        ref = parse_image(image.value)
        # a digest fixes the build a rolling tag named; a local build has no registry tag to roll, except
        # docker's default `latest`: whatever was built last
        if not ref.rolling or ref.digest or ref.templated or ref.local and (ref.tag or "latest") != "latest":
            continue
        what = f"tag '{ref.tag}'" if ref.tag else "no tag"
        setting = "image" if image is model.image else "base_image" if image is model.base_image else f"image:{image.source}"
        if ref.local:
            yield Finding(f"local build {ref.repository} has {what} (whatever was built last): the engine version it "
                          "was built with cannot be known", image.location, setting=setting,
                          remediation="tag the build with the engine version it installs, and pin the version in "
                          "its Dockerfile")
            continue
        base = " (the base image of the Dockerfile the service builds)" if image is model.base_image else ""
        yield Finding(f"image {ref.repository} has {what}{base}: the engine version cannot be known", image.location,
                      remediation=f"use {_versioned_tag(ref)} pinned by digest", setting=setting)


def _versioned_tag(ref) -> str:
    """A versioned tag of the image's own kind: a release of the engine its tags name (SGLang's for
    lmsysorg/sglang), or the build's own release where its tags name a vendor's or a wrapper's
    (data/images.json), never another engine's version."""
    entry = known_image(ref)
    if entry is None:
        built = ref.engine
        kind = f" (a {DISPLAY.get(built, built)} build)" if built else ""
        return f"a versioned tag of {ref.repository}{kind}"
    engine = entry["engine"]
    name = DISPLAY.get(engine, engine)
    if entry["version"] == "tag" and entry.get("exact") and versions(engine):
        return f"a tag naming a release of {name} (for example v{versions(engine)[-1]}, the newest cfgcheck knows)"
    why = entry.get("why") or f"a {name} build"
    return f"a release tag of {ref.repository} ({why})"
