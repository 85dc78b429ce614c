"""The last step of a proposal's PR body and ADR: within GitHub's 65,536-character body limit, always,
and saying what was folded to get there.

A document is rendered from its template context; while it is too long, folds are applied in order,
least informative first (the places of a repeated finding before the findings, notes before warnings,
never an error), each one shrinking a copy of the context and naming what it folded in the
``folded`` list the templates show. A fold may apply several times (a table cut to half its rows, then
half again). When every fold is spent and the text is still too long (a repository's template that
ignores them), it is cut at a line boundary, the cut said, and the hidden marker kept whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..github.proposals import BODY_LIMIT as LIMIT
CUT = "\n\n… (cut here: the rest passes GitHub's limit of {limit:,} characters; the ADR and the diff have it)\n"


@dataclass(frozen=True)
class Fold:
    """One way to shorten a context: ``apply`` returns a smaller copy, or None when it cannot shrink it."""

    what: str  # said in the document, e.g. "the places of repeated findings (the first of each kept)"
    apply: Callable[[dict], dict | None]


def cut(text: str, tail: str, limit: int) -> str:
    """``text`` cut at a line boundary so that it, the note that says so and ``tail`` fit ``limit``."""
    note = CUT.format(limit=limit)
    room = max(limit - len(tail) - len(note), 0)
    head = text[:room]
    if "\n" in head:
        head = head[:head.rindex("\n")]
    return head + note + tail


def fit(render: Callable[[dict], str], context: dict, folds: list[Fold], tail: str = "",
        limit: int = LIMIT) -> str:
    """``render(context)`` followed by ``tail`` (the hidden marker), at most ``limit`` characters."""
    context = dict(context, folded=list(context.get("folded") or []))
    text = render(context)
    for fold in folds:
        while len(text) + len(tail) > limit:
            smaller = fold.apply(context)
            if smaller is None:
                break
            if fold.what not in smaller["folded"]:
                smaller["folded"] = [*smaller["folded"], fold.what]
            context = smaller
            text = render(context)
    if len(text) + len(tail) > limit:
        return cut(text, tail, limit)
    return text + tail
