"""Effective settings: the value a served model's engine runs with, and where that value comes from.

A setting is *written* (at a file and line), or left to the engine: its *default* at that version (on
that GPU, where the default depends on the GPU), a value the engine *derives* at start-up (SGLang's
``mem_fraction_static`` from the GPU's memory and the parallel ranks, its ``max_running_requests`` from
the KV pool, the context length from the model's config.json), or *unknown*. The rules (through
``RuleContext.effective``), the capacity estimate, ``drift``, ``changes`` and ``propose`` all ask here,
so two readers never work one default out differently. The engine knowledge itself (version thresholds,
formulas, their upstream sources) is in ``engines/defaults.py`` and the generated flag catalogs.

One ``Facts`` per served model and configuration: the capacity estimate makes it as soon as it knows the
GPU and the model's architecture (``CapacityEstimate.facts``), and settles it with the KV pool.
``topology(model)`` is the parallel layout (ranks, GPUs, pods, nodes), read once per served model.
"""

from __future__ import annotations

import functools

from .records import Record
from .capacity.gpu_table import bundled_gpus
from .engines import defaults
from .engines.catalog import catalog_for
from .engines.versions import DISPLAY
from .model import Location, ServedModel, Setting, unresolved
from .settings import BY_NAME, as_int, int_value, truthy, typed, unit_of

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:  # annotations only: the estimate hands them in
    from typing import Callable
    from .capacity.architecture import Architecture
    from .capacity.gpus import Gpu

WRITTEN, DEFAULT, DERIVED, UNKNOWN = "written", "default", "derived", "unknown"
SOURCES = (WRITTEN, DEFAULT, DERIVED, UNKNOWN)
# The memory fraction an engine reserves, whatever it calls it: vLLM's and TokenSpeed's
# gpu_memory_utilization, SGLang's mem_fraction_static.
MEMORY_FRACTION = "memory_fraction"
# Engines whose defaults are modelled; "unknown" (an engine not read from the image) is taken for vLLM,
# as the capacity arithmetic takes it.
_VLLM_LIKE = ("vllm", "unknown")
# Limits where a written 0 or -1 is no limit (vLLM's -1 max_model_len fits the context at start-up): the
# engine's own choice applies.
_POSITIVE = ("max_model_len", "max_num_batched_tokens")


def fraction_setting(engine: str | None) -> str:
    """The setting that holds ``engine``'s memory fraction."""
    return "mem_fraction_static" if (engine or "").lower() == "sglang" else "gpu_memory_utilization"


class Fact(Record):
    """One effective setting: its value in its unit (None when unknown) and where it comes from."""

    __slots__ = ("name", "value", "unit", "source", "setting", "engine", "version", "gpu", "how", "at_least", "of")

    def __init__(self, name: str, value: object, unit: str, source: str, setting: Setting | None = None,
                 engine: str | None = None, version: str | None = None, gpu: str | None = None, how: str = "",
                 at_least: int | float | None = None, of: str = "") -> None:
        self.name = name  # the canonical setting
        self.value = value
        self.unit = unit  # settings.TOKENS, FRACTION, BYTES ...
        self.source = source  # written | default | derived | unknown
        self.setting = setting  # where it is written (also for an unknown written value)
        self.engine = engine  # whose default or derivation
        self.version = version  # the engine version it is the default of (None: not known)
        self.gpu = gpu  # the GPU it was worked out for, when it depends on the GPU
        self.how = how  # how the engine arrives at it, or why it is unknown
        self.at_least = at_least  # an unknown default's bound on every GPU (vLLM's 256 sequences)
        self.of = of  # a default an operator's runtime passes the engine: whose ("KAITO's runtime at v0.12.0")

    @property
    def location(self) -> Location | None:
        return self.setting.location if self.setting is not None else None

    @property
    def who(self) -> str:
        """The engine as a reader names it: ``vLLM``, ``SGLang``."""
        return DISPLAY.get(self.engine or "", self.engine or "the engine")

    def describe(self) -> str:
        """Where the value comes from, for a message: "written", "default of vLLM 0.26.0", "derived on H100-80GB
        from its memory at TP 1"."""
        on = f" on {self.gpu}" if self.gpu else ""
        if self.source == WRITTEN:
            return "written"
        if self.source == DEFAULT and self.of:
            return f"default of {self.of}"
        if self.source == DEFAULT:
            which = f"{self.who} {self.version}" if self.version else f"the newest {self.who} (version not known)"
            return f"default of {which}{on}"
        if self.source == DERIVED:
            return f"derived{on}" + (f" {self.how}" if self.how else "")
        return f"unknown ({self.how})" if self.how else "unknown"


class Topology(Record):
    """The parallel layout of one served model as its configuration states it."""

    __slots__ = ("tp", "pp", "dp", "ep", "gpus", "gpus_per_pod", "pods", "nodes", "tp_setting", "pp_setting", "group",
                 "group_pods")

    def __init__(self, tp: int = 1, pp: int = 1, dp: int = 1, ep: int = 1, gpus: int | None = None,
                 gpus_per_pod: int | None = None, pods: int | None = None, nodes: int | None = None,
                 tp_setting: Setting | None = None, pp_setting: Setting | None = None, group: bool = False,
                 group_pods: tuple[tuple[str, int | None], ...] = ()) -> None:
        self.tp = tp  # tensor-parallel ranks
        self.pp = pp  # pipeline stages
        self.dp = dp  # data-parallel replicas behind one server
        self.ep = ep  # expert-parallel ranks (SGLang --ep-size; vLLM --enable-expert-parallel spreads over TP x DP)
        self.gpus = gpus  # devices the served model requests, as the adapter counted them (``gpus_span``)
        self.gpus_per_pod = gpus_per_pod  # the engine container's own request
        self.pods = pods  # replicas, when stated
        self.nodes = nodes  # nodes one replica spans (--nnodes; 1 for one pod; None when not known)
        self.tp_setting = tp_setting
        self.pp_setting = pp_setting
        # the ranks spread over the pods of a multi-pod group (a Ray cluster, an LWS group): the engine's own pod
        # holds only its own GPUs' ranks (none when it requests none), the other pods theirs (``group_pods``)
        self.group = group
        self.group_pods = group_pods  # (pod, GPUs per pod) of the group's other pods

    @property
    def world(self) -> int:
        """Tensor x pipeline ranks of one engine."""
        return self.tp * self.pp

    @property
    def ranks_here(self) -> int:
        """Ranks inside this pod: a pod that requests fewer GPUs than the world holds only its share (a
        multi-node layout whose other ranks run in other pods)."""
        if self.gpus_per_pod is not None and (0 < self.gpus_per_pod or self.group) and self.gpus_per_pod < self.world:
            return self.gpus_per_pod
        return self.world

    def ranks_in(self, pod_gpus: int | None) -> int:
        """Ranks a pod of the group holding ``pod_gpus`` GPUs runs (the world when its count is not known)."""
        return min(pod_gpus, self.world) if pod_gpus is not None and pod_gpus >= 0 else self.world


def _ranks(setting: Setting | None) -> int:
    """A parallel size as written (at least 1: 0 and negatives mean the engine's single rank)."""
    value = int_value(setting.value) if setting is not None else None
    return value if value is not None and value > 0 else 1


def topology(model: ServedModel) -> Topology:
    """The parallel layout of ``model``, read once per served model (``model.cache``)."""
    cache = model.cache
    found = cache.get("topology")
    if found is None:
        found = cache["topology"] = _read_topology(model)
    return found


def _read_topology(model: ServedModel) -> Topology:
    tp_setting, pp_setting = model.setting("tensor_parallel_size"), model.setting("pipeline_parallel_size")
    tp, pp, dp = _ranks(tp_setting), _ranks(pp_setting), _ranks(model.setting("data_parallel_size"))
    ep = _ranks(model.setting("expert_parallel_size"))
    if ep == 1 and truthy(model.value("enable_expert_parallel")):
        ep = tp * dp  # vLLM forms the experts' group over the TP x DP ranks (docs/serving/expert_parallel_deployment.md)
    gpus = as_int(model.gpus.value) if model.gpus is not None else None
    pod, own = model.pod, None
    if pod is not None and model.gpu_resource:
        request = pod.limits.get(model.gpu_resource) or pod.requests.get(model.gpu_resource)
        own = as_int(request.value) if request is not None else None
    nnodes = as_int(model.value("nnodes"))
    nodes = nnodes if nnodes else 1 if model.gpus_span == "pod" else None
    replicas = as_int(model.replicas.value) if model.replicas is not None else None
    group = model.gpus_span == "group"
    per_pod = own if own is not None else 0 if group else gpus  # a Ray head without GPUs runs no rank itself
    return Topology(tp, pp, dp, ep, gpus, per_pod, replicas, nodes, tp_setting, pp_setting, group,
                    tuple((pod.name, pod.gpus) for pod in model.group_pods))


@functools.lru_cache(maxsize=None)
def _parser_defaults(engine: str, version: str | None) -> dict[str, object]:
    """Argparse destination -> default of the options that take a value, in the catalog serving ``version``."""
    catalog = catalog_for(engine, version)
    found: dict[str, object] = {}
    for spec in catalog.options() if catalog is not None else ():
        if spec.takes_value and spec.default is not None and not isinstance(spec.default, dict):
            found.setdefault(spec.dest, spec.default)  # a config object ({"$repr": ...}) is nobody's setting
    return found


class Facts:
    """The effective settings of one served model, each worked out once: written, else the engine
    version's default on this GPU, else derived at start-up, else unknown."""

    # one per capacity estimate, held with it to the run's end
    __slots__ = ("model", "engine", "modelled", "version", "gpu", "arch", "pool", "_found")

    def __init__(self, model: ServedModel, gpu: Gpu | None = None, arch: Architecture | None = None,
                 version: str | None = None) -> None:
        self.model = model
        self.engine = (model.engine or "unknown").lower()
        # whose defaults apply: an engine not read from the image is taken for vLLM, as capacity takes it
        self.modelled = "vllm" if self.engine == "unknown" else self.engine
        self.version = version if version is not None else model.engine_version
        self.gpu, self.arch = gpu, arch
        self.pool: tuple[int, int] | None = None  # (KV pool tokens, context length), once the estimate has them
        self._found: dict[str, Fact] = {}

    def ground(self, gpu: Gpu | None, arch: Architecture | None) -> None:
        """What the defaults depend on beyond the version: the GPU and the model's architecture."""
        self.gpu, self.arch = gpu, arch
        self._found.clear()

    def settle(self, pool_tokens: int | None, context_len: int | None) -> None:
        """The KV pool the estimate found: what SGLang derives its sequence window from."""
        self.pool = (pool_tokens, context_len) if pool_tokens and context_len else None
        if self.engine == "sglang":  # the only window read from the pool (_max_num_seqs): the others stand
            self._found.pop("max_num_seqs", None)

    def at(self, version: str) -> Facts:
        """The same served model on engine version ``version`` (for what an upgrade changes)."""
        moved = Facts(self.model, self.gpu, self.arch, version)
        moved.pool = self.pool
        return moved

    @property
    def topology(self) -> Topology:
        return topology(self.model)

    @property
    def vision(self) -> bool:
        return self.arch is not None and self.arch.vision

    def get(self, name: str) -> Fact:
        """The effective value of setting ``name`` (``MEMORY_FRACTION``: the engine's fraction setting)."""
        if name == MEMORY_FRACTION:
            name = fraction_setting(self.engine)
        found = self._found.get(name)
        if found is None:
            found = self._found[name] = self._written(name) or self.default(name)
        return found

    def default(self, name: str) -> Fact:
        """What the engine uses for ``name`` when the configuration leaves it unset."""
        if name == MEMORY_FRACTION:
            name = fraction_setting(self.engine)
        if name in self.model.operator_defaults:  # the operator's runtime passes it: the engine's own does not apply
            value, whose = self.model.operator_defaults[name]
            fact = self._fact(name, typed(name, value), DEFAULT)
            fact.of = whose
            return fact
        resolve = _RESOLVERS.get(name)
        return (resolve(self, name) if resolve is not None else None) or self._parser_default(name)

    def _written(self, name: str) -> Fact | None:
        setting = self.model.setting(name)
        if setting is None:
            return None
        unit = unit_of(name)
        value = typed(name, setting.value)
        if name == "max_model_len" and self.engine in _VLLM_LIKE and \
                (str(setting.value).strip().lower() == "auto" or isinstance(value, int) and value <= 0):
            # vLLM's "auto" (or -1) fits the context to the KV pool at start-up (vllm config/model.py,
            # max_model_len: "-1 or auto: the maximum that fits in GPU memory"): no length to hold it to
            return Fact(name, None, unit, DERIVED, setting, how="fitted to the KV pool at start-up")
        if value is None:
            why = "set from a variable" if unresolved(setting.value) else f"{setting.value!r} is no {unit} value"
            return Fact(name, None, unit, UNKNOWN, setting, how=why)
        if name in _POSITIVE and isinstance(value, int) and value <= 0:
            return None
        return Fact(name, value, unit, WRITTEN, setting)

    def _fact(self, name: str, value: object, source: str, how: str = "", gpu: bool = False) -> Fact:
        return Fact(name, value, unit_of(name), source, None, self.modelled, self.version,
                    self.gpu.name if gpu and self.gpu is not None else None, how)

    def _unknown(self, name: str, why: str, at_least: int | float | None = None) -> Fact:
        fact = self._fact(name, None, UNKNOWN, why)
        fact.at_least = at_least
        return fact

    def _parser_default(self, name: str) -> Fact:
        """The default of the engine version's argument parser (the generated catalog), else unknown."""
        setting = BY_NAME.get(name)
        dests = setting.dests.get(self.engine, ()) if setting is not None else (name,)
        parsed = _parser_defaults(self.engine, self.version)
        for dest in dests:
            if dest in parsed:
                return self._fact(name, typed(name, parsed[dest]), DEFAULT, "parser default")
        return self._unknown(name, f"derived at start-up by {DISPLAY.get(self.engine, self.engine)}")

    # ------------------------------------------------------------ defaults cfgcheck models

    def _memory_fraction(self, name: str) -> Fact | None:
        if name == "mem_fraction_static":
            return self._sglang_fraction(name) if self.engine == "sglang" else None
        if self.engine not in (*_VLLM_LIKE, "tokenspeed"):
            return None
        value = defaults.default_gpu_memory_utilization(self.engine, self.version, self.vision)
        return self._fact(name, value, DEFAULT, "for a vision model" if self.vision and self.engine == "tokenspeed" else "")

    def _sglang_fraction(self, name: str) -> Fact:
        """SGLang sizes its static pool from the GPU's memory, the chunk size and the parallel ranks."""
        layout = self.topology
        if self.gpu is None:
            least = defaults.min_sglang_default_mem_fraction(bundled_gpus(), layout.tp, layout.pp, self.vision,
                                                             self.version)
            return self._unknown(name, "derived at start-up from the GPU's memory; the GPU is not known", least)
        value = defaults.sglang_default_mem_fraction(self.gpu, layout.tp, layout.pp, vision=self.vision,
                                                         version=self.version)
        ranks = f"TP {layout.tp}" + (f" x PP {layout.pp}" if layout.pp > 1 else "")
        return self._fact(name, value, DERIVED, f"from its memory at {ranks}" + (", a vision model" if self.vision else ""),
                          gpu=True)

    def _max_num_seqs(self, name: str) -> Fact | None:
        if self.engine == "sglang":
            if self.pool is None:
                return self._unknown(name, "derived at start-up from the KV pool, which is not known")
            return self._fact(name, defaults.sglang_default_max_running_requests(*self.pool), DERIVED,
                              "from the KV pool", gpu=True)
        if self.engine == "tokenspeed":
            speculative = any(t.text.startswith("--speculative-algo") for t in self.model.argv)
            return self._fact(name, defaults.default_max_num_seqs(self.engine, self.version, None, speculative), DEFAULT,
                              "with a speculative algorithm" if speculative else "")
        if self.engine not in _VLLM_LIKE:
            return None
        value = defaults.default_max_num_seqs(self.engine, self.version, self.gpu)
        if value is None:
            return self._unknown(name, "vLLM's default depends on the GPU, which is not known",
                                 at_least=defaults.min_default_max_num_seqs(self.engine, self.version))
        return self._fact(name, value, DEFAULT, gpu=True)

    def _max_model_len(self, name: str) -> Fact:
        longest = self.arch.derived_max_len() if self.arch is not None else None
        if longest:
            return self._fact(name, longest, DERIVED, "from the model's maximum")
        return self._unknown(name, "the model's maximum, which is not known")

    def _max_num_batched_tokens(self, name: str) -> Fact:
        """vLLM's token budget of one step: V0 by chunked prefill (the whole context without it), V1 by the
        usage-context tier of the GPU."""
        context = self.get("max_model_len").value
        length = context if isinstance(context, int) else None
        chunked = defaults.v0_chunked_prefill(self.version, length, truthy(self.model.value("enable_chunked_prefill")))
        value = defaults.default_max_num_batched_tokens(self.engine, self.version, self.gpu, length, chunked)
        how = "the engine's default for this GPU" if chunked is None else \
            "V0 engine with chunked prefill (max_model_len > 32K)" if chunked else \
            "V0 engine without chunked prefill: the profile prefills the whole max_model_len"
        return self._fact(name, value, DEFAULT, how, gpu=chunked is None)

    def _prefix_caching(self, name: str) -> Fact:
        return self._fact(name, defaults.default_prefix_caching(defaults.parse_version(self.version)), DEFAULT,
                          "where the model supports it")


_RESOLVERS: dict[str, Callable[[Facts, str], Fact | None]] = {
    "gpu_memory_utilization": Facts._memory_fraction,
    "mem_fraction_static": Facts._memory_fraction,
    "max_num_seqs": Facts._max_num_seqs,
    "max_model_len": Facts._max_model_len,
    "max_num_batched_tokens": Facts._max_num_batched_tokens,
    "enable_prefix_caching": Facts._prefix_caching,
}
