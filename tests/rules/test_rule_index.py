"""The rule index (src/cfgcheck/data/rule_index.json): a run without served models learns every rule's
code, name, severity and scope from it instead of importing the rules (start-up: bench/startup.py)."""

from __future__ import annotations

import json

from cfgcheck import registry


def test_the_index_is_current() -> None:
    """Regenerate with ``python scripts/build_rule_index.py`` after adding, renaming or re-grading a rule."""
    written = json.loads(registry.INDEX.read_text(encoding="utf-8"))
    assert written == registry.index_entries(registry.all_rules()), "run python scripts/build_rule_index.py"
    assert {entry["code"] for entry in written} >= {"CFG000", "CFG001", "CFG002", "CFG203"}


def test_the_index_answers_as_the_rules_do() -> None:
    entries = registry._builtin_index()
    builtin = [rule for rule in registry.all_rules() if rule.module.startswith("cfgcheck.rules.")]
    assert [(e.code, e.name, e.severity, e.scope, e.module, e.diff_only) for e in entries] == \
           [(r.code, r.name, r.severity, r.scope, r.module, r.diff_only) for r in builtin]
    assert {e.code for e in entries if e.diff_only} >= {"CFG401", "CFG402"}
    for entry in entries:
        assert registry.load(entry.code) == registry.find(entry.name) == registry.find(entry.code)
        assert registry.find_code(entry.name.upper()) == entry.code
    assert registry.load("CFG999") is None
