"""Engine runtime defaults that depend on the GPU, the version or the KV pool.

One place for the values an engine computes when a setting is left unset, so the capacity arithmetic
and the rules that explain a setting against its default agree. Versions are the ones traced
upstream: vLLM 0.10.2 / 0.26.0 / 0.33.0 (``vllm/engine/arg_utils.py``, ``vllm/config/``) and SGLang
0.5.23 (``sglang/srt/arg_groups/memory_hook.py``).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:  # only for annotations: the GPU table stays out of this module's import
    from ..capacity.gpus import Gpu

_GiB = 1024**3

# Default gpu_memory_utilization changed from 0.9 to 0.92 in v0.20.0: the flag catalogs generated from the
# wheels (engines/catalogs/vllm.json) have 0.9 through 0.19.x and 0.92 from 0.20.0 on.
VLLM_UTIL_092_SINCE = (0, 20, 0)
VLLM_CUDAGRAPH_PROFILE_SINCE = (0, 21, 0)
VLLM_HYBRID_ALLOCATOR_SINCE = (0, 10, 0)  # sliding-window layers stop growing with L (V1 hybrid manager)
# Layers of two KV shapes (Gemma 4: global_head_dim, KV-shared layers) get the hybrid manager's groups from
# v0.21.0: vllm#43308 logs ~55k tokens for gemma-4-31B AWQ on an A100 80GB with 0.20.0 (every layer at full
# length: ~50 GB / 880 KiB a token) and ~525k with 0.21.0 in the same ~50 GB.
VLLM_MIXED_KV_HYBRID_SINCE = (0, 21, 0)
VLLM_USAGE_DEFAULTS_SINCE = (0, 8, 0)  # max_num_seqs 1024 / batched tokens 8192 on big GPUs
VLLM_PREFIX_CACHING_ALWAYS_SINCE = (0, 33, 0)  # arg_utils.py: 0.26 leaves it off for hybrids, 0.33 on where supported
VLLM_B200_BATCHED_TOKENS_SINCE = (0, 33, 0)  # arg_utils.py 0.33.0: 16384 batched tokens on >=160 GiB GPUs
# The V1 engine core is the default from v0.8.0 (release notes: "V1 is now enabled by default"; vllm/envs.py
# VLLM_USE_V1); V0 (VLLM_USE_V1=0) is gone from v0.11.0 ("V0 engine removed"). V1 always chunks prefills;
# V0 chunked them by default only above a 32K max_model_len (vllm/engine/arg_utils.py, use_long_context),
# and the V0 worker profiles (vllm/worker/worker.py determine_num_available_blocks) a prefill of
# max_num_batched_tokens tokens.
VLLM_V1_DEFAULT_SINCE = (0, 8, 0)
# V0 (vllm/engine/arg_utils.py 0.5.1-0.7.3 create_engine_config): chunked prefill is switched on by default
# only for max_model_len > 32K on the OpenAI server (and not for sliding-window, speculative, LoRA or
# pooling models); SchedulerConfig (vllm/config.py 0.5-0.7) then defaults max_num_batched_tokens to 512,
# else to max(max_model_len, _DEFAULT_MAX_NUM_BATCHED_TOKENS=2048): the profile prefills the whole context.
VLLM_V0_LONG_CONTEXT = 32 * 1024
VLLM_V0_CHUNKED_BATCHED_TOKENS = 512
VLLM_V0_MIN_BATCHED_TOKENS = 2048
# vLLM stores DeepSeek-V2/V3 MLA as the compressed latent from 0.7.1 (vllm/attention/backends/mla,
# "MLA for DeepSeek" in the 0.7.1 release); before, K and V were stored expanded per head (V padded to
# the qk head size), 10-12x the bytes per token at TP 8. SGLang stores the latent from 0.3.0 (--enable-mla
# default, sglang/srt/server_args.py).
VLLM_MLA_LATENT_SINCE = (0, 7, 1)
# Which top-k/top-p sampler the V1 profile's sampler warm-up runs (vllm/v1/sample/ops/topk_topp_sampler.py):
# the PyTorch sort path materialises sorted values, int64 indices, probabilities and masks over the whole
# vocabulary of every dummy request; FlashInfer's and the Triton kernels do not. vllm#14815 (0.8.0) turned
# FlashInfer off for FlashInfer >= 0.2.3; a 0.10.1.1 server logs "Using FlashInfer for top-p & top-k
# sampling" again (dennislee22/vLLM-benchmarking log/); vllm#26859 (merged 2025-10-15, after 0.11.0) turned it
# off by default; vllm#33538 (2026-02) made the Triton kernels the default ("Triton's implementation used by
# default now", vllm#40376). The release that first shipped the Triton default is cfgcheck's assumption.
# Between the windows FlashInfer samples only where it is installed: the vllm/vllm-openai image always ships
# it (vllm#21389), pip installs only from vllm#26443 (0.11.1) on (vllm#21959 made it an extra).
VLLM_SORT_SAMPLER_WINDOWS = (((0, 8, 0), (0, 10, 1)), ((0, 11, 1), (0, 16, 0)))
VLLM_FLASHINFER_IF_INSTALLED = ((0, 10, 1), (0, 11, 1))
SGLANG_MLA_LATENT_SINCE = (0, 3, 0)
VLLM_GPU_MEMORY_UTILIZATION = 0.92  # vllm/config/cache.py 0.26.0 / 0.33.0 (0.9 before VLLM_UTIL_092_SINCE)
VLLM_MAX_NUM_SEQS_ANY_GPU = 256  # arg_utils.py: the API-server default below the big-GPU tier, every version
# TokenSpeed 0.1.0 / 0.1.1 wheels, tokenspeed/runtime/utils/server_args.py (ServerArgs, "Set max number
# of sequences"): max_num_seqs left unset becomes 160, or 80 with a --speculative-algorithm.
TOKENSPEED_MAX_NUM_SEQS = 160
TOKENSPEED_MAX_NUM_SEQS_SPECULATIVE = 80
SGLANG_MEM_FRACTION_FALLBACK = 0.88  # cfgcheck's assumption when mem_fraction_static is given as 0 (not an upstream value)
# Mamba/GDN states SGLang sizes out of the KV budget: cfgcheck's assumption (its decode CUDA-graph batch of
# 48 in the <35 GiB tier, sglang/srt/arg_groups/memory_hook.py 0.5.23), not a traced upstream value.
SGLANG_MAMBA_SLOTS = 48


# TokenSpeed 0.1.1 (runtime/utils/server_args.py): gpu_memory_utilization None -> 0.95; a VLM serving images
# is clamped to 0.9 when the value was defaulted (runtime/configs/model_config.py).
TOKENSPEED_GPU_MEMORY_UTILIZATION = 0.95
TOKENSPEED_VLM_GPU_MEMORY_UTILIZATION = 0.9


# Versions parsed so far: the defaults and the estimate ask for the same few versions of every served
# model (23,000 times on 2,000 models). A run names a handful; the bound keeps a long-lived process small.
_PARSED: dict[str, tuple[int, ...] | None] = {}
_MAX_PARSED = 1024


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """``"v0.26.0"`` / ``"0.10.2rc1"`` -> ``(0, 26, 0)``; None when there is no version."""
    if not text:
        return None
    text = str(text)
    if text in _PARSED:
        return _PARSED[text]
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    parsed = tuple(int(x) for x in m.groups(default="0")) if m else None
    if len(_PARSED) < _MAX_PARSED:
        _PARSED[text] = parsed
    return parsed


def default_gpu_memory_utilization(engine: str | None, version: str | None, vision: bool = False) -> float | None:
    """``gpu_memory_utilization`` left unset: vLLM's by version, TokenSpeed's own (lower for a vision model);
    None for SGLang, whose ``mem_fraction_static`` is derived from the GPU (``sglang_default_mem_fraction``)."""
    if (engine or "").lower() == "sglang":
        return None
    if (engine or "").lower() == "tokenspeed":
        return TOKENSPEED_VLM_GPU_MEMORY_UTILIZATION if vision else TOKENSPEED_GPU_MEMORY_UTILIZATION
    v = parse_version(version)
    if v is None or v >= VLLM_UTIL_092_SINCE:
        return VLLM_GPU_MEMORY_UTILIZATION
    return 0.9


def vllm_engine_generation(version: str | None) -> str | None:
    """The engine core vLLM runs when VLLM_USE_V1 is unset: "V0" or "V1" (None: version unknown)."""
    v = parse_version(version)
    if v is None:
        return None
    return "V1" if v >= VLLM_V1_DEFAULT_SINCE else "V0"


def vllm_chunked_prefill(version: str | None) -> object:
    """Chunked prefill when ``--enable-chunked-prefill`` is unset: on (V1), or on only above a 32K
    max_model_len (V0)."""
    generation = vllm_engine_generation(version)
    if generation is None:
        return None
    return True if generation == "V1" else f"on only above a {VLLM_V0_LONG_CONTEXT // 1024}K max_model_len"


def _big_gpu(gpu: Gpu | None) -> bool | None:
    """vLLM's usage-context tier: >=70 GiB, not an A100, not a GB10 (vLLM ``vllm/engine/arg_utils.py``,
    the usage-context defaults)."""
    if gpu is None:
        return None
    return gpu.memory_bytes >= 70 * _GiB and not gpu.name.startswith("A100") and gpu.name != "GB10"


def default_max_num_seqs(engine: str | None, version: str | None, gpu: Gpu | None,
                         speculative: bool = False) -> int | None:
    """vLLM's API-server default (``vllm/engine/arg_utils.py``), TokenSpeed's fixed one; None when it
    depends on something unknown (SGLang derives it from the KV pool)."""
    if (engine or "").lower() == "sglang":
        return None
    if (engine or "").lower() == "tokenspeed":
        return TOKENSPEED_MAX_NUM_SEQS_SPECULATIVE if speculative else TOKENSPEED_MAX_NUM_SEQS
    v = parse_version(version)
    if v is not None and v < VLLM_USAGE_DEFAULTS_SINCE:
        return VLLM_MAX_NUM_SEQS_ANY_GPU
    big = _big_gpu(gpu)
    if big is None:
        return None
    return 1024 if big else VLLM_MAX_NUM_SEQS_ANY_GPU


def min_default_max_num_seqs(engine: str | None, version: str | None) -> int | None:
    """A lower bound of the default that holds on every GPU (vLLM: 256, TokenSpeed: 80)."""
    if (engine or "").lower() == "sglang":
        return None
    if (engine or "").lower() == "tokenspeed":
        return TOKENSPEED_MAX_NUM_SEQS_SPECULATIVE
    return VLLM_MAX_NUM_SEQS_ANY_GPU


def v0_chunked_prefill(version: str | None, max_model_len: int | None, explicit: bool | None) -> bool | None:
    """Whether a V0 vLLM (before 0.8) chunks prefills: as written, else on above 32K tokens of context;
    None for V1, which always chunks."""
    if vllm_engine_generation(version) != "V0":
        return None
    if explicit is not None:
        return explicit
    return bool(max_model_len and max_model_len > VLLM_V0_LONG_CONTEXT)


def default_max_num_batched_tokens(engine: str | None, version: str | None, gpu: Gpu | None,
                                   max_model_len: int | None = None, chunked_prefill: bool | None = None) -> int:
    """vLLM's token budget of one step when unset: V0 by chunked prefill (whole context without it),
    V1 by the usage-context tier of the GPU."""
    v = parse_version(version)
    if v is not None and v < VLLM_V1_DEFAULT_SINCE:
        if v0_chunked_prefill(version, max_model_len, chunked_prefill):
            return VLLM_V0_CHUNKED_BATCHED_TOKENS
        return max(max_model_len or 0, VLLM_V0_MIN_BATCHED_TOKENS)
    if gpu is not None and v is not None and v >= VLLM_B200_BATCHED_TOKENS_SINCE and gpu.memory_bytes >= 160 * _GiB:
        return 16384
    return 8192 if _big_gpu(gpu) else 2048


def mla_latent(engine: str | None, version: str | None) -> bool:
    """Whether the engine version stores the MLA latent (else K/V expanded per head); newest assumed."""
    v = parse_version(version)
    since = SGLANG_MLA_LATENT_SINCE if (engine or "").lower() == "sglang" else VLLM_MLA_LATENT_SINCE
    return v is None or v >= since


def vllm_sort_sampler(version: str | None, use_flashinfer: bool | None = None) -> bool:
    """Whether this V1 version's sampler warm-up takes the PyTorch sort path (newest: no). ``use_flashinfer``
    is ``VLLM_USE_FLASHINFER_SAMPLER`` when the container sets it: 1 selects FlashInfer, 0 the native path,
    which sorts until the Triton kernels became the default."""
    v = parse_version(version)
    if v is None or v < VLLM_V1_DEFAULT_SINCE or use_flashinfer:
        return False
    if use_flashinfer is False:
        return v < VLLM_SORT_SAMPLER_WINDOWS[-1][1]
    return any(lo <= v < hi for lo, hi in VLLM_SORT_SAMPLER_WINDOWS)


def vllm_sampler_needs_flashinfer(version: str | None, use_flashinfer: bool | None = None) -> bool:
    """Whether this version samples with FlashInfer only when it is installed (else the sort path)."""
    v = parse_version(version)
    lo, hi = VLLM_FLASHINFER_IF_INSTALLED
    return use_flashinfer is None and v is not None and lo <= v < hi


def default_prefix_caching(version: tuple[int, ...] | None) -> bool:
    """vLLM's prefix caching when unset, as the capacity arithmetic models it: 0.26 leaves it off for
    hybrids (the only models whose KV blocks it changes), 0.33 turns it on where supported."""
    return bool(version is not None and version >= VLLM_PREFIX_CACHING_ALWAYS_SINCE)


# SGLang's default mem_fraction_static by release, read from the server_args.py (and model_executor/model_runner.py)
# of the PyPI wheels: up to 0.4.5 a table by tensor-parallel size; 0.4.6 the table up to 80 GiB (nvidia-smi MiB)
# and ``(mem - 13 GiB) / mem`` above; 0.4.7 the table by TP x PP up to 80 GiB, 0.79 above ~176 GiB and a blend
# above 96 GiB; 0.4.8-0.5.2 a reserve by memory tier; from 0.5.3 the reserve from the chunk size, the CUDA-graph
# batch and the ranks (the formula of sglang_default_mem_fraction below, 0.5.23 memory_hook.py).
SGLANG_FRACTION_TABLE_UNTIL = (0, 4, 8)
SGLANG_FRACTION_CHUNK_FORMULA_SINCE = (0, 5, 3)
_SGLANG_TP_TABLE = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
# Up to 0.4.8 the model runner cut every fraction of a multimodal model, written or not (x0.95 up to 0.4.4,
# x0.90 from 0.4.5); 0.4.9 cut only the default (x0.90); from 0.4.10 adjust_mem_fraction_for_vlm does.
SGLANG_RUNNER_VLM_CUT_UNTIL = (0, 4, 9)
SGLANG_VLM_ADJUST_SINCE = (0, 4, 10)


def _sglang_table(ranks: int) -> float:
    return next(frac for at_least, frac in _SGLANG_TP_TABLE if ranks >= at_least)


def _sglang_old_default(mib: float, tp: int, pp: int, v: tuple[int, ...]) -> float:
    """0.4.x before the memory-tier reserve: the table by ranks, with the 0.4.6/0.4.7 large-GPU branches."""
    if v < (0, 4, 6):
        return _sglang_table(tp)
    if v < (0, 4, 7):
        return _sglang_table(tp) if mib <= 81920 else (mib - 13 * 1024) / mib
    frac = _sglang_table(tp * pp) if mib <= 81920 else 0.88
    if mib > 180 * 1000:
        return 0.79
    if mib > 96 * 1024:
        return min(frac + 48 * 1024 * (1 - frac) / mib, (mib - 18 * 1024) / mib)
    return frac


def _sglang_tier_reserve(mib: float, ranks: int) -> float:
    """0.4.8-0.5.2: MiB kept back by memory tier (T4/4080, A10/4090, H100/A100, H20, H200, B200/MI300)."""
    if mib < 35 * 1024:
        return (2.8 + ranks / 10) * 1024
    if mib < 90 * 1024:
        return (9.5 + ranks / 2) * 1024
    if mib < 160 * 1024:
        return (12 + ranks / 2) * 1024
    return 32 * 1024


def sglang_default_mem_fraction(gpu: Gpu, tp: int, pp: int = 1, vision: bool = False, version: str | None = None) -> float:
    """``mem_fraction_static`` when unset, for the SGLang release (newest when unknown: 0.5.23
    ``sglang/srt/arg_groups/memory_hook.py``); a vision model's default is scaled as that release scales it
    (``sglang_runner_vlm_factor`` covers the releases whose model runner cut every fraction)."""
    v = parse_version(version)
    mib = gpu.memory_bytes / 2**20
    if v is not None and v < SGLANG_FRACTION_TABLE_UNTIL:
        return round(_sglang_old_default(mib, tp, pp, v), 3)
    if v is not None and v < SGLANG_FRACTION_CHUNK_FORMULA_SINCE:
        fraction = round((mib - _sglang_tier_reserve(mib, tp * pp)) / mib, 3)
        if not vision or v < SGLANG_RUNNER_VLM_CUT_UNTIL:  # the runner cuts it (sglang_runner_vlm_factor)
            return fraction
        return fraction * (0.90 if v < SGLANG_VLM_ADJUST_SINCE else sglang_vlm_fraction_factor())
    gib = gpu.memory_bytes / _GiB
    chunk = 2048 if gib < 20 else 4096 if gib < 60 else 8192 if gib < 160 else 16384
    graph = 0.25 * _GiB if gib < 35 else 0.5 * _GiB if gib < 90 else 1.0 * _GiB
    reserved = 512 * 1e6 + 1.5e6 * max(chunk, 2048) + tp * pp / 8 * _GiB + graph
    if gib > 60:
        reserved = max(reserved, 10 * _GiB)
    fraction = round((gpu.memory_bytes - reserved) / gpu.memory_bytes, 3)
    return fraction * sglang_vlm_fraction_factor() if vision else fraction


def min_sglang_default_mem_fraction(gpus, tp: int, pp: int = 1, vision: bool = False,
                                    version: str | None = None) -> float | None:
    """The least ``mem_fraction_static`` SGLang derives on any of ``gpus`` (the catalogued ones): a bound
    of its default when the GPU is not known. None without GPUs."""
    return min((sglang_default_mem_fraction(gpu, tp, pp, vision, version) for gpu in gpus), default=None)


def sglang_runner_vlm_factor(version: str | None) -> float | None:
    """The cut SGLang's model runner applied to every fraction of a multimodal model, written or defaulted,
    up to 0.4.8 (``model_executor/model_runner.py``: x0.95 to 0.4.4, x0.90 from 0.4.5); None after."""
    v = parse_version(version)
    if v is None or v >= SGLANG_RUNNER_VLM_CUT_UNTIL:
        return None
    return 0.95 if v < (0, 4, 5) else 0.90


def sglang_vlm_fraction_factor(vit_layers: int = 24, vit_hidden: int = 1024) -> float:
    """SGLang's ``adjust_mem_fraction_for_vlm`` (``memory_hook.py``): 0.95 for a ViT-L/14-sized encoder (24 layers,
    1024 wide, also its stand-in for a config without those fields), 10% less per doubling of layers x width^2,
    the adjustment clamped to [0.8, 1.05]."""
    ratio = vit_layers * vit_hidden ** 2 / (24 * 1024 ** 2)
    return 0.95 * max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))


def sglang_default_max_running_requests(pool_tokens: int, context_len: int) -> int:
    """``max_running_requests`` when unset: ``min(clamp(int(pool/context*512), 2048, 4096), pool//2)``
    per DP worker (SGLang 0.5.23 ``sglang/srt/arg_groups/memory_hook.py``)."""
    auto = max(2048, min(4096, int(pool_tokens / context_len * 512)))
    return min(auto, pool_tokens // 2)


def vllm_hybrid_allocator(version: tuple[int, ...] | None, mixed_kv_shapes: bool) -> tuple[bool, str | None]:
    """Whether vLLM ``version`` keeps sliding-window KV to its window (V1 hybrid manager), and the reason to
    show when a model whose layers have two KV shapes is cached at full length."""
    since = VLLM_MIXED_KV_HYBRID_SINCE if mixed_kv_shapes else VLLM_HYBRID_ALLOCATOR_SINCE
    if version is None or version >= since:
        return True, None
    return False, (f"vLLM before {'.'.join(map(str, since))} caches every layer at full length when the KV "
                   "shapes of its layers differ (vllm#43308)" if mixed_kv_shapes else None)
