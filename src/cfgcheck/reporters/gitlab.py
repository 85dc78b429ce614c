"""``--format gitlab``: a GitLab Code Quality report (``artifacts:reports:codequality``).

A JSON array of issues with the fields GitLab reads (docs.gitlab.com, "Code Quality", "Import Code
Quality results from a CI/CD job"): ``description``, ``check_name``, ``fingerprint`` (unique, stable
between the base and the merge request's pipelines), ``severity`` (info, minor, major, critical or
blocker) and ``location.path`` (relative to the project root) with ``location.lines.begin``.
Suppressed findings are left out: GitLab has no notion of them.
"""

from __future__ import annotations

import json

from ..lint import LintResult
from . import stable_ids

SEVERITIES = {"error": "critical", "warning": "major", "note": "minor"}


def render(result: LintResult, **_: object) -> str:
    active = result.active()
    issues = []
    for finding, stable in zip(active, stable_ids(active)):
        location = finding.location
        description = f"{finding.code} {finding.message}"
        if finding.remediation:
            description += f". Fix: {finding.remediation}"
        issues.append({
            "description": description,
            "check_name": f"{finding.code} {finding.rule}",
            "fingerprint": stable.replace(":", "-"),
            "severity": SEVERITIES[finding.severity],
            "location": {"path": location.path,
                         "lines": {"begin": location.line, "end": location.end_line or location.line}},
        })
    return json.dumps(issues, indent=2) + "\n"
