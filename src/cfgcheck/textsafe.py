"""Control characters in text that cfgcheck prints are shown, never obeyed.

Every byte of a linted file may come from a pull request. Printed raw, a newline in a YAML value starts
a line that GitHub Actions executes as a workflow command (``::add-mask::``, ``::stop-commands::``,
``::error file=...``), and an ESC sequence reaches the terminal (clearing it, retitling the window,
hiding text). Each reporter passes the text it takes from files through :func:`neutralise`, which
writes every such character as a visible escape instead: C0 (tab and newline included), DEL, C1 (ESC
``\\x1b`` is C0, CSI ``\\x9b`` is C1), the Unicode line and paragraph separators U+2028/U+2029 (line
breaks to JavaScript and YAML 1.1 readers) and the bidirectional overrides and isolates
(U+202A-U+202E, U+2066-U+2069) that make a terminal or a web page show text in an order other than
the bytes' ("Trojan Source", CVE-2021-42574).
"""

from __future__ import annotations

import re

from . import lazy

# Every character of this class is one ``str.isprintable`` refuses (Cc, Zl, Zp, Cf): printable text, most of
# what a run prints, needs neither the substitution nor the compile of the class (0.13 ms, a run on files
# without a served model compiles it for its summary line).
_CONTROL = lazy.Pattern("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group()
    return _SHORT.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def neutralise(text: object) -> str:
    """``text`` on one line, with every control character written as a visible escape (``\\n``,
    ``\\x1b``, ``\\u2028``). Printable text, backslashes included, is unchanged."""
    text = str(text)
    return text if text.isprintable() else _CONTROL.sub(_escape, text)
