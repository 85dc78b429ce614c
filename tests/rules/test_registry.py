"""Rule discovery: built-in modules, and plugins declared under the ``cfgcheck.rules`` entry points."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cfgcheck import registry


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch):
    (tmp_path / "team_rules.py").write_text('''"""Flags every served model (a test plugin).

## What it flags
Everything.
## Why it matters
It proves plugins load.
## Example
None.
## Use instead
None.
## Options
None.
"""
CODE, NAME, SEVERITY = "CFG901", "team-rule", "note"


def check(model, ctx):
    return iter(())
''')
    dist = tmp_path / "team_rules-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: team-rules\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[cfgcheck.rules]\nteam = team_rules\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.all_rules.cache_clear()
    yield
    registry.all_rules.cache_clear()
    sys.modules.pop("team_rules", None)


def test_builtin_rules_without_plugins() -> None:
    registry.all_rules.cache_clear()
    codes = [rule.code for rule in registry.all_rules()]
    assert codes == sorted(codes) and "CFG000" in codes and "CFG901" not in codes


def test_plugin_rules_are_discovered(plugin) -> None:
    assert registry._plugins_declared()
    rule = registry.find("team-rule")
    assert (rule.code, rule.severity, rule.scope) == ("CFG901", "note", "model")
