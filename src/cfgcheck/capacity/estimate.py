"""KV-cache capacity: bytes per token, the pool, and pool-limited concurrency.

The arithmetic follows the engines (vLLM 0.26.0 ``vllm/v1/worker/gpu_worker.py:
determine_available_memory`` and ``vllm/v1/core/kv_cache_utils.py``; SGLang 0.5.23
``mem_cache/kv_cache_configurator.py`` and ``model_executor/pool_configurator.py``): vLLM sizes a pool of blocks out of
``gpu_memory_utilization x device memory - weights - activation peak - non-torch - CUDA graphs`` (or
exactly ``--kv-cache-memory-bytes``), every layer group of a block holds ``block_size`` tokens, and a
full-length request needs ``cdiv(max_model_len, block_size)`` blocks of every full-attention group plus a
fixed number for sliding-window and Mamba/GDN groups. A documented measurement (the startup log's
``GPU KV cache size: N tokens`` written down in a comment or a ``# cfgcheck: kv-pool-tokens=N``
directive) beats everything else.

Nothing here reads YAML: it takes a :class:`~cfgcheck.model.ServedModel` and the parsed config.
"""

from __future__ import annotations

import math

from .. import effective, online
from ..effective import DERIVED, UNKNOWN, WRITTEN, Fact, Facts
from ..engines import defaults
from ..engines.defaults import parse_version
from ..engines.images import folder_under_variable
from ..model import unresolved
from ..records import Record
from .architecture import Architecture, architecture_from_config, normalize_model_id, unknown_model_reason
from .gpus import Gpu, Resolution, per_model, resolve_accelerator
from .layout import KvLayout, kv_layout
from . import local_configs, mxfp4, overheads, served
from .measured import find_measured_pool
from .overheads import Deductions
from .profile_run import SAMPLER_LOGIT_COPIES_V1, SORT_SAMPLER_BYTES_PER_LOGIT, activation_peak_bytes, vision_profile_note
from .tables import GiB
from ..settings import human_int, int_value, truthy
from .setting_values import argv_value
TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

POOL_SOURCES = ("measured", "explicit", "estimated", "unknown")
_ENGINES = ("vllm", "sglang", "tokenspeed", "unknown")  # engines whose pool arithmetic is modelled

NON_TORCH_BASE = int(0.45 * GiB)  # CUDA context, cuBLAS workspaces (TokenSpeed; vLLM: served.vllm_non_torch_bytes)
CUDAGRAPH_ESTIMATE = int(0.45 * GiB)  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (default since v0.21)
SGLANG_OVERHEAD = int(0.70 * GiB)  # context + allocator slack between weights and the KV budget


# never compared by value: a record (records.Record), one per served model, held to the run's end
class CapacityEstimate(Record):
    """The KV pool of one served model and what it allows, with how each figure was found."""

    __slots__ = ("engine", "engine_version", "model", "gpu", "gpu_memory_bytes", "gpus", "tensor_parallel_size",
                 "pipeline_parallel_size", "max_model_len", "max_num_seqs", "gpu_memory_utilization", "kv_cache_dtype",
                 "kv_bytes_per_token", "kv_pool_tokens", "kv_pool_source", "max_concurrency", "pool_bytes", "reasons",
                 "kv_pool_tokens_low", "kv_pool_tokens_high", "kv_pool_error", "max_model_len_source",
                 "max_num_seqs_source", "kv_pool_evidence", "architecture", "layout", "num_blocks",
                 "weight_bytes_per_gpu", "facts", "gpu_resolution")

    def __init__(self, engine: str | None = None, engine_version: str | None = None, model: str | None = None,
                 gpu: str | None = None, gpu_memory_bytes: int | None = None, gpus: int | None = None,
                 tensor_parallel_size: int = 1, pipeline_parallel_size: int = 1, max_model_len: int | None = None,
                 max_num_seqs: int | None = None, gpu_memory_utilization: float | None = None,
                 kv_cache_dtype: str | None = None, kv_bytes_per_token: int | None = None,
                 kv_pool_tokens: int | None = None, kv_pool_source: str = "unknown",
                 max_concurrency: float | None = None, pool_bytes: int | None = None, reasons: list[str] | None = None,
                 kv_pool_tokens_low: int | None = None, kv_pool_tokens_high: int | None = None,
                 kv_pool_error: float | None = None, max_model_len_source: str | None = None,
                 max_num_seqs_source: str | None = None, kv_pool_evidence: str | None = None,
                 architecture: Architecture | None = None, layout: KvLayout | None = None,
                 num_blocks: int | None = None, weight_bytes_per_gpu: int | None = None, facts: Facts | None = None,
                 gpu_resolution: Resolution | None = None) -> None:
        self.engine = engine
        self.engine_version = engine_version
        self.model = model
        self.gpu = gpu
        self.gpu_memory_bytes = gpu_memory_bytes
        self.gpus = gpus
        self.tensor_parallel_size = tensor_parallel_size
        self.pipeline_parallel_size = pipeline_parallel_size
        self.max_model_len = max_model_len
        self.max_num_seqs = max_num_seqs
        self.gpu_memory_utilization = gpu_memory_utilization
        self.kv_cache_dtype = kv_cache_dtype
        self.kv_bytes_per_token = kv_bytes_per_token
        self.kv_pool_tokens = kv_pool_tokens
        self.kv_pool_source = kv_pool_source
        self.max_concurrency = max_concurrency
        self.pool_bytes = pool_bytes
        self.reasons = [] if reasons is None else reasons
        # an estimated pool's range from its class's measured error (served.pool_range; not in DESIGN's list)
        self.kv_pool_tokens_low = kv_pool_tokens_low
        self.kv_pool_tokens_high = kv_pool_tokens_high
        self.kv_pool_error = kv_pool_error
        # provenance and arithmetic detail (not in the JSON contract)
        self.max_model_len_source = max_model_len_source  # explicit | model-default
        self.max_num_seqs_source = max_num_seqs_source  # explicit | default
        self.kv_pool_evidence = kv_pool_evidence  # "comment at path:line" / "directive" ...
        self.architecture = architecture
        self.layout = layout
        self.num_blocks = num_blocks
        self.weight_bytes_per_gpu = weight_bytes_per_gpu
        self.facts = facts  # the effective settings the estimate read (cfgcheck.effective)
        self.gpu_resolution = gpu_resolution  # where the GPU comes from, how sure, or what would state it

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
        if self.kv_pool_error is not None:
            out.update(kv_pool_tokens_low=self.kv_pool_tokens_low, kv_pool_tokens_high=self.kv_pool_tokens_high)
        out.update(Resolution.fields(self.gpu_resolution))
        return out


def estimate(model: Any, config: dict | None = None, gpu: Gpu | None = None) -> CapacityEstimate:
    """The KV pool of one served model: measured > explicit > estimated > unknown; with ``gpu``, as if it ran
    on that GPU (capacity/needs.py: what a configuration that names none needs), not cached.
    Computed once per served model and configuration: several rules read it. The entry keeps the
    configuration it was computed for, since an id alone can be reused by a new dict."""
    if gpu is not None:
        return _estimate(model, config, gpu)
    return per_model(model, "capacity", config, lambda: _estimate(model, config))


_SIZING = ("tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "max_num_seqs", "gpu_memory_utilization",
           "mem_fraction_static", "kv_cache_dtype", "kv_cache_memory_bytes", "num_gpu_blocks_override",
           "max_num_batched_tokens")


class _Run(Record):
    """What the steps of one estimate share: the engine, the parallelism, the model and the GPU."""

    __slots__ = ("engine", "version", "tp", "pp", "arch", "gpu", "gpu_origin", "explicit_seqs", "batched_tokens",
                 "batched_tokens_why", "config", "extra")

    def __init__(self, engine: str, version: str | None, tp: int = 1, pp: int = 1, arch: Architecture | None = None,
                 gpu: Gpu | None = None, gpu_origin: str | None = None, explicit_seqs: int | None = None,
                 batched_tokens: int = 2048, batched_tokens_why: str = "", config: dict | None = None,
                 extra: Deductions | None = None) -> None:
        self.engine = engine
        self.version = version
        self.tp = tp
        self.pp = pp
        self.arch = arch
        self.gpu = gpu
        self.gpu_origin = gpu_origin
        self.explicit_seqs = explicit_seqs  # max_num_seqs as written, None when left to the engine
        self.batched_tokens = batched_tokens
        self.batched_tokens_why = batched_tokens_why
        self.config = {} if config is None else config
        self.extra = Deductions() if extra is None else extra

    @property
    def parsed_version(self) -> tuple[int, ...] | None:
        return parse_version(self.version)


def _estimate(model: Any, config: dict | None = None, gpu: Gpu | None = None) -> CapacityEstimate:
    config = config or {}
    run = _Run(engine=(getattr(model, "engine", None) or "unknown").lower(), version=getattr(model, "engine_version", None),
               config=config)
    est = CapacityEstimate(engine=run.engine, engine_version=run.version, facts=Facts(model))
    unset = getattr(model, "model_unset", None)  # a model variable set to nothing: named as written
    est.model = model.model_id() if getattr(model, "model", None) is not None else unset.text if unset else None
    named = getattr(model, "model_named", None)
    if named is not None:  # a local path the input names: say which source named it
        est.reasons.append(f"{model.model.value} holds {named.value} (named by {named.source}, line {named.location.line})")
    variables = [n for n in _SIZING if unresolved(model.value(n))] + \
        (["gpus"] if getattr(model, "gpus", None) is not None and unresolved(model.gpus.value) else [])
    if variables:  # a variable is not a value: no arithmetic on a default in its place
        est.reasons.append(f"{', '.join(variables)} set from a variable: not known")
        return est
    if run.engine not in _ENGINES:
        est.reasons.append(f"capacity arithmetic is not modelled for engine {run.engine}")
    _read_model_and_gpu(model, config, run, est, gpu)
    _read_limits(run, est)
    _read_layout(model, run, est)
    if not (_measured_pool(model, run, est) or _explicit_pool(model, run, est)):
        _budget_pool(model, run, est)
        _state_range(run, est)
    _settle(est)
    return est


def _state_range(run: _Run, est: CapacityEstimate) -> None:
    """An estimated pool as a range (the class's measured error); no low end when an unknown draft is not deducted."""
    if est.kv_pool_source != "estimated" or est.kv_pool_tokens is None:
        return
    classes = served.estimate_classes(run.arch, run.tp, est.kv_cache_dtype)
    est.kv_pool_tokens_low, est.kv_pool_tokens_high, est.kv_pool_error = served.pool_range(est.kv_pool_tokens, classes)
    if run.extra.upper_bound:
        est.kv_pool_tokens_low = None
    if est.kv_pool_error is not None:
        est.reasons.append(f"estimated pool {est.kv_pool_tokens_low or 0:,}-{est.kv_pool_tokens_high:,} tokens "
                           f"(±{est.kv_pool_error:.0%}, the measured error of {'/'.join(classes)} models)")


def _read_model_and_gpu(model: Any, config: dict, run: _Run, est: CapacityEstimate, gpu: Gpu | None = None) -> None:
    """Parallelism, KV dtype, the architecture and the GPU, with a reason for each that is unknown."""
    layout = effective.topology(model)
    run.tp, run.pp = layout.tp, layout.pp
    est.tensor_parallel_size, est.pipeline_parallel_size = run.tp, run.pp
    gpus_setting = getattr(model, "gpus", None)
    est.gpus = int_value(gpus_setting.value) if gpus_setting is not None else None
    est.kv_cache_dtype = str(model.value("kv_cache_dtype") or "auto")
    unreadable: list[str] = []
    known = est.model and (not unresolved(est.model) or folder_under_variable(est.model))  # $HOME/models/NAME too
    run.arch = local_configs.served_architecture(model, est.model, config.get("model_configs"), unreadable) if known else None
    if known and online.enabled(config) and (run.arch is None or run.arch.source != "config.json"):
        run.arch = _hub_architecture(model, est.model, config, est) or run.arch
    est.architecture = run.arch
    if est.model is None:
        est.reasons.append("model not stated")
    elif unresolved(est.model) and not known:
        est.reasons.append(f"model set from a variable ({est.model}): architecture not known")
    elif run.arch is None:
        est.reasons.append(f"architecture of {est.model} unknown ({unreadable[0]})" if unreadable else
                           unknown_model_reason(est.model, model.value("served_model_name")))
    elif run.arch.source == "bundled":
        est.reasons.extend(r for r in (run.arch.resolution, run.arch.note) if r)
    if run.arch is not None and run.arch.task != "generate":
        est.reasons.append(f"{run.arch.name} is an {run.arch.task} model: no decode concurrency")
    found = Resolution(gpu, "tried") if gpu is not None else resolve_accelerator(model, config)
    run.gpu, run.gpu_origin = found.accelerator, found.origin
    est.gpu_resolution = found
    if run.gpu is not None:
        est.gpu, est.gpu_memory_bytes = run.gpu.name, run.gpu.memory_bytes
        if found.cited:
            est.reasons.append(f"GPU {run.gpu.name} " + (f"assumed: {found.assumed}" if found.assumed else f"from {found.origin}"))
    est.facts.ground(run.gpu, run.arch)
    if run.version is None and run.engine in ("vllm", "sglang"):
        est.reasons.append(f"{run.engine} version unknown: newest defaults assumed")


def _hub_architecture(model: Any, model_id: str, config: dict, est: CapacityEstimate) -> Architecture | None:
    """The architecture from the Hub's config.json at the pinned revision (opt-in), None with a note."""
    raw = str(model_id)
    revision = model.value("model_revision") or (raw.split("@", 1)[1] if "@" in raw else None)
    repo_id = normalize_model_id(raw)
    hub = online.client(config)
    if hub is None:
        est.reasons.append("the Hub lookup is on but no Hub client was handed in (online.use): bundled table used")
        return None
    answer = hub.lookup(repo_id, str(revision) if revision else None)
    if answer.config is None:
        est.reasons.append(answer.note or f"hub lookup of {repo_id} gave nothing")
        return None
    try:
        arch = architecture_from_config(answer.config, repo_id, answer.total_size)
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        est.reasons.append(f"the Hub's config.json of {repo_id} has a field of the wrong type ({type(exc).__name__}): bundled table used")
        return None
    arch.source = "hub"
    arch.note = f"config.json from the Hub at {revision or 'main'}" + \
        ("; checkpoint size from its safetensors index" if answer.total_size else "")
    est.reasons.append(arch.note)
    return arch


def _read_limits(run: _Run, est: CapacityEstimate) -> None:
    """max_model_len, max_num_seqs, the memory fraction and the profile's batched tokens: their effective
    values (as written, else the engine's default or derivation)."""
    facts = est.facts
    length, seqs, fraction = (_usable(est, name) for name in ("max_model_len", "max_num_seqs", effective.MEMORY_FRACTION))
    if length.value is not None:
        est.max_model_len, est.max_model_len_source = length.value, "explicit" if length.source == WRITTEN else "model-default"
    elif length.source == DERIVED:
        est.reasons.append(f"max_model_len {length.how} ({length.setting.source} {length.setting.value})")
    else:
        est.reasons.append("max_model_len not set and the model's maximum is unknown")
    if seqs.source == WRITTEN:
        run.explicit_seqs = seqs.value
    if seqs.value is not None and seqs.source != DERIVED:  # SGLang's derived window waits for the pool
        est.max_num_seqs, est.max_num_seqs_source = seqs.value, "explicit" if seqs.source == WRITTEN else "default"
    est.gpu_memory_utilization = fraction.value
    if fraction.source == DERIVED and facts.vision:
        est.reasons.append(f"SGLang lowers a vision model's default mem_fraction_static by "
                           f"x{defaults.sglang_vlm_fraction_factor():.2f} (a ViT-L/14-sized encoder assumed: "
                           "the table does not size the encoder)")
    batched = _usable(est, "max_num_batched_tokens")
    run.batched_tokens = batched.value
    run.batched_tokens_why = "as configured" if batched.source == WRITTEN else batched.how


def _usable(est: CapacityEstimate, name: str) -> Fact:
    """The effective value of ``name``; for a written value the engine refuses (CFG105 reports it), its default,
    with a reason."""
    fact = est.facts.get(name)
    if fact.source == UNKNOWN and fact.setting is not None:
        est.reasons.append(f"{fact.setting.source} {fact.how}: the engine's default assumed")
        fact = est.facts.default(name)
    return fact


def _settle(est: CapacityEstimate) -> None:
    """The sequence window SGLang derives from the pool, once the pool is known."""
    est.facts.settle(est.kv_pool_tokens, est.max_model_len)
    seqs = est.facts.get("max_num_seqs")
    if est.max_num_seqs is None and seqs.value is not None:
        est.max_num_seqs, est.max_num_seqs_source = seqs.value, "default"


def _read_layout(model: Any, run: _Run, est: CapacityEstimate) -> None:
    """The KV layout on one GPU and the bytes one more token of context costs."""
    prefix = est.facts.get("enable_prefix_caching").value
    arch = run.arch
    if arch is None or not arch.num_layers:
        return
    run.extra = overheads.deductions(model, arch, run.tp, run.config)
    latent = defaults.mla_latent(run.engine, run.version)
    if arch.is_mla and not latent:
        if not arch.qk_nope_head_dim:
            est.reasons.append(f"{run.engine} {run.version} stores MLA K/V expanded per head, but the model's "
                               "qk_nope_head_dim is unknown")
            return
        est.reasons.append(f"{run.engine} {run.version} stores MLA K/V expanded per head (the latent cache came later)")
    hybrid, why = defaults.vllm_hybrid_allocator(run.parsed_version, bool(arch.global_head_dim or arch.global_kv_heads or arch.shared_full_layers))
    est.reasons.extend([why] if why and (arch.sliding_layers or arch.linear_layers) else [])
    # the Mamba/GDN state dtypes size only the layers that hold such state (layout._mamba_page): the argv is
    # searched for them only for a model that has some
    linear = bool(arch.linear_layers)
    try:
        est.layout = kv_layout(
            arch, tp=run.tp, pp=run.pp, kv_cache_dtype=model.value("kv_cache_dtype") or "auto", dtype=model.value("dtype"),
            block_size=int_value(model.value("block_size")),
            mamba_ssm_dtype=model.value("mamba_ssm_cache_dtype") or argv_value(model, "--mamba-ssm-cache-dtype") if linear else None,
            mamba_dtype=model.value("mamba_cache_dtype") or argv_value(model, "--mamba-cache-dtype") if linear else None,
            prefix_caching=bool(prefix), max_num_batched_tokens=run.batched_tokens,
            hybrid_allocator=hybrid, mla_latent=latent,
            extra_layers=run.extra.extra_kv_layers,
        )
    except ValueError as exc:  # page sizes vLLM cannot unify: the engine refuses the model
        est.reasons.append(f"KV layout of {arch.name} not modelled ({exc}): pool unknown")
        return
    if run.extra.draft is not None:
        draft = kv_layout(run.extra.draft, tp=run.tp, pp=run.pp, kv_cache_dtype=model.value("kv_cache_dtype") or "auto")
        est.layout.full_bytes_per_token += draft.full_bytes_per_token
        est.layout.page_bytes += -(-draft.full_bytes_per_token * est.layout.block_size // max(1, est.layout.group_size))
    est.kv_bytes_per_token = est.layout.full_bytes_per_token or est.layout.sliding_bytes_per_token
    if run.engine == "sglang" and arch.is_hybrid:
        est.reasons.append("SGLang hybrid pools (Mamba/GDN) are modelled like vLLM's")


def _measured_pool(model: Any, run: _Run, est: CapacityEstimate) -> bool:
    """1. A documented measurement beats everything; True when there is one."""
    # read from the comments, not the GPU: once per served model and configuration (as the estimate), however
    # many GPUs it is tried on (needs.py)
    measured, evidence = per_model(model, "measured-pool", run.config, lambda: find_measured_pool(model))
    if not measured:
        return False
    est.kv_pool_tokens = measured
    est.kv_pool_source = "measured"
    est.kv_pool_evidence = evidence
    if est.kv_bytes_per_token:
        est.pool_bytes = measured * est.kv_bytes_per_token
    if run.arch is not None and (run.arch.is_hybrid or run.arch.sliding_layers):
        est.reasons.append("measured pool of a hybrid/sliding-window model: tokens / L is exact at the logged length and over-estimates at shorter ones")
    _finish(est)
    return True


def _explicit_pool(model: Any, run: _Run, est: CapacityEstimate) -> bool:
    """2. vLLM's ``--num-gpu-blocks-override`` or ``--kv-cache-memory-bytes``; True when one is set."""
    if run.engine == "sglang":
        return False
    nblocks_override = int_value(model.value("num_gpu_blocks_override"))
    explicit = human_int(model.value("kv_cache_memory_bytes"))  # abbreviations are resolved by the catalog
    if est.layout is not None and nblocks_override:
        est.num_blocks = nblocks_override
        est.pool_bytes = nblocks_override * est.layout.block_bytes
        est.kv_pool_source = "explicit"
        _finish(est)
        return True
    if not explicit:
        return False
    est.pool_bytes = explicit
    est.kv_pool_source = "explicit"
    if est.layout is None:
        est.reasons.append("explicit KV bytes but the architecture is unknown: tokens unknown")
        return True
    est.num_blocks = explicit // est.layout.block_bytes
    _finish(est)
    return True


def _budget_pool(model: Any, run: _Run, est: CapacityEstimate) -> None:
    """3. The pool the engine carves out of the GPU's memory budget."""
    if est.layout is None or run.gpu is None:
        if run.gpu is None and run.gpu_origin:
            est.reasons.append(run.gpu_origin)
        if est.layout is None and run.arch is not None and not any("MLA" in r or "modelled" in r for r in est.reasons):
            est.reasons.append("architecture lacks layer facts")
        return
    if run.engine not in _ENGINES:
        return
    unknown = run.extra.unknown or overheads.unmodelled_device(run.gpu) or \
        (est.gpu_memory_utilization is None and "the memory fraction is not known")
    if unknown:
        est.reasons.append(f"{unknown}: pool unknown")
        return
    weights = served.loaded_weight_bytes(model, run.arch)
    if weights is None:
        missing = ", ".join(run.arch.missing_size_facts()) or "parameter count"
        est.reasons.append(f"model size unknown: {run.arch.name} has no {missing} (config.json) and no checkpoint size")
        return
    est.weight_bytes_per_gpu = weights // (run.tp * run.pp) + run.extra.weight_bytes
    est.reasons.append(f"weights {weights / GiB:.1f} GiB ({served.weights_origin(model, run.arch)}) over {run.tp * run.pp} GPU(s)")
    mxfp4.resize_for_vllm(model, run, est)
    est.reasons.extend(run.extra.reasons)
    if run.engine == "sglang":
        frac = served.sglang_fraction(model, run, est.gpu_memory_utilization or defaults.SGLANG_MEM_FRACTION_FALLBACK, est.reasons)
        dist = served.sglang_distributed_bytes(run.gpu, run.tp * run.pp, frac, est.reasons)
        _token_pool(model, run, est, frac, SGLANG_OVERHEAD + dist, "mem_fraction_static")
    elif run.engine == "tokenspeed":
        est.reasons.append("TokenSpeed probes its CUDA-graph reserve at start; "
                           f"~{CUDAGRAPH_ESTIMATE / GiB:.2f} GiB assumed")
        _token_pool(model, run, est, est.gpu_memory_utilization, NON_TORCH_BASE + CUDAGRAPH_ESTIMATE,
                    "gpu_memory_utilization")
    else:
        _vllm_pool(model, run, est)


def _no_room(est: CapacityEstimate, budget: float, used: float, what: str) -> None:
    """The budget does not cover what must load before the KV cache: a 0-token pool, with the numbers."""
    est.pool_bytes = 0
    est.kv_pool_tokens = 0
    est.num_blocks = 0
    est.max_concurrency = 0.0
    est.kv_pool_source = "estimated"
    est.reasons.append(f"{what} take {used / GiB:.1f} GiB of a {budget / GiB:.1f} GiB budget: no room for the KV cache")


def _token_pool(model: Any, run: _Run, est: CapacityEstimate, frac: float, overhead: int, knob: str) -> None:
    """SGLang and TokenSpeed: ``fraction x memory - weights - overhead`` in tokens, less the Mamba states,
    capped by ``--max-total-tokens`` (which can only lower it). SGLang: ``sglang/srt/model_executor/model_runner.py`` (``profile_max_num_token``); TokenSpeed 0.1.1:
    ``runtime/layers/attention/utils.py`` (free memory less ``total x (1 - gpu_memory_utilization)`` less
    the CUDA-graph reserve) and ``runtime/execution/model_executor.py`` (the max_total_tokens cap)."""
    layout = est.layout
    budget = run.gpu.memory_bytes * frac
    est.reasons.append(f"budget {knob} {frac:g} x {run.gpu.memory_bytes / GiB:.1f} GiB")
    available = int(budget - est.weight_bytes_per_gpu - overhead)
    if available <= 0:
        _no_room(est, budget, est.weight_bytes_per_gpu + overhead, "weights and runtime overhead")
        return
    per_token = layout.full_bytes_per_token + layout.sliding_bytes_per_token
    if layout.mamba_state_bytes:
        # SGLang sizes a separate mamba pool for max_running_requests states out of the same budget
        slots = min(est.max_num_seqs or defaults.SGLANG_MAMBA_SLOTS, defaults.SGLANG_MAMBA_SLOTS)
        available -= slots * layout.mamba_state_bytes
    tokens = max(0, available // max(1, per_token))
    page = int_value(model.value("block_size")) or 1
    tokens = tokens // page * page
    cap = human_int(model.value("max_total_tokens"))
    if cap and cap < tokens:
        tokens = cap
        est.reasons.append(f"--max-total-tokens {cap:,} caps the pool")
    est.pool_bytes = available
    est.kv_pool_tokens = int(tokens)
    est.kv_pool_source = "estimated"
    est.layout = None
    if est.max_model_len:
        est.max_concurrency = tokens / est.max_model_len


def _vllm_pool(model: Any, run: _Run, est: CapacityEstimate) -> None:
    """vLLM: ``utilization x memory - weights - activation peak - non-torch - CUDA graphs`` in blocks."""
    v = run.parsed_version
    util = est.gpu_memory_utilization or defaults.VLLM_GPU_MEMORY_UTILIZATION
    requested = math.ceil(run.gpu.memory_bytes * util)
    seqs = est.max_num_seqs or (run.explicit_seqs or defaults.VLLM_MAX_NUM_SEQS_ANY_GPU)
    v1 = v is None or v >= defaults.VLLM_V1_DEFAULT_SINCE
    flashinfer_env = getattr(model, "env", {}).get("VLLM_USE_FLASHINFER_SAMPLER")
    use_flashinfer = None if flashinfer_env is None or unresolved(flashinfer_env.value) else truthy(flashinfer_env.value)
    if use_flashinfer is None and run.gpu.vendor == "amd":  # FlashInfer's sampler is CUDA-only: ROCm's is native
        use_flashinfer = False  # (vllm/v1/sample/ops/topk_topp_sampler.py: FlashInfer under current_platform.is_cuda())
    sort_sampler = not v1 or defaults.vllm_sort_sampler(run.version, use_flashinfer)
    act_bytes, copies = served.served_dtype_bytes(model, run.arch), served.vllm_sampler_logit_copies(run.version)
    arch = overheads.profiled_arch(model, run.arch)
    act = activation_peak_bytes(arch, run.batched_tokens, seqs, run.tp, v1, sort_sampler, act_bytes, copies)
    if act is None:
        missing = ", ".join(run.arch.missing_size_facts()) or "layer shapes"
        est.reasons.append(f"activation peak of the profile run unknown: {run.arch.name} has no {missing}: pool unknown")
        return
    non_torch = served.vllm_non_torch_bytes(run.version, run.tp * run.pp, run.gpu, est.reasons, run.tp)
    rope = served.vllm_rope_cache_bytes(run.arch, act_bytes)
    enforce_eager = truthy(model.value("enforce_eager")) or any(t.text == "--enforce-eager" for t in getattr(model, "argv", []) or [])
    profiles_graphs = (v is None or v >= defaults.VLLM_CUDAGRAPH_PROFILE_SINCE) and not enforce_eager
    graphs = CUDAGRAPH_ESTIMATE if profiles_graphs else 0
    if v1 and defaults.vllm_sampler_needs_flashinfer(run.version, use_flashinfer):
        est.reasons.append("sampler warm-up sized for FlashInfer, which the vllm/vllm-openai image ships; a pip "
                           "install without it takes the PyTorch sort path and leaves "
                           f"~{run.arch.vocab_size * seqs * (SORT_SAMPLER_BYTES_PER_LOGIT - 4 * SAMPLER_LOGIT_COPIES_V1) / GiB:.1f} GiB less for the KV cache")
    est.reasons.append(
        f"budget {util:g} x {run.gpu.memory_bytes / GiB:.1f} GiB; {'V1' if v1 else 'V0'} profile of "
        f"{run.batched_tokens:,} tokens ({run.batched_tokens_why}){vision_profile_note(arch, run.tp, act_bytes, v1)}"
        f" and a sampler warm-up over {seqs:,} requests"
        f"{' (PyTorch sort path)' if sort_sampler else ''} peaks ~{act / GiB:.2f} GiB; non-torch "
        f"~{non_torch / GiB:.2f} GiB;{' scaled RoPE cache ~%.2f GiB;' % (rope / GiB) if rope else ''} CUDA graphs {'~%.2f GiB' % (graphs / GiB) if graphs else 'not counted by this version' if not enforce_eager else 'off (enforce_eager)'}")
    used = est.weight_bytes_per_gpu + rope + act + non_torch + graphs
    if requested - used <= 0:
        _no_room(est, requested, used, "weights, profile activations and runtime overhead")
        return
    est.pool_bytes = int(requested - used)
    if v1 and run.pp > 1:
        forward = activation_peak_bytes(arch, run.batched_tokens, 0, run.tp, act_bytes=act_bytes)
        est.pool_bytes = _pipeline_pool(run, est, int(requested - used + act - forward))
    est.kv_pool_source = "estimated"
    est.num_blocks = est.pool_bytes // est.layout.block_bytes
    _finish(est)


def _pipeline_pool(run: _Run, est: CapacityEstimate, first_stage_pool: int) -> int:
    """V1 with pipeline stages: only the last stage warms the sampler up (vllm/v1/worker/gpu_model_runner.py
    profile_run, ``get_pp_group().is_last_rank``), an uneven split gives the extra layers to the stages before
    the last (vllm/distributed/utils.py get_pp_indices), and the engine keeps the smallest pool of all workers
    (vllm/v1/core/kv_cache_utils.py unify_kv_cache_configs). The layout's page holds the larger stage's
    layers, so the last stage's bytes are scaled to that page."""
    layers = run.arch.num_layers + run.extra.extra_kv_layers
    most, last = -(-layers // run.pp), max(1, layers // run.pp)
    last_stage_pool = est.pool_bytes * most // last
    est.reasons.append(f"pipeline stages: the last holds {last} layer(s) and the sampler warm-up, the others up to "
                       f"{most} layers without it; the smallest pool of the stages is kept")
    return min(first_stage_pool, last_stage_pool)


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
        est.max_concurrency = conc = est.num_blocks / est.layout.blocks_per_request(L)
        est.kv_pool_tokens = int(conc * L)
    else:
        est.kv_pool_tokens = est.num_blocks * est.layout.block_size

