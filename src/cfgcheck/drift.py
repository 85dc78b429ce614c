"""What an engine version change does to a served model that stays as written.

When a change moves a served model from one engine version to another (an image tag, a pip pin, a
``version:`` field), the configuration keeps its settings but the engine does not keep its
defaults. This module compares the two versions for one served model:

* catalog defaults: every option whose parser default differs between the two versions' catalogs
  (``engines/catalogs``, generated from the engines' wheels), for options the configuration does not
  set (vLLM 0.19 -> 0.20: ``--gpu-memory-utilization`` 0.9 -> 0.92);
* run-time defaults the engine derives (``engines/defaults.py``): the usage-context window and
  batched tokens by GPU class, prefix caching for hybrid models, chunked prefill, the V0 -> V1 engine;
* flags in use that the new version no longer accepts (with their successor where the catalogs
  say), and env variables the new version stops reading (the per-version env catalogs).

Nothing here opens a repository file; the change rules (CFG403) and the review summary read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import applicability, capacity, settings
from .effective import DERIVED
from .engines import defaults
from .engines.argv import launch_offset, walk
from .engines.catalog import Catalog, catalog_for
from .engines.history import Rename, rename
from .engines.versions import DISPLAY, catalog_data, version_key
from .model import Location, ServedModel


# eq=False: never compared by value (a membership test meets the same objects): cheaper to create
@dataclass(eq=False)
class DefaultDrift:
    """A default that changes under a setting the configuration leaves unset."""

    dest: str  # the argparse destination (the canonical setting where the vocabulary has one)
    flag: str | None  # the flag that would pin it
    old: Any
    new: Any
    derived: str = ""  # how the engine derives it at run time ("" for a parser default)
    feature: str = ""  # the feature of the served model under which the engine reads it ("": always)
    applies: bool | None = True  # that feature is on for this model; None: not known (an unknown architecture)

    @property
    def setting(self) -> str:
        return self.dest


@dataclass(eq=False)
class RemovedFlag:
    """A flag the configuration uses that the new version no longer accepts."""

    written: str  # the flag as the configuration writes it
    option: str  # the full option string the old version knew
    rename: Rename | None  # what the new version calls it, where the catalogs say (``certain``: same meaning)
    location: Location

    @property
    def successor(self) -> str | None:
        return self.rename.successor if self.rename is not None else None


@dataclass(eq=False)
class DroppedEnv:
    """An env variable the configuration sets that the new version no longer reads."""

    name: str
    location: Location


@dataclass(eq=False)
class VersionChange:
    """One served model's engine version change and what it brings."""

    engine: str
    old: str
    new: str
    old_catalog: str | None
    new_catalog: str | None
    drifts: list[DefaultDrift] = field(default_factory=list)
    removed_flags: list[RemovedFlag] = field(default_factory=list)
    dropped_env: list[DroppedEnv] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be compared, and why

    @property
    def label(self) -> str:
        return f"{DISPLAY.get(self.engine, self.engine)} {self.old} → {self.new}"

    @property
    def relevant(self) -> list[DefaultDrift]:
        """The drifted defaults this served model reads: not gated by a feature, or by one it uses."""
        return [d for d in self.drifts if d.applies is True]

    @property
    def undecided(self) -> list[DefaultDrift]:
        """The drifted defaults of a feature not known for this model (hybrid layers of an unknown architecture)."""
        return [d for d in self.drifts if d.applies is None]

    @property
    def irrelevant(self) -> list[DefaultDrift]:
        """The drifted defaults of features this served model does not use (``feature`` says which)."""
        return [d for d in self.drifts if d.applies is False]


def show(value: Any) -> str:
    """A default as a reviewer reads it."""
    if value is None:
        return "unset (derived at start-up)"
    if value == "":
        return '"" (empty)'
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _comparable(value: Any) -> bool:
    """Catalog defaults that are config objects (``{"$repr": ...}``) are not settings a user pins."""
    return not isinstance(value, dict)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, tuple)) and len(value) == 0)


def _same(a: Any, b: Any) -> bool:
    # None, "" and [] all leave the option off: a parser that swapped one for another changed nothing
    if _empty(a) and _empty(b):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return a == b and type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                              and not isinstance(a, bool) and not isinstance(b, bool) and a == b)


def set_dests(model: ServedModel, catalog: Catalog) -> set[str]:
    """Argparse destinations the configuration sets: its canonical settings and every flag in argv."""
    engine_dests = settings.DESTS.get(model.engine, {})
    names = set(model.settings)
    return {dest for dest, name in engine_dests.items() if name in names} | names | set(written(model, catalog))


def written(model: ServedModel, catalog: Catalog) -> dict[str, Any]:
    """The value of each argparse destination argv sets (last wins, as argparse does): the value text,
    or True / False for a switch by its polarity."""
    tokens = list(model.argv)
    values: dict[str, Any] = {}
    for flag in walk(catalog, tokens[launch_offset(tokens):]):
        spec = flag.resolution.spec
        if spec is None:
            continue
        if flag.inline_value is not None or flag.value is not None:
            values[spec.dest] = flag.inline_value if flag.inline_value is not None else flag.value.text
        else:
            values[spec.dest] = not spec.is_negative(flag.resolution.option or "")
    return values


def pin_flag(catalog: Catalog, dest: str, value: Any) -> str | None:
    """The flag of ``catalog`` that sets ``dest`` to ``value``: for a switch, the form with that
    polarity (``--enable-x`` / ``--no-enable-x`` / ``--disable-x``); else the option itself."""
    specs = [s for s in catalog.options() if s.dest == dest]
    if not specs:
        return None
    if not isinstance(value, bool):
        takes = [s for s in specs if s.takes_value]
        return takes[0].name if takes else None
    for spec in specs:
        if spec.takes_value:
            continue
        if value == (not spec.negative):
            return spec.name
        if spec.negative_forms:
            return spec.negative_forms[0]
    return None


def catalog_drifts(old: Catalog, new: Catalog, pinned: set[str]) -> list[DefaultDrift]:
    """Parser defaults that differ between two catalogs, for destinations not in ``pinned``."""
    before: dict[str, Any] = {}
    for spec in old.options():
        if spec.takes_value or spec.action in ("store_true", "store_false", "BooleanOptionalAction") \
                or spec.negative_forms:
            before.setdefault(spec.dest, spec.default)
    drifts: dict[str, DefaultDrift] = {}
    for spec in new.options():
        if spec.dest in pinned or spec.dest in drifts or spec.dest not in before or spec.dest == "help":
            continue
        was, now = before[spec.dest], spec.default
        if not (_comparable(was) and _comparable(now)) or _same(was, now):
            continue
        drifts[spec.dest] = DefaultDrift(settings.canonical_name(new.engine, spec.dest),
                                         pin_flag(new, spec.dest, was), was, now)
    return sorted(drifts.values(), key=lambda d: d.dest)


def runtime_drifts(model: ServedModel, old: str, new: str, config: dict, pinned: set[str]) -> list[DefaultDrift]:
    """Defaults vLLM derives at start-up (vllm/engine/arg_utils.py usage-context defaults; engines/defaults.py) that differ between
    two versions for this served model's GPU and model."""
    if model.engine != "vllm":
        return []
    facts = capacity.estimate(model, config).facts  # this served model's GPU and architecture
    before, after = facts.at(old), facts.at(new)
    gpu = facts.gpu
    where = f"on {gpu.name}" if gpu is not None else "GPU class unknown"
    found: list[DefaultDrift] = []

    catalog = catalog_for("vllm", new)

    def add(dest: str, was: Any, now: Any, how: str) -> None:
        if dest not in pinned and was is not None and now is not None and was != now:
            found.append(DefaultDrift(dest, pin_flag(catalog, dest, was) if catalog else None, was, now, how))

    if gpu is not None:
        for dest in ("max_num_seqs", "max_num_batched_tokens"):
            add(dest, before.default(dest).value, after.default(dest).value, f"usage-context default {where}")
    if facts.arch is not None and facts.arch.is_hybrid:
        add("enable_prefix_caching", before.default("enable_prefix_caching").value,
            after.default("enable_prefix_caching").value, "for a hybrid model")
    add("engine", defaults.vllm_engine_generation(old), defaults.vllm_engine_generation(new),
        "engine core when VLLM_USE_V1 is unset")
    add("enable_chunked_prefill", defaults.vllm_chunked_prefill(old), defaults.vllm_chunked_prefill(new),
        "chunked prefill when unset")
    return found


def removed_flags(model: ServedModel, old: Catalog, new: Catalog) -> list[RemovedFlag]:
    """Flags in argv that ``old`` accepts and ``new`` does not (exact or abbreviated)."""
    tokens = list(model.argv)
    tokens = tokens[launch_offset(tokens):]
    gone: list[RemovedFlag] = []
    for flag in walk(old, tokens):
        res = flag.resolution
        if res.kind not in ("exact", "abbrev") or res.option is None or flag.token.synthetic:
            continue
        if new.resolve(flag.token.text).kind in ("exact", "abbrev"):
            continue
        gone.append(RemovedFlag(res.written, res.option, rename(new.engine, res.option, new.version),
                                flag.token.location))
    return gone


def env_names(engine: str, version: str) -> frozenset[str] | None:
    """The env variables ``version`` reads (the nearest catalogued version at or below it), or None."""
    data = catalog_data(f"{engine}_env")
    if not data or not data.get("versions"):
        return None
    known = sorted(data["versions"], key=version_key)
    below = [v for v in known if version_key(v) <= version_key(version)]
    return frozenset(data["versions"][below[-1] if below else known[0]]["names"])


def dropped_env(model: ServedModel, old: str, new: str) -> list[DroppedEnv] | None:
    """Env variables the model sets that ``old`` reads and ``new`` does not; None without env catalogs."""
    before, after = env_names(model.engine, old), env_names(model.engine, new)
    if before is None or after is None:
        return None
    return [DroppedEnv(name, s.key_location or s.location) for name, s in sorted(model.env.items())
            if name in before and name not in after]


def version_change(base: ServedModel, head: ServedModel, config: dict) -> VersionChange | None:
    """What moving ``base`` to ``head``'s engine version changes; None when the version did not move."""
    old, new = base.engine_version, head.engine_version
    if not old or not new or base.engine != head.engine or version_key(old) == version_key(new):
        return None
    return between(head, old, new, config)


def between(head: ServedModel, old: str, new: str, config: dict) -> VersionChange:
    """What running ``head``'s configuration on engine version ``new`` instead of ``old`` changes."""
    before, after = catalog_for(head.engine, old), catalog_for(head.engine, new)
    change = VersionChange(head.engine, old, new, before and before.version, after and after.version)
    if before is None or after is None:
        change.notes.append(f"no flag catalog for {head.engine}")
        return change
    for catalog, wanted in ((before, old), (after, new)):
        if catalog.assumed:
            change.notes.append(f"{wanted} is not catalogued; compared with {catalog.display}")
    pinned = set_dests(head, after)
    if before.version != after.version:
        change.drifts = catalog_drifts(before, after, pinned)
        change.removed_flags = removed_flags(head, before, after)
    derived = runtime_drifts(head, old, new, config, pinned)
    known = {d.dest for d in change.drifts}
    change.drifts += [d for d in derived if d.dest not in known]
    applicability.judge(change.drifts, head, written(head, after), config)
    env = dropped_env(head, old, new)
    if env is None:
        change.notes.append(f"no env catalog for {head.engine}: env variables not compared")
    else:
        change.dropped_env = env
    return change


def applied_default(model: ServedModel, name: str, config: dict) -> tuple[Any, str]:
    """The value ``model``'s engine version uses for setting ``name`` left unset (its effective default,
    ``cfgcheck.effective``), and how it comes about: a parser default, a default for this GPU and model, a
    value derived from the model or the KV pool, or (value None) derived at start-up in a way cfgcheck
    does not model."""
    est = capacity.estimate(model, config)
    fact = est.facts.default(name)
    engine = DISPLAY.get(model.engine, model.engine)
    version = f"{engine} {model.engine_version}" if model.engine_version else engine
    if fact.value is None:
        return None, f"derived at start-up by {version} (not modelled by cfgcheck)"
    if fact.source == DERIVED:
        return fact.value, "the model's maximum" if name == "max_model_len" else \
            f"derived from the KV pool of {est.gpu or 'this GPU'}" if name == "max_num_seqs" else \
            f"derived at start-up by {version} ({fact.how})"
    if fact.how == "parser default":
        catalog = catalog_for(model.engine, model.engine_version)
        return fact.value, f"{catalog.display if catalog is not None else version}'s parser default"
    return fact.value, f"{version}'s default" + (f" on {fact.gpu}" if fact.gpu else "")
