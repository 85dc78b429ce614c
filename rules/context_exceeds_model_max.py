"""Flags a max-model-len above the model's maximum position embeddings without rope scaling.

## What it flags
`max_model_len` (vLLM `--max-model-len`, SGLang `--context-length`, LLMKube `vllmConfig.maxModelLen` /
`sglangConfig.contextLength`) larger than the longest context the model supports: its
`max_position_embeddings`, times the rope-scaling factor where its config declares YaRN-style scaling.
Not flagged when the configuration extends the context itself (`--hf-overrides` with `rope_scaling` /
`max_position_embeddings`, SGLang `--json-model-override-args`, `VLLM_ALLOW_LONG_MAX_MODEL_LEN`).
A warning, saying so, when the model is known only by its name (a local path such as
`/models/Qwen2.5-7B-Instruct`, or the same name under another organisation).

## Why it matters
vLLM refuses to start (`User-specified max_model_len ... is greater than the derived max_model_len`);
forced past that check, positions beyond the trained range produce garbage. Either way the context is
not really there.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen3-8b
spec:
  replicas: 1
  selector:
    matchLabels:
      app: qwen3-8b
  template:
    metadata:
      labels:
        app: qwen3-8b
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args:
            - --max-model-len
            - "131072"
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen3-8b
spec:
  replicas: 1
  selector:
    matchLabels:
      app: qwen3-8b
  template:
    metadata:
      labels:
        app: qwen3-8b
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args:
            - --max-model-len
            - "131072"
            - --hf-overrides
            - '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}'
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import Finding, served_architecture

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE = "CFG207"
NAME = "context-exceeds-model-max"
SEVERITY = "error"
OPTIONS: dict = {}

_EXTENDERS = (
    "hf-overrides", "hf_overrides", "rope-scaling", "rope_scaling", "json-model-override-args",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "max_position_embeddings",
)


def _extended(model) -> bool:
    for name in ("hf_overrides", "rope_scaling", "json_model_override_args"):
        if model.setting(name) is not None:
            return True
    for token in getattr(model, "argv", []) or []:
        if any(key in token.text for key in _EXTENDERS):
            return True
    return False


def check(model, ctx) -> Iterator[Finding]:
    config = getattr(ctx, "config", None) or {}
    setting = model.setting("max_model_len")
    if setting is None or model.model is None:
        return
    try:
        length = int(setting.value)
    except (TypeError, ValueError):
        return
    if length <= 0:  # -1 / auto: vLLM fits the length itself
        return
    arch = served_architecture(model, model.model_id(), config.get("model_configs"))
    if arch is None:
        return
    limit = arch.derived_max_len()
    if not limit or length <= limit or _extended(model):
        return
    scaled = " (with its rope scaling)" if limit != arch.max_position_embeddings else ""
    # a model matched by its name alone (a local path, another organisation) may not be that model
    assumed = f"; assumed: {arch.resolution}" if arch.assumed else ""
    named = model.model_named
    if named is not None:
        assumed += f"; {model.model.value} holds {named.value} (named by {named.source}, line {named.location.line})"
    yield Finding(
        message=f"max_model_len {length:,} is above {arch.name}'s maximum of {limit:,} tokens{scaled}{assumed}",
        location=setting.location,
        remediation=(
            f"set max_model_len to {limit:,} or less, or extend the context deliberately with rope scaling "
            "(--hf-overrides '{\"rope_scaling\": ...}') where the model supports it"
        ),
        setting="max_model_len",
        model=model.name,
        severity="warning" if arch.assumed else "",
    )
