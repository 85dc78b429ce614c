"""Per-GPU KV layout of a model under an engine configuration: bytes per token, MLA, sliding window,
hybrid (Mamba/GDN) state, and vLLM V1's block arithmetic
(vLLM 0.26.0 ``vllm/v1/core/kv_cache_utils.py``, ``vllm/v1/kv_cache_interface.py``)."""

from __future__ import annotations

import math

from ..records import Record
from .architecture import DTYPE_BYTES, Architecture


# never compared by value: a record (records.Record), one per estimate, kept to the end
class KvLayout(Record):
    """Per-GPU KV layout of a model under an engine config: the block arithmetic of vLLM V1."""

    __slots__ = ("block_size", "group_size", "page_bytes", "full_groups", "sliding_groups", "mamba_groups",
                 "sliding_window", "mamba_blocks", "max_num_batched_tokens", "full_bytes_per_token",
                 "sliding_bytes_per_token", "mamba_state_bytes", "sliding_block_size")

    def __init__(self, block_size: int, group_size: int, page_bytes: int, full_groups: int, sliding_groups: int,
                 mamba_groups: int, sliding_window: int | None, mamba_blocks: int, max_num_batched_tokens: int,
                 full_bytes_per_token: int, sliding_bytes_per_token: int, mamba_state_bytes: int,
                 sliding_block_size: int | None = None) -> None:
        self.block_size = block_size  # of full-attention (and Mamba) groups
        self.group_size = group_size  # layers sharing one block tensor (KVCacheTensor count)
        self.page_bytes = page_bytes  # bytes of one block of one layer
        self.full_groups = full_groups
        self.sliding_groups = sliding_groups
        self.mamba_groups = mamba_groups
        self.sliding_window = sliding_window
        self.mamba_blocks = mamba_blocks  # blocks per request per Mamba/GDN group (1 none, 2 align)
        self.max_num_batched_tokens = max_num_batched_tokens
        self.full_bytes_per_token = full_bytes_per_token  # all full-attention layers on this GPU
        self.sliding_bytes_per_token = sliding_bytes_per_token
        self.mamba_state_bytes = mamba_state_bytes  # per request, all Mamba/GDN layers on this GPU
        # tokens per block of sliding groups when their per-layer KV is smaller than the full layers' and vLLM
        # scales their block up to the common page (Gemma 4); None: block_size
        self.sliding_block_size = sliding_block_size

    @property
    def block_bytes(self) -> int:
        return self.page_bytes * self.group_size

    def blocks_per_request(self, max_model_len: int) -> int:
        n = self.full_groups * math.ceil(max_model_len / self.block_size)
        if self.sliding_groups:
            span = min((self.sliding_window or max_model_len) - 1 + self.max_num_batched_tokens, max_model_len)
            n += self.sliding_groups * (math.ceil(span / (self.sliding_block_size or self.block_size)) + 1)
        n += self.mamba_groups * self.mamba_blocks
        return max(n, 1)

    def fixed_blocks(self) -> int:
        return self.blocks_per_request(1) - self.full_groups


def kv_cache_dtype_bytes(kv_cache_dtype: str | None, model_dtype: str | None) -> int:
    kv = str(kv_cache_dtype or "auto").lower()
    if kv.startswith("fp8") or kv in ("int8", "fp8_inc"):
        return 1
    if kv not in ("auto", "", "none"):
        return DTYPE_BYTES.get(kv, 2)
    return DTYPE_BYTES.get(str(model_dtype or "bfloat16").lower(), 2)


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
    mla_latent: bool = True,
    extra_layers: int = 0,
) -> KvLayout:
    """The block arithmetic on one GPU. ``mla_latent=False`` stores MLA K/V expanded per head (engines
    before the latent cache, see engines.defaults.mla_latent); ``extra_layers`` full-attention layers of the
    same shape join the pool (MTP speculative layers)."""
    tp, pp = max(1, int(tp or 1)), max(1, int(pp or 1))
    model_dtype = dtype if dtype and str(dtype).lower() != "auto" else arch.dtype
    b = kv_cache_dtype_bytes(kv_cache_dtype, model_dtype)
    per_layer, per_full = _per_layer_bytes(arch, tp, b, kv_cache_dtype, mla_latent)
    full = arch.full_layers - arch.shared_full_layers + extra_layers
    sliding = arch.sliding_layers - arch.shared_sliding_layers
    linear = arch.linear_layers
    if not hybrid_allocator and per_full == per_layer:
        full, sliding = full + sliding, 0
    # pipeline parallel: each rank holds a slice of the layers
    full_r = math.ceil(full / pp) if full else 0
    sliding_r = math.ceil(sliding / pp) if sliding else 0
    if not hybrid_allocator and sliding_r:
        # every layer at full length, of two sizes: one group whose block holds each layer at its own size
        # (vllm/v1/kv_cache_interface.py UniformTypeKVCacheSpecs)
        per_full, full_r, sliding_r = full_r * per_full + sliding_r * per_layer, 1, 0
    linear_r = math.ceil(linear / pp) if linear else 0
    mamba_page = _mamba_page(arch, tp, mamba_ssm_dtype, mamba_dtype, model_dtype) if linear_r else 0
    align = 16
    if block_size:
        bs = int(block_size)
    elif arch.is_mla and mla_latent:
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
    sliding_bs = None
    if per_full != per_layer and full_r:
        page, bs, sliding_bs = _unified_pages(bs, per_full, per_layer if sliding_r else per_full)
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
        full_bytes_per_token=full_r * per_full,
        sliding_bytes_per_token=sliding_r * per_layer,
        mamba_state_bytes=linear_r * mamba_page,
        sliding_block_size=sliding_bs,
    )


def _per_layer_bytes(arch: Architecture, tp: int, b: int, kv_cache_dtype: str | None, mla_latent: bool) -> tuple[int, int]:
    """(KV bytes per token of one sliding-window or uniform layer, of one full-attention layer) on one GPU."""
    if arch.is_mla and not mla_latent:
        # K and V per local head, V padded to the qk head size (nope + rope), as DeepseekV2Attention did
        per_layer = 2 * max(1, arch.num_attention_heads // tp) * ((arch.qk_nope_head_dim or 0) + (arch.qk_rope_head_dim or 0)) * b
    elif arch.is_mla:
        per_layer = (arch.kv_lora_rank + (arch.qk_rope_head_dim or 0)) * b
        if str(kv_cache_dtype or "").lower() == "fp8_ds_mla":
            per_layer = 656
    else:
        kvh = max(1, arch.num_kv_heads // tp)
        per_layer = kvh * (arch.head_dim + (arch.v_head_dim or arch.head_dim)) * b
    if not (arch.global_head_dim or arch.global_kv_heads):
        return per_layer, per_layer
    full_heads = max(1, (arch.global_kv_heads or arch.num_kv_heads) // tp)
    return per_layer, full_heads * 2 * (arch.global_head_dim or arch.head_dim) * b


def _unified_pages(block_size: int, per_full: int, per_sliding: int) -> tuple[int, int, int]:
    """(page bytes, full block size, sliding block size) once vLLM gives every layer the largest page by
    scaling the block size of the smaller ones (vllm/v1/core/kv_cache_utils.py
    unify_kv_cache_spec_page_size); a ratio that is not whole makes vLLM raise NotImplementedError."""
    page = block_size * max(per_full, per_sliding)
    if page % (block_size * per_full) or page % (block_size * per_sliding):
        raise ValueError(f"KV pages of {block_size * per_full} and {block_size * per_sliding} bytes do not divide")
    return page, page // per_full, page // per_sliding


def _mamba_page(arch: Architecture, tp: int, ssm_dtype: str | None, conv_dtype: str | None, model_dtype: str | None) -> int:
    """Bytes of one request's Mamba/GDN state in one layer on one GPU (conv state + SSM state)."""
    def _b(explicit: str | None, fallback: str | None) -> int:
        if explicit and str(explicit).lower() != "auto":
            return DTYPE_BYTES.get(str(explicit).lower(), 2)
        return DTYPE_BYTES.get(str(fallback or model_dtype).lower(), 2)

    sb = _b(ssm_dtype, arch.mamba_ssm_dtype)
    cb = _b(conv_dtype, None)
    kh = arch.linear_num_key_heads or 16
    vh = arch.linear_num_value_heads or 32
    kd = arch.linear_key_head_dim or 128
    vd = arch.linear_value_head_dim or 128
    ck = arch.linear_conv_kernel_dim or 4
    conv = (ck - 1) * (2 * kh * kd + vh * vd) // tp * cb
    ssm = (vh // tp) * vd * kd * sb
    return conv + ssm


def kv_bytes_per_token(arch: Architecture, tp: int = 1, kv_cache_dtype: str | None = "auto", dtype: str | None = None, pp: int = 1) -> int:
    """Per-GPU KV bytes one more token of context costs (full-attention layers; sliding layers when a
    model has no full-attention layer)."""
    lay = kv_layout(arch, tp=tp, pp=pp, kv_cache_dtype=kv_cache_dtype, dtype=dtype)
    return lay.full_bytes_per_token or lay.sliding_bytes_per_token

