"""Flags a hub model whose weights are downloaded again on every pod start.

## What it flags
A served model named by its Hugging Face hub id (`org/name`) whose download directory is not on a
persistent volume: the directory is `--download-dir`, else `HF_HUB_CACHE`, else `HF_HOME`, else the
default `~/.cache/huggingface` (any mount ending in `.cache/huggingface` or `.cache` counts for it);
the variables come from the container, else from the `ENV` of the Dockerfile in the repository that
builds the deployed image, and a Flux `HelmRelease`'s post-renderer patch that sets them on the
rendered Deployment wins over its values.
Persistent means a PersistentVolumeClaim, a StatefulSet `volumeClaimTemplate`, a `hostPath`, NFS or
CSI volume, or in docker-compose a named or bind volume (its paths interpolated as compose does:
`${HF_CACHE_DIR:-./cache}:/root/.cache/huggingface` is a bind mount); an `emptyDir` or the container's
own filesystem is not. A hub download the pod itself runs before the engine (an init container, or the
engine container's own `sh -c "hf download ORG/NAME --local-dir /models; vllm serve /models"`) into an
`emptyDir` is the same loss. llama.cpp's `-hf ORG/NAME[:QUANT]` downloads the quant's file into its own
cache, `LLAMA_CACHE`, else `$XDG_CACHE_HOME/llama.cpp`, else `~/.cache/llama.cpp`. The GPU worker groups of a Ray cluster, where Ray places the engine's workers,
are checked too: a worker group without a persistent cache downloads the weights on every worker start. Quiet when the cache is the container's own filesystem and the container requests
`ephemeral-storage` at least the size of the weights: the author budgeted the download (an `emptyDir`
mounted at the cache is still emptied with every pod, whatever the request). The size comes from the bundled model table, else from a
parameter count in the name (`7B`, `125M`, at 2 bytes each); a model of unknown size is not flagged
(outside offline mode), nor one smaller than `min-weights-gb`. With `HF_HUB_OFFLINE=1` (or
`TRANSFORMERS_OFFLINE=1`) and no persistent cache, the finding is an error: the engine may not
download and finds no weights. Checked for Kubernetes pods, docker-compose services and
production-stack values (whose chart sets `HF_HOME` to `/data` with `pvcStorage`, to the shared claim
with `sharedPvcStorage`, else to `/tmp`). The finding is placed at the volume that holds the cache and
loses it (the `emptyDir` or `tmpfs` entry, where the fix goes), the model named as related, when the
model's own file writes that volume; at the model when no volume holds the cache or another file writes
it (a chart's named template, whose rendering is placed at its object's line).

## Why it matters
Every restart, rollout or reschedule then downloads the whole checkpoint again: minutes to hours of
extra outage per start, hub rate limits and egress cost, and a start that depends on the hub being
up. The production-stack chart points `HF_HOME` at `/tmp` when no storage is given
(helm/templates/deployment-vllm-multi.yaml); LLMKube documents that with `Ephemeral` cache
persistence the weights "are re-downloaded every time" (api/v1alpha1/inferenceservice_types.go), and
KServe added LocalModelCache to stop it. Offline mode without a cache fails at once
(`LocalEntryNotFoundError` from huggingface_hub).

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          resources:
            limits:
              nvidia.com/gpu: 1
          volumeMounts:
            - name: hf-cache
              mountPath: /root/.cache/huggingface
      volumes:
        - name: hf-cache
          persistentVolumeClaim:
            claimName: hf-cache
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

from cfgcheck.api import Finding, Option, quant_bits_from_text

from ._pod_rules import serves
from ._weights import PERSISTENT, hub_name, llama_hub, offline, persistent_cache, weight_bytes

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG505", "weights-not-persisted", "warning"
OPTIONS = {
    "min-weights-gb": Option(float, 2.0,
        "stay quiet (outside offline mode) for models the bundled table knows to be smaller: "
        "downloading them again takes seconds."),
}

CHECKED_FORMATS = ("kubernetes", "compose", "production-stack")


def check(model, ctx) -> Iterator[Finding]:
    pod = model.pod
    checked = pod is not None and pod.format in CHECKED_FORMATS
    if model.engine == "llama.cpp" and checked:
        yield from _llama_download(model, pod, ctx)
        return
    if not serves(model) or not checked and not model.worker_pods:
        return
    if checked:
        yield from _downloads_lost(model, pod, ctx)
    name = hub_name(model)
    if name is None:
        return  # a local path, an object store URI: not a hub download
    weights = weight_bytes(name, ctx.config or {})
    if checked:
        yield from _pod_cache(model, pod, name, weights, ctx)
    source = model.model
    for group, worker in model.worker_pods.items():
        lost = _lost(model, worker, weights, ctx, worker.env)
        if lost is not None and lost[1] is None:  # offline mode is the engine pod's finding
            size = f" ({weights / 1e9:.1f} GB)" if weights else ""
            yield Finding(f"{name}{size} is downloaded into {lost[0]} on the Ray worker group {group!r}, which is "
                          "not persistent there: every worker start downloads it again",
                          worker.location, remediation="mount a PersistentVolumeClaim (or a hostPath) at the cache "
                          "directory in the worker group's pod template", setting=f"weights_cache:{group}",
                          related=(source.location,), model=model.name)


def _lost(model, pod, weights: int | None, ctx, env: dict | None = None) -> tuple[str, object, object] | None:
    """(where the weights go, the offline-mode setting or None, the volume that holds them or None) when
    they are not kept across starts of ``pod``; None when they are, or when the model is too small or of
    unknown size to matter."""
    kept, where, volume = persistent_cache(model, pod, env)
    if kept:
        return None
    offline_mode = offline(model)
    if offline_mode is None and weights is None:
        return None  # a size we cannot tell may be a toy model: not worth a warning
    # an ephemeral-storage request budgets the download into the container's own filesystem; an emptyDir
    # mounted at the cache (often only to make it writable) is emptied with the pod whatever the budget
    if offline_mode is None and volume is None and pod.ephemeral_storage is not None and \
            pod.ephemeral_storage >= (weights or 0):
        return None
    if offline_mode is None and weights is not None and weights < float(ctx.options["min-weights-gb"]) * 1e9:
        return None
    return where, offline_mode, volume
def _llama_download(model, pod, ctx) -> Iterator[Finding]:
    """llama.cpp's -hf download: the quant's share of the checkpoint, into llama.cpp's own cache."""
    found = llama_hub(model)
    if found is None:
        return
    repo, quant = found
    full, bits = weight_bytes(repo, ctx.config or {}), quant_bits_from_text(quant)[0]
    weights = int(full * bits / 16) if full and bits else None
    lost = _lost(model, pod, weights, ctx)
    if lost is None or weights is None:
        return
    start = "container" if pod.format == "compose" else "pod"
    yield Finding(f"{repo}:{quant} (about {weights / 1e9:.1f} GB) is downloaded by {model.model.source} into "
                  f"{lost[0]}, which is not persistent: every {start} start downloads it again", model.model.location,
                  remediation="mount a PersistentVolumeClaim (or a compose named volume) at llama.cpp's cache "
                  "directory (LLAMA_CACHE, else ~/.cache/llama.cpp), or request ephemeral-storage that holds it",
                  setting="weights_cache", model=model.name)


def _downloads_lost(model, pod, ctx) -> Iterator[Finding]:
    """A hub download the pod runs before the engine (an init container, the engine container's own
    script) into a volume that does not outlive the pod: an emptyDir, whatever holds the weights."""
    for download in model.downloads:
        volume = pod.volumes.get(download.volume[0]) if download.repo and download.volume else None
        if volume is None or volume.type in PERSISTENT:
            continue
        weights = weight_bytes(download.repo, ctx.config or {})
        if weights is not None and download.url is not None:  # one file of the repository: a quant's share
            bits = quant_bits_from_text(download.url.rsplit("/", 1)[-1])[0]
            weights = int(weights * bits / 16) if bits else None
        if weights is None or weights < float(ctx.options["min-weights-gb"]) * 1e9:
            continue  # a size we cannot tell, or too small to matter
        yield Finding(f"{download.how} writes {download.repo} ({weights / 1e9:.1f} GB) to {download.target} on the "
                      f"{volume.type} volume {volume.name!r}, which is not persistent: every pod start downloads it "
                      "again", download.location, remediation="put the download's folder on a PersistentVolumeClaim "
                      "(or a hostPath)",
                      setting=f"weights_download:{download.repo}", model=model.name)


def _pod_cache(model, pod, name: str, weights: int | None, ctx) -> Iterator[Finding]:
    lost = _lost(model, pod, weights, ctx)
    if lost is None:
        return
    where, offline, volume = lost
    source = model.model
    if offline is not None:
        yield Finding(f"{offline.name}={offline.value} but {name} has no persistent cache at {where}: "
                      f"the engine may not download it and finds no weights", offline.location,
                      remediation="mount the volume that holds the downloaded weights at the cache directory",
                      setting="weights_cache", related=(source.location,), model=model.name, severity="error")
        return
    size = f" ({weights / 1e9:.1f} GB)" if weights else ""
    start = "container" if pod.format == "compose" else "pod"
    # at the volume that loses them (an emptyDir), where the fix goes, when the model's own file writes it; else
    # at the model (nothing holds the cache, or a chart's named template writes the volume: its rendering is
    # placed at the template's object, a line that says nothing of the cache)
    at_volume = volume is not None and volume.location.path == source.location.path
    yield Finding(f"{name}{size} is downloaded into {where}, which is not persistent: "
                  f"every {start} start downloads it again",
                  volume.location if at_volume else source.location,
                  remediation="mount a PersistentVolumeClaim (or a compose named volume) at the cache "
                  "directory, or request ephemeral-storage that holds the weights",
                  setting="weights_cache", related=(source.location,) if at_volume else (),
                  model=model.name)
