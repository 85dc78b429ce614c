"""Flag history across the catalogued versions of an engine: which versions accept an option, what
replaced a removed one, and where an option one version does not know is accepted."""

from __future__ import annotations

import functools
import re

from .. import lazy
from ..model import Edit
from .argv import KEYWORD_ORIGIN, as_written, flag_location
from .catalog import Catalog, OptionSpec, Resolution, catalog_for
from .versions import catalog_data, version_key, versions


def _normalized_exact(engine: str, option_string: str) -> str:
    if not catalog_data(engine) or not option_string.startswith("--"):
        return option_string
    if _underscores_to_dashes(engine):
        head, dot, tail = option_string[2:].partition(".")
        option_string = "--" + head.replace("_", "-")
    return option_string.split("=", 1)[0]


@functools.lru_cache(maxsize=None)
def _underscores_to_dashes(engine: str) -> bool:
    """Whether the newest catalogued version's parser reads ``_`` as ``-`` (its entry decoded once: a catalog's
    versions are decoded when asked for, not kept)."""
    newest = catalog_data(engine)["versions"][versions(engine)[-1]]
    return bool(newest.get("behaviour", {}).get("underscores_to_dashes"))


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


# a flag a deprecation note names, with the value it gives where the note spells one:
# "Deprecated alias for --cuda-graph-backend-prefill=disabled.", "Alias for --elastic-ep-join-mode recover."
_FLAG_IN_TEXT = lazy.Pattern(r"(--[a-z0-9][a-z0-9-]*[a-z0-9])(?:=([^\s,;)]*[^\s,;).])| ([A-Za-z0-9_][\w.-]*\w))?")
_ALIAS = lazy.Pattern(r"\balias\b", re.I)


# compared by identity: a plain class, its __init__ compiled with the module (records.Record)
class Rename:
    """What replaced a removed option in a version, as the catalogs say."""

    def __init__(self, option: str, successor: str, value: str | None, how: str, certain: bool) -> None:
        self.option = option  # the option the earlier version had
        self.successor = successor  # the option of the target version that replaced it
        self.value = value  # the value the successor takes where the removed option was a switch
        self.how = how  # how the catalogs say so, in words
        self.certain = certain  # same meaning and the same kind of value: a mechanical fix (``fix``, ``upgrade``)

    @property
    def replacement(self) -> str:
        """The text that replaces the option as written: ``--successor`` or ``--successor=value``."""
        return f"{self.successor}={self.value}" if self.value is not None else self.successor


def successor(engine: str, option_string: str, version: str | None = None) -> str | None:
    """The option that replaced a removed one in ``version`` (default: the newest), where the data says."""
    found = rename(engine, option_string, version)
    return found.successor if found is not None else None


def rename(engine: str, option_string: str, version: str | None = None) -> Rename | None:
    """How a removed option is written in ``version`` (default: the newest), where the data says; the one
    place ``upgrade``, the flag rules and drift learn it.

    Looked up in the last catalogued version before ``version`` that had the option: an alias of the
    same action with the same polarity that ``version`` accepts (certain: one argparse action); else a
    flag named by its deprecation note that ``version`` accepts (certain when it takes the same kind of
    value, or the note gives the value a former switch now takes); else the one option of ``version``
    with the same destination (certain when it takes the same kind of value). None when none of these
    determines it.
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
            return Rename(option, alias, None, f"an alias of {option} in {last.display}", True)
    if spec.deprecated_note:
        named = _named_by_note(option, spec, target)
        if named is not None:
            return named
    same_dest = [s for s in target.options() if s.dest == spec.dest]
    if len(same_dest) == 1:
        new = same_dest[0]
        if negative and not new.negative:
            name = new.negative_forms[0] if new.negative_forms else None
        else:
            name = new.name if not new.negative or negative else None
        if name is not None:
            return Rename(option, name, None, f"the one option of {target.display} that sets {spec.dest}",
                          _same_kind(spec, new, alias=False))
    return None


def rename_edit(token, written: str, found: Rename | None) -> Edit | None:
    """The edit that writes ``found``'s successor where ``token`` writes the removed flag as ``written``:
    only a certain rename of a flag written as such (not made by an operator from a typed field), and a
    switch that becomes ``--option=value`` only where it stands alone on a command line."""
    if found is None or not found.certain or token.synthetic or token.text.split("=", 1)[0] != written:
        return None
    if found.value is not None and ("=" in token.text or token.origin.startswith("config:")):
        return None
    return Edit(flag_location(token, written), as_written(token, written), as_written(token, found.replacement))


def _named_by_note(option: str, spec: OptionSpec, target: Catalog) -> Rename | None:
    note = spec.deprecated_note or ""
    how = f"named by its deprecation note (\"{note.strip()[:80]}\")"
    for match in _FLAG_IN_TEXT.finditer(note):
        flag, given, spelled = match.groups()
        new = target.option(flag) if flag != option else None
        if new is None:
            continue
        if not spec.takes_value and new.takes_value:  # a switch now written as an option with a value
            value = given if given is not None else spelled if spelled in (new.choices or ()) else None
            sure = value is not None and target.check_value(new, value) is None
            return Rename(option, flag, value if sure else None, how, sure)
        return Rename(option, flag, None, how, _same_kind(spec, new, alias=bool(_ALIAS.search(note))))
    return None


def _same_kind(old: OptionSpec, new: OptionSpec, alias: bool) -> bool:
    """Whether a value written for ``old`` means the same to ``new``: both switches of one polarity, or
    both take a value of one type whose choices (unless the note calls it an alias, which hands the value
    on as written) include the old ones."""
    if old.takes_value != new.takes_value or old.type != new.type or old.nargs != new.nargs:
        return False
    if not old.takes_value:
        return old.negative == new.negative
    return alias or new.choices is None or (old.choices is not None and set(old.choices) <= set(new.choices))


# compared by identity: a plain class, its __init__ compiled with the module (records.Record)
class FlagHistory:
    """Where an option unknown to one version is accepted in the other catalogued versions."""

    def __init__(self, option: str | None, older: tuple[str, ...], newer: tuple[str, ...],
                 rename: Rename | None) -> None:
        self.option = option  # the full option string those versions know
        self.older = older  # versions before the target that accept it
        self.newer = newer  # versions after the target that accept it
        self.rename = rename  # what replaced it in the target version, where the catalogs say

    @property
    def successor(self) -> str | None:
        return self.rename.successor if self.rename is not None else None


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
    return FlagHistory(option, older, newer, rename(engine, option, catalog.version) if older else None)
