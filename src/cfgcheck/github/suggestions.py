"""One-click fixes: a finding's mechanical fix (``Finding.fix``, what ``cfgcheck fix`` applies) as a GitHub
``suggestion`` block on the lines it replaces.

GitHub applies a suggestion by replacing the commented lines (``start_line`` to ``line``, RIGHT side) with
the block's text, so the block holds those lines as they read after the fix: the edits applied to the
file's text with every other byte kept (``yamlio.apply_edits``, the same function ``cfgcheck fix`` uses).
A suggestion is made only when it would do exactly that:

* every edit is in the finding's file (one comment cannot change two files);
* every line from the first edited (or the finding's) line to the last is in the diff, since GitHub
  accepts a comment only on lines of one hunk;
* the edits still match the file (they were computed from the text linted);
* the lines hold no control character (``textsafe``: a tab, an escape, a bidirectional override would
  reach the reviewer as something other than what is applied) and nothing the redaction step would
  change (a secret-looking value would reach GitHub masked, and applying the suggestion would write the
  mask into the file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..model import Finding
from ..textsafe import neutralise
from ..yamlio import apply_edits


@dataclass(frozen=True)
class Suggestion:
    """Replace lines ``start``..``end`` (1-based, inclusive) of the finding's file with ``text``."""

    start: int
    end: int
    text: str  # the replacement lines, without the last line's end ("" deletes the lines)

    def block(self) -> str:
        """The Markdown block: fenced longer than any run of backticks in the text, so it cannot end early."""
        longest = max((len(run) for run in re.findall(r"`+", self.text)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"{fence}suggestion\n{self.text}\n{fence}" if self.text else f"{fence}suggestion\n{fence}"


def suggest(finding: Finding, text: str | None, changed: set[int],
            unchanged_by: Callable[[str], bool]) -> Suggestion | None:
    """The suggestion for ``finding`` in a file whose head text is ``text`` and whose changed (RIGHT)
    lines are ``changed``; None when a suggestion could not apply the fix exactly. ``unchanged_by``
    says whether the redaction step leaves a text as it is."""
    fix = finding.fix
    path = finding.location.path
    if fix is None or not fix.edits or text is None or any(e.location.path != path for e in fix.edits):
        return None
    lines = [e.location.line for e in fix.edits] + [finding.location.line]
    start, end = min(lines), max(lines)
    if any(number not in changed for number in range(start, end + 1)):
        return None
    try:
        fixed = apply_edits(text, list(fix.edits))
    except ValueError:
        return None
    before, after = text.splitlines(keepends=True), fixed.splitlines(keepends=True)
    if end > len(before):
        return None
    replaced = "".join(after[start - 1:len(after) - (len(before) - end)])
    replaced = "\n".join(line.rstrip("\r") for line in replaced.split("\n"))
    replaced = replaced[:-1] if replaced.endswith("\n") else replaced
    original = "".join(before[start - 1:end])
    shown = (original + replaced).replace("\r\n", "\n").split("\n")
    if any(neutralise(line) != line for line in shown) or not unchanged_by(original + replaced):
        return None
    return Suggestion(start, end, replaced)
