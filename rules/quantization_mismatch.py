"""Flags `--quantization` that contradicts how the checkpoint is quantized, or a `--dtype` vLLM refuses for the model type.

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

It also flags, for vLLM, `--dtype half` / `float16` on a model whose `model_type` (from its
`config.json`, as above) the vLLM release refuses float16 for: its `_FLOAT16_NOT_SUPPORTED_MODELS`
table (`gemma2`, `gemma3`, `glm4`, `plamo2` from vLLM 0.9, read per release from its source by
`scripts/build_vllm_precision.py`). Releases before 0.9 only warned, and `--dtype auto` is steered to
bfloat16 or float32 by vLLM itself: neither is flagged. When the vLLM version is assumed and other
releases accept float16 for the model type, the finding is a warning naming the assumed version.

And it flags, for vLLM, an explicit `--dtype` that the explicit `--quantization` method does not run
activations in: that release's `get_supported_act_dtypes()` of the method, read from its source like the
above: `--quantization gptq` with `--dtype bfloat16` up to vLLM 0.21, `awq` up to 0.23 (the explicit
method forces its float16-only kernel; the Marlin variants take bfloat16), `mxfp4` with `float16`.

## Why it matters
Both engines compare the two at start-up and stop: "Quantization method specified in the model
config (fp8) does not match the quantization method specified in the `quantization` argument
(awq)" (vLLM `ModelConfig._verify_quantization`, `vllm/config`; SGLang `ModelConfig._verify_quantization`,
`python/sglang/srt/configs/model_config.py`). The pod crash-loops after downloading the weights.
For the dtype vLLM stops with "The model type 'gemma2' does not support float16. Reason: Numerical
instability. Please use bfloat16 or float32 instead." (`_check_valid_dtype`, `vllm/config`), or
"torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]"
(`VllmConfig._get_quantization_config`, `vllm/config`).

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

from cfgcheck.api import (DISPLAY, Finding, act_dtype_refused_everywhere, act_dtypes, catalog_for, facts_version,
                          float16_refusal, float16_refused_everywhere, label, served_architecture,
                          normalize_model_id, quant_bits_from_text, severity)

from ._pod_rules import how_to_pass

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

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


# --dtype spellings -> the dtype vLLM makes of them (_STR_DTYPE_TO_TORCH_DTYPE, vllm/config)
_DTYPES = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32", "float32": "float32"}


def check(model, ctx) -> Iterator[Finding]:
    yield from _quantization(model, ctx)
    yield from _float16(model, ctx)
    yield from _act_dtype(model)


def _act_dtype(model) -> Iterator[Finding]:
    """An explicit --dtype the explicit --quantization method cannot run activations in."""
    dtype, requested = model.setting("dtype"), model.setting("quantization")
    if model.engine != "vllm" or dtype is None or requested is None or not isinstance(dtype.value, str) \
            or not isinstance(requested.value, str):
        return
    wanted, method = _DTYPES.get(dtype.value.strip().lower()), requested.value.strip().lower()
    catalog = catalog_for("vllm", model.engine_version) if wanted is not None else None
    version = facts_version(catalog.version) if catalog is not None else None
    found = act_dtypes(version, method) if version is not None else None
    if found is None or wanted in found[0]:
        return
    supported, source = found
    yield Finding(f"{dtype.source} {dtype.value} with {requested.source} {method}: {label(model, catalog)} runs "
                  f"{method} only in {', '.join(supported)} ({source}): vLLM refuses to start", dtype.location,
                  remediation=how_to_pass(model, "dtype", supported[0] if len(supported) == 1 else "auto")
                              + (", or the method's Marlin variant (--quantization " + method + "_marlin)"
                                 if method in ("awq", "gptq") else ""),
                  severity=severity(model, catalog, lambda: act_dtype_refused_everywhere(method, wanted), SEVERITY),
                  setting="dtype", related=(requested.location,), model=model.name)


def _float16(model, ctx) -> Iterator[Finding]:
    dtype = model.setting("dtype")
    if model.engine != "vllm" or dtype is None or model.model is None or \
            not isinstance(dtype.value, str) or _DTYPES.get(dtype.value.strip().lower()) != "float16":
        return
    arch = served_architecture(model, str(model.model.value), (ctx.config or {}).get("model_configs"))
    catalog = catalog_for("vllm", model.engine_version) if arch is not None and arch.model_type else None
    version = facts_version(catalog.version) if catalog is not None else None
    refusal = float16_refusal(version, arch.model_type) if version is not None else None
    if refusal is None:
        return
    reason, source = refusal
    yield Finding(f"{dtype.source} {dtype.value}: {label(model, catalog)} refuses float16 for model type "
                  f"{arch.model_type} ({model.model.value}): \"{reason}\" (_FLOAT16_NOT_SUPPORTED_MODELS, {source})",
                  dtype.location, remediation=f"{how_to_pass(model, 'dtype', 'bfloat16')} (compute capability 8.0 or newer) "
                                              "or float32, or leave it auto",
                  severity=severity(model, catalog, lambda: float16_refused_everywhere(arch.model_type), SEVERITY),
                  setting="dtype", related=(model.model.location,), model=model.name)


def _quantization(model, ctx) -> Iterator[Finding]:
    requested = model.setting("quantization")
    if model.engine not in ("vllm", "sglang") or requested is None or model.model is None:
        return
    wanted = str(requested.value).strip().lower()
    model_id = str(model.model.value)
    if quant_bits_from_text(normalize_model_id(model_id).rsplit("/", 1)[-1])[1] is not None:
        return  # the checkpoint's method would be guessed from its name: not sure enough
    arch = served_architecture(model, model_id, (ctx.config or {}).get("model_configs"))
    method = (arch.quantization or "").lower() if arch is not None else ""
    if wanted not in _CONTRADICTS.get(method, ()):
        return
    engine = DISPLAY.get(model.engine, model.engine)
    yield Finding(f"{requested.source} {requested.value} contradicts the checkpoint of {model_id}, quantized with "
                  f"{method} (quant_method of its config.json): {engine} refuses to start", requested.location,
                  remediation=f"remove {requested.source} (the engine reads {method} from the checkpoint), or serve a "
                              f"checkpoint quantized with {wanted}",
                  setting="quantization", related=(model.model.location,), model=model.name)
