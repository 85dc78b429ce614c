"""``--format text``: one line per finding, remediation below it; colour only on a terminal."""

from __future__ import annotations

from ..lint import LintResult

STYLES = {"error": "bold red", "warning": "yellow", "note": "cyan"}


def lines(result: LintResult, show_suppressed: bool = False) -> list[tuple[str, str, str]]:
    out = []
    for f in result.findings:
        if f.suppressed is not None and not show_suppressed:
            continue
        where = f"{f.location.path}:{f.location.line}:{f.location.column}"
        model = f" [{f.model}]" if f.model else ""
        head = f"{where}: {f.code} {f.severity}: {f.message}{model}"
        out.append((f.severity, head, f"    fix: {f.remediation}" if f.remediation else ""))
    return out


def summary(result: LintResult) -> str:
    c = result.counts()
    text = (f"{len(result.files)} files, {len(result.models)} served models: "
            f"{c['errors']} errors, {c['warnings']} warnings, {c['notes']} notes")
    if c["suppressed"]:
        text += f", {c['suppressed']} suppressed"
    if result.fixed:
        text += f"; the change fixes {len(result.fixed)}"
    if result.base is not None:
        text += f"; {result.base.describe()}"
    return text


def render(result: LintResult, color: bool = False, **_: object) -> str:
    rows = lines(result)
    if not color:
        body = "".join(head + "\n" + (fix + "\n" if fix else "") for _, head, fix in rows)
        return body + summary(result) + "\n"
    from io import StringIO

    from rich.console import Console
    from rich.text import Text

    buffer = StringIO()
    console = Console(file=buffer, force_terminal=True, highlight=False, soft_wrap=True)
    for severity, head, fix in rows:
        console.print(Text(head, style=STYLES[severity]))
        if fix:
            console.print(Text(fix, style="dim"))
    console.print(Text(summary(result), style="bold"))
    return buffer.getvalue()
