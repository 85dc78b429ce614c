"""Documented ceilings: where a served model's memory setting says how high it may go.

Shared by memory-above-ceiling and the diff rules. A ceiling comes from a directive
(`# cfgcheck: ceiling=0.875 <reason>`), from a comment on or directly above the key that states a
number as a ceiling ("HARD CEILING 0.80", "ceiling: 0.85", "ceiling of 85%"), or from the config.
A comment that calls the value a ceiling or says "never raise" without a number makes the value at
the time it was written the ceiling (in lint mode: the value itself; in diff mode: the base value).
"""

from __future__ import annotations

import fnmatch
import re

from cfgcheck.api import LazyPattern, Location, ServedModel, Setting

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Iterable

MEMORY_SETTINGS = ("gpu_memory_utilization", "mem_fraction_static")
# Comments come from pull requests: every pattern runs in linear time. A number starts only where no
# digit or dot precedes it (so a search does not retry inside a run of digits), its two forms begin
# differently, and no two adjacent quantifiers can match the same whitespace.
_NUMBER = r"(?<![\d.])(\d+(?:\.\d+)?|\.\d+)(?:\s*(%))?"
_DIRECTIVE = re.compile(r"cfgcheck:\s*ceiling\s*=\s*" + _NUMBER)
_NUMBER_AT_START = LazyPattern(_NUMBER)
_STATED = re.compile(r"\bceiling\b\s*(?:(?:[:=]|is|of|at|to)\s*)?" + _NUMBER, re.I)
_STATED_BEFORE = LazyPattern(_NUMBER + r"\s+(?:hard\s+)?ceiling\b", re.I)
_UNSTATED = LazyPattern(r"\bceiling\b|\b(?:never|do not|don't|must not|mustn't)\s+(?:be\s+)?rais", re.I)


class Ceiling:
    """A documented ceiling for a memory fraction: its value (or the value when written) and where it is said."""

    def __init__(self, setting: str, value: float | None, text: str, location: Location,
                 documented_on: str | None = None) -> None:
        self.setting = setting
        self.value = value  # None: "the value when this was written"
        self.text = text  # what documents it, for the message
        self.location = location
        self.documented_on = documented_on  # another served model's name, when the ceiling is shared

    def limit(self, base_value: object) -> float | None:
        """The number not to exceed: stated, or else the value at the base (when it was written)."""
        if self.value is not None:
            return self.value
        return float(base_value) if isinstance(base_value, (int, float)) and not isinstance(base_value, bool) else None


def _as_fraction(number: str, percent: str | None) -> float:
    value = float(number)
    return value / 100 if percent or value > 1 else value


def from_comments(setting: Setting) -> Ceiling | None:
    for comment in setting.comments:
        directive = _DIRECTIVE.search(comment)
        if directive:
            return Ceiling(setting.name, _as_fraction(*directive.groups()), comment, setting.key_location or setting.location)
    for comment in setting.comments:
        stated = _STATED.search(comment) or _STATED_BEFORE.search(comment)
        if stated:
            return Ceiling(setting.name, _as_fraction(*stated.groups()), comment, setting.key_location or setting.location)
    for comment in setting.comments:
        if _UNSTATED.search(comment):
            return Ceiling(setting.name, None, comment, setting.key_location or setting.location)
    return None


def documented(model: ServedModel, config: dict, pools: dict | None = None) -> list[tuple[Setting, Ceiling]]:
    """(setting, ceiling) for each memory setting of ``model`` that has a documented ceiling: its own,
    or one documented on another served model that runs on the same GPUs (``pools``: ``gpu_pools`` of the
    run's served models)."""
    found = []
    for name in MEMORY_SETTINGS:
        setting = model.setting(name)
        if setting is None:
            continue
        ceiling = ceiling_for(model, setting, config, pools)
        if ceiling is not None:
            found.append((setting, ceiling))
    return found


def ceiling_for(model: ServedModel, setting: Setting, config: dict, pools: dict | None = None) -> Ceiling | None:
    """The ceiling documented for ``setting`` of ``model`` (which may be the engine's default, not
    written in the file): beside it, a directive, the config, or a sibling on the same GPUs."""
    ceiling = from_comments(setting)
    if ceiling is None:
        directive = model.directive("ceiling")
        if directive is not None:
            match = _NUMBER_AT_START.match(directive.value)
            if match:
                ceiling = Ceiling(setting.name, _as_fraction(*match.groups()),
                                  f"cfgcheck: ceiling={directive.value} {directive.reason}".strip(), directive.location)
    if ceiling is None:
        ceiling = _from_config(model, setting, config)
    if ceiling is None:
        ceiling = _from_siblings(model, setting, pools or {})
    return ceiling


class Pools(dict):
    """Served models by the GPUs they run on, with the ceilings their settings document beside them, read
    once: each model of a pool asks the others for theirs (a pool of N models, N x N questions; the dense
    corpus's largest pools hold dozens)."""

    def __init__(self) -> None:
        super().__init__()
        self._documented: dict[tuple[Any, str], list[tuple[ServedModel, Setting, Ceiling]]] = {}

    def documented(self, pool: Any, name: str) -> list[tuple[ServedModel, Setting, Ceiling]]:
        key = (pool, name)
        if key not in self._documented:
            self._documented[key] = documented_settings(self.get(pool, ()), name)
        return self._documented[key]


def documented_settings(models: Iterable[ServedModel], name: str) -> list[tuple[ServedModel, Setting, Ceiling]]:
    """(served model, its setting ``name``, the ceiling documented beside it) of each of ``models``, in order."""
    found = []
    for model in models:
        setting = model.setting(name)
        ceiling = from_comments(setting) if setting is not None else None
        if ceiling is not None:
            found.append((model, setting, ceiling))
    return found


def gpu_pools(models: list[ServedModel]) -> Pools:
    """Served models by the GPUs they run on (``ServedModel.gpu_pool``): what a run-scoped rule groups once."""
    groups = Pools()
    for other in models:
        pool = other.gpu_pool()
        if pool is not None:
            groups.setdefault(pool, []).append(other)
    return groups


def _from_siblings(model: ServedModel, setting: Setting, by_pool: dict) -> Ceiling | None:
    pool = model.gpu_pool()
    if pool is None:
        return None
    siblings = by_pool.documented(pool, setting.name) if isinstance(by_pool, Pools) else \
        documented_settings(by_pool.get(pool, ()), setting.name)
    for other, theirs, ceiling in siblings:
        if other is model or other.identity == model.identity:
            continue
        # A ceiling without a number is the value the sibling still runs with.
        value = ceiling.value if ceiling.value is not None else ceiling.limit(theirs.value)
        return Ceiling(setting.name, value, ceiling.text, ceiling.location, other.name)
    return None


def _from_config(model: ServedModel, setting: Setting, config: dict) -> Ceiling | None:
    for entry in config.get("ceilings", []) or []:
        if entry.get("setting") != setting.name:
            continue
        if "model" in entry and not fnmatch.fnmatch(model.name, entry["model"]):
            continue
        reason = entry.get("reason", "")
        where = Location(".cfgcheck.yaml", 1, 1)
        return Ceiling(setting.name, float(entry["max"]), f"ceilings in .cfgcheck.yaml: {reason}".strip(), where)
    return None
