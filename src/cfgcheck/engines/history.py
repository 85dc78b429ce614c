"""Flag history across the catalogued versions of an engine: which versions accept an option, what
replaced a removed one, and where an option one version does not know is accepted."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from .argv import KEYWORD_ORIGIN
from .catalog import Catalog, Resolution, catalog_for
from .versions import catalog_data, version_key, versions


def _normalized_exact(engine: str, option_string: str) -> str:
    data = catalog_data(engine)
    if not data or not option_string.startswith("--"):
        return option_string
    newest = data["versions"][versions(engine)[-1]]
    if newest.get("behaviour", {}).get("underscores_to_dashes"):
        head, dot, tail = option_string[2:].partition(".")
        option_string = "--" + head.replace("_", "-")
    return option_string.split("=", 1)[0]


@functools.lru_cache(maxsize=None)
def _option_index(engine: str) -> dict[str, tuple[str, ...]]:
    """option string -> catalogued versions (with aliases) that accept it exactly."""
    data = catalog_data(engine)
    if not data:
        return {}
    table = data["specs"]
    index: dict[str, list[str]] = {}
    for version, entry in data["versions"].items():
        same = [version] + [a for a, b in data.get("aliases", {}).items() if b == version]
        for i in entry["specs"]:
            for opt in table[i]["option_strings"]:
                index.setdefault(opt, []).extend(same)
    return {k: tuple(sorted(set(v), key=version_key)) for k, v in index.items()}


def history(engine: str, option_string: str) -> list[str]:
    """Catalogued versions (and checked patches sharing a catalog) that accept this exact option."""
    return list(_option_index(engine).get(_normalized_exact(engine, option_string), ()))


_FLAG_IN_TEXT = re.compile(r"--[a-z0-9][a-z0-9-]*[a-z0-9]")


def successor(engine: str, option_string: str, version: str | None = None) -> str | None:
    """The option that replaced a removed one in ``version`` (default: the newest), where the data says.

    Looked up in the last catalogued version before ``version`` that had the option: an alias of the
    same action with the same polarity that ``version`` accepts; else a flag named by its
    deprecation note that ``version`` accepts; else the one option of ``version`` with the same
    destination. None when none of these determines it.
    """
    had = history(engine, option_string)
    target = catalog_for(engine, version or versions(engine)[-1])
    if not had or target is None:
        return None
    option = _normalized_exact(engine, option_string)
    if target.option(option) is not None:
        return None
    before = [v for v in had if version_key(v) < version_key(target.version)]
    last = catalog_for(engine, before[-1] if before else had[-1])
    spec = last.option(option) if last else None
    if spec is None:
        return None
    negative = spec.is_negative(option)
    for alias in spec.option_strings:
        if alias != option and alias.startswith("--") and spec.is_negative(alias) == negative \
                and target.option(alias) is not None:
            return alias
    if spec.deprecated_note:
        for flag in _FLAG_IN_TEXT.findall(spec.deprecated_note):
            if flag != option and target.option(flag) is not None:
                return flag
    same_dest = [s for s in target.options() if s.dest == spec.dest]
    if len(same_dest) == 1:
        new = same_dest[0]
        if negative and not new.negative:
            return new.negative_forms[0] if new.negative_forms else None
        return new.name if not new.negative or negative else None
    return None


@dataclass(eq=False)  # never compared by value: cheaper to create at start-up
class FlagHistory:
    """Where an option unknown to one version is accepted in the other catalogued versions."""

    option: str | None  # the full option string those versions know
    older: tuple[str, ...]  # versions before the target that accept it
    newer: tuple[str, ...]  # versions after the target that accept it
    successor: str | None  # the option that replaced it in the target version, if determinable


_FLAG_HISTORY: dict[tuple, "FlagHistory"] = {}


def undecided(catalog: Catalog, accepting: tuple[str, ...]) -> tuple[str, str] | None:
    """(the catalogued versions just below and above) when the version asked for is not catalogued and
    those two disagree about a flag (``accepting``: the versions that accept it): it came or went
    between them, so whether the version asked for accepts it is not known. Else None."""
    if not catalog.assumed or not catalog.requested:
        return None
    key = version_key(catalog.requested)
    catalogued = versions(catalog.engine)
    below = [v for v in catalogued if version_key(v) < key]
    above = [v for v in catalogued if version_key(v) > key]
    if below and above and (below[-1] in accepting) != (above[0] in accepting):
        return below[-1], above[0]
    return None


def flag_history(catalog: Catalog, resolution: Resolution) -> FlagHistory:
    """The history of a flag that ``catalog`` does not know (exact name first, then abbreviations)."""
    key = (catalog.engine, catalog.version, resolution.normalized, resolution.written)
    if key not in _FLAG_HISTORY:  # memoized: an argv repeating one unknown flag thousands of times
        _FLAG_HISTORY[key] = _flag_history(catalog, resolution)
    return _FLAG_HISTORY[key]


def _flag_history(catalog: Catalog, resolution: Resolution) -> FlagHistory:
    engine = catalog.engine
    if resolution.normalized.startswith(KEYWORD_ORIGIN):
        return FlagHistory(None, (), (), None)
    option = resolution.normalized or resolution.written
    had = history(engine, option)
    if not had:
        meant = set()
        for version in versions(engine):
            if version == catalog.version:
                continue
            res = catalog_for(engine, version).resolve(resolution.written)
            if res.kind in ("exact", "abbrev") and res.option:
                meant.add(res.option)
        if len(meant) == 1:
            option = meant.pop()
            had = history(engine, option)
    if not had:
        return FlagHistory(None, (), (), None)
    here = version_key(catalog.version)
    older = tuple(v for v in had if version_key(v) < here)
    newer = tuple(v for v in had if version_key(v) > here)
    return FlagHistory(option, older, newer, successor(engine, option, catalog.version) if older else None)
