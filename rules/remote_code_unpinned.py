"""Flags `--trust-remote-code` on a hub model whose revision is not a commit SHA.

## What it flags
A served model that allows the model repository's own Python code to run (`--trust-remote-code`,
`trust_remote_code: true` in an engine config, KServe's `--trust_remote_code`) while the model is a
Hugging Face hub id (`org/name`, `hf://org/name`) and neither its revision (`--revision`,
`hf://org/name@rev`) nor vLLM's `--code-revision` is a 40-hex commit SHA. A branch or tag
(`main`, `v1.0`) moves; no revision means the default branch. Local paths (`/models/...`) are not
judged: the code is whatever was placed there.

An error when the repository ships modelling code (`auto_map` in its `config.json`: a local config
file, the Hub's with `--online`, or the bundled model table for the repository its config came from);
a warning when its config.json maps no class to code (the flag is unneeded, and would run code the
repository adds later) or when that cannot be known offline (the message says which).

## Why it matters
With remote code allowed, `transformers` downloads and imports `modeling_*.py` / `configuration_*.py`
from the repository on every start: whoever can push to that repository (or take over the account,
or a renamed repo's new owner) runs arbitrary code in your pod, next to your GPUs, tokens and
network. Hugging Face's own warning on `trust_remote_code` asks to pin a revision for this reason
(transformers docs, "custom models"); malicious hub repositories that run code on load are a
documented attack (JFrog, "Data Scientists Targeted by Malicious Hugging Face ML Models", 2024).
Pinning the commit makes a change of code a change of your config, reviewed.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen-vl
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen-VL-Chat", "--trust-remote-code"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen-vl
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen-VL-Chat", "--trust-remote-code",
                    "--revision", "f57cfbd358cb56b710d963669ad1bcfb44cdcdd8"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

import re

from cfgcheck.api import Finding

from ._pod_rules import how_to_pass
from ._weights import local_folder

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG306", "remote-code-unpinned", "error"
OPTIONS: dict = {}
# SARIF `properties.security-severity` (GitHub code scanning: 7.0-8.9 is "high"): code execution in
# the serving pod by whoever can push to the model repository.
SECURITY_SEVERITY = "8.0"

# Patterns as text, compiled by re (and cached there) when first used: only with remote code trusted.
_HUB_ID = r"^(hf://)?[A-Za-z0-9][\w.-]*/[\w.-]+(@[^/\s]+)?$"
_SHA = r"^[0-9a-f]{40}$"


def _pinned(setting) -> bool:
    return setting is not None and isinstance(setting.value, str) and bool(re.match(_SHA, setting.value.strip()))


def check(model, ctx) -> Iterator[Finding]:
    trust = model.setting("trust_remote_code")
    if trust is None or trust.value is not True:
        return
    found = _hub_source(model)
    if found is None:
        return
    name, revision, pin, related = found
    at = f"revision {revision!r}" if revision is not None else "the default branch (no revision given)"
    ships, how = _ships_code(ctx.capacity(model).architecture)
    if ships:
        message = (f"{trust.source} runs the Python code {name} ships ({how}) at {at}: whoever can push to "
                   f"that repository runs code in this pod")
    elif ships is False:
        message = (f"{name} ships no modelling code ({how}): {trust.source} is unneeded, and at {at} it would "
                   f"run code the repository adds later")
    else:
        message = (f"{trust.source} would run {name}'s own Python code at {at} if the repository ships any "
                   f"({how}), and code it adds later")
    yield Finding(message, trust.location, severity="" if ships else "warning",
                  remediation=f"pin the model revision to a 40-hex commit SHA: {pin}"
                  + ("" if ships else f"; or drop {trust.source} if the model loads without it"),
                  setting="trust_remote_code", related=(related,), model=model.name)


def _hub_source(model) -> tuple[str, str | None, str, object] | None:
    """(hub repository, its revision as written, how to pin it, where it is named) of the code the engine
    runs: the model's hub id, or the repository a download before the engine wrote to its local path;
    None when pinned to a commit, or not from a hub."""
    source, named = model.model, model.model_named
    if source is None or not isinstance(source.value, str):
        return None
    if re.match(_HUB_ID, source.value.strip()) and not local_folder(model):
        revision = model.model_revision
        if _pinned(revision) or _pinned(model.setting("code_revision")):
            return None
        return (source.value.strip().removeprefix("hf://").split("@", 1)[0],
                revision.value if revision is not None else None,
                f"{how_to_pass(model, 'model_revision', '<sha>')}, or hf://org/name@<sha>", source.location)
    download = next((d for d in model.downloads if named is not None and named.origin == "download"
                     and d.location == named.location and d.repo == named.value), None)
    if download is None or download.url is not None or (download.revision and re.match(_SHA, download.revision)):
        return None
    pin = f"add --revision <sha> to the {download.how}" if "download" in download.how else \
        f"check out a commit after the {download.how}"
    return download.repo, download.revision, pin, download.location


def _ships_code(arch) -> tuple[bool | None, str]:
    """Whether the repository ships modelling code (``auto_map`` in its config.json), and how that is known.
    The bundled table speaks only for the repository its config came from (``capacity.architecture``
    keeps ``remote_code`` for that id alone) and only of code that is there: a preset config may drop
    ``auto_map``; a local or Hub config.json is whole."""
    if arch is None:
        return None, "its config.json is not known offline; --online reads it"
    if arch.source in ("config.json", "hub"):
        where = "the Hub's config.json" if arch.source == "hub" else "its config.json in the repository"
        return bool(arch.remote_code), f"{'auto_map' if arch.remote_code else 'no auto_map'} in {where}"
    if arch.remote_code:
        return True, "auto_map in its config.json, by the bundled model table"
    return None, "the bundled model table does not say; --online reads its config.json"
