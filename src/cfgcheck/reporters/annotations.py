"""``--format github``: workflow commands that GitHub turns into annotations.

Escaped per GitHub's rules (toolkit ``escapeData``/``escapeProperty``), so nothing taken from a file
can end the command early or start another one (``::set-output``, ``::add-mask``); control characters
are first written as visible escapes (``textsafe``), so a CR or LF from a file never reaches the
annotation as a line break either. Errors come first, then warnings, then notes: GitHub shows a
limited number of annotations per step and per job, and an error must never be the one left out.
"""

from __future__ import annotations

from ..lint import LintResult
from . import severity_first
from ..textsafe import neutralise

COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    """Percent-encode per the toolkit's ``escapeData``: ``%``, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding) -> str:
    location = finding.location
    properties = [f"file={escape_property(neutralise(location.path))}", f"line={location.line}", f"col={location.column}"]
    if location.end_line:
        properties.append(f"endLine={location.end_line}")
    if location.end_column and location.end_line == location.line:
        properties.append(f"endColumn={location.end_column}")
    new = " (new)" if finding.introduced else ""  # diff mode: introduced by the change
    properties.append(f"title={escape_property(neutralise(f'{finding.code} {finding.rule}{new}'))}")
    message = neutralise(finding.message + (f" — {finding.remediation}" if finding.remediation else ""))
    return f"::{COMMANDS[finding.severity]} {','.join(properties)}::{escape_data(message)}"


def render(result: LintResult, **_: object) -> str:

    # a plain log line, not a command: the compared commit shows in the job log, not as an annotation
    head = f"cfgcheck: {escape_data(result.base.describe())}\n" if result.base is not None else ""
    # errors first: GitHub shows only the first annotations of each level per step and per job
    return head + "".join(annotation(f) + "\n" for f in severity_first(result.active()))
