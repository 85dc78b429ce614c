"""Rule discovery: every module in ``cfgcheck.rules`` (and the ``cfgcheck.rules`` entry-point group).

A rule module holds metadata (``CODE``, ``NAME``, ``SEVERITY``, ``OPTIONS`` declared as
:class:`Option`), a docstring in fixed sections, and ``check(model, ctx)`` yielding findings (``ctx`` is
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
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .config import ConfigError

if TYPE_CHECKING:  # annotations only: the check signatures rules follow
    from .context import ModelCheck, RunCheck

SECTIONS = ("What it flags", "Why it matters", "Example", "Use instead", "Options")


class UnknownRule(Exception):
    pass


class DuplicateRule(ConfigError):
    """Two rule modules claim one code or name (a plugin's install to fix); the message names both."""


_OPTION_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list of strings"}


@dataclass(eq=False)
class Option:
    """A rule option (in the spirit of yamllint's ``CONF``): its type, default and what it does.

    ``type`` is one of bool, int, float, str, or list (a list of strings); the configuration is
    validated against it when it loads.
    """

    type: type
    default: Any
    doc: str

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


@dataclass
class Rule:  # compared by value: a rule enabled for the run is found in the list (lint.py)
    code: str
    name: str
    severity: str
    options: dict[str, Option]
    summary: str
    sections: dict[str, str]
    check: ModelCheck | RunCheck | None
    scope: str  # "model": check(model, ctx) per served model; "run": check(models, ctx) once; "engine"
    module: str
    diff_only: bool = False  # compares base and head: runs only in diff mode
    templates: bool = False  # also checks runtime templates (ServedModel.template): true of their own text

    @property
    def defaults(self) -> dict[str, Any]:
        return defaults(self.options)

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


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    parts = re.split(r"^## +(.+?)\s*$", doc.strip(), flags=re.M)
    summary = parts[0].strip()
    sections = {title.strip(): text.strip() for title, text in zip(parts[1::2], parts[2::2])}
    return summary, sections


def _from_module(module: ModuleType) -> Rule | None:
    code = getattr(module, "CODE", None)
    if not code:
        return None
    options = dict(getattr(module, "OPTIONS", {}))
    undeclared = sorted(name for name, option in options.items() if not isinstance(option, Option))
    if undeclared:
        raise TypeError(f"options not declared with cfgcheck.registry.Option: {', '.join(undeclared)}")
    summary, sections = parse_docstring(module.__doc__ or "")
    if options:  # the reference lists the declarations themselves: type, default and doc
        sections["Options"] = "\n".join(option.describe(name) for name, option in options.items())
    check = getattr(module, "check", None)
    scope = getattr(module, "SCOPE", "model" if check else "engine")
    return Rule(code, module.NAME, module.SEVERITY, options, summary, sections,
                check, scope, module.__name__, bool(getattr(module, "DIFF_ONLY", False)),
                bool(getattr(module, "TEMPLATES", False)))


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
INDEX_FIELDS = ("code", "name", "severity", "scope", "module", "diff_only")


@dataclass(eq=False)
class RuleEntry:
    """A built-in rule as the index lists it."""

    code: str
    name: str
    severity: str
    scope: str
    module: str
    diff_only: bool  # runs only in diff mode: a lint run need not import it


def index_entries(rules: tuple[Rule, ...]) -> list[dict[str, str]]:
    """The index of the built-in rules among ``rules``."""
    return [{name: getattr(rule, name) for name in INDEX_FIELDS} for rule in rules
            if rule.module.startswith(f"{__package__}.rules.")]


@lru_cache(maxsize=1)
def _builtin_index() -> tuple[RuleEntry, ...]:
    return tuple(RuleEntry(**entry) for entry in json.loads(INDEX.read_text(encoding="utf-8")))


def rule_index() -> tuple[RuleEntry | Rule, ...]:
    """Code, name, severity, scope, module and diff_only of every rule, sorted by code: from the index while no
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
