"""Suppressions: which findings a person decided to accept, and the problems with those decisions.

Forms (codes are exact codes, code prefixes such as ``CFG2``, or kebab names, comma-separated):

* ``# cfgcheck: ignore[CODES] reason`` on the line of the finding, or alone on a line above it;
* ``# cfgcheck: ignore-file[CODES] reason`` anywhere in a file: the whole file;
* ``cfgcheck.io/ignore: "CODES: reason"`` as a resource annotation: that served model;
* ``per-file-ignores: {PATTERN: [CODES]}`` in the configuration (gitignore-style patterns over
  repo-relative paths; the configuration is the reason).

A directive that starts like one (``cfgcheck: ignore...``) but does not parse, names an unknown rule
or gives no reason is reported (CFG001); one that suppresses nothing of a rule that ran is CFG002.
Every pattern here matches in linear time: the directive is located with a literal-prefixed search
and parsed once at that position (comments come from hostile pull requests).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .discover import excluded
from .errors import ConfigError
from .model import Finding, Location, ServedModel
from .registry import UnknownRule, codes_for
from .yamlio import LoadedFile

ANNOTATION = "cfgcheck.io/ignore"
_START = re.compile(r"cfgcheck:[ \t]*ignore")
_DIRECTIVE = re.compile(r"(ignore(?:-file)?)(?![\w-])(?:\[([^\]]*)\])?[ \t]*(.*)")
@dataclass(eq=False)
class Suppression:
    codes: set[str]
    reason: str
    location: Location
    scope: str  # "lines", "file", "model" (annotation) or "config" (per-file-ignores)
    target_lines: set[int] = field(default_factory=set)
    model_identity: str | None = None
    pattern: str | None = None  # per-file-ignores: the path pattern
    written: str = ""  # the codes as the directive wrote them
    used: bool = False

    def covers(self, finding: Finding) -> bool:
        if finding.code not in self.codes:
            return False
        if self.scope == "model":
            return finding.model_identity == self.model_identity
        if self.scope == "config":
            return excluded(finding.location.path, (self.pattern,))
        if finding.location.path != self.location.path:
            return False
        return self.scope == "file" or finding.location.line in self.target_lines


@dataclass(eq=False)
class Collected:
    suppressions: list[Suppression] = field(default_factory=list)
    problems: list[tuple[Location, str]] = field(default_factory=list)  # (where, message) for CFG001

    def add(self, written: str, reason: str, location: Location, scope: str, **where: Any) -> None:
        names = [c.strip() for c in written.split(",") if c.strip()]
        codes: set[str] = set()
        for name in names:
            try:
                codes |= codes_for(name)
            except UnknownRule:
                self.problems.append((location, f"suppression names unknown rule '{name}'"))
        if not names:
            self.problems.append((location, "suppression names no rule: write ignore[CODE,...]"))
        reason = reason.strip()
        if names and not reason:
            self.problems.append((location, f"suppression of {', '.join(names)} gives no reason"))
        if codes:
            self.suppressions.append(Suppression(codes, reason, location, scope, written=", ".join(names), **where))


def collect(loaded: list[LoadedFile], models: list[ServedModel], per_file: dict[str, list[str]] | None = None,
            source: str = ".cfgcheck.yaml") -> Collected:
    """Suppressions from comments, annotations and ``per-file-ignores`` (read from ``source``), and the
    problems with them."""
    found = Collected()
    for file in loaded:
        for line, comment in file.comments.items():
            _comment(found, file, line, comment)
    for model in models:
        annotation = model.annotations.get(ANNOTATION)
        if not annotation:
            continue
        for entry in re.split(r"[;\n]", annotation):
            if entry.strip():
                codes, _, reason = entry.partition(":")
                found.add(codes, reason, model.location, "model", model_identity=model.identity)
    for pattern, codes in (per_file or {}).items():
        reason = f"per-file-ignores '{pattern}' in {source}"
        where = Location(source, 1, 1)
        found.suppressions.append(Suppression(_config_codes(codes, pattern), reason, where, "config",
                                              pattern=pattern))
    return found


def _config_codes(codes: list[str], pattern: str) -> set[str]:
    resolved: set[str] = set()
    for code in codes:
        try:
            resolved |= codes_for(code)
        except UnknownRule as exc:
            raise ConfigError(f"per-file-ignores '{pattern}': {exc}") from None
    return resolved


def _comment(found: Collected, file: LoadedFile, line: int, comment) -> None:
    start = _START.search(comment.text)
    if start is None:
        return
    at = start.start() + len("cfgcheck:")
    body = comment.text[at:].lstrip(" \t")
    location = Location(file.path, line, comment.column)
    match = _DIRECTIVE.match(body)
    if match is None:
        return  # "cfgcheck: ignored ..." is prose, not a directive
    form, codes, reason = match.groups()
    if codes is None:
        shown = body if len(body) <= 60 else body[:57] + "..."
        found.problems.append((location, f"malformed suppression '{shown}': write "
                                         f"'cfgcheck: {form}[CODE,...] reason'"))
        return
    if form == "ignore-file":
        found.add(codes, reason, location, "file")
    else:
        target = line if not comment.full_line else _line_below(file, line)
        found.add(codes, reason, location, "lines", target_lines={target})


def _line_below(file: LoadedFile, line: int) -> int:
    probe = line + 1
    while probe in file.comments and file.comments[probe].full_line:
        probe += 1
    return probe


def apply(findings: list[Finding], suppressions: list[Suppression]) -> None:
    for finding in findings:
        for suppression in suppressions:
            if suppression.covers(finding):
                suppression.used = True
                finding.suppressed = suppression.reason or "(no reason given)"
                break


def unused(suppressions: list[Suppression], ran: set[str]) -> list[Suppression]:
    """Comment and annotation suppressions that matched nothing of a rule that ran (a suppression of
    a rule that did not run is not unused; per-file-ignores are configuration, not reported)."""
    return [s for s in suppressions if not s.used and s.scope != "config" and s.codes & ran]
