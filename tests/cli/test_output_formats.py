"""Output formats as their consumers read them: SARIF for GitHub code scanning (the 2.1.0 schema plus
GitHub's documented requirements and limits), JUnit XML, GitLab Code Quality and reviewdog's rdjson.

The shapes of the last three are written here as JSON schemas from the formats' public documentation:
GitLab "Code Quality" (report format), reviewdog ``proto/rdf/reviewdog.proto`` (DiagnosticResult), and
the JUnit XML schema CI servers read (testsuites > testsuite > testcase > failure | skipped).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from cfgcheck.lint import LintResult
from cfgcheck.model import Edit, Finding, Fix, Location
from cfgcheck.reporters import FORMATS, renderer
from cfgcheck.reporters import sarif as sarif_reporter
from helpers import REPO, shared
from runcli import invoke

SECRET_APP = """apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  template:
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.26.0
          args: ["--model", "Qwen/Qwen3-8B", "--api-key", "sk-live-abcdefghijklmnopqrstuvwxyz0123"]
"""


def lint_output(fmt: str, *paths: str, cwd: Path = REPO) -> str:
    """What ``cfgcheck lint --format FMT`` prints, run in-process (tests/cli/test_cli_ux.py spawns it)."""
    result = invoke("lint", *(paths or ("examples",)), "--format", fmt, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


# ---------------------------------------------------------------- SARIF


def github_requirements(log: dict) -> None:
    """GitHub code scanning's documented requirements and hard limits for an uploaded SARIF file."""
    assert log["version"] == "2.1.0"
    assert 1 <= len(log["runs"]) <= 20
    for run_ in log["runs"]:
        rules = run_["tool"]["driver"]["rules"]
        assert len(rules) <= 25_000 and len(run_["results"]) <= 25_000
        automation = run_["automationDetails"]["id"]
        assert automation.rpartition("/")[0], "the category is what precedes the last '/'"
        rule_ids = set()
        for rule in rules:
            rule_ids.add(rule["id"])
            assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
            assert urlsplit(rule["helpUri"]).scheme == "https"
            properties = rule["properties"]
            assert 1 <= len(properties["tags"]) <= 20 and all(isinstance(t, str) for t in properties["tags"])
            assert properties["precision"] in ("very-high", "high", "medium", "low")
            if "security-severity" in properties:
                score = properties["security-severity"]
                assert isinstance(score, str) and 0.0 < float(score) <= 10.0
                assert "security" in properties["tags"]
        seen = set()
        for result in run_["results"]:
            assert result["ruleId"] in rule_ids
            assert result["message"]["text"].strip()
            assert 1 <= len(result["locations"]) <= 1_000
            assert len(result.get("relatedLocations", [])) <= 1_000
            physical = result["locations"][0]["physicalLocation"]
            uri = physical["artifactLocation"]["uri"]
            assert not urlsplit(uri).scheme and not uri.startswith("/"), f"not repository-relative: {uri}"
            assert " " not in uri and "#" not in uri and "?" not in uri and uri.isascii()
            assert physical["region"]["startLine"] >= 1 and physical["region"].get("startColumn", 1) >= 1
            line_hash = result["partialFingerprints"]["primaryLocationLineHash"]
            assert re.fullmatch(r"[0-9a-f]{16}:\d+", line_hash)
            key = (result["ruleId"], uri, line_hash)
            assert key not in seen, f"two results GitHub would merge: {key}"
            seen.add(key)


def test_sarif_meets_schema_and_github_requirements(tmp_path: Path) -> None:
    schema = json.loads(shared("sarif", "sarif-schema-2.1.0.json").read_text())
    log = json.loads(lint_output("sarif"))
    jsonschema.Draft4Validator(schema).validate(log)
    github_requirements(log)


def test_sarif_rule_metadata_for_code_scanning() -> None:
    log = json.loads(lint_output("sarif"))
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    secret = rules["CFG305"]["properties"]
    assert "security" in secret["tags"] and float(secret["security-severity"]) >= 9.0  # critical
    assert float(rules["CFG303"]["properties"]["security-severity"]) >= 4.0  # unpinned revision: medium
    assert "security-severity" not in rules["CFG203"]["properties"]  # capacity is not security
    assert rules["CFG101"]["properties"]["precision"] == "very-high"  # argparse decides
    anchors = {"#" + re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")
               for title in re.findall(r"^## (.+)$", (REPO / "docs" / "rules.md").read_text(), re.M)}
    for rule in rules.values():
        assert "#" + rule["helpUri"].partition("#")[2] in anchors, rule["helpUri"]


def test_sarif_uri_is_percent_encoded(tmp_path: Path) -> None:
    git_init(tmp_path)
    name = "odd dir#1/é?x: y%.yaml"
    (tmp_path / name).parent.mkdir()
    (tmp_path / name).write_text(SECRET_APP)
    log = json.loads(lint_output("sarif", ".", cwd=tmp_path))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"odd%20dir%231/%C3%A9%3Fx%3A%20y%25.yaml"}
    assert {unquote(u) for u in uris} == {name}
    github_requirements(log)


def hashes(log: dict) -> dict[str, tuple[str, int]]:
    return {r["ruleId"]: (r["partialFingerprints"]["primaryLocationLineHash"],
                          r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in log["runs"][0]["results"]}


def test_sarif_fingerprints_survive_line_moves(tmp_path: Path) -> None:
    git_init(tmp_path)
    (tmp_path / "app.yaml").write_text(SECRET_APP)
    before = hashes(json.loads(lint_output("sarif", ".", cwd=tmp_path)))
    (tmp_path / "app.yaml").write_text("# moved down by a comment\n# and another\n" + SECRET_APP)
    after = hashes(json.loads(lint_output("sarif", ".", cwd=tmp_path)))
    assert before and set(before) == set(after)
    for code in before:
        assert before[code][0] == after[code][0] and after[code][1] == before[code][1] + 2


def synthetic(count: int, severity: str = "warning") -> LintResult:
    findings = [Finding(f"finding {i}", Location("a.yaml", i + 1, 1), code="CFG203", rule="seqs-exceed-kv-concurrency",
                        severity=severity, setting=f"s{i}") for i in range(count)]
    return LintResult(findings=findings, files=[], models=[])


def test_sarif_stays_within_githubs_result_limit() -> None:
    result = synthetic(25_001)
    result.findings[-1].severity = "error"
    log = json.loads(sarif_reporter.render(result))
    results = log["runs"][0]["results"]
    assert len(results) == 25_000
    assert any(r["level"] == "error" for r in results), "the most severe are kept"
    note = log["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
    assert "1 of 25001 results left out" in note


@pytest.mark.parametrize("count", [1, 200, 401])
def test_json_report_is_one_dumps_of_the_whole_report(count: int) -> None:
    """The findings are encoded in batches: the text is still byte for byte one ``json.dumps``."""
    from cfgcheck.reporters import json_report

    result = synthetic(count)
    result.findings[0].fix = Fix("say \"why\"\nover lines", [Edit(Location("a.yaml", 1, 1), "a", "b")])
    whole = {"version": 1, "findings": [json_report.finding_dict(f) for f in result.findings],
             "summary": json.loads(json_report.render(result))["summary"]}
    assert json_report.render(result) == json.dumps(whole, indent=2) + "\n"


# ---------------------------------------------------------------- GitLab, rdjson, JUnit

GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object", "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "pattern": "^[^/]"},
                    "lines": {"type": "object", "required": ["begin"],
                              "properties": {"begin": {"type": "integer", "minimum": 1},
                                             "end": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}

_POSITION = {"type": "object", "required": ["line"], "additionalProperties": False,
             "properties": {"line": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1}}}
_RANGE = {"type": "object", "required": ["start"], "additionalProperties": False,
          "properties": {"start": _POSITION, "end": _POSITION}}
_LOCATION = {"type": "object", "required": ["path"], "additionalProperties": False,
             "properties": {"path": {"type": "string", "minLength": 1}, "range": _RANGE}}
_SEVERITY = {"enum": ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"]}
_SOURCE = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "url": {"type": "string"}}}
RDJSON_SCHEMA = {
    "type": "object",
    "required": ["diagnostics"],
    "additionalProperties": False,
    "properties": {
        "source": _SOURCE,
        "severity": _SEVERITY,
        "diagnostics": {"type": "array", "items": {
            "type": "object",
            "required": ["message", "location"],
            "additionalProperties": False,
            "properties": {
                "message": {"type": "string", "minLength": 1},
                "location": _LOCATION,
                "severity": _SEVERITY,
                "source": _SOURCE,
                "code": {"type": "object", "required": ["value"],
                         "properties": {"value": {"type": "string"}, "url": {"type": "string"}}},
                "suggestions": {"type": "array", "items": {
                    "type": "object", "required": ["range", "text"], "additionalProperties": False,
                    "properties": {"range": _RANGE, "text": {"type": "string"}}}},
                "original_output": {"type": "string"},
                "related_locations": {"type": "array", "items": {
                    "type": "object", "properties": {"message": {"type": "string"}, "location": _LOCATION}}},
            },
        }},
    },
}

_ELEMENT = {"type": "object", "required": ["tag", "attrib", "children"]}


def _element(tag: str, required: list[str], children: dict | None) -> dict:
    return {**_ELEMENT, "properties": {
        "tag": {"const": tag},
        "attrib": {"type": "object", "required": required, "additionalProperties": {"type": "string"}},
        "children": {"type": "array", "items": children} if children else {"type": "array", "maxItems": 0}}}


JUNIT_SCHEMA = _element("testsuites", ["name", "tests", "failures", "errors"], _element(
    "testsuite", ["name", "tests", "failures", "errors", "skipped"], _element(
        "testcase", ["name", "classname"], {"oneOf": [
            _element("failure", ["message", "type"], None), _element("skipped", ["message"], None)]})))


def as_dict(element: ET.Element) -> dict:
    return {"tag": element.tag, "attrib": dict(element.attrib), "children": [as_dict(c) for c in element]}


def test_gitlab_code_quality_shape() -> None:
    issues = json.loads(lint_output("gitlab"))
    jsonschema.Draft202012Validator(GITLAB_SCHEMA).validate(issues)
    assert issues and len({i["fingerprint"] for i in issues}) == len(issues), "GitLab needs unique fingerprints"
    secret = next(i for i in issues if i["check_name"].startswith("CFG305"))
    assert secret["severity"] == "critical"


def test_rdjson_shape_and_suggestions() -> None:
    report = json.loads(lint_output("rdjson"))
    jsonschema.Draft202012Validator(RDJSON_SCHEMA).validate(report)
    assert report["severity"] == "ERROR"
    fixable = [d for d in report["diagnostics"] if "suggestions" in d]
    assert fixable, "the CFG101 example carries its fix as a suggestion"
    suggestion = fixable[0]["suggestions"][0]
    assert suggestion["text"] == "--kv-cache-memory-bytes"
    start, end = suggestion["range"]["start"], suggestion["range"]["end"]
    assert end["column"] - start["column"] == len("--kv-cache-memory")  # end is exclusive


def test_rdjson_columns_are_utf8_bytes(tmp_path: Path) -> None:
    git_init(tmp_path)
    (tmp_path / "app.yaml").write_text(SECRET_APP.replace('["--model"', '["--served-model-name", "qwé", "--model"'))
    report = json.loads(lint_output("rdjson", ".", cwd=tmp_path))
    secret = next(d for d in report["diagnostics"] if d["code"]["value"] == "CFG305")
    line = (tmp_path / "app.yaml").read_text().splitlines()[secret["location"]["range"]["start"]["line"] - 1]
    column = secret["location"]["range"]["start"]["column"]
    assert line.encode()[column - 1:].startswith(b'"sk-live') or line.encode()[column - 1:].startswith(b"sk-live")


def test_junit_shape() -> None:
    root = ET.fromstring(lint_output("junit"))
    jsonschema.Draft202012Validator(JUNIT_SCHEMA).validate(as_dict(root))
    suites = root.findall("testsuite")
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites) == len(root.findall(".//testcase"))
    assert int(root.get("failures")) == len(root.findall(".//failure")) > 0
    assert int(root.get("skipped")) == len(root.findall(".//skipped")) > 0  # the suppressed example
    clean = [s for s in suites if int(s.get("failures")) == 0 and int(s.get("skipped")) == 0]
    assert clean, "files without findings count as passing tests"


def test_junit_escapes_what_xml_cannot_carry() -> None:
    result = synthetic(1)
    result.findings[0].message = "bell \x07 esc \x1b[31m nul \x00 csi \x9b del \x7f ls \u2028 <tag> & \"quote\""
    text = renderer("junit")(result)
    failure = ET.fromstring(text).find(".//failure")
    message = failure.get("message")
    assert all(escaped in message for escaped in ("\\x07", "\\x1b", "\\x00", "\\x9b", "\\x7f", "\\u2028"))
    assert not any(ch in text for ch in "\x07\x1b\x00\x9b\x7f\u2028") and "<tag>" in failure.text


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_an_empty_run(fmt: str) -> None:
    out = renderer(fmt)(LintResult(findings=[], files=[], models=[]))
    assert isinstance(out, str)
    if fmt in ("json", "sarif", "gitlab", "rdjson"):
        json.loads(out)


def test_fix_edits_become_rdjson_suggestions_on_the_same_file() -> None:
    fix = Fix("spell it out", (Edit(Location("a.yaml", 3, 5), "--kv", "--kv-cache-memory-bytes"),))
    result = synthetic(1)
    result.findings[0].fix = fix
    (diagnostic,) = json.loads(renderer("rdjson")(result))["diagnostics"]
    assert diagnostic["suggestions"] == [{"range": {"start": {"line": 3, "column": 5}, "end": {"line": 3, "column": 9}},
                                          "text": "--kv-cache-memory-bytes"}]
