"""Reporters: turn a lint result into text, JSON, SARIF, GitHub workflow commands, Markdown, JUnit XML,
a GitLab Code Quality report or reviewdog's rdjson."""

from __future__ import annotations

import importlib

from ..model import SEVERITY_RANK, Finding

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable, Sequence

# format name -> module in this package that defines ``render(result, **options) -> str``
MODULES = {
    "text": "text", "json": "json_report", "sarif": "sarif", "github": "annotations", "markdown": "markdown",
    "junit": "junit", "gitlab": "gitlab", "rdjson": "rdjson",
}
FORMATS = tuple(MODULES)
DOCS = "https://github.com/cfgcheck/cfgcheck/blob/main/docs/rules.md"


def renderer(fmt: str) -> Callable:
    """The ``render`` function of a format, imported only when that format is asked for."""
    return importlib.import_module(f"{__name__}.{MODULES.get(fmt, 'text')}").render


def rule_url(code: str, name: str) -> str:
    """The rule's section in docs/rules.md (GitHub's heading anchor for ``## CODE name``)."""
    return f"{DOCS}#{code.lower()}-{name}"


def severity_first(findings: Sequence[Finding]) -> list[Finding]:
    """Errors, then warnings, then notes; by file and line within each: the order a reviewer fixes them in,
    and the one GitHub's per-step annotation limit (10 of each level shown) needs so no error is hidden."""
    return sorted(findings, key=lambda f: (-SEVERITY_RANK.get(f.severity, 0), f.location.sort_key()))


def stable_ids(findings: Sequence[Finding]) -> list[str]:
    """Per finding, a hash of what it is about (rule, served model, setting: ``Finding.fingerprint``),
    not of its line, so it survives lines moving; ``:N`` tells apart findings with the same identity,
    as GitHub's ``primaryLocationLineHash`` does. Unique within one report."""
    import hashlib  # here: a text report does not need it

    seen: dict[str, int] = {}
    ids = []
    for finding in findings:
        digest = hashlib.sha256(finding.fingerprint().encode("utf-8", "replace")).hexdigest()[:16]
        seen[digest] = seen.get(digest, 0) + 1
        ids.append(f"{digest}:{seen[digest]}")
    return ids
