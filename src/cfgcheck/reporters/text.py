"""``--format text``: one line per finding, remediation below it; colour only on a terminal.

A finding that ``cfgcheck fix`` can fix carries ``[*]`` after its code, as in ruff.
"""

from __future__ import annotations

from ..lint import LintResult
from ..model import Finding
from ..suppressions import silenced_report
from ..textsafe import neutralise

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable

STYLES = {"error": "bold red", "warning": "yellow", "note": "cyan"}


def _same(path: str) -> str:
    return path


def _fix_lines(finding: Finding, where: Callable[[str], str]) -> list[str]:
    """``--show-fixes``: the mechanical fix and each edit it makes."""
    if finding.fix is None:
        return []
    out = [f"    fixable: {finding.fix.description}"]
    for edit in finding.fix.edits:
        at = f"{where(edit.location.path)}:{edit.location.line}:{edit.location.column}"
        out.append(f"      {at}: {edit.old!r} -> {edit.new!r}")
    return out


def lines(result: LintResult, show_suppressed: bool = False, where: Callable[[str], str] = _same,
          show_fixes: bool = False) -> list[tuple[str, str, str]]:
    """(severity, head line, the lines below it) per finding; ``where`` maps a repository path to
    the path printed (relative to the user's directory). Text from files is neutralised: a newline or
    ESC in a value would otherwise start a workflow command in a CI log, or reach the terminal."""
    out = []
    for f in result.findings:
        if f.suppressed is not None and not show_suppressed:
            continue
        at = f"{where(f.location.path)}:{f.location.line}:{f.location.column}"
        model = f" [{f.model}]" if f.model else ""
        marker = " [*]" if f.fix is not None else ""
        head = f"{at}: {f.code}{marker} {f.severity}: {f.message}{model}"
        below = [f"    fix: {f.remediation}"] if f.remediation else []
        if show_fixes:
            below += _fix_lines(f, where)
        out.append((f.severity, neutralise(head), "\n".join(neutralise(line) for line in below)))
    return out


def silenced_lines(result: LintResult, where: Callable[[str], str] = _same) -> list[str]:
    """Diff mode: each new finding a suppression added by the same change silences, with that
    suppression's place and reason (a change may not silence its own finding unseen)."""
    report = silenced_report(result.silenced)
    if report is None:
        return []
    out = [f"{report['headline']}:"]
    for row in report["rows"]:
        by = row["suppression"]
        out.append(neutralise(f"{where(row['path'])}:{row['line']}:{row['column']}: {row['code']} {row['severity']}: "
                              f"{row['message']}"))
        out.append(neutralise(f"    silenced by the suppression of {by['codes']} at {where(by['path'])}:{by['line']}: "
                              f"{by['reason'] or '(no reason given)'}"))
    return out


def summary(result: LintResult) -> str:
    c = result.counts()
    text = (f"{len(result.files)} files, {result.served_count()} served models: "
            f"{c['errors']} errors, {c['warnings']} warnings, {c['notes']} notes")
    if c["suppressed"]:
        text += f", {c['suppressed']} suppressed"
    if result.silenced:
        text += f" ({silenced_report(result.silenced)['headline']})"
    if result.fixed:
        text += f"; the change fixes {len(result.fixed)}"
    if result.base is not None:
        text += f"; {result.base.describe()}"
    fixable = sum(1 for f in result.active() if f.fix is not None)
    if fixable:
        text += f"; [*] {fixable} fixable with `cfgcheck fix`"
    return neutralise(text)  # the base's description names a ref


def render(result: LintResult, color: bool = False, quiet: bool = False, where: Callable[[str], str] = _same,
           show_fixes: bool = False, **_: object) -> str:
    """``quiet``: the findings only, no summary line."""
    rows = lines(result, where=where, show_fixes=show_fixes)
    silenced = silenced_lines(result, where)
    if not color:
        body = "".join(head + "\n" + (fix + "\n" if fix else "") for _, head, fix in rows)
        body += "".join(line + "\n" for line in silenced)
        return body + ("" if quiet else summary(result) + "\n")
    from io import StringIO

    from rich.console import Console
    from rich.text import Text

    buffer = StringIO()
    console = Console(file=buffer, force_terminal=True, highlight=False, soft_wrap=True)
    for severity, head, fix in rows:
        console.print(Text(head, style=STYLES[severity]))
        if fix:
            console.print(Text(fix, style="dim"))
    for line in silenced:
        console.print(Text(line, style="yellow"))
    if not quiet:
        console.print(Text(summary(result), style="bold"))
    return buffer.getvalue()
