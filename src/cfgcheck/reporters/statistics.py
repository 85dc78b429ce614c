"""``lint --statistics``: how many findings each rule has, most first (ruff's ``--statistics``).

Text: one line per rule, ``count  code  [*]  name  severity`` (``[*]``: every finding of the rule
in this run has a mechanical fix; ``[-]``: some have). JSON: a list of ``{"code", "name", "severity",
"count", "fixable"}``. Suppressed findings are not counted.
"""

from __future__ import annotations

import json
from collections import Counter

from ..lint import LintResult


def rows(result: LintResult) -> list[dict]:
    active = result.active()
    counts = Counter(f.code for f in active)
    fixable = Counter(f.code for f in active if f.fix is not None)
    first = {}
    for finding in active:
        first.setdefault(finding.code, finding)
    return [{"code": code, "name": first[code].rule, "severity": first[code].severity, "count": count,
             "fixable": fixable[code]} for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def render(result: LintResult, fmt: str = "text") -> str:
    table = rows(result)
    if fmt == "json":
        return json.dumps(table, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in table), default=1)
    out = []
    for row in table:
        marker = "[*]" if row["fixable"] == row["count"] else "[-]" if row["fixable"] else "[ ]"
        out.append(f"{row['count']:>{width}}\t{row['code']}\t{marker} {row['name']}\t{row['severity']}\n")
    return "".join(out)
