"""``--format sarif``: SARIF 2.1.0 as GitHub code scanning and strict validators accept it.

GitHub's requirements and limits (docs.github.com, "SARIF support for code scanning" and "About code
scanning limits on SARIF results"): a ``ruleId`` and a location on every result, a URI relative to the
repository root, ``partialFingerprints`` so an alert follows its code across line moves, at most 25,000
results and 25,000 rules per run, 1,000 locations per result and 20 tags per rule, and
``security-severity`` (a number 0.0-10.0 written as a string) on rules tagged ``security``.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from .. import __version__
from ..lint import LintResult
from ..model import SEVERITY_RANK, Finding
from ..registry import Rule, all_rules
from . import DOCS, rule_url, stable_ids

__all__ = ["DOCS", "render", "uri"]

LEVELS = {"error": "error", "warning": "warning", "note": "note"}
# GitHub's non-security severity is read from ``problem.severity``: error, warning or recommendation.
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}
MAX_RESULTS = 25_000  # GitHub rejects a run with more
MAX_RELATED = 100  # GitHub keeps 100 locations per result (rejects above 1,000)
# The category GitHub keys analyses by (everything up to the last "/"). `lint` on the default branch
# and `review` on a pull request must share it, or GitHub cannot tell which alerts a PR introduces.
AUTOMATION_ID = "cfgcheck/"

# Rule family (the code's first digit, as in docs/rules.md) -> tags shown as filters in code scanning.
FAMILY_TAGS = {
    "0": ("input",), "1": ("engine-flags", "correctness"), "2": ("capacity", "reliability"),
    "3": ("supply-chain",), "4": ("change-management",), "5": ("kubernetes", "reliability"),
}
# Security rules: GitHub's bands are low 0.1-3.9, medium 4.0-6.9, high 7.0-8.9, critical 9.0-10.0.
# The CWE tags follow CodeQL's ``external/cwe/cwe-N`` convention.
SECURITY = {
    "CFG305": ("9.1", "external/cwe/cwe-798"),  # a literal credential in the manifest
    "CFG306": ("8.1", "external/cwe/cwe-494"),  # remote code that can change under the same name
    "CFG303": ("5.0", "external/cwe/cwe-494"),  # weights (and their code) that can change silently
    "CFG301": ("3.9", "external/cwe/cwe-494"),  # an image tag can be moved to other content
}
# How often a finding is right: decided by the engine's own argparse (very-high), or resting on an
# estimate or on reading prose (medium). Everything else: high.
PRECISION = {
    **dict.fromkeys(("CFG000", "CFG101", "CFG102", "CFG103", "CFG104", "CFG105"), "very-high"),
    **dict.fromkeys(("CFG203", "CFG205", "CFG402", "CFG403", "CFG502"), "medium"),
}


def uri(path: str) -> str:
    """A repository path as an RFC 3986 relative reference: ``#``, ``?``, ``%``, spaces, ``:`` (a
    scheme in a first segment) and non-ASCII (as UTF-8) percent-encoded."""
    return quote(path, safe="/!$&'()*+,;=@")


def _region(location) -> dict:
    region = {"startLine": max(location.line, 1), "startColumn": max(location.column, 1)}
    if location.end_line:
        region["endLine"] = location.end_line
    if location.end_column and (location.end_line or location.line) >= location.line:
        if not (location.end_line in (None, location.line) and location.end_column <= location.column):
            region["endColumn"] = location.end_column
    return region


def _physical(location) -> dict:
    return {"artifactLocation": {"uri": uri(location.path), "uriBaseId": "%SRCROOT%"},
            "region": _region(location)}


def rule_properties(rule: Rule) -> dict:
    tags = list(FAMILY_TAGS.get(rule.code[3:4], ()))
    properties: dict = {"precision": PRECISION.get(rule.code, "high"),
                        "problem.severity": PROBLEM_SEVERITY[rule.severity]}
    if rule.code in SECURITY:
        score, cwe = SECURITY[rule.code]
        tags += ["security", cwe]
        properties["security-severity"] = score
    properties["tags"] = tags
    return properties


def _descriptor(rule: Rule) -> dict:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary.splitlines()[0] if rule.summary else rule.name},
        "fullDescription": {"text": rule.sections.get("What it flags", rule.summary) or rule.name},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "helpUri": rule_url(rule.code, rule.name),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": rule_properties(rule),
    }


def _result(finding: Finding, index: dict[str, int], line_hash: str) -> dict:
    text = finding.message if not finding.remediation else f"{finding.message}. Fix: {finding.remediation}"
    entry = {
        "ruleId": finding.code,
        "ruleIndex": index.get(finding.code, 0),
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [{"physicalLocation": _physical(finding.location)}],
        "partialFingerprints": {"primaryLocationLineHash": line_hash, "cfgcheck/v1": finding.fingerprint()},
    }
    if finding.related:
        entry["relatedLocations"] = [{"id": i, "physicalLocation": _physical(loc)}
                                     for i, loc in enumerate(finding.related[:MAX_RELATED])]
    if finding.suppressed is not None:
        entry["suppressions"] = [{"kind": "inSource", "justification": finding.suppressed}]
    if finding.introduced is not None:
        entry["properties"] = {"introduced": finding.introduced}
    return entry


def _kept(findings: list[Finding]) -> list[Finding]:
    """At most ``MAX_RESULTS``, the most severe first (GitHub rejects the whole file above it)."""
    if len(findings) <= MAX_RESULTS:
        return findings
    ranked = sorted(findings, key=lambda f: (f.suppressed is not None, -SEVERITY_RANK[f.severity]))
    return sorted(ranked[:MAX_RESULTS], key=lambda f: f.location.sort_key())


def render(result: LintResult, **_: object) -> str:
    rules = list(all_rules())
    index = {rule.code: i for i, rule in enumerate(rules)}
    kept = _kept(result.findings)
    results = [_result(f, index, h) for f, h in zip(kept, stable_ids(kept))]
    invocation: dict = {"executionSuccessful": True}
    if len(kept) < len(result.findings):
        invocation["toolExecutionNotifications"] = [{"level": "warning", "message": {
            "text": f"{len(result.findings) - len(kept)} of {len(result.findings)} results left out: "
                    f"GitHub accepts at most {MAX_RESULTS:,} per run (the most severe are kept)"}}]
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "cfgcheck", "version": __version__, "semanticVersion": __version__,
                                "informationUri": "https://github.com/cfgcheck/cfgcheck",
                                "rules": [_descriptor(rule) for rule in rules]}},
            "automationDetails": {"id": AUTOMATION_ID},
            "invocations": [invocation],
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the repository root"}}},
            "results": results,
        }],
    }
    if result.base is not None:  # diff mode: the commit compared with (the merge base of the ref and HEAD)
        log["runs"][0]["properties"] = {"base": {"ref": result.base.ref, "commit": result.base.commit}}
    return json.dumps(log, indent=2) + "\n"
