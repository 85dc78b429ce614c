"""Questions a capacity estimate answers about request lengths: how many full-length requests of a length fit
its pool at once, the longest request that fits, and the longest length that keeps a sequence limit inside it
(the rules' arithmetic on ``ctx.capacity(model)``; ``estimate.py`` makes the estimate)."""

from __future__ import annotations

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from .estimate import CapacityEstimate


def concurrency_at(estimate: CapacityEstimate, max_model_len: int | None) -> float | None:
    """Full-length requests of ``max_model_len`` tokens that fit the pool at once. A measured pool (tokens as the startup log reports them) is translated with ``tokens / L``, the
    arithmetic of vLLM's ``kv_cache_utils.py`` (0.26.0); explicit and estimated pools use the engine's block
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
