"""What a rule sees besides its served model: its options, the configuration, the other served models,
and engine facts computed once per served model (the flag walk, the KV-pool estimate)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import ServedModel


@dataclass(eq=False)
class RuleContext:
    """Handed to ``check(model, ctx)``; ``options`` holds every declared option (defaults filled in)."""

    options: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    models: list[ServedModel] = field(default_factory=list)  # every served model of the run
    base: ServedModel | None = None  # diff mode: the same served model at the base
    base_models: list[ServedModel] = field(default_factory=list)
    cache: dict = field(default_factory=dict)  # shared by every rule of one run: facts about ``models``

    def flags(self, model: ServedModel):
        """(catalog, walked argv flags, version label) of ``model``'s engine, or None; walked once."""
        from .engines.argv import model_flags

        return model_flags(model)

    def capacity(self, model: ServedModel):
        """The KV-pool estimate of ``model`` under this run's configuration; computed once."""
        from .capacity import estimate

        return estimate(model, self.config)
