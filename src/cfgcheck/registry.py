"""Rule discovery: every module in ``cfgcheck.rules`` (and the ``cfgcheck.rules`` entry-point group).

A rule module holds metadata (``CODE``, ``NAME``, ``SEVERITY``, ``OPTIONS``), a docstring in fixed
sections, and ``check(model, ctx)`` yielding findings. Rules whose findings the engine itself makes
(unreadable input, suppression problems) have no ``check``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any, Callable

SECTIONS = ("What it flags", "Why it matters", "Example", "Use instead", "Options")


class UnknownRule(Exception):
    pass


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    options: dict[str, Any]
    summary: str
    sections: dict[str, str]
    check: Callable | None
    scope: str  # "model": check(model, ctx) per served model; "run": check(models, ctx) once; "engine"
    module: str
    diff_only: bool = False  # compares base and head: runs only in diff mode

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
    summary, sections = parse_docstring(module.__doc__ or "")
    check = getattr(module, "check", None)
    scope = getattr(module, "SCOPE", "model" if check else "engine")
    return Rule(code, module.NAME, module.SEVERITY, dict(getattr(module, "OPTIONS", {})), summary, sections,
                check, scope, module.__name__, bool(getattr(module, "DIFF_ONLY", False)))


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    import cfgcheck.rules as package

    rules: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        rule = _from_module(importlib.import_module(f"{package.__name__}.{info.name}"))
        if rule is not None:
            rules[rule.code] = rule
    try:
        if not _plugins_declared():
            return tuple(sorted(rules.values(), key=lambda r: r.code))
        from importlib.metadata import entry_points

        for entry in entry_points(group="cfgcheck.rules"):
            rule = _from_module(entry.load())
            if rule is not None:
                rules.setdefault(rule.code, rule)
    except Exception:  # a broken plugin must not stop the built-in rules
        pass
    return tuple(sorted(rules.values(), key=lambda r: r.code))


def _plugins_declared() -> bool:
    """Whether any installed distribution declares the ``cfgcheck.rules`` entry-point group.

    A byte search of the ``entry_points.txt`` files on ``sys.path``: importing importlib.metadata to
    ask it costs a fifth of a one-file lint, and almost no installation has a plugin.
    """
    for folder in sys.path:
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
    wanted = code_or_name.strip()
    for rule in all_rules():
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            return rule
    raise UnknownRule(f"unknown rule '{code_or_name}' (see `cfgcheck rules`)")


def by_code() -> dict[str, Rule]:
    return {rule.code: rule for rule in all_rules()}
