"""The command line: exit codes, formats, errors as one line, SARIF valid against the schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfgcheck.reporters.annotations import escape_data, escape_property
from helpers import REPO, shared
from runcli import invoke, spawn


def test_exit_codes() -> None:
    assert spawn("lint", "examples").returncode == 1  # the exit status a shell sees
    assert invoke("lint", "examples").returncode == 1
    assert invoke("lint", "examples", "--fail-on", "never").returncode == 0
    assert invoke("lint", "examples/kubernetes/apps/media").returncode == 0
    assert invoke("lint", "examples", "--select", "CFG303", "--fail-on", "error").returncode == 0
    # an unpinned model revision is a note in the default profile, a warning in strict
    assert invoke("lint", "examples", "--select", "CFG303", "--fail-on", "warning").returncode == 0
    assert invoke("lint", "examples", "--select", "CFG303", "--fail-on", "note").returncode == 1


@pytest.mark.parametrize("args, message", [
    (("lint", "does-not-exist"), "path does not exist"),
    (("lint", "examples", "--select", "CFG999"), "unknown rule 'CFG999'"),
    (("rule", "no-such-rule"), "unknown rule"),
    (("lint", "examples", "--format", "xml"), "xml"),
])
def test_user_errors_are_one_line(args, message) -> None:
    result = spawn(*args)  # in a fresh interpreter: what reaches the terminal is one line, no traceback
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 3


def test_invalid_config_names_the_key(tmp_path: Path) -> None:
    (tmp_path / ".cfgcheck.yaml").write_text("rules:\n  CFG204:\n    severity: fatal\n")
    (tmp_path / "a.yaml").write_text("a: 1\n")
    result = invoke("lint", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert "rules.CFG204.severity" in result.stderr


def test_config_select_and_severity(tmp_path: Path) -> None:
    (tmp_path / ".cfgcheck.yaml").write_text("select: [CFG302]\nrules:\n  rolling-tag: {severity: error}\n")
    (tmp_path / "d.yaml").write_text(
        "servingEngineSpec:\n  modelSpec:\n    - name: m\n      repository: vllm/vllm-openai\n      tag: latest\n")
    result = invoke("lint", str(tmp_path), "--format", "json", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert [(f["code"], f["severity"]) for f in data["findings"]] == [("CFG302", "error")]
    assert result.returncode == 1


def test_json_shape() -> None:
    data = json.loads(invoke("lint", "examples", "--format", "json").stdout)
    assert data["version"] == 1
    assert set(data["summary"]) >= {"files", "served_models", "errors", "warnings", "notes", "suppressed"}
    finding = data["findings"][0]
    assert set(finding) >= {"code", "rule", "severity", "path", "line", "column", "end_line", "end_column",
                            "message", "model", "fix"}
    assert all(not f["path"].startswith("/") and "\\" not in f["path"] for f in data["findings"])


def test_sarif_is_valid(tmp_path: Path) -> None:
    import jsonschema

    schema = json.loads(shared("sarif", "sarif-schema-2.1.0.json").read_text())
    out = tmp_path / "out.sarif"
    invoke("lint", "examples", "--format", "sarif", "--output", str(out))
    log = json.loads(out.read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    assert any("suppressions" in r for r in results), "suppressed findings are kept, marked"
    rule_ids = {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} <= rule_ids


def test_github_format_escapes() -> None:
    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("x:y,z") == "x%3Ay%2Cz"
    out = invoke("lint", "examples", "--format", "github").stdout
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in out.splitlines())


def test_rules_and_rule_docs() -> None:
    listing = invoke("rules").stdout
    assert "CFG204" in listing and "memory-above-ceiling" in listing
    doc = invoke("rule", "memory-above-ceiling").stdout
    assert "## What it flags" in doc and "## Use instead" in doc
    assert invoke("rule", "cfg204").stdout == doc


def test_docs_rules_md_is_current() -> None:
    generated = invoke("rules", "--format", "markdown").stdout
    assert (REPO / "docs" / "rules.md").read_text() == generated, \
        "regenerate with: cfgcheck rules --format markdown > docs/rules.md"


def test_version() -> None:
    assert spawn("--version").stdout.startswith("cfgcheck ")
