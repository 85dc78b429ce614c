"""``--format junit``: JUnit XML for CI test-report views (GitLab ``artifacts:reports:junit``, Jenkins,
Azure Pipelines).

One ``testsuite`` per linted file; one ``testcase`` per finding (a ``failure`` whose ``type`` is the
severity), a suppressed finding as a ``skipped`` testcase with its reason, and a file without findings as
one passing testcase, so the report also counts what was checked. Characters XML 1.0 cannot carry
(C0 controls other than tab and newline, lone surrogates, U+FFFE/U+FFFF), and the controls a viewer
could act on (DEL, C1, U+2028/U+2029; docs/SECURITY.md promise 8), are written as ``\\xNN``/``\\uNNNN``.
"""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from ..lint import LintResult
from ..model import Finding

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _xml(text: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        str(text))


def _case(suite: ET.Element, finding: Finding) -> None:
    location = finding.location
    case = ET.SubElement(suite, "testcase", {
        "name": _xml(f"{finding.code} {finding.rule} at line {location.line}, column {location.column}"),
        "classname": _xml(location.path), "file": _xml(location.path), "line": str(location.line)})
    if finding.suppressed is not None:
        ET.SubElement(case, "skipped", {"message": _xml(f"suppressed: {finding.suppressed}")})
        return
    body = f"{location.path}:{location.line}:{location.column}: {finding.code} {finding.severity}: {finding.message}"
    if finding.remediation:
        body += f"\nfix: {finding.remediation}"
    failure = ET.SubElement(case, "failure", {"message": _xml(finding.message), "type": finding.severity})
    failure.text = _xml(body)


def render(result: LintResult, **_: object) -> str:
    by_path: dict[str, list[Finding]] = {loaded.path: [] for loaded in result.files}
    for finding in result.findings:
        by_path.setdefault(finding.location.path, []).append(finding)
    root = ET.Element("testsuites", {"name": "cfgcheck"})
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for path in sorted(by_path):
        findings = by_path[path]
        suite = ET.SubElement(root, "testsuite", {"name": _xml(path)})
        for finding in findings:
            _case(suite, finding)
        if not findings:
            ET.SubElement(suite, "testcase", {"name": "cfgcheck", "classname": _xml(path), "file": _xml(path)})
        counts = {"tests": max(len(findings), 1), "failures": sum(f.suppressed is None for f in findings),
                  "skipped": sum(f.suppressed is not None for f in findings)}
        suite.attrib.update({key: str(value) for key, value in counts.items()}, errors="0")
        for key, value in counts.items():
            totals[key] += value
    root.attrib.update({key: str(value) for key, value in totals.items()}, errors="0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
