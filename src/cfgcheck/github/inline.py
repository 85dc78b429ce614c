"""Which findings become inline review comments, and their bodies: one comment per cause, errors first.

For each cause (``causes.group``: errors, then warnings, then notes) whose findings include some on
lines the pull request changes, one comment sits on the first of those, lists the cause's other places
and stands for every finding of the cause on a changed line (one hidden fingerprint marker each, so a
re-run recognises them all). A fixable finding's comment carries a ``suggestion`` block
(``suggestions.suggest``) and covers the lines it replaces (``start_line``..``line``). Supply-chain causes
are left to the summary unless the configuration says ``review: {supply-chain: inline}``.

``plan`` is pure: the publisher decides what is new, what is already commented and what the budget
leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..model import Finding
from ..templating import Overrides
from .bodies import fingerprint_id, render_review_comment
from .causes import group
from .suggestions import suggest


@dataclass(eq=False)
class Planned:
    """One inline comment: where it goes, what it says, which findings it stands for."""

    anchor: Finding
    covers: list[str]  # fingerprint ids of the cause's findings on changed lines, the anchor's first
    path: str
    line: int
    start_line: int | None  # a suggestion over several lines starts here
    body: str
    plain: str  # the body without the suggestion, for a comment that no longer sits on its lines

    def payload(self) -> dict:
        """The comment as ``create_review`` takes it (side RIGHT: the head's lines)."""
        comment = {"path": self.path, "line": self.line, "side": "RIGHT", "body": self.body}
        if self.start_line is not None:
            comment.update(start_line=self.start_line, start_side="RIGHT")
        return comment


def plan(findings: list[Finding], texts: dict[str, str], diff_lines: dict[str, set[int]], *, supply_inline: bool,
         root: Overrides | Path | None, unchanged_by: Callable[[str], bool]) -> tuple[list[Planned], dict[str, str]]:
    """(the inline comments in budget order, placement of every finding's fingerprint id): ``outside``
    (no changed line), ``summary`` (a supply-chain cause kept to the summary), or ``inline`` once posted."""
    planned: list[Planned] = []
    placement: dict[str, str] = {}
    for cause in group(findings):
        on_diff = [f for f in cause.findings if f.location.line in diff_lines.get(f.location.path, ())]
        for finding in cause.findings:
            placement[fingerprint_id(finding)] = "outside"
        if cause.supply_chain and not supply_inline:
            placement.update({fingerprint_id(f): "summary" for f in cause.findings})
            continue
        if not on_diff:
            continue
        anchor = on_diff[0]
        others = [f for f in cause.findings if f is not anchor]
        covers = list(dict.fromkeys(fingerprint_id(f) for f in on_diff))
        path = anchor.location.path
        suggestion = suggest(anchor, texts.get(path), diff_lines.get(path, set()), unchanged_by)
        context = {"others": others, "covers": covers, "counted": cause.counted()}
        body = render_review_comment(anchor, root, suggestion=suggestion, **context)
        plain = body if suggestion is None else render_review_comment(anchor, root, **context)
        start, end = (suggestion.start, suggestion.end) if suggestion else (anchor.location.line,) * 2
        planned.append(Planned(anchor, covers, path, end, start if start < end else None, body, plain))
    return planned, placement
