"""Before/after of changed served models: key settings and capacity, for PR comments and proposals."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import capacity, drift, settings
from .capacity.needs import MemoryNeeds, memory_needs
from .model import ServedModel

KEY_SETTINGS = ("image",) + settings.KEY_SETTINGS  # shown before/after in change summaries


@dataclass
class Side:
    """One served model at one version: its key settings and its capacity arithmetic."""

    settings: dict[str, object]
    pool_tokens: int | None
    pool_source: str
    concurrency: float | None  # pool-limited full-length requests at max_model_len
    max_num_seqs: int | None
    max_model_len: int | None
    estimate: capacity.CapacityEstimate | None = field(default=None, repr=False, compare=False)  # for the curve
    # what one GPU needs when the configuration names none (capacity/needs.py)
    needs: MemoryNeeds | None = field(default=None, repr=False, compare=False)

    @property
    def overcommitted(self) -> bool:
        return None not in (self.concurrency, self.max_num_seqs) and self.max_num_seqs > self.concurrency


@dataclass
class ModelChange:
    name: str
    path: str
    before: Side | None  # None: added
    after: Side | None  # None: removed
    changed: list[str] = field(default_factory=list)  # key settings whose value differs
    # settings the change removed: what the engine uses instead (item: name, before, default, how)
    replaced: list[dict] = field(default_factory=list)
    upgrade: drift.VersionChange | None = None  # the engine version moved: drifts, removed flags, env


def side(model: ServedModel, config: dict) -> Side:
    estimate = capacity.estimate(model, config)
    values: dict[str, object] = {}
    for name in KEY_SETTINGS:
        if name == "image":
            values[name] = model.image.value if model.image is not None else None
        else:
            values[name] = model.value(name)
    values["max_num_seqs"] = estimate.max_num_seqs if values["max_num_seqs"] is None else values["max_num_seqs"]
    values["max_model_len"] = estimate.max_model_len if values["max_model_len"] is None else values["max_model_len"]
    return Side(values, estimate.kv_pool_tokens, estimate.kv_pool_source,
                capacity.concurrency_at(estimate, estimate.max_model_len), estimate.max_num_seqs, estimate.max_model_len,
                estimate)


def model_changes(head: list[ServedModel], base: list[ServedModel], config: dict) -> list[ModelChange]:
    """Served models whose key settings or capacity differ between base and head, paired by identity."""
    base_by_identity = {m.identity: m for m in base}
    head_ids = {m.identity for m in head}
    changes = []
    for model in head:
        after = side(model, config)
        before_model = base_by_identity.get(model.identity)
        before = side(before_model, config) if before_model is not None else None
        changed = [k for k in after.settings if before is None or before.settings.get(k) != after.settings.get(k)]
        if before is not None and not changed and before.pool_tokens == after.pool_tokens:
            continue
        change = ModelChange(model.name, model.path, before, after, changed)
        after.needs = memory_needs(model, config)  # only for changed models: it tries every bundled GPU
        if before_model is not None:
            before.needs = memory_needs(before_model, config)
            change.replaced = replaced_settings(before_model, model, config)
            change.upgrade = drift.version_change(before_model, model, config)
        changes.append(change)
    for model in base:
        if model.identity not in head_ids:
            changes.append(ModelChange(model.name, model.path, side(model, config), None, []))
    return changes


def replaced_settings(base: ServedModel, head: ServedModel, config: dict) -> list[dict]:
    """Settings ``base`` set and ``head`` no longer does, with the default that now applies: the
    reviewer sees "32 -> engine default 160"."""
    out = []
    for name, setting in base.settings.items():
        if name in head.settings or name not in settings.BY_NAME:
            continue
        value, how = drift.applied_default(head, name, config)
        out.append({"name": name, "before": setting.value, "default": value, "how": how})
    return out
