"""KV-cache capacity: bytes per token, the pool, and pool-limited concurrency.

The arithmetic follows the engines (ENGINE-FACTS §4/§5): vLLM sizes a pool of blocks out of
``gpu_memory_utilization x device memory - weights - activation peak - non-torch - CUDA graphs`` (or
exactly ``--kv-cache-memory-bytes``), every layer group of a block holds ``block_size`` tokens, and a
full-length request needs ``cdiv(max_model_len, block_size)`` blocks of every full-attention group plus a
fixed number for sliding-window and Mamba/GDN groups. A documented measurement (the startup log's
``GPU KV cache size: N tokens`` written down in a comment or a ``# cfgcheck: kv-pool-tokens=N``
directive) beats everything else.

Nothing here reads YAML: it takes a :class:`~cfgcheck.model.ServedModel` and the parsed config.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field, fields
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from .engines.argv import human_int as argv_human_int
from .model import unresolved
from .paths import UnsafePath, inside_repo
from .textsafe import neutralise

GiB = 1024**3
MiB = 1024**2

POOL_SOURCES = ("measured", "explicit", "estimated", "unknown")

# --------------------------------------------------------------------------------------------------
# Calibration of the vLLM profile estimate (see bench/accuracy.py; tests/data/startup_logs.json).
# Activation peak of the profile run, per batched token: the MLP's gate/up/down intermediates and a
# few copies of the residual stream, at the activation dtype; plus the sampler warm-up's logits.
ACT_INTERMEDIATE_FACTOR = 3.0
ACT_HIDDEN_FACTOR = 2.0
ACT_CONSTANT = int(0.10 * GiB)
SAMPLER_LOGIT_COPIES = 1.0  # fp32 logits for max_num_seqs dummy requests (V0)
SAMPLER_LOGIT_COPIES_V1 = 2.0  # V1's sampler warm-up keeps logits and probabilities
NON_TORCH_BASE = int(0.45 * GiB)  # CUDA context, cuBLAS workspaces (beyond what torch accounts)
NON_TORCH_TP = int(0.90 * GiB)  # NCCL / custom all-reduce buffers when TP > 1
CUDAGRAPH_ESTIMATE = int(0.45 * GiB)  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (default since v0.21)
SGLANG_OVERHEAD = int(0.70 * GiB)  # context + allocator slack between weights and the KV budget

# Default gpu_memory_utilization changed from 0.9 to 0.92; ENGINE-FACTS verifies 0.9 in 0.10.2 and 0.92
# in 0.26.0. We assume the change came with CUDA-graph memory profiling being enabled by default
# (v0.21.0, whose log says the new default is "equivalent to" a lower utilization without it).
VLLM_UTIL_092_SINCE = (0, 21, 0)
VLLM_CUDAGRAPH_PROFILE_SINCE = (0, 21, 0)
VLLM_HYBRID_ALLOCATOR_SINCE = (0, 10, 0)  # sliding-window layers stop growing with L (V1 hybrid manager)
VLLM_USAGE_DEFAULTS_SINCE = (0, 8, 0)  # max_num_seqs 1024 / batched tokens 8192 on big GPUs


# --------------------------------------------------------------------------------------------------
# Data tables


@lru_cache(maxsize=None)
def _data(name: str) -> dict:
    text = resources.files("cfgcheck").joinpath("data", name).read_text(encoding="utf-8")
    return json.loads(text)


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``"v0.26.0"`` / ``"0.10.2rc1"`` -> ``(0, 26, 0)``; None when there is no version."""
    if not text:
        return None
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", str(text))
    if not m:
        return None
    return tuple(int(x) for x in m.groups(default="0"))


# --------------------------------------------------------------------------------------------------
# Architecture

_DTYPE_BYTES = {
    "float32": 4, "fp32": 4, "float": 4,
    "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2,
    "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "fp8_ds_mla": 1, "int8": 1, "uint8": 1,
}


@dataclass
class Architecture:
    """What KV and context arithmetic needs to know about a model."""

    name: str
    model_type: str = ""
    num_layers: int = 0
    num_attention_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0
    v_head_dim: int | None = None
    hidden_size: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    tie_word_embeddings: bool = False
    max_position_embeddings: int | None = None
    rope_scaling: dict | None = None
    params: float | None = None
    active_params: float | None = None
    num_experts: int | None = None
    experts_per_token: int | None = None
    dtype: str = "bfloat16"
    weight_bits: float = 16.0
    weight_bytes: int | None = None  # exact checkpoint size when known (safetensors index, table)
    quantization: str | None = None
    # MLA (DeepSeek V2/V3/R1, Kimi K2)
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    # sliding window
    sliding_window: int | None = None
    sliding_layers: int = 0
    # hybrid linear attention (Gated DeltaNet) / Mamba
    linear_layers: int = 0
    full_attention_interval: int | None = None
    linear_num_key_heads: int | None = None
    linear_num_value_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel_dim: int | None = None
    mamba_ssm_dtype: str | None = None  # the SSM state dtype the model's config asks for (else model dtype)
    task: str = "generate"
    source: str = "bundled"  # bundled | config.json
    note: str | None = None

    def __post_init__(self) -> None:
        if self.full_attention_interval and not self.linear_layers and self.num_layers:
            self.linear_layers = self.num_layers - self.num_layers // self.full_attention_interval
        if not self.num_kv_heads:
            self.num_kv_heads = self.num_attention_heads
        if not self.head_dim and self.hidden_size and self.num_attention_heads:
            self.head_dim = self.hidden_size // self.num_attention_heads

    # -- layout
    @property
    def is_mla(self) -> bool:
        return bool(self.kv_lora_rank)

    @property
    def is_hybrid(self) -> bool:
        return self.linear_layers > 0

    @property
    def full_layers(self) -> int:
        return max(0, self.num_layers - self.sliding_layers - self.linear_layers)

    @property
    def dtype_bytes(self) -> int:
        return _DTYPE_BYTES.get(str(self.dtype).lower(), 2)

    # -- derived limits
    def derived_max_len(self) -> int | None:
        """The longest context the engine accepts without overrides (vLLM ``_get_and_verify_max_len``)."""
        if not self.max_position_embeddings:
            return None
        derived = self.max_position_embeddings
        rs = self.rope_scaling or {}
        rtype = str(rs.get("rope_type") or rs.get("type") or "")
        factor = rs.get("factor")
        if factor and rtype not in ("su", "longrope", "llama3", "mrope", "default", ""):
            if rtype == "yarn" and rs.get("original_max_position_embeddings"):
                derived = int(rs["original_max_position_embeddings"])
            derived = int(derived * float(factor))
        return derived

    # -- weights
    def embedding_params(self) -> float:
        if not (self.vocab_size and self.hidden_size):
            return 0.0
        return float(self.vocab_size * self.hidden_size * (1 if self.tie_word_embeddings else 2))

    def estimated_params(self) -> float | None:
        if self.params:
            return self.params
        if not (self.num_layers and self.hidden_size):
            return None
        h = self.hidden_size
        attn = h * self.head_dim * (self.num_attention_heads + 2 * self.num_kv_heads) + self.num_attention_heads * self.head_dim * h
        inter = self.intermediate_size or 4 * h
        mlp = 3 * h * inter * (self.num_experts or 1)
        return float(self.num_layers * (attn + mlp) + self.embedding_params())

    def weight_bytes_for(self, bits: float | None = None) -> int | None:
        """Checkpoint bytes at ``bits`` per linear-layer parameter (embeddings stay 16-bit)."""
        if bits is None and self.weight_bytes:
            return self.weight_bytes
        bits = bits if bits is not None else self.weight_bits
        params = self.estimated_params()
        if not params:
            return None
        embed = min(self.embedding_params(), params)
        if bits >= 16:
            return int(params * bits / 8)
        return int(embed * 2 + (params - embed) * bits / 8)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


_ARCH_FIELDS = {f.name for f in fields(Architecture)}

_QUANT_BITS = [
    (re.compile(r"(nvfp4|mxfp4|fp4|w4a4)"), 4.5),
    (re.compile(r"(awq|gptq(?!-?int8)|int4|w4a16|4bit|4-bit|bnb|q4)"), 4.25),
    (re.compile(r"(fp8|int8|w8a8|w8a16|8bit|gptq-?int8)"), 8.0),
]
_QUANT_TOKEN = re.compile(
    r"[-_.](awq|gptq|int4|int8|fp8|nvfp4|mxfp4|fp4|w4a16|w8a8|w8a16|w4a4|bnb|4bit|8bit|quantized|marlin|"
    r"dynamic|gguf|mlx|exl2|exl3)(?=$|[-_.])"
)
_NAME_NOISE = re.compile(r"[-_.](instruct|chat|it|hf|base|thinking|pt)(?=$|[-_.])")


def _quant_bits_from_text(text: str | None) -> tuple[float | None, str | None]:
    if not text:
        return None, None
    low = str(text).lower()
    for pattern, bits in _QUANT_BITS:
        m = pattern.search(low)
        if m:
            return bits, m.group(1)
    return None, None


def normalize_model_id(model_id: str) -> str:
    """``hf://org/name@rev`` / ``/models/name`` / ``org/name`` -> ``org/name`` (or ``name``)."""
    text = str(model_id).strip().strip("\"'")
    text = re.sub(r"^(hf|huggingface|hub|s3|gs|pvc|oci|file)://", "", text, flags=re.I)
    text = re.sub(r"^https?://(www\.)?huggingface\.co/", "", text, flags=re.I)
    text = text.split("@", 1)[0].split("?", 1)[0].rstrip("/")
    if text.startswith(("/", ".", "~")) or text.count("/") > 1:
        text = text.rsplit("/", 1)[-1]
    return text


def _name_keys(model_id: str) -> list[str]:
    """Lookup keys from most to least specific: full id, name, name without quant/noise suffixes."""
    norm = normalize_model_id(model_id).lower()
    name = norm.rsplit("/", 1)[-1]
    keys = [norm, name]
    base = name
    m = _QUANT_TOKEN.search(name)
    if m:
        base = name[: m.start()]
    keys.append(base)
    for k in list(keys):
        stripped = _NAME_NOISE.sub("", k.rsplit("/", 1)[-1])
        stripped = re.sub(r"^meta-(?=llama)", "", stripped)
        keys.append(stripped)
    seen: list[str] = []
    for k in keys:
        if k and k not in seen:
            seen.append(k)
    return seen


@lru_cache(maxsize=None)
def _bundled_index() -> dict[str, dict]:
    index: dict[str, dict] = {}
    for entry in _data("models.json")["models"]:
        for hf_id in entry["ids"]:
            low = hf_id.lower()
            name = low.rsplit("/", 1)[-1]
            for key in (low, name, re.sub(r"^meta-(?=llama)", "", _NAME_NOISE.sub("", name))):
                index.setdefault(key, entry)
    return index


def bundled_models() -> list[dict]:
    return list(_data("models.json")["models"])


def _arch_from_entry(entry: dict, name: str) -> Architecture:
    kw = {k: v for k, v in entry.items() if k in _ARCH_FIELDS}
    kw.setdefault("name", entry["ids"][0])
    kw["name"] = entry["ids"][0]
    return Architecture(**kw)


def architecture_from_config(cfg: dict, name: str, weight_bytes: int | None = None) -> Architecture:
    """Build an :class:`Architecture` from a Hugging Face ``config.json`` (nested ``text_config`` aware)."""
    merged = dict(cfg)
    for nested in ("text_config", "llm_config", "language_config"):
        if isinstance(cfg.get(nested), dict):
            merged.update(cfg[nested])
    g = merged.get
    layers = int(g("num_hidden_layers") or g("n_layers") or g("num_layers") or 0)
    heads = int(g("num_attention_heads") or g("n_heads") or 0)
    kv = int(g("num_key_value_heads") or g("n_kv_heads") or g("multi_query_group_num") or heads or 0)
    hidden = g("hidden_size") or g("d_model")
    head_dim = g("head_dim") or (int(hidden) // heads if hidden and heads else 0)
    layer_types = g("layer_types") or []
    model_type = str(g("model_type") or cfg.get("model_type") or "")
    window = g("sliding_window")
    if g("use_sliding_window") is False:
        window = None
    sliding = linear = 0
    if layer_types:
        for t in layer_types:
            t = str(t)
            if "sliding" in t:
                sliding += 1
            elif "linear" in t or "mamba" in t or "deltanet" in t:
                linear += 1
    elif window:
        if model_type.startswith("gemma3"):
            sliding = layers - layers // int(g("sliding_window_pattern") or 6)
        elif model_type.startswith(("gemma2", "cohere2")):
            sliding = (layers + 1) // 2
        elif model_type.startswith("qwen"):
            window = None
        else:
            sliding = layers
    if not sliding:
        window = None
    interval = g("full_attention_interval")
    if interval and not linear:
        linear = layers - layers // int(interval)
    qcfg = g("quantization_config") or cfg.get("quantization_config") or {}
    bits = None
    quant = None
    if isinstance(qcfg, dict) and qcfg:
        quant = str(qcfg.get("quant_method") or "") or None
        if qcfg.get("bits"):
            bits = float(qcfg["bits"]) + (0.25 if float(qcfg["bits"]) < 8 else 0)
        elif quant in ("fp8", "fbgemm_fp8"):
            bits = 8.0
        elif quant == "mxfp4":
            bits = 4.5
        else:
            groups = qcfg.get("config_groups") or {}
            for grp in groups.values() if isinstance(groups, dict) else []:
                w = (grp or {}).get("weights") or {}
                if w.get("num_bits"):
                    bits = float(w["num_bits"]) + (0.25 if int(w["num_bits"]) < 8 else 0)
                    break
    experts = g("num_experts") or g("n_routed_experts") or g("num_local_experts")
    return Architecture(
        name=name,
        model_type=model_type,
        num_layers=layers,
        num_attention_heads=heads,
        num_kv_heads=kv,
        head_dim=int(head_dim or 0),
        v_head_dim=g("v_head_dim") if not g("kv_lora_rank") else None,
        hidden_size=int(hidden) if hidden else None,
        intermediate_size=g("moe_intermediate_size") or g("intermediate_size"),
        vocab_size=g("vocab_size"),
        tie_word_embeddings=bool(g("tie_word_embeddings", False)),
        max_position_embeddings=g("max_position_embeddings") or g("max_sequence_length") or g("seq_length"),
        rope_scaling=g("rope_scaling") or (g("rope_parameters") if isinstance(g("rope_parameters"), dict) and g("rope_parameters").get("factor") else None),
        num_experts=experts,
        experts_per_token=g("num_experts_per_tok") or g("moe_topk") or g("num_experts_per_token"),
        dtype=str(g("torch_dtype") or g("dtype") or "bfloat16"),
        weight_bits=bits or 16.0,
        weight_bytes=weight_bytes,
        quantization=quant,
        kv_lora_rank=g("kv_lora_rank"),
        qk_rope_head_dim=g("qk_rope_head_dim"),
        sliding_window=int(window) if window else None,
        sliding_layers=sliding,
        linear_layers=linear,
        full_attention_interval=interval,
        linear_num_key_heads=g("linear_num_key_heads"),
        linear_num_value_heads=g("linear_num_value_heads"),
        linear_key_head_dim=g("linear_key_head_dim"),
        linear_value_head_dim=g("linear_value_head_dim"),
        linear_conv_kernel_dim=g("linear_conv_kernel_dim"),
        source="config.json",
    )


class ModelConfigError(ValueError):
    """A ``config.json`` under ``model_configs`` that is not a Hugging Face model configuration."""


def _local_architecture(folder: Path, norm: str, qbits: float | None, qname: str | None) -> Architecture:
    """The architecture ``folder/config.json`` describes; ModelConfigError when it describes none."""
    where = f"{norm}/config.json under model_configs"
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ModelConfigError(f"{where} cannot be read as JSON: {type(exc).__name__}") from None
    if not isinstance(cfg, dict):
        raise ModelConfigError(f"{where} is a JSON {type(cfg).__name__}, not an object")
    weight = None
    idx = folder / "model.safetensors.index.json"
    if idx.is_file():
        try:
            weight = int(json.loads(idx.read_text(encoding="utf-8"))["metadata"]["total_size"])
        except (OSError, ValueError, KeyError, TypeError, OverflowError):
            weight = None
    try:
        arch = architecture_from_config(cfg, norm, weight)
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ModelConfigError(f"{where} has a field of the wrong type: {type(exc).__name__}") from None
    if qbits and arch.weight_bits >= 16 and weight is None:
        arch.weight_bits, arch.quantization = qbits, qname
    return arch


def lookup_architecture(model_id: str | None, model_configs_dir: Path | str | None = None,
                        problems: list[str] | None = None) -> Architecture | None:
    """The architecture of ``model_id``: a local ``DIR/<org>/<name>/config.json``, else the bundled table.

    Quantized repositories (``-AWQ``, ``-GPTQ-Int4``, ``-FP8``, ``-NVFP4`` ...) map to their base
    architecture with the weight size of the quantized checkpoint. A local ``config.json`` that is not
    a model configuration makes the architecture unknown (the user meant it to be used: no silent
    fallback to the bundled table); why is appended to ``problems``.
    """
    if not model_id:
        return None
    norm = normalize_model_id(model_id)
    qbits, qname = _quant_bits_from_text(norm.rsplit("/", 1)[-1])
    if model_configs_dir:
        base = Path(model_configs_dir)
        candidates = [base / norm, base / norm.rsplit("/", 1)[-1]]
        raw = str(model_id)
        if raw.startswith("/"):
            candidates.append(Path(raw))
        for cand in candidates:
            try:  # the model id comes from the linted file: it must not lead out of model_configs
                cand = inside_repo(base, cand, what="model config folder")
            except UnsafePath:
                continue
            if (cand / "config.json").is_file():
                try:
                    return _local_architecture(cand, norm, qbits, qname)
                except ModelConfigError as exc:
                    if problems is not None:
                        problems.append(str(exc))
                    return None
    index = _bundled_index()
    for key in _name_keys(norm):
        entry = index.get(key)
        if entry is not None:
            arch = _arch_from_entry(entry, norm)
            if qbits and (qbits < arch.weight_bits or arch.weight_bytes is None and qbits != arch.weight_bits):
                arch.weight_bits, arch.quantization, arch.weight_bytes = qbits, qname, None
            if norm.lower() != arch.name.lower():
                arch.note = ((arch.note + "; ") if arch.note else "") + f"{norm} mapped to {arch.name}"
                arch.name = norm
            return arch
    return None


# --------------------------------------------------------------------------------------------------
# GPU


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: int
    vendor: str = "nvidia"
    nominal_gb: float | None = None
    source: str | None = None

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / GiB


def _norm_words(text: str) -> str:
    text = str(text).lower()
    return " " + " ".join(re.findall(r"[a-z0-9]+", text)) + " "


@lru_cache(maxsize=None)
def _gpu_aliases() -> list[tuple[str, dict]]:
    out = []
    for entry in _data("gpus.json")["gpus"]:
        names = set(entry["aliases"]) | {entry["name"]}
        for alias in names:
            out.append((_norm_words(alias), entry))
    out.sort(key=lambda a: -len(a[0]))
    return out


def _gpu_from_entry(entry: dict) -> Gpu:
    return Gpu(entry["name"], int(entry["memory_bytes"]), entry.get("vendor", "nvidia"), entry.get("nominal_gb"), entry.get("source"))


def lookup_gpu(text: str | None) -> Gpu | None:
    """A GPU from a name or a node label value: ``H100-80GB``, ``NVIDIA-A100-SXM4-80GB``, ``nvidia-l4``,
    ``Tesla-T4``, ``AMD_Instinct_MI300X``, ``g6e.xlarge``; None when unknown or ambiguous (bare ``A100``)."""
    if not text:
        return None
    raw = str(text).strip()
    words = _norm_words(raw)
    # MIG slices report the slice, not the card
    if re.search(r"mig \d+g \d+gb", words):
        m = re.search(r"mig \d+g (\d+)gb", words)
        return Gpu(raw, int(int(m.group(1)) * 1e9 * 0.97), "nvidia", float(m.group(1)), "MIG slice: nominal size less 3%")
    for alias, entry in _gpu_aliases():
        if alias in words:
            return _gpu_from_entry(entry)
    inst = re.match(r"^([a-z0-9]+(?:-[a-z]+gpu|-standard)?)[.-]", raw.lower())
    if inst:
        target = _data("gpus.json")["instance_types"].get(inst.group(1))
        if target:
            return gpu_by_name(target)
    return None


def gpu_by_name(name: str) -> Gpu | None:
    for entry in _data("gpus.json")["gpus"]:
        if entry["name"] == name:
            return _gpu_from_entry(entry)
    return None


def resolve_gpu(model: Any, config: dict | None = None) -> tuple[Gpu | None, str | None]:
    """The GPU a served model runs on and where that was read from (or why it is unknown)."""
    config = config or {}
    tried: list[str] = []
    directive = model.directive("gpu") if hasattr(model, "directive") else None
    candidates: list[tuple[str, str]] = []
    if directive is not None:
        candidates.append((directive.value, "directive"))
    if getattr(model, "gpu_product", None):
        candidates.append((model.gpu_product, "gpu product"))
    for label, value in getattr(model, "gpu_labels", ()):
        candidates.append((value, label))
    cfg_gpu = config.get("gpu")
    if isinstance(cfg_gpu, dict):
        cfg_gpu = cfg_gpu.get("name") or cfg_gpu.get("product")
    if cfg_gpu:
        candidates.append((str(cfg_gpu), "config"))
    for text, origin in candidates:
        gpu = lookup_gpu(text)
        if gpu is not None:
            return gpu, origin
        tried.append(f"{text!r} ({origin})")
    mem = getattr(model, "gpu_memory_bytes", None)
    label_mem = (getattr(model, "node_selector", None) or {}).get("nvidia.com/gpu.memory")
    if mem:
        return Gpu(f"{mem / GiB:.0f}GiB", int(mem), "unknown", None, "stated memory"), "stated memory"
    if label_mem and str(label_mem).isdigit():
        b = int(label_mem) * MiB - 450 * MiB
        return Gpu(f"{int(label_mem)}MiB", b, "nvidia", None, "nvidia.com/gpu.memory label"), "nvidia.com/gpu.memory"
    if tried:
        return None, "unknown GPU " + ", ".join(tried)
    return None, "GPU not stated (add a nodeSelector nvidia.com/gpu.product, `# cfgcheck: gpu=NAME`, or `gpu:` in .cfgcheck.yaml)"


# --------------------------------------------------------------------------------------------------
# Engine defaults


def _is_vllm(engine: str | None) -> bool:
    return (engine or "").lower() in ("vllm", "unknown", "")


def default_gpu_memory_utilization(engine: str | None, version: str | None) -> float | None:
    if (engine or "").lower() == "sglang":
        return None
    v = parse_version(version)
    if v is None or v >= VLLM_UTIL_092_SINCE:
        return 0.92
    return 0.9


def _big_gpu(gpu: Gpu | None) -> bool | None:
    if gpu is None:
        return None
    return gpu.memory_bytes >= 70 * GiB and not gpu.name.startswith("A100") and gpu.name != "GB10"


def default_max_num_seqs(engine: str | None, version: str | None, gpu: Gpu | None) -> int | None:
    """vLLM's API-server default (ENGINE-FACTS §2); None when it depends on something unknown."""
    if (engine or "").lower() == "sglang":
        return None
    v = parse_version(version)
    if v is not None and v < VLLM_USAGE_DEFAULTS_SINCE:
        return 256
    big = _big_gpu(gpu)
    if big is None:
        return None
    return 1024 if big else 256


def min_default_max_num_seqs(engine: str | None, version: str | None) -> int | None:
    """A lower bound of the default that holds on every GPU (vLLM: 256)."""
    if (engine or "").lower() == "sglang":
        return None
    return 256


def default_max_num_batched_tokens(engine: str | None, version: str | None, gpu: Gpu | None) -> int:
    v = parse_version(version)
    if v is not None and v < VLLM_USAGE_DEFAULTS_SINCE:
        return 2048
    if gpu is not None and v is not None and v >= (0, 33, 0) and gpu.memory_bytes >= 160 * GiB:
        return 16384
    return 8192 if _big_gpu(gpu) else 2048


def sglang_default_mem_fraction(gpu: Gpu, tp: int, pp: int = 1) -> float:
    """``mem_fraction_static`` when unset (ENGINE-FACTS §5, sglang/srt/arg_groups/memory_hook.py)."""
    gib = gpu.memory_bytes / GiB
    chunk = 2048 if gib < 20 else 4096 if gib < 60 else 8192 if gib < 160 else 16384
    graph = 0.25 * GiB if gib < 35 else 0.5 * GiB if gib < 90 else 1.0 * GiB
    reserved = 512 * 1e6 + 1.5e6 * max(chunk, 2048) + tp * pp / 8 * GiB + graph
    if gib > 60:
        reserved = max(reserved, 10 * GiB)
    return round((gpu.memory_bytes - reserved) / gpu.memory_bytes, 3)


# --------------------------------------------------------------------------------------------------
# KV layout


@dataclass
class KvLayout:
    """Per-GPU KV layout of a model under an engine config: the block arithmetic of vLLM V1."""

    block_size: int
    group_size: int  # layers sharing one block tensor (KVCacheTensor count)
    page_bytes: int  # bytes of one block of one layer
    full_groups: int
    sliding_groups: int
    mamba_groups: int
    sliding_window: int | None
    mamba_blocks: int  # blocks per request per Mamba/GDN group (1 none, 2 align)
    max_num_batched_tokens: int
    full_bytes_per_token: int  # all full-attention layers on this GPU
    sliding_bytes_per_token: int
    mamba_state_bytes: int  # per request, all Mamba/GDN layers on this GPU

    @property
    def block_bytes(self) -> int:
        return self.page_bytes * self.group_size

    def blocks_per_request(self, max_model_len: int) -> int:
        n = self.full_groups * math.ceil(max_model_len / self.block_size)
        if self.sliding_groups:
            span = min((self.sliding_window or max_model_len) - 1 + self.max_num_batched_tokens, max_model_len)
            n += self.sliding_groups * (math.ceil(span / self.block_size) + 1)
        n += self.mamba_groups * self.mamba_blocks
        return max(n, 1)

    def fixed_blocks(self) -> int:
        return self.blocks_per_request(1) - self.full_groups


def kv_cache_dtype_bytes(kv_cache_dtype: str | None, model_dtype: str | None) -> int:
    kv = str(kv_cache_dtype or "auto").lower()
    if kv.startswith("fp8") or kv in ("int8", "fp8_inc"):
        return 1
    if kv not in ("auto", "", "none"):
        return _DTYPE_BYTES.get(kv, 2)
    return _DTYPE_BYTES.get(str(model_dtype or "bfloat16").lower(), 2)


def kv_layout(
    arch: Architecture,
    *,
    tp: int = 1,
    pp: int = 1,
    kv_cache_dtype: str | None = "auto",
    dtype: str | None = None,
    block_size: int | None = None,
    mamba_ssm_dtype: str | None = None,
    mamba_dtype: str | None = None,
    prefix_caching: bool = False,
    max_num_batched_tokens: int = 2048,
    hybrid_allocator: bool = True,
) -> KvLayout:
    tp, pp = max(1, int(tp or 1)), max(1, int(pp or 1))
    model_dtype = dtype if dtype and str(dtype).lower() != "auto" else arch.dtype
    b = kv_cache_dtype_bytes(kv_cache_dtype, model_dtype)
    if arch.is_mla:
        per_layer = (arch.kv_lora_rank + (arch.qk_rope_head_dim or 0)) * b
        if str(kv_cache_dtype or "").lower() == "fp8_ds_mla":
            per_layer = 656
    else:
        kvh = max(1, arch.num_kv_heads // tp)
        per_layer = kvh * (arch.head_dim + (arch.v_head_dim or arch.head_dim)) * b
    full = arch.full_layers
    sliding = arch.sliding_layers
    linear = arch.linear_layers
    if not hybrid_allocator:
        full, sliding = full + sliding, 0
    # pipeline parallel: each rank holds a slice of the layers
    full_r = math.ceil(full / pp) if full else 0
    sliding_r = math.ceil(sliding / pp) if sliding else 0
    linear_r = math.ceil(linear / pp) if linear else 0
    mamba_page = 0
    if linear_r:
        def _b(explicit: str | None, fallback: str | None) -> int:
            if explicit and str(explicit).lower() != "auto":
                return _DTYPE_BYTES.get(str(explicit).lower(), 2)
            return _DTYPE_BYTES.get(str(fallback or model_dtype).lower(), 2)

        sb = _b(mamba_ssm_dtype, arch.mamba_ssm_dtype)
        cb = _b(mamba_dtype, None)
        kh = arch.linear_num_key_heads or 16
        vh = arch.linear_num_value_heads or 32
        kd = arch.linear_key_head_dim or 128
        vd = arch.linear_value_head_dim or 128
        ck = arch.linear_conv_kernel_dim or 4
        conv = (ck - 1) * (2 * kh * kd + vh * vd) // tp * cb
        ssm = (vh // tp) * vd * kd * sb
        mamba_page = conv + ssm
    align = 16
    if block_size:
        bs = int(block_size)
    elif arch.is_mla:
        bs = 64
    else:
        bs = 16
    if mamba_page and per_layer:
        bs = max(bs, align * math.ceil(mamba_page / (align * per_layer)))
    counts = [c for c in (full_r, sliding_r, linear_r) if c]
    group_size = min(counts) if counts else 1
    if len(counts) == 1:
        group_size = counts[0]
    page = bs * per_layer if per_layer else mamba_page
    return KvLayout(
        block_size=bs,
        group_size=group_size,
        page_bytes=page,
        full_groups=math.ceil(full_r / group_size) if full_r else 0,
        sliding_groups=math.ceil(sliding_r / group_size) if sliding_r else 0,
        mamba_groups=math.ceil(linear_r / group_size) if linear_r else 0,
        sliding_window=arch.sliding_window,
        mamba_blocks=2 if prefix_caching else 1,
        max_num_batched_tokens=int(max_num_batched_tokens or 2048),
        full_bytes_per_token=full_r * per_layer,
        sliding_bytes_per_token=sliding_r * per_layer,
        mamba_state_bytes=linear_r * mamba_page,
    )


def kv_bytes_per_token(arch: Architecture, tp: int = 1, kv_cache_dtype: str | None = "auto", dtype: str | None = None, pp: int = 1) -> int:
    """Per-GPU KV bytes one more token of context costs (full-attention layers; sliding layers when a
    model has no full-attention layer)."""
    lay = kv_layout(arch, tp=tp, pp=pp, kv_cache_dtype=kv_cache_dtype, dtype=dtype)
    return lay.full_bytes_per_token or lay.sliding_bytes_per_token


# --------------------------------------------------------------------------------------------------
# Estimate


@dataclass
class CapacityEstimate:
    engine: str | None = None
    engine_version: str | None = None
    model: str | None = None
    gpu: str | None = None
    gpu_memory_bytes: int | None = None
    gpus: int | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str | None = None
    kv_bytes_per_token: int | None = None
    kv_pool_tokens: int | None = None
    kv_pool_source: str = "unknown"
    max_concurrency: float | None = None
    pool_bytes: int | None = None
    reasons: list[str] = field(default_factory=list)
    # provenance and arithmetic detail (not in the JSON contract)
    max_model_len_source: str | None = None  # explicit | model-default
    max_num_seqs_source: str | None = None  # explicit | default
    kv_pool_evidence: str | None = None  # "comment at path:line" / "directive" ...
    architecture: Architecture | None = None
    layout: KvLayout | None = None
    num_blocks: int | None = None
    weight_bytes_per_gpu: int | None = None

    JSON_FIELDS = (
        "gpu", "gpu_memory_bytes", "gpus", "tensor_parallel_size", "max_model_len", "max_num_seqs",
        "gpu_memory_utilization", "kv_cache_dtype", "kv_bytes_per_token", "kv_pool_tokens", "kv_pool_source",
        "max_concurrency", "pool_bytes",
    )

    def to_dict(self) -> dict:
        out = {name: getattr(self, name) for name in self.JSON_FIELDS}
        out["max_concurrency"] = None if self.max_concurrency is None else round(self.max_concurrency, 2)
        out["reasons"] = list(self.reasons)
        if self.kv_pool_evidence:
            out["kv_pool_evidence"] = self.kv_pool_evidence
        return out


def concurrency_at(estimate: CapacityEstimate, max_model_len: int | None) -> float | None:
    """Full-length requests of ``max_model_len`` tokens that fit the pool at once.

    A measured pool (tokens as the startup log reports them) is translated with ``tokens / L``, the
    documented arithmetic (ENGINE-FACTS §4); explicit and estimated pools use the engine's block
    arithmetic, which also handles sliding-window and hybrid models."""
    if not max_model_len or max_model_len <= 0:
        return None
    if estimate.kv_pool_source != "measured" and estimate.num_blocks is not None and estimate.layout is not None:
        return estimate.num_blocks / estimate.layout.blocks_per_request(int(max_model_len))
    if estimate.kv_pool_tokens is None:
        return None
    return estimate.kv_pool_tokens / max_model_len


def _largest_len(estimate: CapacityEstimate, at_least: float) -> int | None:
    if concurrency_at(estimate, 1) is None:
        return None
    if concurrency_at(estimate, 1) < at_least:
        return None
    lo, hi = 1, 1 << 27
    while lo < hi:
        mid = (lo + hi + 1) // 2
        c = concurrency_at(estimate, mid)
        if c is not None and c >= at_least - 1e-12:
            lo = mid
        else:
            hi = mid - 1
    return lo


def longest_fitting_len(estimate: CapacityEstimate) -> int | None:
    """The longest max_model_len for which one full-length request fits the pool."""
    return _largest_len(estimate, 1.0)


def _round_down_clean(n: int) -> int:
    if n >= 1024:
        return n // 1024 * 1024
    if n >= 256:
        return n // 256 * 256
    return n


def cap_for(estimate: CapacityEstimate, max_num_seqs: int | None) -> int | None:
    """Largest max_model_len that keeps ``max_num_seqs`` full-length requests inside the pool, rounded
    down to a multiple of 1024 (256 below 1024); None when unknown or when nothing fits."""
    if not max_num_seqs or max_num_seqs <= 0:
        return None
    try:
        seqs = float(max_num_seqs)
    except OverflowError:  # more sequences than a float holds (a 400-digit value): no length fits
        return None
    n = _largest_len(estimate, seqs)
    if n is None or n < 1:
        return None
    return _round_down_clean(n)


# -- measured pools in comments

# Comments come from pull requests: the patterns run on whole comments are linear in time. A number
# starts only where no digit (or digit and separator) precedes it, so a search never retries inside a
# run of digits; a count of more than _MAX_COUNT_DIGITS digits is not a token count (and would reach
# Python's int-string conversion limit).
_NUM = r"(?<!\d)(?<!\d[,_])(\d{1,3}(?:[,_ ]\d{3})+|\d{4,})(?!\d)( ?[kK](?![a-zA-Z]))?"
_NUM_RE = re.compile(_NUM)
_MAX_COUNT_DIGITS = 15
_ARROW = re.compile(_NUM + r"\s*(?:tokens?\s*)?(?:->|→|=>|to)\s*" + _NUM)
_DIRECTIVE_WORD = re.compile(r"cfgcheck\s*:")
_POOL_KEYWORD = re.compile(
    r"\bpool\b|kv[ _-]?cache size|kv[- ]pool|gpu kv cache|max_total_num_tokens|#tokens|kv[- ]cache (?:holds|of|is|:)", re.I
)
_AFTER_EXCLUDE = re.compile(r"^\s*(?:tokens? per request|[-]?token (?:context|window|prompt|request)|max|ctx|context|gib|gb|mib|mb|bytes|b\b|%|x\b|tok/s|ms|s\b|req)", re.I)
# Run on the 40 characters before a number. The run of non-word characters between the word and the
# number (": ", " = ", " -> ") is bounded, so a search costs a few steps per position whatever it is given.
_BEFORE_EXCLUDE = re.compile(r"(max[-_ ]?model[-_ ]?len|maxmodellen|context(?:[-_ ]?len(?:gth)?)?|ctx|prompts?|at|for|l ?=|cap|window|parallel|slots|requests?)\W{0,10}$", re.I)
_BEFORE_PREFER = re.compile(r"(gives|now|is|are|measured|reports?|logged|holds|:|=|->|→|to|of)\W{0,10}$", re.I)
_BEFORE_AVOID = re.compile(r"(was|from|leaves?|without|before|old|previously|instead of)\b[^,;]{0,25}$", re.I)
_HYPOTHETICAL = re.compile(r"\b(but|oom|ooms|would|if|fails?|crash)", re.I)


def _parse_count(num: str, k: str | None) -> int | None:
    digits = num.replace(",", "").replace("_", "").replace(" ", "")
    if len(digits) > _MAX_COUNT_DIGITS:
        return None
    value = int(digits)
    if k:
        value *= 1000 if k.strip() == "k" else 1024
    return value


def _pool_numbers_in(text: str, exclude: Iterable[int] = ()) -> int | None:
    """The pool size a comment line states, or None."""
    if not _POOL_KEYWORD.search(text):
        return None
    excluded = {x for x in (_int(v) for v in exclude) if x}
    candidates: list[tuple[int, int, int]] = []  # (score, position, value)
    for m in _NUM_RE.finditer(text):
        value = _parse_count(m.group(1), m.group(2))
        if value is None or value < 256 or value in excluded:
            continue
        before = text[max(0, m.start() - 40): m.start()]
        after = text[m.end(): m.end() + 20]
        tokens_after = re.match(r"^\s*[- ]?tokens?\b", after, re.I)
        if not tokens_after and _AFTER_EXCLUDE.match(after):
            continue
        if not tokens_after and _BEFORE_EXCLUDE.search(before):
            continue
        if re.match(r"^\s*[-]?token (context|window|prompt|request)", after, re.I):
            continue
        if re.match(r"^[-/]\d{1,2}\b", after) or re.search(r"(\d[-/.]|\bv)$", before):
            continue  # a date or a version, not a token count
        near_pool = bool(_POOL_KEYWORD.search(text[max(0, m.start() - 60): m.end() + 30]))
        if not (tokens_after or (near_pool and _BEFORE_PREFER.search(before))):
            continue
        score = 1
        if tokens_after:
            score += 1
        if _BEFORE_PREFER.search(before):
            score += 1
        if _BEFORE_AVOID.search(before):
            score -= 3
        candidates.append((score, m.start(), value))
    if not candidates:
        return None
    arrow = _ARROW.search(text)
    if arrow:
        left = _parse_count(arrow.group(1), arrow.group(2))
        right = _parse_count(arrow.group(3), arrow.group(4))
        return (left if _HYPOTHETICAL.search(text) else right) or None
    best = max(candidates, key=lambda c: (c[0], c[1]))
    return best[2]


def find_measured_pool(model: Any) -> tuple[int | None, str | None]:
    """A documented pool size: ``# cfgcheck: kv-pool-tokens=N`` or a comment quoting the startup log."""
    d = model.directive("kv-pool-tokens") if hasattr(model, "directive") else None
    if d is not None:
        m = _NUM_RE.match(str(d.value).lstrip())
        count = _parse_count(m.group(1), m.group(2)) if m else None
        if count is not None:
            loc = d.location
            return count, f"directive kv-pool-tokens at {loc.path}:{loc.line}"
    exclude = [model.value("max_model_len"), model.value("max_num_batched_tokens")]
    # comments attached to the settings that size the pool first, then every comment of the document
    for name in ("kv_cache_memory_bytes", "num_gpu_blocks_override", "gpu_memory_utilization", "mem_fraction_static", "max_num_seqs", "max_model_len"):
        setting = model.setting(name)
        if setting is None:
            continue
        for text in setting.comments:
            value = _pool_numbers_in(text, exclude)
            if value:
                return value, f"comment on {setting.source} at {setting.location.path}:{setting.location.line}"
    for line, text in getattr(model, "comments", []) or []:
        if _DIRECTIVE_WORD.search(text):
            continue
        value = _pool_numbers_in(text, exclude)
        if value:
            return value, f"comment at {model.path}:{line}"
    return None, None


# -- the estimate


def _int(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return int(float(v))
    except (TypeError, ValueError, OverflowError):  # "INF", "nan"
        return None


def human_int(v: Any) -> int | None:
    """vLLM's ``human_readable_int``: ``4G`` = 4 GiB, ``4g`` = 4e9, ``32k`` = 32000, plain digits."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return _int(v)
    return argv_human_int(str(v))


def _float(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _argv_value(model: Any, flag: str) -> str | None:
    toks = [t.text for t in getattr(model, "argv", []) or []]
    for i, t in enumerate(toks):
        if t == flag and i + 1 < len(toks):
            return toks[i + 1]
        if t.startswith(flag + "="):
            return t.split("=", 1)[1]
    return None


def _truthy(v: Any) -> bool | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("1", "true", "yes", "on", "")


def activation_peak_bytes(arch: Architecture, max_num_batched_tokens: int, max_num_seqs: int, tp: int, v1: bool = True) -> int:
    """Torch peak of vLLM's profile run: a forward pass of ``max_num_batched_tokens`` tokens and the
    sampler warm-up over ``max_num_seqs`` requests."""
    hidden = arch.hidden_size or (arch.num_attention_heads * arch.head_dim)
    inter = arch.intermediate_size or 4 * hidden
    if arch.num_experts and arch.experts_per_token:
        inter = inter * arch.experts_per_token
    per_token = (ACT_INTERMEDIATE_FACTOR * inter / max(1, tp) + ACT_HIDDEN_FACTOR * hidden) * 2
    copies = SAMPLER_LOGIT_COPIES_V1 if v1 else SAMPLER_LOGIT_COPIES
    logits = (arch.vocab_size or 32000) * 4 * max_num_seqs * copies / max(1, tp)
    return int(per_token * max_num_batched_tokens + logits + ACT_CONSTANT)


def estimate(model: Any, config: dict | None = None) -> CapacityEstimate:
    """The KV pool of one served model: measured > explicit > estimated > unknown.
    Computed once per served model and configuration: several rules read it."""
    cache = getattr(model, "cache", None)
    if cache is None:
        return _estimate(model, config)
    key = ("capacity", id(config))
    if key not in cache:
        cache[key] = _estimate(model, config)
    return cache[key]


_SIZING = ("tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "max_num_seqs", "gpu_memory_utilization",
           "mem_fraction_static", "kv_cache_dtype", "kv_cache_memory_bytes", "num_gpu_blocks_override",
           "max_num_batched_tokens")


def _estimate(model: Any, config: dict | None = None) -> CapacityEstimate:
    config = config or {}
    engine = (getattr(model, "engine", None) or "unknown").lower()
    version = getattr(model, "engine_version", None)
    est = CapacityEstimate(engine=engine, engine_version=version)
    model_id = model.model.value if getattr(model, "model", None) is not None else None
    est.model = model_id
    reasons = est.reasons
    variables = [n for n in _SIZING if unresolved(model.value(n))] + \
        (["gpus"] if getattr(model, "gpus", None) is not None and unresolved(model.gpus.value) else [])
    if variables:  # a variable is not a value: no arithmetic on a default in its place
        reasons.append(f"{', '.join(variables)} set from a variable: not known")
        return est

    if engine not in ("vllm", "sglang", "unknown"):
        reasons.append(f"capacity arithmetic is not modelled for engine {engine}")

    # -- settings
    tp = _int(model.value("tensor_parallel_size")) or 1
    pp = _int(model.value("pipeline_parallel_size")) or 1
    est.tensor_parallel_size, est.pipeline_parallel_size = tp, pp
    gpus_setting = getattr(model, "gpus", None)
    est.gpus = _int(gpus_setting.value) if gpus_setting is not None else None
    kv_dtype = model.value("kv_cache_dtype") or "auto"
    est.kv_cache_dtype = str(kv_dtype)
    dtype = model.value("dtype")

    unreadable: list[str] = []
    arch = lookup_architecture(model_id, config.get("model_configs"), unreadable) if model_id else None
    est.architecture = arch
    if model_id is None:
        reasons.append("model not stated")
    elif arch is None:
        why = unreadable[0] if unreadable else \
            "not bundled; set model_configs in .cfgcheck.yaml to a folder with <org>/<name>/config.json"
        reasons.append(f"architecture of {model_id} unknown ({why})")
    elif arch.task != "generate":
        reasons.append(f"{arch.name} is an {arch.task} model: no decode concurrency")

    gpu, gpu_origin = resolve_gpu(model, config)
    if gpu is not None:
        est.gpu = gpu.name
        est.gpu_memory_bytes = gpu.memory_bytes
    v = parse_version(version)
    if version is None and engine in ("vllm", "sglang"):
        reasons.append(f"{engine} version unknown: newest defaults assumed")

    # max_model_len
    mml = _int(model.value("max_model_len"))
    if mml is not None and mml > 0:
        est.max_model_len, est.max_model_len_source = mml, "explicit"
    elif arch is not None and arch.derived_max_len():
        est.max_model_len, est.max_model_len_source = arch.derived_max_len(), "model-default"
    else:
        reasons.append("max_model_len not set and the model's maximum is unknown")

    # max_num_seqs
    mns = _int(model.value("max_num_seqs"))
    if mns is not None:
        est.max_num_seqs, est.max_num_seqs_source = mns, "explicit"
    else:
        d = default_max_num_seqs(engine, version, gpu)
        if d is not None:
            est.max_num_seqs, est.max_num_seqs_source = d, "default"

    # utilization
    if engine == "sglang":
        util = _float(model.value("mem_fraction_static"))
        if util is None and gpu is not None:
            util = sglang_default_mem_fraction(gpu, tp, pp)
        est.gpu_memory_utilization = util
    else:
        util = _float(model.value("gpu_memory_utilization"))
        est.gpu_memory_utilization = util if util is not None else default_gpu_memory_utilization(engine, version)

    mnbt = _int(model.value("max_num_batched_tokens")) or default_max_num_batched_tokens(engine, version, gpu)
    prefix = _truthy(model.value("enable_prefix_caching"))
    if prefix is None:
        # 0.26: off by default for hybrids; 0.33: on where supported
        prefix = bool(v is not None and v >= (0, 33, 0))
    hybrid_alloc = v is None or v >= VLLM_HYBRID_ALLOCATOR_SINCE
    block = _int(model.value("block_size"))
    layout = None
    if arch is not None and arch.num_layers:
        layout = kv_layout(
            arch, tp=tp, pp=pp, kv_cache_dtype=kv_dtype, dtype=dtype, block_size=block,
            mamba_ssm_dtype=model.value("mamba_ssm_cache_dtype") or _argv_value(model, "--mamba-ssm-cache-dtype"),
            mamba_dtype=model.value("mamba_cache_dtype") or _argv_value(model, "--mamba-cache-dtype"),
            prefix_caching=bool(prefix), max_num_batched_tokens=mnbt, hybrid_allocator=hybrid_alloc,
        )
        est.layout = layout
        est.kv_bytes_per_token = layout.full_bytes_per_token or layout.sliding_bytes_per_token
        if engine == "sglang" and arch.is_hybrid:
            reasons.append("SGLang hybrid pools (Mamba/GDN) are modelled like vLLM's")

    # -- 1. a documented measurement
    measured, evidence = find_measured_pool(model)
    if measured:
        est.kv_pool_tokens = measured
        est.kv_pool_source = "measured"
        est.kv_pool_evidence = evidence
        if est.kv_bytes_per_token:
            est.pool_bytes = measured * est.kv_bytes_per_token
        if arch is not None and (arch.is_hybrid or arch.sliding_layers):
            reasons.append("measured pool of a hybrid/sliding-window model: tokens / L is exact at the logged length and over-estimates at shorter ones")
        _finish(est)
        return est

    # -- 2. explicit pool
    nblocks_override = _int(model.value("num_gpu_blocks_override"))
    explicit = human_int(model.value("kv_cache_memory_bytes"))  # abbreviations are resolved by the catalog
    if engine != "sglang" and layout is not None and nblocks_override:
        est.num_blocks = nblocks_override
        est.pool_bytes = nblocks_override * layout.block_bytes
        est.kv_pool_source = "explicit"
        _finish(est)
        return est
    if engine != "sglang" and explicit:
        est.pool_bytes = explicit
        est.kv_pool_source = "explicit"
        if layout is None:
            reasons.append("explicit KV bytes but the architecture is unknown: tokens unknown")
            return est
        est.num_blocks = explicit // layout.block_bytes
        _finish(est)
        return est

    # -- 3. estimate from the memory budget
    if layout is None or gpu is None:
        if gpu is None and gpu_origin:
            reasons.append(gpu_origin)
        if layout is None and arch is not None:
            reasons.append("architecture lacks layer facts")
        return est
    if engine not in ("vllm", "sglang", "unknown"):
        return est
    wbits = None
    qsetting = model.value("quantization")
    if qsetting and arch.weight_bits >= 16 and not arch.weight_bytes:
        qb, _ = _quant_bits_from_text(str(qsetting))
        if str(qsetting).lower() in ("bitsandbytes",):
            qb = 4.25
        wbits = qb
    weights = arch.weight_bytes_for(wbits)
    if weights is None:
        reasons.append("model size unknown")
        return est
    weights_rank = weights // (tp * pp)
    est.weight_bytes_per_gpu = weights_rank
    total = gpu.memory_bytes
    if engine == "sglang":
        frac = est.gpu_memory_utilization or 0.88
        available = int(total * frac - weights_rank - SGLANG_OVERHEAD)
        if available <= 0:
            est.pool_bytes = 0
            est.kv_pool_tokens = 0
            est.kv_pool_source = "estimated"
            _finish(est)
            return est
        per_token = layout.full_bytes_per_token + layout.sliding_bytes_per_token
        if layout.mamba_state_bytes:
            # SGLang sizes a separate mamba pool for max_running_requests states out of the same budget
            slots = min(est.max_num_seqs or 48, 48)
            available -= slots * layout.mamba_state_bytes
        tokens = max(0, available // max(1, per_token))
        page = _int(model.value("block_size")) or 1
        tokens = tokens // page * page
        est.pool_bytes = available
        est.kv_pool_tokens = int(tokens)
        est.kv_pool_source = "estimated"
        est.layout = None
        if est.max_model_len:
            est.max_concurrency = tokens / est.max_model_len
        if est.max_num_seqs is None and est.max_model_len:
            auto = max(2048, min(4096, int(tokens / est.max_model_len * 512)))
            est.max_num_seqs, est.max_num_seqs_source = min(auto, tokens // 2), "default"
        return est
    util = est.gpu_memory_utilization or 0.92
    requested = math.ceil(total * util)
    seqs = est.max_num_seqs or (mns or 256)
    act = activation_peak_bytes(arch, mnbt, seqs, tp, v1=v is None or v >= VLLM_USAGE_DEFAULTS_SINCE)
    non_torch = NON_TORCH_BASE + (NON_TORCH_TP if tp * pp > 1 else 0)
    enforce_eager = _truthy(model.value("enforce_eager")) or any(t.text == "--enforce-eager" for t in getattr(model, "argv", []) or [])
    graphs = CUDAGRAPH_ESTIMATE if (v is None or v >= VLLM_CUDAGRAPH_PROFILE_SINCE) and not enforce_eager else 0
    available = requested - weights_rank - act - non_torch - graphs
    est.pool_bytes = max(0, int(available))
    est.kv_pool_source = "estimated"
    est.num_blocks = max(0, int(available) // layout.block_bytes)
    _finish(est)
    return est


def _finish(est: CapacityEstimate) -> None:
    """Tokens and concurrency at the served max_model_len, as the engine would log them."""
    L = est.max_model_len
    if est.kv_pool_source == "measured":
        if L:
            est.max_concurrency = est.kv_pool_tokens / L
        return
    if est.num_blocks is None or est.layout is None:
        return
    if L:
        conc = est.num_blocks / est.layout.blocks_per_request(L)
        est.max_concurrency = conc
        est.kv_pool_tokens = int(conc * L)
    else:
        est.kv_pool_tokens = est.num_blocks * est.layout.block_size


# --------------------------------------------------------------------------------------------------
# Rendering


def capacity_rows(models: list[Any], config: dict | None = None) -> list[dict]:
    rows = []
    for m in models:
        try:
            est = estimate(m, config)
        except Exception as exc:  # one served model must not end the table (lint reports it as CFG000)
            if os.environ.get("CFGCHECK_DEBUG"):
                raise
            est = CapacityEstimate(reasons=[f"not computed: internal error {type(exc).__name__} (a cfgcheck bug)"])
        row = {
            "path": m.path,
            "line": m.location.line if getattr(m, "location", None) is not None else None,
            "name": m.name,
            "engine": m.engine,
            "engine_version": m.engine_version,
            "model": est.model,
        }
        row.update(est.to_dict())
        rows.append(row)
    return rows


def _fmt_int(v: Any) -> str:
    return "-" if v is None else f"{int(v):,}"


def render_capacity(models: list[Any], config: dict | None = None, fmt: str = "text") -> str:
    """``cfgcheck capacity`` output: DESIGN §5 JSON, or a plain text table with a note per row."""
    rows = capacity_rows(models, config)
    if fmt == "json":
        return json.dumps({"version": 1, "models": rows}, indent=2) + "\n"
    headers = ["NAME", "MODEL", "GPU", "TP", "MAX LEN", "SEQS", "KV B/TOKEN", "POOL TOKENS", "SOURCE", "CONCURRENCY"]
    table = []
    for r in rows:
        model = (r["model"] or "-").removeprefix("hf://").split("@", 1)[0]  # the revision is noise here
        if len(model) > 40:
            model = "..." + model[-37:]
        gpu = r["gpu"] or "-"
        if r["gpus"]:
            gpu = f"{r['gpus']}x {gpu}"
        table.append([neutralise(cell) for cell in (  # names and paths come from files: no control characters
            r["name"], model, gpu, str(r["tensor_parallel_size"]), _fmt_int(r["max_model_len"]),
            _fmt_int(r["max_num_seqs"]), _fmt_int(r["kv_bytes_per_token"]), _fmt_int(r["kv_pool_tokens"]),
            r["kv_pool_source"], "-" if r["max_concurrency"] is None else f"{r['max_concurrency']:.2f}x",
        )])
    widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for r, row in zip(rows, table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        notes = []
        if r.get("kv_pool_evidence"):
            notes.append(f"pool from {r['kv_pool_evidence']}")
        notes.extend(r["reasons"])
        for note in notes:
            lines.append(neutralise(f"    {r['path']}:{r['line']}: {note}"))
    if not rows:
        lines.append("(no served models found)")
    return "\n".join(lines) + "\n"
