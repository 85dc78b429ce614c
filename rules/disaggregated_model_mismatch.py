"""Flags a prefill worker that serves a different model from the decode workers of its graph.

## What it flags
In prefill/decode disaggregation (an NVIDIA Dynamo `DynamoGraphDeployment`, an llm-d model service)
the prefill workers compute the KV cache of a prompt and hand it to a decode worker. Every prefill
worker whose model (vLLM `--model` or the positional model, SGLang `--model-path`) differs from a decode
worker's of the same graph is reported at the prefill worker's model. Both models must be written as
literal values; a variable (`$MODEL`) is skipped. When one side is a local path and the other a hub id
they may be the same weights: a warning that says so.

## Why it matters
The KV cache a prefill worker transfers is laid out for its own model: layer count, KV heads and head
size. A decode worker of another model cannot use it (the transfer fails or, worse, decodes garbage from
a cache of another shape), and the graph's capacity arithmetic is that of two unrelated models. A 0.6B
prefill beside a 70B decode is a copy-paste left over from a small test.

## Example
```yaml
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: llama-disagg
spec:
  services:
    decode:
      componentType: worker
      subComponentType: decode
      resources:
        limits:
          gpu: "4"
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0
          command: ["python3", "-m", "dynamo.vllm"]
          args: ["--model", "meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size", "4"]
    prefill:
      componentType: worker
      subComponentType: prefill
      resources: {limits: {gpu: "1"}}
      extraPodSpec:
        mainContainer: {image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0", command: [python3, -m, dynamo.vllm],
                        args: [--model, Qwen/Qwen3-0.6B, --is-prefill-worker]}
```

## Use instead
The same graph in the `v1beta1` layout, both halves on the 70B model:
```yaml
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: llama-disagg
spec:
  components:
  - name: decode
    type: decode
    podTemplate:
      spec:
        containers:
        - name: main
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0
          command: [python3, -m, dynamo.vllm]
          args: [--model, meta-llama/Llama-3.3-70B-Instruct, --tensor-parallel-size, "4"]
          resources: {limits: {nvidia.com/gpu: "4"}}
  - name: prefill
    type: prefill
    podTemplate:
      spec:
        containers: [{name: main, image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0",
                      command: [python3, -m, dynamo.vllm], resources: {limits: {nvidia.com/gpu: "4"}},
                      args: [--model, meta-llama/Llama-3.3-70B-Instruct, --tensor-parallel-size, "4",
                             --disaggregation-mode, prefill]}]
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import Finding, RuleContext, ServedModel, unresolved

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG215", "disaggregated-model-mismatch", "error"
OPTIONS: dict = {}
SCOPE = "run"  # compares the prefill and decode workers of one graph, wherever they are defined


def _model_of(model) -> tuple[str, object] | None:
    """(the model as written, normalised; its setting) when it is a literal value."""
    setting = model.model
    if setting is None or not isinstance(setting.value, str) or unresolved(setting.value) or not setting.value.strip():
        return None
    return setting.value.strip().rstrip("/"), setting


def _is_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~"))


def check(models: list[ServedModel], ctx: RuleContext) -> Iterator[Finding]:
    decoders: dict[str, list[ServedModel]] = {}
    for other in ctx.models:
        if other.disaggregation is not None and other.disaggregation[1] == "decode":
            decoders.setdefault(other.disaggregation[0], []).append(other)
    for model in models:
        if model.disaggregation is not None and model.disaggregation[1] == "prefill":
            yield from _mismatch(model, decoders.get(model.disaggregation[0], []))


def _mismatch(model: ServedModel, decoders: list[ServedModel]) -> Iterator[Finding]:
    mine = _model_of(model)
    if mine is None:
        return
    for decode in decoders:
        theirs = _model_of(decode)
        if theirs is None or theirs[0] == mine[0]:
            continue
        where = theirs[1].location
        message = (f"prefill worker serves {mine[0]} but decode worker {decode.name} serves {theirs[0]} "
                   f"({where.path}:{where.line}): the KV cache it hands over is another model's")
        severity = ""
        if _is_path(mine[0]) != _is_path(theirs[0]):
            severity = "warning"
            message += "; one is a local path, so they may be the same weights (assumed different)"
        yield Finding(message, mine[1].location, severity=severity, setting="model", related=(where,),
                      remediation=f"serve the decode workers' model {theirs[0]} on the prefill workers too",
                      model=model.name, model_identity=model.identity)
        return
