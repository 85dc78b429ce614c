"""``--format json``: every finding with its location, remediation, fix and suppression, then a summary
(README, "Output")."""

from __future__ import annotations

import json

from ..lint import LintResult
from ..model import Finding
from ..suppressions import silenced_report


def finding_dict(finding: Finding) -> dict:
    location = finding.location
    data = {
        "code": finding.code, "rule": finding.rule, "severity": finding.severity, "path": location.path,
        "line": location.line, "column": location.column,
        "end_line": location.end_line or location.line,
        "end_column": location.end_column or location.column,
        "message": finding.message, "remediation": finding.remediation, "model": finding.model,
        "fix": None if finding.fix is None else {
            "description": finding.fix.description,
            "edits": [{"path": e.location.path, "line": e.location.line, "column": e.location.column,
                       "old": e.old, "new": e.new} for e in finding.fix.edits]},
        "suppressed": finding.suppressed,
    }
    if finding.introduced is not None:
        data["introduced"] = finding.introduced
    return data


def render(result: LintResult, **_: object) -> str:
    counts = result.counts()
    summary = {"files": len(result.files), "served_models": result.served_count(), **counts}
    if result.fixed:
        summary["fixed"] = len(result.fixed)
    if result.base is not None:
        summary["base"] = {"ref": result.base.ref, "commit": result.base.commit}
        silenced = silenced_report(result.silenced)
        summary["suppressed_by_change"] = silenced["rows"] if silenced else []
    return json.dumps({"version": 1, "findings": [finding_dict(f) for f in result.findings], "summary": summary},
                      indent=2) + "\n"
