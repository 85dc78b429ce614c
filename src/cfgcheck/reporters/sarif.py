"""``--format sarif``: SARIF 2.1.0 as GitHub code scanning and strict validators accept it."""

from __future__ import annotations

import json

from .. import __version__
from ..lint import LintResult
from ..registry import all_rules

LEVELS = {"error": "error", "warning": "warning", "note": "note"}
DOCS = "https://github.com/cfgcheck/cfgcheck/blob/main/docs/rules.md"


def _region(location) -> dict:
    region = {"startLine": location.line, "startColumn": location.column}
    if location.end_line:
        region["endLine"] = location.end_line
    if location.end_column and (location.end_line or location.line) >= location.line:
        if not (location.end_line in (None, location.line) and location.end_column <= location.column):
            region["endColumn"] = location.end_column
    return region


def render(result: LintResult, **_: object) -> str:
    rules = list(all_rules())
    index = {rule.code: i for i, rule in enumerate(rules)}
    driver_rules = [{
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary.splitlines()[0] if rule.summary else rule.name},
        "fullDescription": {"text": rule.sections.get("What it flags", rule.summary) or rule.name},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "helpUri": f"{DOCS}#{rule.code.lower()}-{rule.name}",
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
    } for rule in rules]
    results = []
    for finding in result.findings:
        text = finding.message if not finding.remediation else f"{finding.message}. Fix: {finding.remediation}"
        entry = {
            "ruleId": finding.code,
            "ruleIndex": index.get(finding.code, 0),
            "level": LEVELS[finding.severity],
            "message": {"text": text},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": finding.location.path, "uriBaseId": "%SRCROOT%"},
                "region": _region(finding.location)}}],
            "partialFingerprints": {"cfgcheck/v1": finding.fingerprint()},
        }
        if finding.related:
            entry["relatedLocations"] = [{"id": i, "physicalLocation": {
                "artifactLocation": {"uri": loc.path, "uriBaseId": "%SRCROOT%"}, "region": _region(loc)}}
                for i, loc in enumerate(finding.related)]
        if finding.suppressed is not None:
            entry["suppressions"] = [{"kind": "inSource", "justification": finding.suppressed}]
        if finding.introduced is not None:
            entry["properties"] = {"introduced": finding.introduced}
        results.append(entry)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "cfgcheck", "version": __version__, "semanticVersion": __version__,
                                "informationUri": "https://github.com/cfgcheck/cfgcheck", "rules": driver_rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the repository root"}}},
            "results": results,
        }],
    }
    if result.base is not None:  # diff mode: the commit compared with (the merge base of the ref and HEAD)
        log["runs"][0]["properties"] = {"base": {"ref": result.base.ref, "commit": result.base.commit}}
    return json.dumps(log, indent=2) + "\n"
