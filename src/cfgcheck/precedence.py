"""One cause, one finding: after the rules, before suppressions (docs/ARCHITECTURE.md, step 6).

Rules check one thing each, so one cause can meet several of them on one setting: a sequence limit
the KV pool cannot hold is also below the engine's default; a parallel size that does not fit the pod's GPUs also needs a
RAM-backed /dev/shm. Reported side by side, such findings repeat one cause, or contradict each other
("too many" and "too few" at once, an error on a value another finding calls inert).

``RELATIONS`` says, for pairs of rules, which finding stays when both are on one setting of one
served model (same file and line), and what the one that stays says about the other:

* ``contradicts``: given the specific finding, the general one is not true of this value; it is
  dropped, whatever its severity, and the specific one says why in a clause where the reader would
  otherwise miss it;
* ``folds``: both are true and share their cause; the finding of higher severity stays (the specific
  one on a tie), and names the other with its message and remediation, so nothing is lost.

``resolve`` returns the findings kept and those answered for by another: a suppression written for an
answered finding still counts as used (lint.finalize).
"""

from __future__ import annotations

from .model import SEVERITY_RANK, Finding, Location
from .records import Record


class Relation(Record):  # a constant table's row: a record creates no method at import
    """How the finding of rule ``specific`` answers for the one of rule ``general`` on the same cause."""

    __slots__ = ("specific", "general", "kind", "clause")

    def __init__(self, specific: str, general: str, kind: str, clause: str = "") -> None:
        self.specific = specific  # the code of the finding that stays
        self.general = general  # the code of the finding it answers for
        self.kind = kind  # "contradicts" | "folds"
        self.clause = clause  # contradicts: what the finding that stays adds (no clause: the general one goes unsaid)


RELATIONS = (
    # a limit above what the KV pool holds is not one to raise to the engine's default: the pool, not the
    # default, bounds it (CFG205 would advise the opposite of CFG203)
    Relation("CFG203", "CFG205", "contradicts"),
    # the parallel size decides both the GPUs the pod needs and the ranks that share /dev/shm
    Relation("CFG208", "CFG501", "folds"),
)


def _key(finding: Finding) -> tuple:
    """One setting of one served model: the same place in the same file (the location is the setting's)."""
    where = finding.location
    return (finding.model_identity or where.path, where.path, where.line)


def resolve(findings: list[Finding], relations: tuple[Relation, ...] = RELATIONS) -> tuple[list[Finding], list[Finding]]:
    """(the findings kept, in their order; the findings another one now answers for)."""
    codes = {code for relation in relations for code in (relation.specific, relation.general)}
    by_place: dict[tuple, list[int]] = {}
    for index, finding in enumerate(findings):
        if finding.code in codes:
            by_place.setdefault(_key(finding), []).append(index)
    kept: list[Finding | None] = list(findings)
    answered: list[Finding] = []
    for indexes in by_place.values():
        for relation in relations if len(indexes) > 1 else ():
            for general in indexes:
                specific = next((i for i in indexes if kept[i] is not None and kept[i].code == relation.specific), None)
                if specific is None or kept[general] is None or kept[general].code != relation.general:
                    continue
                kept[specific], goes = _apply(relation, kept[specific], kept[general])
                kept[general] = None
                answered.append(goes)
    return [finding for finding in kept if finding is not None], answered


def _apply(relation: Relation, specific: Finding, general: Finding) -> tuple[Finding, Finding]:
    """(the finding that stays, now naming the other; the one it answers for)."""
    if relation.kind == "contradicts":
        if not relation.clause:
            return specific, general
        said = f"{specific.message}; {relation.clause} ({general.code}: {general.message})"
        return specific.replaced(message=said, related=_related(specific, general)), general
    if SEVERITY_RANK.get(general.severity, 0) > SEVERITY_RANK.get(specific.severity, 0):
        specific, general = general, specific
    said = f"{specific.message}; also {general.code}: {general.message}"
    remedy = "; ".join(part for part in (specific.remediation, general.remediation) if part) or None
    return specific.replaced(message=said, remediation=remedy, related=_related(specific, general)), general


def _related(specific: Finding, general: Finding) -> tuple[Location, ...]:
    """The places the finding that stays points to, then those of the one it answers for (a ceiling's comment)."""
    return specific.related + tuple(loc for loc in general.related if loc not in specific.related)
