"""KV-cache capacity: bytes per token, the pool, and pool-limited concurrency.

``architecture`` (config.json and the bundled model table), ``gpus`` (GPU table and label
resolution), ``layout`` (KV bytes per token, MLA, sliding window, hybrid state), ``measured``
(directives and startup-log comments), ``profile_run`` (vLLM's profile-run peak), ``estimate`` (the pool, step by
step) and ``report`` (``cfgcheck capacity``, imported by that command alone: a lint needs none of it). Engine
defaults live in :mod:`cfgcheck.engines.defaults`.
"""

from __future__ import annotations

from ..engines.defaults import (default_gpu_memory_utilization, default_max_num_batched_tokens,
                               default_max_num_seqs, min_default_max_num_seqs, parse_version,
                               sglang_default_mem_fraction)
from .architecture import Architecture, architecture_from_config, bundled_models, normalize_model_id
from .local_configs import ModelConfigError, lookup_architecture, served_architecture
from .concurrency import cap_for, concurrency_at, longest_fitting_len
from .estimate import POOL_SOURCES, CapacityEstimate, estimate
from .profile_run import activation_peak_bytes
from .gpus import Gpu, gpu_by_name, lookup_gpu, resolve_gpu, resolve_gpu_from_labels
from .layout import KvLayout, kv_bytes_per_token, kv_cache_dtype_bytes, kv_layout
from .measured import find_measured_pool
from .tables import GiB, MiB
from ..settings import human_int

__all__ = [
    "GiB", "MiB", "POOL_SOURCES", "Architecture", "CapacityEstimate", "Gpu", "KvLayout", "ModelConfigError",
    "activation_peak_bytes", "architecture_from_config", "bundled_models", "cap_for",
    "concurrency_at", "default_gpu_memory_utilization", "default_max_num_batched_tokens", "default_max_num_seqs",
    "estimate", "find_measured_pool", "gpu_by_name", "human_int", "kv_bytes_per_token", "kv_cache_dtype_bytes",
    "kv_layout", "longest_fitting_len", "lookup_architecture", "lookup_gpu", "min_default_max_num_seqs",
    "normalize_model_id", "parse_version", "resolve_gpu", "resolve_gpu_from_labels",
    "served_architecture", "sglang_default_mem_fraction",
]
