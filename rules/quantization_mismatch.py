"""Flags `--quantization` that contradicts how the checkpoint is quantized.

## What it flags
A vLLM or SGLang served model whose `--quantization` names a method other than the `quant_method` of
the checkpoint's `quantization_config`, read from its `config.json` (a local copy under
`model_configs`, or the bundled model table built from the published `config.json` files), where
no engine path converts one into the other:

- an FP8 or MXFP4 checkpoint (DeepSeek-V3, Kimi-K2, gpt-oss) served with an integer weight-only
  method (`awq`, `gptq`, their Marlin kernels, `bitsandbytes`, `gguf`);
- an AWQ or GPTQ checkpoint served with `fp8`, `mxfp4`, `bitsandbytes` or `gguf`.

A checkpoint whose quantization is only guessed from its name (`-AWQ`, `-FP8`) is not judged, nor
one the table does not know, nor a method with a conversion path (`gptq` served as `gptq_marlin`,
`awq` as `awq_marlin` or `moe_wna16`).

## Why it matters
Both engines compare the two at start-up and stop: "Quantization method specified in the model
config (fp8) does not match the quantization method specified in the `quantization` argument
(awq)" (vLLM `ModelConfig._verify_quantization`, `vllm/config`; SGLang `ModelConfig._verify_quantization`,
`python/sglang/srt/configs/model_config.py`). The pod crash-loops after downloading the weights.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpt-oss
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "openai/gpt-oss-20b", "--quantization", "awq"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpt-oss
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "openai/gpt-oss-20b"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

from typing import Iterator

from cfgcheck.capacity import lookup_architecture
from cfgcheck.capacity.architecture import normalize_model_id, quant_bits_from_text
from cfgcheck.engines.versions import DISPLAY
from cfgcheck.model import Finding

CODE, NAME, SEVERITY = "CFG304", "quantization-mismatch", "error"
OPTIONS: dict = {}

_INTEGER_WEIGHT_ONLY = frozenset({"awq", "gptq", "awq_marlin", "gptq_marlin", "marlin", "bitsandbytes", "gguf"})
# checkpoint quant_method -> --quantization values that neither engine can load it with: no
# ``override_quantization_method`` of the requested method accepts such a checkpoint.
_CONTRADICTS = {
    "fp8": _INTEGER_WEIGHT_ONLY,
    "mxfp4": _INTEGER_WEIGHT_ONLY,
    "awq": frozenset({"fp8", "mxfp4", "bitsandbytes", "gguf"}),
    "gptq": frozenset({"fp8", "mxfp4", "bitsandbytes", "gguf"}),
}


def check(model, ctx) -> Iterator[Finding]:
    requested = model.setting("quantization")
    if model.engine not in ("vllm", "sglang") or requested is None or model.model is None:
        return
    wanted = str(requested.value).strip().lower()
    model_id = str(model.model.value)
    if quant_bits_from_text(normalize_model_id(model_id).rsplit("/", 1)[-1])[1] is not None:
        return  # the checkpoint's method would be guessed from its name: not sure enough
    arch = lookup_architecture(model_id, (ctx.config or {}).get("model_configs"))
    method = (arch.quantization or "").lower() if arch is not None else ""
    if wanted not in _CONTRADICTS.get(method, ()):
        return
    engine = DISPLAY.get(model.engine, model.engine)
    yield Finding(f"{requested.source} {requested.value} contradicts the checkpoint of {model_id}, quantized with "
                  f"{method} (quant_method of its config.json): {engine} refuses to start", requested.location,
                  remediation=f"remove --quantization (the engine reads {method} from the checkpoint), or serve a "
                              f"checkpoint quantized with {wanted}",
                  setting="quantization", related=(model.model.location,), model=model.name)
