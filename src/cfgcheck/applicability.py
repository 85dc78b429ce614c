"""Which drifted defaults matter to a served model: the engine reads many options only with a feature on.

An engine upgrade changes dozens of parser defaults, most of them options of features a given served
model does not use: SGLang reads its ``--hicache-*`` options only with hierarchical cache on, its
``--load-balance-method`` only with more than one data-parallel replica. ``GATES`` names, per engine,
the options a feature gates (by argparse destination) and how to tell from the configuration (argv,
canonical settings) and the model's architecture whether the feature is on. ``judge`` marks each
drifted default of a version change with the feature that gates it and whether it applies:
True (on, or the option is not gated), False (off), None (cannot be told: the model's architecture is
not known).

Sources, by gate (the code that reads the options only under the feature):
* hierarchical cache: sglang/srt/managers/scheduler.py builds ``HiRadixCache`` (the reader of every
  ``hicache_*`` argument) only ``if server_args.enable_hierarchical_cache``;
* data parallel: sglang/srt/entrypoints/engine.py starts the ``DataParallelController`` (the reader of
  ``load_balance_method``) only when ``dp_size > 1``; vLLM's ``data_parallel_*`` options configure the
  replicas of ``--data-parallel-size`` (vllm/engine/arg_utils.py, ParallelConfig);
* context parallel: vLLM's ``dcp_*`` options and ``cp_kv_cache_interleave_size`` lay out the KV cache
  across the ranks of ``--decode-context-parallel-size`` / ``--prefill-context-parallel-size``
  (vllm/config/parallel.py);
* hybrid and sliding-window models: the ``mamba_*`` options size the Mamba state pool and the
  ``swa_*`` options the sliding-window pool, which sglang/srt/model_executor/model_runner.py (and
  vLLM's cache config) create only for models with such layers;
* speculative decoding: the ``speculative_*`` options are read by the draft worker, created only with
  ``--speculative-algorithm`` (SGLang) or ``--speculative-config`` (vLLM);
* LoRA: the ``lora_*`` / ``max_lora*`` options are read by the LoRA manager, created only with
  ``--enable-lora`` or ``--lora-paths``;
* prefill/decode disaggregation: the ``disaggregation_*`` options other than the mode are read only
  when ``--disaggregation-mode`` is prefill or decode;
* expert-parallel load balancing: ``eplb_*`` only with ``--enable-eplb``;
* the OpenAI Files API: SGLang's ``file_storage_path`` ("The path of the file storage in backend",
  sglang/srt/server_args.py, API related) is where the ``/v1/files`` endpoint keeps uploads; serving
  requests never read it, and no configuration says whether clients upload files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import capacity


@dataclass(eq=False)
class Facts:
    """What decides a gate for one served model: the argparse destinations argv sets, its canonical
    settings, its disaggregation role, and its architecture (asked for only by the gates that need it)."""

    written: dict[str, Any]
    settings: dict[str, Any]
    disaggregation: tuple[str, str] | None
    architecture_of: Callable[[], Any]

    def on(self, *dests: str) -> bool:
        """A switch or a value that turns a feature on (not false, none, null or empty)."""
        for dest in dests:
            value = self.written.get(dest, self.settings.get(dest))
            if value is not None and value is not False and str(value).strip().lower() not in ("", "false", "none",
                                                                                               "null", "0"):
                return True
        return False

    def several(self, *dests: str) -> bool:
        """A size above 1; a size written as a variable (``$(PARALLELISM_SIZE)``) is a feature the
        configuration uses by design, taken as above 1."""
        for dest in dests:
            value = self.written.get(dest, self.settings.get(dest))
            if value is None:
                continue
            try:
                return int(str(value).strip()) > 1
            except ValueError:
                return True
        return False

    def layers(self, kind: str) -> bool | None:
        """Whether the model has hybrid (Mamba / linear attention) or sliding-window layers; None: not known."""
        architecture = self.architecture_of()
        if architecture is None:
            return None
        return bool(architecture.is_hybrid if kind == "hybrid" else architecture.sliding_layers)


@dataclass(eq=False)  # never compared by value: cheaper to create
class Gate:
    engines: tuple[str, ...]
    prefixes: tuple[str, ...]  # argparse destinations equal to or starting with one of these
    feature: str  # as a reviewer reads it: the defaults "matter only with ..."
    on: Callable[[Facts], bool | None]
    unless: tuple[str, ...] = ()  # destinations matched by a prefix that the feature does not gate

    def gates(self, engine: str, dest: str) -> bool:
        return engine in self.engines and dest not in self.unless and dest.startswith(self.prefixes)


GATES = (
    Gate(("sglang",), ("hicache_",), "hierarchical cache", lambda f: f.on("enable_hierarchical_cache")),
    Gate(("sglang",), ("load_balance_method",), "data parallel > 1",
         lambda f: f.several("dp_size", "data_parallel_size")),
    Gate(("vllm",), ("data_parallel_",), "data parallel > 1", lambda f: f.several("data_parallel_size"),
         unless=("data_parallel_size",)),
    Gate(("vllm",), ("dcp_", "cp_kv_cache_interleave_size"), "context parallel > 1",
         lambda f: f.several("decode_context_parallel_size", "prefill_context_parallel_size")),
    Gate(("sglang", "vllm"), ("mamba_", "max_mamba_cache_size"), "a hybrid (Mamba / linear attention) model",
         lambda f: f.layers("hybrid")),
    Gate(("sglang",), ("swa_",), "a sliding-window attention model", lambda f: f.layers("sliding")),
    Gate(("sglang",), ("speculative_",), "speculative decoding", lambda f: f.on("speculative_algorithm"),
         unless=("speculative_algorithm",)),
    Gate(("vllm",), ("speculative_", "num_speculative_tokens"), "speculative decoding",
         lambda f: f.on("speculative_config", "speculative_model"), unless=("speculative_config",)),
    Gate(("sglang", "vllm"), ("lora_", "max_lora", "max_cpu_loras", "fully_sharded_loras"), "LoRA adapters",
         lambda f: f.on("enable_lora", "lora_paths"), unless=("lora_paths",)),
    Gate(("sglang",), ("disaggregation_",), "prefill/decode disaggregation",
         lambda f: f.disaggregation is not None or f.on("disaggregation_mode"), unless=("disaggregation_mode",)),
    Gate(("sglang",), ("eplb_",), "expert-parallel load balancing", lambda f: f.on("enable_eplb")),
    Gate(("sglang",), ("file_storage_path",), "the OpenAI Files API (uploads), not serving", lambda f: False),
)


def gate_of(engine: str, dest: str) -> Gate | None:
    return next((gate for gate in GATES if gate.gates(engine, dest)), None)


def judge(drifts: list, model, written: dict[str, Any], config: dict) -> None:
    """Mark each drifted default (``drift.DefaultDrift``) with the feature that gates it and whether
    ``model`` uses that feature; ``written``: the destinations argv sets (``drift.written``)."""
    gated = [(drift, gate) for drift in drifts if (gate := gate_of(model.engine, drift.dest)) is not None]
    if not gated:
        return
    facts = Facts(written, {name: setting.value for name, setting in model.settings.items()}, model.disaggregation,
                  lambda: capacity.estimate(model, config).architecture)
    for drift, gate in gated:
        drift.feature, drift.applies = gate.feature, gate.on(facts)
