"""What a served model needs of a GPU it does not name: device memory per GPU, and the bundled GPUs it fits.

Most configurations request a bare ``nvidia.com/gpu: 1``, so the KV pool cannot be sized. The need can:
the estimate's own steps (:func:`~cfgcheck.capacity.estimate.estimate` with a ``gpu``) run on each bundled
GPU of the stated vendor, and on GPUs of any size to find the smallest memory that holds the weights
shard, the engine's non-KV overheads and the KV cache of one full-length request -- vLLM refuses to start
below that (``vllm/v1/core/kv_cache_utils.py``, ``check_enough_kv_cache_memory``) -- and of
``max_num_seqs`` such requests. Nothing is guessed about which GPU it is.
"""

from __future__ import annotations

from .concurrency import concurrency_at, longest_fitting_len
from .estimate import CapacityEstimate, estimate
from .gpus import Gpu, accelerator_kind, bundled_gpus, per_model
from .tables import GiB, MiB
from ..effective import topology
from ..settings import truthy

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable

# device resources and image words that name the vendor without naming the GPU
_VENDOR_RESOURCES = {"nvidia.com/gpu": "nvidia", "amd.com/gpu": "amd"}
_SEARCH_CEILING = 4096 * GiB  # above any accelerator; "more than that" reads as "none"
_SEARCH_STEP = 64 * MiB
NEEDS_FIELDS = ("min_gpu_memory_bytes", "max_num_seqs_gpu_memory_bytes", "fits_on", "borderline", "too_small")
# The estimate's error band (bench/accuracy.py): a GPU on which the longest request that fits is within it of
# max_model_len is borderline, not too small (CFG202's default estimate-margin)
ESTIMATE_MARGIN = 0.10


# never compared by value (ModelChange leaves it out): cheaper to create at start-up
class MemoryNeeds:
    """Device memory one GPU needs for this configuration. ``None`` bytes: more than any GPU (one request:
    more than 4 TiB; max_num_seqs of them: more than the largest bundled GPU, beyond which it is not sized)."""

    def __init__(self, vendor: str | None, utilization: float | None, max_model_len: int, max_num_seqs: int | None,
                 one_request_bytes: int | None, all_seqs_bytes: int | None, weight_bytes_per_gpu: int | None = None,
                 fits_on: list[Gpu] | None = None, borderline: list[Gpu] | None = None,
                 too_small: list[Gpu] | None = None) -> None:
        self.vendor = vendor  # nvidia | amd; None: not stated, every vendor's GPUs tried
        self.utilization = utilization  # as configured or the engine default; None: SGLang picks it per GPU
        self.max_model_len = max_model_len
        self.max_num_seqs = max_num_seqs
        self.one_request_bytes = one_request_bytes
        self.all_seqs_bytes = all_seqs_bytes
        self.weight_bytes_per_gpu = weight_bytes_per_gpu
        self.fits_on = [] if fits_on is None else fits_on
        self.borderline = [] if borderline is None else borderline  # too small by the estimate, but within its error band
        self.too_small = [] if too_small is None else too_small

    def to_dict(self) -> dict:
        return {"min_gpu_memory_bytes": self.one_request_bytes, "max_num_seqs_gpu_memory_bytes": self.all_seqs_bytes,
                "fits_on": [g.name for g in self.fits_on], "borderline": [g.name for g in self.borderline],
                "too_small": [g.name for g in self.too_small]}

    @property
    def need_text(self) -> str:
        """``159.5 GiB``: device memory per GPU for one full-length request."""
        return f"{self.one_request_bytes / GiB:.1f} GiB" if self.one_request_bytes else "more than any GPU"

    @property
    def smallest_fit(self) -> str:
        """The smallest bundled GPU that holds one full-length request (``B200 192 GB``), else ``none``."""
        if not self.fits_on:
            return "none"
        smallest = min(self.fits_on, key=lambda g: g.memory_bytes)
        return f"{smallest.name} {_nominal(smallest)}"

    def summary(self) -> str:
        """One line for ``cfgcheck capacity``: what one GPU needs and where that is."""
        at = f"gpu_memory_utilization {self.utilization:g}" if self.utilization else "the engine's default fraction"
        need = self.need_text
        weights = f" (weights {self.weight_bytes_per_gpu / GiB:.1f} GiB)" if self.weight_bytes_per_gpu else ""
        text = f"needs {need} per GPU{weights} for one {self.max_model_len:,}-token request at {at}: "
        text += fit_text(self.fits_on, self.too_small, self.vendor, self.borderline)
        if self.borderline:
            text += (f"; borderline (within the estimate's {ESTIMATE_MARGIN:.0%}): "
                     + ", ".join(f"{g.name} {_nominal(g)}" for g in self.borderline))
        seqs = f"max_num_seqs {self.max_num_seqs:,}" if self.max_num_seqs else "the default max_num_seqs"
        if self.all_seqs_bytes and self.all_seqs_bytes != self.one_request_bytes:
            text += f"; {seqs} full-length requests at once need {self.all_seqs_bytes / GiB:.1f} GiB"
        elif not self.all_seqs_bytes:
            text += f"; {seqs} full-length requests at once fit on no GPU"
        return text


def vendor_of(model: Any) -> str | None:
    """The GPU vendor the workload's device resource or image names; None when neither does."""
    vendor = _VENDOR_RESOURCES.get(getattr(model, "gpu_resource", None) or "")
    image = getattr(model, "image", None)
    if vendor is None and image is not None and "rocm" in str(image.value).lower():  # vllm/vllm-openai-rocm
        vendor = "amd"
    return vendor


def _applies(model: Any, est: CapacityEstimate, assumed: bool = False) -> bool:
    named = est.gpu is not None and est.kv_pool_source == "estimated" if assumed else (
        est.gpu is None and est.kv_pool_source == "unknown")
    return (named and est.layout is not None and bool(est.max_model_len) and accelerator_kind(model) == "gpu"
            and not _experts_spread(model, est))


def _experts_spread(model: Any, est: CapacityEstimate) -> bool:
    """An MoE model over data-parallel or expert-parallel ranks: its experts are split over them (vLLM forms
    the experts' group over DP x TP ranks, docs/serving/data_parallel_deployment.md; SGLang's --ep-size), so
    one GPU holds less than the weights over TP x PP that the estimate counts."""
    if not (est.architecture is not None and est.architecture.num_experts):
        return False
    layout = topology(model)
    return max(layout.dp, layout.ep) > 1 or bool(truthy(model.value("enable_expert_parallel")))


def _fits(est: CapacityEstimate, all_seqs: bool = False) -> bool | None:
    """Whether one full-length request (``all_seqs``: max_num_seqs of them, the default this GPU gets when
    unset) fits the pool on the GPU tried; None: not computable."""
    requests = est.max_num_seqs if all_seqs else 1
    if est.kv_pool_source != "estimated" or not requests:
        return None
    conc = concurrency_at(est, est.max_model_len)
    return conc is not None and conc >= requests


def on_largest_gpu(model: Any, config: dict | None, assumed: bool = False) -> tuple[Gpu, CapacityEstimate] | None:
    """The estimate on the largest bundled GPU of the workload's vendor, for a served model that names no
    GPU and whose pool is otherwise unknown (``assumed``: whose pool is estimated on a GPU it names, for a
    finding that asks whether any GPU would do); None when that does not apply or cannot be computed."""
    return per_model(model, ("capacity-largest-gpu", assumed), config, lambda: _on_largest_gpu(model, config, assumed))


def _on_largest_gpu(model: Any, config: dict | None, assumed: bool) -> tuple[Gpu, CapacityEstimate] | None:
    if _applies(model, estimate(model, config), assumed) and (candidates := bundled_gpus(vendor_of(model))):
        largest = candidates[-1]
        trial = estimate(model, config, largest)
        return (largest, trial) if _fits(trial) is not None else None
    return None


def memory_needs(model: Any, config: dict | None) -> MemoryNeeds | None:
    """What one GPU needs when the served model names none; None when its GPU is known, its pool is
    known otherwise (measured, explicit), or the model's size or layout is unknown."""
    largest = on_largest_gpu(model, config)
    if largest is None:
        return None
    est = estimate(model, config)
    vendor = vendor_of(model)
    needs = MemoryNeeds(vendor, est.gpu_memory_utilization, est.max_model_len, est.max_num_seqs, None, None,
                        largest[1].weight_bytes_per_gpu)
    one: list[tuple[int, bool]] = []
    every: list[tuple[int, bool]] = []
    for gpu in bundled_gpus(vendor):
        trial = estimate(model, config, gpu)
        one.append((gpu.memory_bytes, bool(_fits(trial))))
        every.append((gpu.memory_bytes, bool(_fits(trial, all_seqs=True))))
        if one[-1][1]:
            needs.fits_on.append(gpu)
        elif est.max_model_len <= (longest_fitting_len(trial) or 0) * (1 + ESTIMATE_MARGIN):
            needs.borderline.append(gpu)
        else:
            needs.too_small.append(gpu)
    needs.one_request_bytes = _smallest_memory(lambda gpu: _fits(estimate(model, config, gpu)), vendor,
                                               *_bracket(one, _SEARCH_CEILING))
    # all of max_num_seqs at full length is sized only up to the largest GPU: beyond it, "more than any GPU"
    needs.all_seqs_bytes = _smallest_memory(lambda gpu: _fits(estimate(model, config, gpu), all_seqs=True), vendor,
                                            *_bracket(every, None))
    return needs


def _bracket(tried: list[tuple[int, bool]], ceiling: int | None) -> tuple[int, int | None]:
    """Memory sizes around the smallest that fits, from the bundled GPUs tried: (the largest below it that
    does not fit, the smallest that does, else ``ceiling``)."""
    fitting = [memory for memory, fits in tried if fits]
    above = min(fitting) if fitting else ceiling
    below = max((memory for memory, fits in tried if not fits and (above is None or memory < above)), default=0)
    return below, above


def weight_assumptions(model: Any, est: CapacityEstimate) -> list[str]:
    """What the weights shard's size rests on besides facts: a name-only model match, a dtype or
    quantization the checkpoint does not state, a parameter count from layer shapes."""
    arch = est.architecture
    if arch is None:
        return ["architecture unknown"]
    found = [arch.resolution] if arch.assumed and arch.resolution else []
    quantized_at_load = model.value("quantization")
    if quantized_at_load and arch.weight_bits >= 16:
        found.append(f"weights quantized at load ({quantized_at_load}): their size is estimated")
    elif not arch.weight_bytes:
        if arch.quantization:
            found.append(f"{arch.quantization} weights sized at {arch.weight_bits:g} bits per parameter")
        elif not arch.dtype_stated:
            found.append(f"the checkpoint's dtype is not stated: {arch.dtype} assumed")
        if not arch.params:
            found.append("parameter count computed from the layer shapes")
    return found


def _smallest_memory(fits: Callable[[Gpu], bool | None], vendor: str | None, below: int,
                     above: int | None) -> int | None:
    """The smallest device memory (to 64 MiB) between ``below`` (too small) and ``above`` on which
    ``fits``; None when ``above`` is None or does not fit. A GPU of that size and no product name: the
    engines' per-GPU defaults follow its memory."""
    def sized(steps: int) -> Gpu:
        return Gpu(f"{steps * _SEARCH_STEP / GiB:.1f}GiB", steps * _SEARCH_STEP, vendor or "nvidia", None, "sized")

    if above is None:
        return None
    lo, hi = below // _SEARCH_STEP, -(-above // _SEARCH_STEP)
    if above == _SEARCH_CEILING and not fits(sized(hi)):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(sized(mid)):
            hi = mid
        else:
            lo = mid
    return min(hi * _SEARCH_STEP, above)


def _nominal(gpu: Gpu) -> str:
    return f"{gpu.nominal_gb:g} GB" if gpu.nominal_gb else f"{gpu.memory_gib:.0f} GiB"


def vendor_label(vendor: str | None) -> str:
    """``NVIDIA `` / ``AMD `` before "GPU" in a message, nothing for another or an unknown vendor."""
    return {"nvidia": "NVIDIA ", "amd": "AMD "}.get(vendor or "", "")


def fit_text(fits_on: list[Gpu], too_small: list[Gpu], vendor: str | None, borderline: list[Gpu] = ()) -> str:
    """``fits on 80 GB and larger; not on L40S 48 GB, L20 48 GB ... and 14 smaller`` (by memory)."""
    owner = vendor_label(vendor)
    if not fits_on:
        largest = max([*too_small, *borderline], key=lambda g: g.memory_bytes)
        return f"fits on no {owner}GPU cfgcheck knows (largest {largest.label})"
    smallest = min(fits_on, key=lambda g: g.memory_bytes)
    others = [*too_small, *borderline]
    if all(g.memory_bytes < smallest.memory_bytes for g in others):
        # the nominal size when no smaller card shares it (an RTX 3090 fits where a 24 GB L4 does not)
        shared = any(_nominal(g) == _nominal(smallest) for g in others)
        size = f"{smallest.memory_gib:.1f} GiB ({smallest.name})" if shared else _nominal(smallest)
        text = f"fits on {owner}GPUs of {size} and larger"
    else:  # a larger GPU whose defaults (more sequences, a larger profile batch) leave less room
        text = "fits on " + ", ".join(f"{g.name} {_nominal(g)}" for g in fits_on)
    if not too_small:
        return text + ("" if borderline else f" (every {owner}GPU cfgcheck knows)")
    shown = [f"{g.name} {_nominal(g)}" for g in reversed(too_small)][:5]
    more = len(too_small) - len(shown)
    return text + "; not on " + ", ".join(shown) + (f" and {more} smaller" if more else "")
