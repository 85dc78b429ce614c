"""Flags a vLLM precision that the model's known GPU cannot run: bfloat16, or a quantization method below its minimum capability.

## What it flags
A vLLM served model whose GPU is known (a `nvidia.com/gpu.product` or GKE accelerator node label,
a `# cfgcheck: gpu=NAME` directive, or `gpu:` in `.cfgcheck.yaml`) and whose compute capability,
from NVIDIA's CUDA GPUs table, is below what vLLM requires for

- an explicit `--dtype bfloat16`: compute capability 8.0 (Ampere); T4 (7.5) and V100 (7.0) have none;
- a quantization method, the `--quantization` given or, without it, the `quant_method` of the
  checkpoint's `config.json` (from the bundled model table or a local copy under `model_configs`; vLLM
  then uses the checkpoint's), whose `get_min_capability()` in that vLLM release is above the GPU's:
  `fp8` needs 8.0 up to vLLM 0.13 and 7.5 from 0.14, `awq` 7.5, `gptq_marlin`/`awq_marlin` 8.0 up
  to 0.13, `mxfp4` (gpt-oss) 8.0, `modelopt` (FP8) 8.9 up to 0.26. The minimums are read per release from vLLM's source
  by `scripts/build_vllm_precision.py` (`data/vllm_precision.json` cites the sdist and file).

`--dtype auto` is not flagged (vLLM casts a bfloat16 checkpoint to float16 on such GPUs and warns), nor
a checkpoint whose method is only guessed from its name (`-AWQ`), nor a method the release does not
name. An unknown GPU, an AMD GPU, and other engines are not judged. When the vLLM version is assumed
(the `latest` tag, an uncatalogued version) and other releases would accept the GPU, the finding is a
warning that says which version was assumed.

FP8 KV cache (`--kv-cache-dtype fp8`) is not judged: vLLM's source shows no GPU refusing it. Below
compute capability 8.0, vLLM 0.11.0 and earlier fall back from the V1 engine to V0
(`_is_v1_supported_oracle`, `vllm/engine/arg_utils.py`), whose paged-attention kernels read an FP8 KV
cache; from 0.11.1 the attention selector (`get_valid_backends`, `vllm/platforms/cuda.py`) skips the
backends that cannot hold it and picks Triton attention, which lists `fp8` among its
`supported_kv_cache_dtypes` on every compute capability (`vllm/v1/attention/backends/triton_attn.py`).

## Why it matters
vLLM refuses to start: "Bfloat16 is only supported on GPUs with compute capability of at least
8.0" (`vllm/platforms/cuda.py`, `check_if_supports_dtype`; earlier `vllm/worker/worker.py`), and
"The quantization method fp8 is not supported for the current GPU. Minimum capability: 80"
(`VllmConfig._get_quantization_config`, `vllm/config`). The pod crash-loops after the image pull and weight
download, on every replica of the node pool.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen-t4
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: Tesla-T4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--dtype", "bfloat16"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen-t4
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: Tesla-T4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--dtype", "float16"]
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import (Finding, catalog_for, facts_version, label, needs_more_everywhere, served_architecture,
                          normalize_model_id, quant_bits_from_text, quantization_requirement, resolve_gpu, severity)

from ._pod_rules import how_to_pass

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG211", "precision-unsupported-on-gpu", "error"
OPTIONS: dict = {}

# bfloat16 needs compute capability 8.0 in every catalogued vLLM version (0.6.6 onwards):
# check_if_supports_dtype, vllm/platforms/cuda.py (earlier vllm/worker/worker.py).
_BFLOAT16 = (8, 0)


def _capability(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def check(model, ctx) -> Iterator[Finding]:
    if (model.engine or "").lower() != "vllm":
        return
    gpu, origin = resolve_gpu(model, getattr(ctx, "config", None))
    if gpu is None or gpu.vendor != "nvidia" or not gpu.compute_capability:
        return
    have = _capability(gpu.compute_capability)
    found = ctx.capacity(model).gpu_resolution
    assumed = found.assumed if found is not None else None  # a GPU read from a comment: a warning that says so
    where = f"{gpu.name} ({'assumed: ' + assumed if assumed else origin}) has {gpu.compute_capability}"
    dtype = model.setting("dtype")
    if dtype is not None and isinstance(dtype.value, str) and dtype.value.strip().lower() == "bfloat16" \
            and have < _BFLOAT16:
        yield Finding(f"{dtype.source} {dtype.value} needs compute capability 8.0; {where}: vLLM refuses to start",
                      dtype.location, remediation=f"{how_to_pass(model, 'dtype', 'float16')} (or a GPU of compute capability 8.0 or newer)",
                      setting="dtype", model=model.name, severity="warning" if assumed else "")
    for finding in _quantization(model, ctx, have, where):
        finding.severity = "warning" if assumed and finding.severity in ("", "error") else finding.severity
        yield finding


def _method(model, ctx) -> tuple[str, object, str] | None:
    """(method, location, what names it): the --quantization given, else the checkpoint's quant_method."""
    requested = model.setting("quantization")
    if requested is not None:
        if not isinstance(requested.value, str):
            return None
        return requested.value.strip().lower(), requested.location, f"{requested.source} {requested.value}"
    if model.model is None:
        return None
    model_id = str(model.model.value)
    if quant_bits_from_text(normalize_model_id(model_id).rsplit("/", 1)[-1])[1] is not None:
        return None  # the checkpoint's method would be guessed from its name: not sure enough
    arch = served_architecture(model, model_id, (ctx.config or {}).get("model_configs"))
    if arch is None or not arch.quantization:
        return None
    method = arch.quantization.lower()
    return method, model.model.location, f"the checkpoint of {model_id} ({method}, quant_method of its config.json)"


def _quantization(model, ctx, have: tuple[int, int], where: str) -> Iterator[Finding]:
    found = _method(model, ctx)
    catalog = catalog_for("vllm", model.engine_version) if found is not None else None
    version = facts_version(catalog.version) if catalog is not None else None
    requirement = quantization_requirement(version, found[0]) if version is not None else None
    if requirement is None or have >= requirement.min_capability:
        return
    method, location, named = found
    need = "{}.{}".format(*requirement.min_capability)
    checked = label(model, catalog)
    yield Finding(f"{named} needs compute capability {need} in {checked} ({requirement.source}); {where}: "
                  f"vLLM refuses to start (\"The quantization method {method} is not supported for the current GPU\")",
                  location, remediation=f"serve an unquantized checkpoint or one whose method needs at most compute "
                                        f"capability {'.'.join(map(str, have))} in this vLLM release, or use a newer GPU",
                  severity=severity(model, catalog, lambda: needs_more_everywhere(method, have), SEVERITY),
                  setting="quantization", model=model.name)
