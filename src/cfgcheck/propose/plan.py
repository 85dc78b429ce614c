"""What a proposal asks for: ``--set NAME.SETTING=VALUE`` (or a proposal file), resolved against the
served models of the base tree.

NAME is a served model's name exactly as ``cfgcheck capacity`` shows it (``ServedModel.name``; names
may contain dots, so the longest known name wins); SETTING is a canonical setting (``max_num_seqs``,
``max_model_len``, ``image`` ...) or ``arg:--flag`` for a raw engine flag. Values are checked against
the setting's type before anything is edited.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import settings
from ..model import ServedModel, Setting
from ..yamlio import YamlError, load_data
from ..engines.catalog import catalog_for


class PlanError(Exception):
    """A proposal that cannot be made as asked; one line, exit ``code``."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


# Settings that are not engine flags but live beside them.
SPECIAL_SETTINGS = ("image", "model", "model_revision")


@dataclass(frozen=True)
class Change:
    """One requested change, as written: ``model.setting=value``."""

    model: str
    setting: str  # canonical name, or "arg:--flag"
    raw: Any  # the value as given (text from --set, any YAML scalar from --file)

    def spec(self) -> str:
        return f"{self.model}.{self.setting}={self.raw}"


@dataclass
class Proposal:
    changes: list[Change] = field(default_factory=list)
    title: str | None = None
    why: str | None = None


@dataclass
class Resolved:
    """A change bound to a served model, with a typed value."""

    change: Change
    model: ServedModel
    name: str  # canonical setting, or the flag for raw args
    flag: str | None  # for ``arg:--flag`` and for settings written as flags
    value: Any  # typed value
    current: list[Setting]  # every place the setting is written now (empty: absent)

    @property
    def label(self) -> str:
        return self.flag if self.change.setting.startswith("arg:") else self.name


# ---------------------------------------------------------------- parsing


def parse_set(text: str) -> tuple[str, str]:
    """``NAME.SETTING=VALUE`` -> (``NAME.SETTING``, ``VALUE``)."""
    target, sep, value = text.partition("=")
    if not sep or not target.strip():
        raise PlanError(f"--set '{text}': expected NAME.SETTING=VALUE")
    if target.count(".") == 0:
        raise PlanError(f"--set '{text}': expected NAME.SETTING=VALUE (no '.' between the model and the setting)")
    return target.strip(), value.strip()


def split_target(target: str, model_names: list[str]) -> tuple[str, str]:
    """Split ``NAME.SETTING`` using the known served-model names (which may contain dots)."""
    if ".arg:" in target:
        name, _, flag = target.partition(".arg:")
        return name, "arg:" + flag
    for name in sorted(set(model_names), key=len, reverse=True):
        if target.startswith(name + ".") and len(target) > len(name) + 1:
            return name, target[len(name) + 1:]
    name, _, setting = target.rpartition(".")
    return name, setting


def read_file(path: Path) -> tuple[list[tuple[str, Any]], str | None, str | None]:
    """A proposal file: ``title``, ``why`` and ``set`` (a mapping model -> {setting: value}, or a list of
    ``NAME.SETTING=VALUE`` strings). Returns ([(target, raw value)], title, why)."""

    try:
        data = load_data(path)
    except YamlError as exc:
        raise PlanError(exc.message) from None
    if not isinstance(data, dict):
        raise PlanError(f"{path}: expected a mapping with 'set' (and 'title', 'why')")
    unknown = sorted(set(map(str, data)) - {"title", "why", "set"})
    if unknown:
        raise PlanError(f"{path}: unknown key '{unknown[0]}' (expected title, why, set)")
    pairs: list[tuple[str, Any]] = []
    changes = data.get("set")
    if isinstance(changes, dict):
        for model, wanted in changes.items():
            if not isinstance(wanted, dict):
                raise PlanError(f"{path}: set.{model} must map settings to values")
            pairs.extend((f"{model}.{setting}", value) for setting, value in wanted.items())
    elif isinstance(changes, list):
        for item in changes:
            if not isinstance(item, str):
                raise PlanError(f"{path}: set entries must be NAME.SETTING=VALUE strings")
            pairs.append(parse_set(item))
    else:
        raise PlanError(f"{path}: 'set' must be a mapping (model: {{setting: value}}) or a list")
    title, why = data.get("title"), data.get("why")
    return pairs, (str(title) if title is not None else None), (str(why) if why is not None else None)


def build(sets: list[str], file: Path | None, title: str | None, why: str | None,
          model_names: list[str]) -> Proposal:
    pairs: list[tuple[str, Any]] = []
    file_title = file_why = None
    if file is not None:
        pairs, file_title, file_why = read_file(file)
    pairs.extend(parse_set(text) for text in sets)
    proposal = Proposal(title=title or file_title, why=why or file_why)
    seen: dict[tuple[str, str], Change] = {}
    for target, raw in pairs:
        name, setting = split_target(target, model_names)
        change = Change(name, setting, raw)
        previous = seen.get((name, setting))
        if previous is not None and previous.raw != raw:
            raise PlanError(f"{name}.{setting} is set twice ({previous.raw} and {raw})")
        if previous is None:
            seen[(name, setting)] = change
            proposal.changes.append(change)
    return proposal


# ---------------------------------------------------------------- resolving


def known_settings(model: ServedModel) -> list[str]:
    names = set(model.settings) | set(SPECIAL_SETTINGS)
    names |= set(settings.DESTS.get(model.engine, {}).values()) or set(settings.COMMON_SETTINGS)
    names -= {"api_key", "gpu_vendor", "model_quantization"}
    return sorted(names)


def find_models(name: str, models: list[ServedModel]) -> list[ServedModel]:
    return [m for m in models if m.name == name]


def resolve(proposal: Proposal, models: list[ServedModel]) -> list[Resolved]:
    """Bind each change to its served model and setting; check value types. Exit-2 errors list the
    valid choices."""
    if not proposal.changes:
        raise PlanError("nothing to propose: give --set NAME.SETTING=VALUE (or --file, or --fix)")
    resolved = []
    for change in proposal.changes:
        found = find_models(change.model, models)
        if not found:
            names = ", ".join(sorted({m.name for m in models})) or "none found"
            raise PlanError(f"unknown served model '{change.model}' (served models: {names})")
        if len(found) > 1:
            where = ", ".join(sorted(m.path for m in found))
            raise PlanError(f"served model '{change.model}' is defined more than once ({where}); "
                            "pass the file as PATH to choose one")
        resolved.append(resolve_change(change, found[0]))
    return resolved


def resolve_change(change: Change, model: ServedModel) -> Resolved:
    setting = change.setting
    if setting.startswith("arg:"):
        flag = setting[4:]
        if not re.fullmatch(r"--?[A-Za-z0-9][A-Za-z0-9_.-]*", flag):
            raise PlanError(f"{change.spec()}: '{flag}' is not a flag (expected arg:--flag-name)")
        dest = flag.lstrip("-").replace("-", "_")
        name = settings.canonical_name(model.engine, dest)
        current = [s for occ in model.occurrences.values() for s in occ if s.source == flag]
        if _is_switch(model, flag) or (not isinstance(change.raw, bool) and str(change.raw).strip() == ""):
            text = str(change.raw).strip().lower()
            if text not in ("", "true", "yes", "on", "1"):
                raise PlanError(f"{change.spec()}: {flag} is a switch; only {flag}=true can be proposed")
            return Resolved(change, model, name, flag, True, current)
        value = _typed(change, name, change.raw, model.engine, raw_flag=True)
        return Resolved(change, model, name, flag, value, current)
    valid = known_settings(model)
    if setting not in valid:
        raise PlanError(f"unknown setting '{setting}' for {model.name} (valid: {', '.join(valid)}, or arg:--flag)")
    if setting == "image":
        current = [model.image] if model.image is not None else []
    elif setting == "model":
        current = [model.model] if model.model is not None else list(model.occurrences.get("model", []))
    elif setting == "model_revision":
        current = list(model.occurrences.get("model_revision", [])) or (
            [model.model_revision] if model.model_revision is not None else [])
    else:
        current = list(model.occurrences.get(setting, []))
    value = _typed(change, setting, change.raw, model.engine)
    return Resolved(change, model, setting, None, value, current)


def _is_switch(model: ServedModel, flag: str) -> bool:
    """The engine version's catalog says the flag takes no value."""
    try:

        catalog = catalog_for(model.engine, model.engine_version)
        option = catalog.option(flag) if catalog is not None else None
    except Exception:  # noqa: BLE001 - no catalog: assume the flag takes a value
        return False
    return option is not None and not option.takes_value


def _int_text(text: str) -> int | None:
    cleaned = text.replace("_", "").replace(",", "")
    return int(cleaned) if re.fullmatch(r"[-+]?\d+", cleaned) else None


def _typed(change: Change, name: str, raw: Any, engine: str, raw_flag: bool = False) -> Any:
    """The value converted to the setting's type, or a one-line error."""
    text = str(raw).strip() if not isinstance(raw, bool) else ("true" if raw else "false")
    if name in settings.INT_SETTINGS:
        if isinstance(raw, bool):
            raise PlanError(f"{change.spec()}: {name} takes an integer, not {text}")
        value = raw if isinstance(raw, int) else _int_text(text)
        if value is None:
            raise PlanError(f"{change.spec()}: {name} takes an integer, not '{text}'")
        if value <= 0 and name != "kv_cache_memory_bytes":
            raise PlanError(f"{change.spec()}: {name} must be positive")
        return value
    if name in settings.FLOAT_SETTINGS:
        try:
            value = float(raw) if not isinstance(raw, bool) else None
        except (TypeError, ValueError):
            value = None
        if value is None or math.isnan(value):
            raise PlanError(f"{change.spec()}: {name} takes a number, not '{text}'")
        if not 0 < value <= 1:
            raise PlanError(f"{change.spec()}: {name} is a fraction of GPU memory in (0, 1], not {text}")
        return value
    if name in settings.BOOL_SETTINGS and not raw_flag:
        if isinstance(raw, bool):
            return raw
        if text.lower() in ("true", "yes", "on", "1"):
            return True
        if text.lower() in ("false", "no", "off", "0"):
            return False
        raise PlanError(f"{change.spec()}: {name} takes true or false, not '{text}'")
    if isinstance(raw, (dict, list)):
        raise PlanError(f"{change.spec()}: expected a single value")
    if raw is None or text == "":
        raise PlanError(f"{change.spec()}: empty value (removing a setting is not supported; edit by hand)")
    if "\n" in text or "\r" in text:
        raise PlanError(f"{change.spec()}: a value must be on one line")
    if name in ("image", "model", "model_revision", "kv_cache_dtype", "dtype", "quantization") and re.search(r"\s", text):
        raise PlanError(f"{change.spec()}: {name} cannot contain whitespace")
    return raw if isinstance(raw, (int, float)) and not isinstance(raw, bool) else text
