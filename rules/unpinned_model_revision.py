"""A model pulled from a hub without a pinned revision.

## What it flags
A Hugging Face model id (`org/name`, `hf://org/name`) served without a revision: no `@<sha>` in an
LLMKube `Model.spec.source` (whatever engine serves it, llama.cpp included), and no `--revision` flag
for vLLM or SGLang; a llama.cpp server's `-hf ORG/NAME[:QUANT]` (`--hf-repo`), which always downloads the
default branch's file. And the weights a local path is filled with: a hub download before the engine
starts (`hf download` / `huggingface-cli download` without `--revision`, a `git clone` of a hub
repository not checked out at a commit, in an init container) and hub file URLs at a branch
(`.../resolve/main/model.gguf`, fetched by curl, wget or aria2c, or an operator's `source:`).
Other URLs and templated values are not flagged.
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


from cfgcheck.api import Finding, LazyPattern

from ._pod_rules import how_to_pass
from ._weights import llama_hub, local_folder

CODE, NAME, SEVERITY = "CFG303", "unpinned-model-revision", "warning"
# a note in the default profile: a repository opts into pinning advice with `profile: strict` (or
# `rules: {CFG303: {severity: warning}}`), as kube-linter's and Checkov's defaults leave it to be chosen
PROFILES = {"recommended": "note"}
OPTIONS: dict = {}
_HUB_ID = LazyPattern(r"^(hf://)?[A-Za-z0-9][\w.-]*/[\w.-]+$")
_SHA = LazyPattern(r"^[0-9a-f]{40}$")
_BRANCHES = ("main", "master")


def check(model, ctx):
    yield from _downloads(model)
    source = model.model
    if source is None or not isinstance(source.value, str) or model.model_revision is not None:
        return
    if llama_hub(model) is not None:
        yield Finding(f"model {source.value} has no pinned revision: {source.source} downloads the file at the hub "
                      "repository's default branch", source.location, setting="model_revision",
                      remediation="fetch the file at a commit (--model-url https://huggingface.co/ORG/NAME/resolve/"
                      "<commit sha>/FILE.gguf), or fill a volume at a pinned revision before the server starts")
        return
    hf_uri = source.value.startswith("hf://")  # an operator downloads it, whatever engine then reads it
    if model.engine not in ("vllm", "sglang", "tokenspeed") and not hf_uri:
        return
    if not _HUB_ID.match(source.value.strip()) or local_folder(model):
        return
    if hf_uri:
        where = "add @<commit sha> to the source"
    else:
        where = how_to_pass(model, "model_revision", "<commit sha>")
    yield Finding(f"model {source.value} has no pinned revision", source.location, remediation=where,
                  setting="model_revision")


def _downloads(model):
    """Hub downloads that fill the model's weights at a moving revision: none given (the default
    branch), or a file URL's branch (``resolve/main``)."""
    for download in model.downloads:
        if download.repo is None or (download.revision and _SHA.match(download.revision)):
            continue
        if download.url is not None:
            if download.revision not in _BRANCHES:
                continue  # a tag in a URL: as --revision v1.0 is, left to the reader
            what, fix = f"URL at branch '{download.revision}'", f"put a commit sha in the URL in place of {download.revision}"
        elif download.revision is not None:
            continue
        else:
            what, fix = "no pinned revision", "add --revision <commit sha>" if "download" in download.how else \
                "check out a commit after the clone (git checkout <commit sha>)"
        yield Finding(f"{download.how} fetches {download.repo} with {what}: a restart can fetch other weights",
                      download.location, remediation=fix, setting=f"download:{download.repo}")
