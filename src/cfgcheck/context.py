"""What a rule sees besides its served model: its options, the configuration, the other served models of
the run, the base in diff mode, and facts worked out once per served model (the flag walk, the effective
settings, the parallel layout, the KV-pool estimate). ``check`` has one of two signatures
(``check_signatures.py``): ``ModelCheck`` (one served model) or, for a rule that declares ``SCOPE = "run"``,
``RunCheck`` (every served model at once: the cross-model rules group the run's models once there, instead
of caching across calls)."""

from __future__ import annotations

from pathlib import Path

from .config import Config
from .registry import FACTS, FactProviders, configured

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:  # annotations only: a lint run imports these when a rule first asks (``FactProviders``)
    from typing import Any
    from .model import ServedModel
    from .capacity.estimate import CapacityEstimate
    from .effective import Fact, Facts, Topology
    from .engines.argv import ParsedFlag
    from .engines.catalog import Catalog


class RuleContext:
    """Handed to ``check``; ``options`` holds every declared option (defaults filled in)."""

    def __init__(self, options: dict[str, Any], config: dict[str, Any] | None = None,
                 models: list[ServedModel] | None = None, base: ServedModel | None = None,
                 base_models: list[ServedModel] | None = None, bases: dict[str, ServedModel] | None = None,
                 facts_of: FactProviders = FACTS) -> None:
        self.options = options
        self.config = {} if config is None else config
        self.models = [] if models is None else models  # every served model of the run
        self.base = base  # diff mode, a rule of one served model: the same served model at the base
        self.base_models = [] if base_models is None else base_models
        self.bases = {} if bases is None else bases  # diff mode: base served models by identity
        self.facts_of = facts_of  # how the facts below are worked out (the rule index's)
        self._options_of: dict[tuple[str, str], Any] = {}  # other rules' options, read once (``option_of``)

    def base_of(self, model: ServedModel) -> ServedModel | None:
        """Diff mode: ``model`` at the base commit (None: new in this change, or not diff mode)."""
        if self.base is not None and self.base.identity == model.identity:
            return self.base
        return self.bases.get(model.identity)

    def option_of(self, code: str, name: str, default: Any) -> Any:
        """Option ``name`` of rule ``code`` as this run configures it (``rules:``), else ``default``: for a rule
        that keeps to another's threshold. Read once per context, not once per served model."""
        key = (code, name)
        if key not in self._options_of:
            config = Config(Path(self.config.get("root") or "."), self.config)
            self._options_of[key] = configured(code, config).get(name, default)
        return self._options_of[key]

    def flags(self, model: ServedModel) -> tuple[Catalog, list[ParsedFlag], str] | None:
        """(catalog, walked argv flags, version label) of ``model``'s engine, or None; walked once."""
        return self.facts_of.flags(model)

    def capacity(self, model: ServedModel) -> CapacityEstimate:
        """The KV-pool estimate of ``model`` under this run's configuration; computed once."""
        return self.facts_of.capacity(model, self.config)

    def facts(self, model: ServedModel) -> Facts:
        """Every effective setting of ``model``: the ones the capacity estimate read, the same objects."""
        facts = self.capacity(model).facts
        assert facts is not None  # every estimate has its facts
        return facts

    def effective(self, model: ServedModel, name: str) -> Fact:
        """What ``model``'s engine runs with for setting ``name`` and where it comes from (written, the
        default of its version on its GPU, derived at start-up, unknown); ``effective.MEMORY_FRACTION``
        names the engine's memory fraction whatever the engine calls it."""
        return self.facts(model).get(name)

    def topology(self, model: ServedModel) -> Topology:
        """Tensor, pipeline, data and expert ranks, GPUs per pod, pods and nodes of ``model``."""
        return self.facts_of.topology(model)
