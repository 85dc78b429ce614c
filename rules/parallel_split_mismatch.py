"""Flags a tensor parallel size that does not divide the model's attention heads evenly.

## What it flags
A vLLM or SGLang engine whose `tensor_parallel_size` does not divide the model's query attention
heads, or that splits its key/value heads unevenly: with fewer KV heads than ranks the ranks must
be a multiple of the KV heads (each head is then replicated), with more they must divide them. The
head counts come from the bundled model table (Hugging Face `config.json` facts) or `model_configs`;
a model the table does not know, MLA models (whose KV is one latent per token) and SGLang with
`--enable-dp-attention` (attention runs with TP / DP ranks) are not judged. Only the text tower is
checked: the table holds no vision-tower heads, and no quantization group sizes.

## Why it matters
The engine stops at start-up: vLLM's `ModelConfig.verify_with_parallel_config` raises `Total number of
attention heads (N) must be divisible by tensor parallel size (T)`, and `QKVParallelLinear`
(vllm/model_executor/layers/linear.py) asserts that the KV heads split or replicate evenly; SGLang
asserts the same when it builds the attention layers. It usually happens when a GPU count is raised
to 3 or 6, or a model is swapped for one with 40 or 28 heads.

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
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "3"]
          resources:
            limits:
              nvidia.com/gpu: 3
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
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "4"]
          resources:
            limits:
              nvidia.com/gpu: 4
```

## Options
None.
"""

from __future__ import annotations

from cfgcheck.api import Finding, as_int, served_architecture

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator


CODE, NAME, SEVERITY = "CFG210", "parallel-split-mismatch", "error"
OPTIONS: dict = {}


def _problem(heads: int, kv_heads: int, tp: int) -> str | None:
    if heads and heads % tp:
        return f"its {heads} attention heads are not divisible by tensor parallel size {tp}"
    if kv_heads and kv_heads >= tp and kv_heads % tp:
        return f"its {kv_heads} KV heads do not split evenly over {tp} ranks"
    if kv_heads and kv_heads < tp and tp % kv_heads:
        return f"{tp} ranks are not a multiple of its {kv_heads} KV heads (each rank needs whole replicas)"
    return None


def check(model, ctx) -> Iterator[Finding]:
    if model.engine not in ("vllm", "sglang") or model.model is None:
        return
    tp_setting = model.setting("tensor_parallel_size")
    tp = as_int(tp_setting.value) if tp_setting is not None else None
    if tp is None or tp <= 1 or model.value("enable_dp_attention") is True:
        return
    source = model.model.value
    if not isinstance(source, str):
        return
    name = source.strip().removeprefix("hf://").split("@", 1)[0]
    arch = served_architecture(model, name, (ctx.config or {}).get("model_configs"))
    if arch is None or arch.kv_lora_rank:
        return
    problem = _problem(arch.num_attention_heads, arch.num_kv_heads, tp)
    if problem is None:
        return
    fits = [n for n in range(1, 2 * tp + 1) if _problem(arch.num_attention_heads, arch.num_kv_heads, n) is None]
    nearest = min(fits, key=lambda n: (abs(n - tp), -n)) if fits else None
    yield Finding(f"{name}: {problem}: the engine stops at start-up", tp_setting.location,
                  remediation=f"use a tensor parallel size that divides the heads, e.g. {nearest}" if nearest else None,
                  setting="tensor_parallel_size", model=model.name)
