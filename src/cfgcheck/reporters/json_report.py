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
    text = json.dumps({"version": 1, "findings": [], "summary": summary}, indent=2) + "\n"
    if not result.findings:
        return text
    # The findings are encoded a batch at a time and indented to their place: the bytes one ``dumps`` of
    # the whole report writes (a JSON string holds no raw line break), without the encoder's chunks for
    # every finding at once (8 MiB of a 2,000-file run's peak). The summary's ``"findings": []`` comes first.
    head, _, tail = text.partition('"findings": []')
    parts = [head, '"findings": [\n']
    for start in range(0, len(result.findings), _BATCH):
        batch = json.dumps([finding_dict(f) for f in result.findings[start:start + _BATCH]], indent=2)
        parts.extend((",\n  " if start else "  ", batch[2:-2].replace("\n", "\n  ")))
    parts.extend(("\n  ]", tail))
    return "".join(parts)


# Findings encoded at once: enough that the encoder's set-up is paid rarely, few enough that its chunks
# (some 110 per finding) stay small beside the report itself.
_BATCH = 200
