"""Rule discovery: every module in ``cfgcheck.rules`` (and the ``cfgcheck.rules`` entry-point group), and
rule selection: the codes ``--select``, ``ignore:``, ``rules:`` and suppressions name, and the severity and
options of each rule under a configuration.

A rule module holds metadata (``CODE``, ``NAME``, ``SEVERITY``, ``OPTIONS`` declared as
:class:`Option`, and ``PROFILES``: its severity in a profile where that differs from ``SEVERITY``, which
is the ``strict`` one), a docstring in fixed sections, and ``check(model, ctx)`` yielding findings (``ctx`` is
a :class:`cfgcheck.context.RuleContext`). Rules whose findings the engine itself makes (unreadable
input, suppression problems) have no ``check``.

A plugin that cannot be loaded is named in a one-line warning on stderr and skipped; two rules
claiming one code or name is a configuration error (:class:`DuplicateRule`, exit 2).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from . import lazy
from .errors import ConfigError
from .records import ValueRecord

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable
    from .capacity.estimate import CapacityEstimate
    from .config import Config
    from .effective import Topology
    from .engines.argv import ParsedFlag
    from .engines.catalog import Catalog
    from .model import ServedModel

# Which rules are findings and at which severity (a rule's PROFILES metadata), as kube-linter's and
# Checkov's default checks do: `recommended` keeps pinning advice quiet, `strict` makes every supply-chain
# rule a warning (README.md, Configuration). Single rules are then adjusted under `rules:`.
PROFILES = ("recommended", "strict")
DEFAULT_PROFILE = "recommended"

if TYPE_CHECKING:  # annotations only: the check signatures rules follow
    from .check_signatures import ModelCheck, RunCheck

SECTIONS = ("What it flags", "Why it matters", "Example", "Use instead", "Options")


class UnknownRule(Exception):
    pass


class DuplicateRule(ConfigError):
    """Two rule modules claim one code or name (a plugin's install to fix); the message names both."""


_OPTION_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list of strings"}


class Option:
    """A rule option (in the spirit of yamllint's ``CONF``): its type, default and what it does.

    ``type`` is one of bool, int, float, str, or list (a list of strings); the configuration is
    validated against it when it loads.
    """

    def __init__(self, type: type, default: Any, doc: str) -> None:
        self.type = type
        self.default = default
        self.doc = doc
        self.__post_init__()

    def __post_init__(self):
        if self.type not in _OPTION_TYPES:
            raise TypeError(f"option type must be one of {', '.join(t.__name__ for t in _OPTION_TYPES)}")

    @property
    def type_name(self) -> str:
        return _OPTION_TYPES[self.type]

    def describe(self, name: str) -> str:
        """``- `name` (number, default `0.1`): doc`` as the rule reference shows it."""
        return f"- `{name}` ({self.type_name}, default `{json.dumps(self.default)}`): {self.doc}"


def defaults(options: dict[str, Option]) -> dict[str, Any]:
    """The default value of each declared option (lists copied: a rule must not share them)."""
    return {name: list(option.default) if option.type is list else option.default for name, option in options.items()}


class _Graded:
    """The severity of a rule in a profile: its ``PROFILES`` entry, else its ``SEVERITY``."""

    __slots__ = ()  # so that a Rule keeps its fields in its slots alone (records.Record), with no __dict__
    severity: str
    profiles: dict[str, str]

    def severity_in(self, profile: str = DEFAULT_PROFILE) -> str:
        return self.profiles.get(profile, self.severity)


class Rule(_Graded, ValueRecord):  # compared by value: a rule enabled for the run is found in the list (lint.py)
    """One rule as the run knows it: its index entry (code, name, severity, options, documentation) and its check."""

    __slots__ = ("code", "name", "severity", "options", "docstring", "check", "scope", "module", "diff_only",
                 "templates", "profiles")

    def __init__(self, code: str, name: str, severity: str, options: dict[str, Option], docstring: str,
                 check: ModelCheck | RunCheck | None, scope: str, module: str,
                 diff_only: bool = False, templates: bool = False, profiles: dict[str, str] | None = None) -> None:
        self.code = code
        self.name = name
        self.severity = severity
        self.options = options
        self.docstring = docstring  # its module's: summary and sections are read from it when asked for
        self.check = check
        self.scope = scope  # "model": check(model, ctx) per served model; "run": check(models, ctx) once; "engine"
        self.module = module
        self.diff_only = diff_only  # compares base and head: runs only in diff mode
        self.templates = templates  # also checks runtime templates (ServedModel.template): true of their own text
        self.profiles = {} if profiles is None else profiles  # profile -> severity, where not ``severity``

    @property
    def defaults(self) -> dict[str, Any]:
        return defaults(self.options)

    @property
    def summary(self) -> str:
        """The text of its docstring before the first ``## `` heading."""
        return parse_docstring(self.docstring)[0]

    @property
    def sections(self) -> dict[str, str]:
        """Its docstring's sections by title, and ``Options`` listing the declarations themselves (type,
        default and doc) when it has any."""
        sections = dict(parse_docstring(self.docstring)[1])
        if self.options:
            sections["Options"] = "\n".join(option.describe(name) for name, option in self.options.items())
        return sections

    @property
    def doc(self) -> str:
        body = "\n\n".join(f"## {title}\n\n{text}" for title, text in self.sections.items() if text)
        return f"# {self.code} {self.name}\n\n{self.summary}\n\n{body}\n"

    def example_pair(self) -> tuple[str, str, str] | None:
        """For a change rule: the (before, after, fixed-after) YAML of its Example and Use instead."""
        blocks = re.findall(r"```ya?ml\n(.*?)```", self.sections.get("Example", ""), re.S)
        instead = re.findall(r"```ya?ml\n(.*?)```", self.sections.get("Use instead", ""), re.S)
        if len(blocks) != 2 or len(instead) != 1:
            return None
        return blocks[0], blocks[1], instead[0]

    def examples(self) -> dict[str, str]:
        """The fenced YAML of the Example and Use instead sections."""
        found = {}
        for section in ("Example", "Use instead"):
            match = re.search(r"```ya?ml\n(.*?)```", self.sections.get(section, ""), re.S)
            if match:
                found[section] = match.group(1)
        return found


@lru_cache(maxsize=None)
def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """A rule's summary (the text before its first ``## `` heading) and its sections by title (shared: copied
    by ``Rule.sections``). Line by line: a multi-line regular expression tried at each character of 37
    docstrings was 1.7% of a one-file lint's instructions. A lint reads no rule's documentation unless it
    writes SARIF: it is parsed when first asked for."""
    summary: list[str] = []
    sections: dict[str, str] = {}
    title, lines = None, summary
    for line in doc.strip().split("\n"):
        if line.startswith("## ") and len(line) > 3:  # a heading: "## " and a title
            if title is not None:
                sections[title] = "\n".join(lines).strip()
            title, lines = line[3:].strip(), []
        else:
            lines.append(line)
    if title is not None:
        sections[title] = "\n".join(lines).strip()
    return "\n".join(summary).strip(), sections


def _from_module(module: ModuleType) -> Rule | None:
    code = getattr(module, "CODE", None)
    if not code:
        return None
    options = dict(getattr(module, "OPTIONS", {}))
    undeclared = sorted(name for name, option in options.items() if not isinstance(option, Option))
    if undeclared:
        raise TypeError(f"options not declared with cfgcheck.registry.Option: {', '.join(undeclared)}")
    check = getattr(module, "check", None)
    scope = getattr(module, "SCOPE", "model" if check else "engine")
    return Rule(code, module.NAME, module.SEVERITY, options, module.__doc__ or "",
                check, scope, module.__name__, bool(getattr(module, "DIFF_ONLY", False)),
                bool(getattr(module, "TEMPLATES", False)), _profiles(module))


def _profiles(module: ModuleType) -> dict[str, str]:
    """A module's ``PROFILES`` (profile -> severity), checked: known profiles, known severities."""
    profiles = dict(getattr(module, "PROFILES", {}))
    wrong = sorted(f"{name}: {severity}" for name, severity in profiles.items()
                   if name not in PROFILES or severity not in ("error", "warning", "note"))
    if wrong:
        raise TypeError(f"PROFILES must map {', '.join(PROFILES)} to error, warning or note; got {', '.join(wrong)}")
    return profiles


@lru_cache(maxsize=None)
def _module_rule(name: str) -> Rule | None:
    return _from_module(importlib.import_module(name))


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    """Built-in rules, then plugins; DuplicateRule when two claim one code or name."""
    import pkgutil  # here: a lint run finds its rules in the index

    import cfgcheck.rules as package

    rules: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            _add(rules, _module_rule(f"{package.__name__}.{info.name}"))
    for rule in _plugin_rules():
        _add(rules, rule)
    return tuple(sorted(rules.values(), key=lambda r: r.code))


# ---------------------------------------------------------------- the index: rules without importing them
#
# A run whose files hold no served model needs the codes and names of every rule (--select, --ignore,
# suppressions) but the checks of none: importing the rule modules, and the catalogs and capacity model
# they read, would be most of its start-up. data/rule_index.json lists them; scripts/build_rule_index.py
# writes it from the modules and tests/rules/test_rule_index.py keeps it current.

INDEX = Path(__file__).parent / "data" / "rule_index.json"
INDEX_FIELDS = ("code", "name", "severity", "profiles", "scope", "module", "diff_only")


class RuleEntry(_Graded):
    """A built-in rule as the index lists it (compared by identity: a plain class, whose __init__ a
    one-file lint does not generate at start-up as a dataclass's: records.Record)."""

    def __init__(self, code: str, name: str, severity: str, profiles: dict[str, str], scope: str, module: str,
                 diff_only: bool) -> None:
        self.code = code
        self.name = name
        self.severity = severity
        self.profiles = profiles
        self.scope = scope
        self.module = module
        self.diff_only = diff_only  # runs only in diff mode: a lint run need not import it


def index_entries(rules: tuple[Rule, ...]) -> list[dict[str, str]]:
    """The index of the built-in rules among ``rules``."""
    return [{name: getattr(rule, name) for name in INDEX_FIELDS} for rule in rules
            if rule.module.startswith(f"{__package__}.rules.")]


@lru_cache(maxsize=1)
def _builtin_index() -> tuple[RuleEntry, ...]:
    return tuple(RuleEntry(**entry) for entry in json.loads(INDEX.read_text(encoding="utf-8")))


def rule_index() -> tuple[RuleEntry | Rule, ...]:
    """Code, name, severities, scope, module and diff_only of every rule, sorted by code: from the index while no
    rule had to be imported and no plugin is installed, else from the rules themselves."""
    if all_rules.cache_info().currsize or _plugins_declared():
        return all_rules()
    return _builtin_index()


def load(code: str) -> Rule | None:
    """The rule ``code`` (None when there is none), importing only its module while the others are
    not needed."""
    entry = next((entry for entry in rule_index() if entry.code == code), None)
    if entry is None or isinstance(entry, Rule):
        return entry
    return _module_rule(entry.module)


def _add(rules: dict[str, Rule], rule: Rule | None) -> None:
    if rule is None:
        return
    for other in rules.values():
        if rule.code == other.code or rule.name == other.name:
            what = f"code {rule.code}" if rule.code == other.code else f"name '{rule.name}'"
            raise DuplicateRule(f"two rules claim {what}: {other.module} and {rule.module}")
    rules[rule.code] = rule


def _plugin_rules() -> list[Rule]:
    """The rules of the ``cfgcheck.rules`` entry points; a plugin that fails to load is named on
    stderr and skipped, so a broken plugin never stops the built-in rules."""
    if not _plugins_declared():
        return []
    from importlib.metadata import entry_points

    found = []
    for entry in entry_points(group="cfgcheck.rules"):
        try:
            found.append(_from_module(entry.load()))
        except Exception as exc:  # anything a third-party import can raise
            reason = (str(exc).splitlines() or [""])[0][:200]
            print(f"cfgcheck: warning: rule plugin '{entry.name}' ({entry.value}) not loaded: "
                  f"{type(exc).__name__}: {reason}", file=sys.stderr)
    return found


def _plugins_declared() -> bool:
    """Whether any installed distribution declares the ``cfgcheck.rules`` entry-point group.

    A byte search of the ``entry_points.txt`` files on ``sys.path``: importing importlib.metadata to
    ask it costs a fifth of a one-file lint, and almost no installation has a plugin. Searched once
    per ``sys.path``.
    """
    return _plugins_on(tuple(sys.path))


@lru_cache(maxsize=4)
def _plugins_on(path: tuple[str, ...]) -> bool:
    for folder in path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(entry.path, "entry_points.txt"), "rb") as handle:
                        if b"cfgcheck.rules" in handle.read():
                            return True
                except OSError:
                    continue
    return False


def find(code_or_name: str) -> Rule:
    return load(find_code(code_or_name))


def find_code(code_or_name: str) -> str:
    """The code of the rule with this code or kebab name; UnknownRule when there is none."""
    wanted = code_or_name.strip()
    for rule in rule_index():
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule.code
    raise UnknownRule(f"unknown rule '{code_or_name}' (see `cfgcheck rules`)")


def by_code() -> dict[str, Rule]:
    return {rule.code: rule for rule in all_rules()}


# ---------------------------------------------------------------- selection: which rules a run checks

_PREFIX = lazy.Pattern(r"CFG\d{0,3}", re.IGNORECASE)


def codes_for(value: str) -> set[str]:
    """Rule codes for one code, code prefix (``CFG2``) or kebab name; UnknownRule when none match."""
    value = value.strip()
    if _PREFIX.fullmatch(value):
        matching = {rule.code for rule in rule_index() if rule.code.startswith(value.upper())}
        if matching:
            return matching
    return {find_code(value)}


def resolve_codes(values: Iterable[str]) -> set[str]:
    """Codes for a list of codes, code prefixes (``CFG2``) or kebab names."""
    codes: set[str] = set()
    for value in values:
        if not value.strip():
            continue
        try:
            codes |= codes_for(value)
        except UnknownRule as exc:
            raise ConfigError(str(exc)) from None
    return codes


def enabled_rules(config: Config, select: list[str] | None, ignore: list[str] | None) -> list[Rule]:
    codes = enabled_codes(config, select, ignore)
    return [rule for rule in all_rules() if rule.code in codes]


def enabled_codes(config: Config, select: list[str] | None, ignore: list[str] | None) -> set[str]:
    """The codes of the rules this run checks (from the rule index: no rule is imported)."""
    chosen = select if select else config.get("select")
    selected = resolve_codes(chosen) if chosen else {rule.code for rule in rule_index()}
    ignored = resolve_codes((config.get("ignore") or []) + (ignore or []))
    resolve_codes(config.rule_settings)  # an unknown rule under `rules:` is a configuration error
    return selected - ignored


def rules_needed(codes: set[str], models: list[ServedModel]) -> list[Rule]:
    """The enabled rules a lint run must import: when there is a served model to check, all but those
    that only compare a change's base with its head (run_rules skips them without a base), else only
    those that check no served model (unreadable input, suppressions, dangling references: CFG000-CFG003)."""
    def needed(entry) -> bool:
        return not entry.diff_only if models else entry.scope == "engine"

    return [load(entry.code) for entry in rule_index() if entry.code in codes and needed(entry)]


def rule_options(rule: Rule, config: Config) -> tuple[str, dict[str, Any]]:
    """Severity and options of ``rule``: its severity in the configured profile, then ``rules:``, whose
    keys name rules as ``--select`` does (codes, prefixes, names); a key naming fewer rules is more
    specific and wins (CFG2, then CFG204)."""
    settings = configured(rule.code, config)
    options = rule.defaults
    options.update({k: v for k, v in settings.items() if k != "severity"})
    return settings.get("severity", rule.severity_in(config.profile)), options


def configured(code: str, config: Config) -> dict[str, Any]:
    """What ``rules:`` sets for rule ``code`` (severity, options), a key naming fewer rules winning."""
    matching = [(len(codes), settings) for key, settings in config.rule_settings.items()
                if code in (codes := resolve_codes([key]))]
    merged: dict[str, Any] = {}
    for _, settings in sorted(matching, key=lambda item: -item[0]):
        merged.update(settings)
    return merged


class FactProviders:
    """How a rule's context works out what a served model runs with (``RuleContext.flags``, ``capacity``,
    ``topology``): the argv walk, the capacity estimate, the parallel layout. The rule index hands these to
    every context, as it loads the rules that read them: each module is imported when a rule first asks,
    and a run whose files hold no served model runs no such rule and imports none of them. The function is
    kept once imported: an import statement costs ~3.5 us a call for a module long loaded, and the rules ask
    some 28,000 times on the dense corpus (2,123 served models)."""

    __slots__ = ("_walk", "_estimate", "_layout")

    def __init__(self) -> None:
        self._walk: Callable[[ServedModel], tuple[Catalog, list[ParsedFlag], str] | None] | None = None
        self._estimate: Callable[[ServedModel, dict[str, Any]], CapacityEstimate] | None = None
        self._layout: Callable[[ServedModel], Topology] | None = None

    def flags(self, model: ServedModel) -> tuple[Catalog, list[ParsedFlag], str] | None:
        if self._walk is None:
            from .engines.argv import model_flags

            self._walk = model_flags
        return self._walk(model)

    def capacity(self, model: ServedModel, config: dict[str, Any]) -> CapacityEstimate:
        if self._estimate is None:
            from .capacity import estimate

            self._estimate = estimate
        return self._estimate(model, config)

    def topology(self, model: ServedModel) -> Topology:
        if self._layout is None:
            from .effective import topology

            self._layout = topology
        return self._layout(model)


FACTS = FactProviders()
