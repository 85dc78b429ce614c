"""Memory the configuration takes out of the KV budget besides the served model's own weights:
speculative decoding (a draft model or MTP heads), LoRA slots, vision encoders, KV connectors and
weight offloading. Each deduction carries the sentence ``cfgcheck capacity`` shows as a reason; an
enabled feature whose size cannot be known makes the pool unknown instead of counting it as zero.

Upstream sources (vLLM unless stated): ``vllm/config/speculative.py`` (``method``/``model``,
``num_speculative_tokens``; MTP methods reuse the target's ``num_nextn_predict_layers``),
``vllm/lora/punica_wrapper`` + ``vllm/lora/layers`` (``max_loras`` slots of rank ``max_lora_rank`` per
target module, preallocated on the GPU), ``vllm/config/kv_transfer.py`` (``kv_buffer_size`` 1e9 bytes on
``kv_buffer_device`` "cuda" for the NCCL connectors), ``vllm/config/cache.py`` (``cpu_offload_gb``
per GPU, taken from the weights), SGLang ``server_args.py`` (``speculative_algorithm``,
``speculative_draft_model_path``).
"""

from __future__ import annotations

import json

from .architecture import Architecture
from .local_configs import lookup_architecture
from .tables import GiB
from ..records import Record
from ..settings import float_value, int_value, truthy

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

# vLLM LoRAConfig defaults (vllm/config/lora.py): max_loras 1, max_lora_rank 16.
LORA_MAX_LORAS_DEFAULT = 1
LORA_RANK_DEFAULT = 16
# KVTransferConfig.kv_buffer_size default (vllm/config/kv_transfer.py): 1e9 bytes.
KV_BUFFER_SIZE_DEFAULT = int(1e9)
# Connectors that stage transfers in a kv_buffer_size buffer on the GPU (vllm/distributed/kv_transfer).
_DEVICE_BUFFER_CONNECTORS = ("p2pncclconnector", "pyncclconnector")
# Connectors that move KV to CPU/disk/remote tiers: their GPU staging is chunk-sized (LMCache's
# VLLMPagedMemGPUConnectorV2 buffer, vLLM's OffloadingConnector) and not modelled further.
_HOST_TIER_CONNECTORS = ("lmcache", "offloading", "mooncake", "nixl", "sharedstorage", "flexkv", "hicache")
# Devices whose engine build sizes its KV cache its own way: vLLM on Gaudi runs through the vllm-gaudi
# plugin (HPU), which compiles a graph per bucket during warm-up and reserves memory for them out of the
# budget (https://docs.vllm.ai/projects/gaudi/en/latest/features/warmup.html, vllm_gaudi/v1/worker/hpu_worker.py);
# CUDA's profile, non-torch and graph terms do not describe it.
_UNMODELLED_KINDS = {"gaudi": "Gaudi overheads not modelled ({} runs vLLM through the vllm-gaudi plugin (HPU), "
                              "whose warm-up graphs and memory reserve are not CUDA's)"}


def unmodelled_device(gpu: Any) -> str | None:
    """Why the pool arithmetic does not apply to this accelerator, or None when it does."""
    kind = getattr(gpu, "kind", None)
    return _UNMODELLED_KINDS[kind].format(gpu.display or gpu.name) if kind in _UNMODELLED_KINDS else None


# Speculative methods that need no extra weights on the GPU.
_FREE_METHODS = ("ngram", "suffix", "prompt_lookup")
_MTP_METHODS = ("mtp", "deepseek_mtp", "qwen3_next_mtp", "ernie_mtp", "glm4_moe_mtp", "mimo_mtp", "longcat_flash_mtp",
                "nextn")


class Deductions(Record):  # never compared by value: a record, whose __init__ the import does not generate
    """Bytes per GPU taken from the budget, extra KV layers per token, and why."""

    __slots__ = ("weight_bytes", "extra_kv_layers", "draft", "reasons", "unknown", "upper_bound")

    def __init__(self, weight_bytes: int = 0, extra_kv_layers: int = 0, draft: Architecture | None = None,
                 reasons: list[str] | None = None, unknown: str | None = None, upper_bound: bool = False) -> None:
        self.weight_bytes = weight_bytes
        self.extra_kv_layers = extra_kv_layers  # draft / MTP layers whose KV shares the pool (same shape as the target's)
        self.draft = draft  # a separate draft model whose KV shares the pool
        self.reasons = [] if reasons is None else reasons
        self.unknown = unknown  # set when an enabled feature cannot be sized
        self.upper_bound = upper_bound  # an enabled feature not deducted: the pool is at most the estimate

    def add(self, nbytes: int, reason: str) -> None:
        self.weight_bytes += int(nbytes)
        self.reasons.append(reason)


def _json_value(value: Any) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            data = json.loads(value)
        except (ValueError, RecursionError):  # json's decoder recurses: deep nesting is a RecursionError
            return {}
        return data if isinstance(data, dict) else {}
    return {}


def _gib(n: float) -> str:
    return f"{n / GiB:.2f} GiB"


def speculative(model: Any, arch: Architecture, tp: int, config: dict | None, out: Deductions) -> None:
    """Draft model weights (and its KV in the pool) or MTP layers, when speculative decoding is on."""
    spec = _json_value(model.value("speculative_config"))
    method = str(spec.get("method") or model.value("speculative_algorithm") or "").lower()
    draft_id = spec.get("model") or model.value("speculative_model") or model.value("speculative_draft_model_path")
    if not (spec or method or draft_id):
        return
    if method in _FREE_METHODS or str(draft_id or "").startswith("[ngram"):
        out.reasons.append(f"speculative decoding ({method or 'ngram'}): no draft weights on the GPU")
        return
    if str(getattr(model, "engine", "") or "").lower() == "sglang":
        # The scheduler sizes the target's pool (init_target_memory_pool) before the draft worker loads and
        # allocates a pool of its own (sglang#36452, sglang#38364); sglang#23862 later budgets the draft inside
        # mem_fraction_static, which only shrinks the target's pool.
        out.reasons.append(f"speculative decoding ({method or 'draft model'}): SGLang sizes the target's pool before "
                           "it loads the draft, which gets a pool of its own (releases with sglang#23862 budget it "
                           "inside mem_fraction_static: smaller)")
        return
    if method in _MTP_METHODS or (method and "mtp" in method) or (draft_id is None and method in ("eagle", "")):
        layers = arch.mtp_layers
        if not layers:
            out.unknown = f"speculative method {method or 'MTP'} but {arch.name} declares no MTP layers (num_nextn_predict_layers)"
            return
        per_layer = (arch.weight_bytes_for() or 0) / max(1, arch.num_layers + layers)
        out.add(per_layer * layers / max(1, tp), f"MTP speculative decoding: {layers} extra layer(s), "
                f"~{_gib(per_layer * layers / max(1, tp))} of weights per GPU and their KV in the pool")
        out.extra_kv_layers += layers
        return
    draft = lookup_architecture(str(draft_id), (config or {}).get("model_configs")) if draft_id else None
    if draft is None or draft.weight_bytes_for() is None:
        # vLLM loads the draft before the profile run and its KV shares the budget: the pool without it is an
        # upper bound, which still answers whether a request cannot fit (a blank pool answered nothing).
        out.upper_bound = True
        out.reasons.append(f"speculative draft model {draft_id or '(unnamed)'} not known: its weights and KV share "
                           "the budget and are not deducted, so the pool is at most this")
        return
    draft_tp = int_value(spec.get("draft_tensor_parallel_size")) or tp
    nbytes = draft.weight_bytes_for() // max(1, draft_tp)
    out.add(nbytes, f"draft model {draft.name}: {_gib(nbytes)} of weights per GPU, its KV shares the pool")
    out.draft = draft


def lora(model: Any, arch: Architecture, tp: int, out: Deductions) -> None:
    """``max_loras`` preallocated adapter slots of rank ``max_lora_rank`` on every attention/MLP projection."""
    if not truthy(model.value("enable_lora")):
        return
    slots = int_value(model.value("max_loras")) or LORA_MAX_LORAS_DEFAULT
    rank = int_value(model.value("max_lora_rank")) or LORA_RANK_DEFAULT
    h, d = arch.hidden_size, arch.head_dim
    if not (h and d and arch.intermediate_size and arch.num_layers):
        out.unknown = "LoRA enabled but the model's layer shapes are unknown: its adapter slots cannot be sized"
        return
    qkv_out = (arch.num_attention_heads + 2 * arch.num_kv_heads) * d
    # A is rank x in, B is out x rank; column-parallel layers shard out, row-parallel ones shard in
    per_layer = (h + qkv_out / tp) + (arch.num_attention_heads * d / tp + h) + \
        (h + 2 * arch.intermediate_size / tp) + (arch.intermediate_size / tp + h)
    nbytes = int(slots * rank * per_layer * arch.num_layers * arch.dtype_bytes)
    out.add(nbytes, f"LoRA: {slots} slot(s) of rank {rank} preallocated, {_gib(nbytes)} per GPU")


def connectors(model: Any, out: Deductions) -> None:
    """KV connectors and weight offloading (``--kv-transfer-config``, ``--cpu-offload-gb``)."""
    offload = float_value(model.value("cpu_offload_gb"))
    if offload:
        out.add(-int(offload * GiB), f"--cpu-offload-gb {offload:g}: that much of the weights stays in CPU memory")
    kv = _json_value(model.value("kv_transfer_config"))
    name = str(kv.get("kv_connector") or "").lower()
    if not name:
        return
    if any(c in name for c in _DEVICE_BUFFER_CONNECTORS) and str(kv.get("kv_buffer_device") or "cuda") == "cuda":
        size = int(float_value(kv.get("kv_buffer_size")) or KV_BUFFER_SIZE_DEFAULT)
        out.add(size, f"KV connector {kv['kv_connector']}: a {_gib(size)} transfer buffer on the GPU (kv_buffer_size)")
    elif any(c in name for c in _HOST_TIER_CONNECTORS):
        out.reasons.append(f"KV connector {kv['kv_connector']}: offloaded KV lives in CPU/remote memory; its GPU staging "
                           "buffers are not modelled (vllm#21348 logged a pool 44% below this arithmetic with LMCache)")
    else:
        out.reasons.append(f"KV connector {kv['kv_connector']}: GPU memory it reserves not modelled")


def serves_text_only(model: Any) -> bool:
    """Every modality limited to 0 items a prompt, or --language-model-only: vLLM profiles no encoder pass."""
    limits = _json_value(model.value("limit_mm_per_prompt"))
    return bool(limits and all(int_value(v) == 0 for v in limits.values()) or truthy(model.value("language_model_only")))


def profiled_arch(model: Any, arch: Architecture) -> Architecture:
    """The architecture the profile run exercises: without its vision tower when the model is served text-only;
    with ``--mm-processor-kwargs '{"max_pixels": N}'`` the dummy image is that large (malaiwah/qwen38-27b-exl3's
    logs: max_pixels 8,388,608 and 4,194,304 give "a budget of 8192" and "4096 tokens")."""
    if not arch.vision_tower:
        return arch
    if serves_text_only(model):
        return arch.replaced(vision_tower=None)
    asked = int_value((_json_value(model.value("mm_processor_kwargs")) or {}).get("max_pixels"))
    if asked and asked < arch.vision_tower.get("max_pixels", 0):
        return arch.replaced(vision_tower={**arch.vision_tower, "max_pixels": asked})
    return arch


def vision(model: Any, arch: Architecture, out: Deductions) -> None:
    """A vision encoder's weights are in the checkpoint size; the profile run also encodes a dummy image."""
    if not (arch.vision or arch.vision_tower):
        return
    if serves_text_only(model):
        out.reasons.append("multimodal model served text-only: the vision encoder is not profiled")
        return
    out.reasons.append("vision encoder: its weights are counted in the checkpoint; " + (
        "vLLM's profile encodes one image of the preprocessor's largest size" if arch.vision_tower
        else "its profile activations are assumed inside the text profile peak"))


def deductions(model: Any, arch: Architecture, tp: int, config: dict | None) -> Deductions:
    out = Deductions()
    speculative(model, arch, tp, config, out)
    lora(model, arch, tp, out)
    connectors(model, out)
    vision(model, arch, out)
    return out
