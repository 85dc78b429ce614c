"""Every rule: pass/fail fixtures named by outcome, docstring sections, and docstring examples linted."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.registry import SECTIONS, all_rules
from helpers import FIXTURES, expected_markers, lint_fixture, lint_text

RULE_FIXTURES = sorted((FIXTURES / "rules").glob("CFG*/*.yaml"))


@pytest.mark.parametrize("fixture", RULE_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture(fixture: Path, tmp_path: Path) -> None:
    code = fixture.parent.name
    result = lint_fixture(fixture, tmp_path)
    found = {(f.code, f.location.line) for f in result.findings if f.code == code and f.suppressed is None}
    expected = {(c, line) for c, line in expected_markers(fixture) if c == code}
    if fixture.name.startswith("pass-"):
        assert not found, f"{fixture.name} should not trigger {code}: {[f.message for f in result.findings]}"
    else:
        assert fixture.name.startswith("fail-"), "fixtures are named pass-* or fail-*"
        assert expected, f"{fixture.name} marks no '# expect: {code}' line"
        assert found == expected, [f"{f.code}:{f.location.line} {f.message}" for f in result.findings]


def test_every_rule_has_fixtures() -> None:
    for rule in all_rules():
        if rule.diff_only:
            continue  # compares two versions: covered by its before/after examples in test_diff.py
        folder = FIXTURES / "rules" / rule.code
        names = [p.name for p in folder.glob("*.yaml")] if folder.exists() else []
        assert any(n.startswith("fail-") for n in names), f"{rule.code} has no fail- fixture"
        assert any(n.startswith("pass-") for n in names), f"{rule.code} has no pass- fixture"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_docstring_sections(rule) -> None:
    assert rule.summary, f"{rule.code} has no summary line"
    assert list(rule.sections) == list(SECTIONS), f"{rule.code} sections: {list(rule.sections)}"
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.severity in ("error", "warning", "note")


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_docstring_examples(rule, tmp_path: Path) -> None:
    examples = rule.examples()
    if rule.diff_only:
        pytest.skip(f"{rule.code} compares two versions; its examples are tested in diff-mode tests")
    assert set(examples) == {"Example", "Use instead"}, f"{rule.code} needs YAML in Example and Use instead"
    flagged = lint_text(tmp_path / "example", examples["Example"])
    assert rule.code in {f.code for f in flagged.findings}, f"{rule.code}: its Example is not flagged"
    clean = lint_text(tmp_path / "instead", examples["Use instead"])
    assert rule.code not in {f.code for f in clean.findings if f.suppressed is None}, \
        f"{rule.code}: its 'Use instead' is flagged: {[f.message for f in clean.findings]}"
