"""``--format rdjson``: reviewdog's Diagnostic Format (``reviewdog -f=rdjson``).

The ``DiagnosticResult`` message of reviewdog's ``proto/rdf/reviewdog.proto``: per diagnostic a
message, a location (path and range), a severity (ERROR, WARNING, INFO), the rule code with its
documentation URL, and the mechanical fix as ``suggestions`` (so ``reviewdog -reporter=github-pr-review``
posts it as a suggested change). Columns are 1-based UTF-8 byte offsets and range ends are exclusive,
as the format defines them.
"""

from __future__ import annotations

import json

from ..lint import LintResult
from ..model import Finding, Location
from . import rule_url

SEVERITIES = {"error": "ERROR", "warning": "WARNING", "note": "INFO"}
SOURCE = {"name": "cfgcheck", "url": "https://github.com/cfgcheck/cfgcheck"}


class _Columns:
    """Character columns (cfgcheck's) to UTF-8 byte columns (rdjson's), from the linted files' text."""

    def __init__(self, result: LintResult) -> None:
        self._texts = {loaded.path: loaded.text for loaded in result.files}
        self._lines: dict[str, list[str]] = {}

    def byte_column(self, path: str, line: int, column: int) -> int:
        if path not in self._lines:
            self._lines[path] = self._texts.get(path, "").splitlines()
        lines = self._lines[path]
        if not 1 <= line <= len(lines):
            return column
        return len(lines[line - 1][:column - 1].encode("utf-8")) + 1

    def position(self, path: str, line: int, column: int) -> dict:
        return {"line": line, "column": self.byte_column(path, line, column)}

    def range(self, location: Location) -> dict:
        span = {"start": self.position(location.path, location.line, location.column)}
        if location.end_line and location.end_column:
            span["end"] = self.position(location.path, location.end_line, location.end_column)  # both exclusive
        return span


def _diagnostic(finding: Finding, columns: _Columns) -> dict:
    message = finding.message + (f". Fix: {finding.remediation}" if finding.remediation else "")
    diagnostic = {
        "message": message,
        "location": {"path": finding.location.path, "range": columns.range(finding.location)},
        "severity": SEVERITIES[finding.severity],
        "source": SOURCE,
        "code": {"value": finding.code, "url": rule_url(finding.code, finding.rule)},
    }
    if finding.fix is not None:
        diagnostic["suggestions"] = [{
            "range": {"start": columns.position(e.location.path, e.location.line, e.location.column),
                      "end": columns.position(e.location.path, e.location.line, e.location.column + len(e.old))},
            "text": e.new} for e in finding.fix.edits if e.location.path == finding.location.path]
    if finding.related:
        diagnostic["related_locations"] = [{"message": "related", "location": {
            "path": loc.path, "range": columns.range(loc)}} for loc in finding.related]
    return diagnostic


def render(result: LintResult, **_: object) -> str:
    columns = _Columns(result)
    active = result.active()
    worst = next((SEVERITIES[s] for s in ("error", "warning", "note") if any(f.severity == s for f in active)),
                 None)
    report: dict = {"source": SOURCE, "diagnostics": [_diagnostic(f, columns) for f in active]}
    if worst:
        report["severity"] = worst
    return json.dumps(report, indent=2) + "\n"  # ASCII: control characters arrive escaped
