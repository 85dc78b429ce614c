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

from . import lazy
from .discover import excluded
from .errors import ConfigError
from .model import Finding, Location
from .registry import UnknownRule, codes_for
from .yamlio import LoadedFile

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any
    from .model import ServedModel

ANNOTATION = "cfgcheck.io/ignore"
_START = lazy.Pattern(r"cfgcheck:[ \t]*ignore")
_DIRECTIVE = lazy.Pattern(r"(ignore(?:-file)?)(?![\w-])(?:\[([^\]]*)\])?[ \t]*(.*)")
class Suppression:
    """One suppression read (a comment, an annotation or a per-file-ignores entry): the codes it silences, and where."""

    def __init__(self, codes: set[str], reason: str, location: Location, scope: str,
                 target_lines: set[int] | None = None, model_identity: str | None = None, pattern: str | None = None,
                 written: str = "", used: bool = False) -> None:
        self.codes = codes
        self.reason = reason
        self.location = location
        self.scope = scope  # "lines", "file", "model" (annotation) or "config" (per-file-ignores)
        self.target_lines = set() if target_lines is None else target_lines
        self.model_identity = model_identity
        self.pattern = pattern  # per-file-ignores: the path pattern
        self.written = written  # the codes as the directive wrote them
        self.used = used

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


class Collected:
    """The suppressions of the run, and the malformed ones (CFG001)."""

    def __init__(self, suppressions: list[Suppression] | None = None,
                 problems: list[tuple[Location, str]] | None = None) -> None:
        self.suppressions = [] if suppressions is None else suppressions
        self.problems = [] if problems is None else problems  # (where, message) for CFG001

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
        for codes, reason in _annotation_entries(model):
            found.add(codes, reason, model.location, "model", model_identity=model.identity)
    for pattern, codes in (per_file or {}).items():
        reason = f"per-file-ignores '{pattern}' in {source}"
        where = Location(source, 1, 1)
        found.suppressions.append(Suppression(_config_codes(codes, pattern), reason, where, "config",
                                              pattern=pattern))
    return found


def _annotation_entries(model: ServedModel) -> list[tuple[str, str]]:
    """(codes, reason) of each entry of the model's ``cfgcheck.io/ignore`` annotation."""
    annotation = model.annotations.get(ANNOTATION) or ""
    return [(entry.partition(":")[0], entry.partition(":")[2]) for entry in re.split(r"[;\n]", annotation)
            if entry.strip()]


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


# ---------------------------------------------------------------- diff mode: suppressions a change adds


class Silenced:
    """A finding a change introduces that a suppression the same change adds silences: a pull request
    may not silence its own finding unseen (``lint --base``, ``review``). A plain class: every lint run
    imports this module, and a dataclass compiles its methods at import (tests/cli/test_startup_imports.py)."""

    __slots__ = ("finding", "suppression")

    def __init__(self, finding: Finding, suppression: Suppression) -> None:
        self.finding, self.suppression = finding, suppression


def silenced_by_change(introduced: list[Finding], head: list[Suppression], head_files: list[LoadedFile],
                       base_files: list[LoadedFile], base_models: list[ServedModel]) -> list[Silenced]:
    """The introduced findings whose suppression (the first that covers them, as ``apply`` chose) is
    new in the change: a comment whose text the base's version of its file holds fewer times than the
    head's, an annotation entry the base's served model lacks. ``per-file-ignores`` are configuration,
    which ``review`` reads from the base."""
    texts = {file.path: _texts(file) for file in head_files}
    base_texts = {file.path: _texts(file) for file in base_files}
    entries = {model.identity: {_entry(codes, reason) for codes, reason in _annotation_entries(model)}
               for model in base_models}
    found = []
    for finding in introduced:
        if finding.suppressed is None:
            continue
        suppression = next((s for s in head if s.covers(finding)), None)
        if suppression is None or suppression.scope == "config":
            continue
        if suppression.scope == "model":
            added = _entry(suppression.written, suppression.reason) not in entries.get(suppression.model_identity, ())
        else:
            where = suppression.location
            text = next((c.text for c in (f.comments.get(where.line) for f in head_files if f.path == where.path)
                         if c is not None), "")
            added = texts.get(where.path, {}).get(text, 0) > base_texts.get(where.path, {}).get(text, 0)
        if added:
            found.append(Silenced(finding, suppression))
    return found


def _texts(file: LoadedFile) -> dict[str, int]:
    counts: dict[str, int] = {}
    for comment in file.comments.values():
        counts[comment.text] = counts.get(comment.text, 0) + 1
    return counts


def _entry(codes: str, reason: str) -> tuple[str, str]:
    return ", ".join(c.strip() for c in codes.split(",") if c.strip()), reason.strip()


def silenced_report(silenced: list[Silenced], by: str = "this change") -> dict | None:
    """What every report says of ``silenced``, from data only (no layout): ``headline`` ("1 new finding
    silenced by a suppression this change adds") and one row per finding with its rule, place and the
    suppression's place and reason. None when nothing was silenced."""
    if not silenced:
        return None
    count = len(silenced)
    headline = f"{count} new finding{'s' if count != 1 else ''} silenced by {'a suppression' if count == 1 else 'suppressions'} {by} adds"
    rows = [{"code": s.finding.code, "rule": s.finding.rule, "severity": s.finding.severity,
             "path": s.finding.location.path, "line": s.finding.location.line, "column": s.finding.location.column,
             "message": s.finding.message,
             "suppression": {"path": s.suppression.location.path, "line": s.suppression.location.line,
                             "scope": s.suppression.scope, "codes": s.suppression.written,
                             "reason": s.suppression.reason}} for s in silenced]
    return {"headline": headline, "rows": rows}
