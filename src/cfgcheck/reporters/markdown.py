"""``--format markdown``: a findings table for PR comments and step summaries, errors first.

Text taken from linted files is escaped so it cannot inject Markdown, HTML, @mentions or autolinks.
"""

from __future__ import annotations

import re

from ..lint import LintResult
from ..textsafe import neutralise
from . import severity_first
from .text import summary

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")
# GitHub autolinks "scheme://" and "www." (GFM extended autolinks); a zero-width space breaks both
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=\bwww)(?=\.)")


def _controls(text: str) -> str:
    """Line breaks become spaces (a table row is one line); other control characters visible escapes."""
    return neutralise(text.replace("\n", " ").replace("\r", " "))


def escape(text: str) -> str:
    # "&" first: an entity (&commat; &#64; &#x40;) would otherwise render as the "@" of a mention
    text = _controls(str(text)).replace("&", "&amp;")
    text = _SPECIAL.sub(r"\\\1", text)
    # a zero-width space after every "@", whatever precedes it (".@org/team", "é@org/team"): no mention,
    # no e-mail autolink
    text = text.replace("@", "@\u200b")
    return _AUTOLINK.sub("\u200b", text)


def code(text: str) -> str:
    """A one-line code span that ``text`` (a file name a pull request chose) cannot end or break."""
    text = _controls(str(text))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence, pad = "`" * (longest + 1), " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def table(findings) -> str:
    rows = ["| severity | rule | where | finding |", "|---|---|---|---|"]
    for f in findings:
        where = code(f"{f.location.path}:{f.location.line}")
        message = escape(f.message) + (f"<br>Fix: {escape(f.remediation)}" if f.remediation else "")
        new = " (new)" if f.introduced else ""  # diff mode: introduced by the change
        rows.append(f"| {f.severity}{new} | {f.code} {f.rule} | {where} | {message} |")
    return "\n".join(rows)


def render(result: LintResult, **_: object) -> str:
    head = f"**cfgcheck**: {escape(summary(result))}"  # the summary names the base ref: escaped
    active = severity_first(result.active())
    return head + "\n\n" + (table(active) if active else "No findings.") + "\n"
