"""The tables of a proposal's PR body and ADR, grouped so that their size follows what differs, not how
many served models a change touches: one row per changed served model (model | file | old -> new |
restarts?), one drift table per engine version pair and set of drifted defaults, one lint row per
finding that repeats with the same message. Values are raw (cut at ``MAX_CELL``); the templates escape them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..github.bodies import clip, drift_sections
from ..model import Finding
from .rollout import Rollout

SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}


@dataclass
class DriftGroup:
    """Served models whose engine moves between the same two versions with the same defaults drifting."""

    engine: str
    label: str  # "SGLang 0.5.5.post3 → 0.5.23"
    old: str
    new: str
    drifts: list[dict]  # setting, before, after, how, pin (values as a reviewer reads them)
    models: list[str] = field(default_factory=list)
    unaffected: list[dict] = field(default_factory=list)  # the pair's other drifted defaults: none of them read


def drift_groups(changes: Iterable[Any]) -> list[DriftGroup]:
    """One group per (engine, old version, new version, set of drifted defaults) among ``changes``
    (``changes.ModelChange``, or anything with ``name``, ``path`` and ``upgrade``: a ``drift.VersionChange``),
    as the review summary groups them (``github.bodies.drift_sections``), largest group first.

    Thirty-six served models moved by one image bump share one table instead of repeating it; models
    whose configurations pin different defaults (so that a different set drifts) get a table each.
    Served models whose version does not move are left out; a group's defaults may be empty (the
    version moves, no default these served models read changes); ``unaffected`` are the defaults the two
    versions change that none of the pair's models reads (a feature they do not use), for one folded line."""
    return [DriftGroup(section["engine"], section["label"], section["old"], section["new"],
                       [{"setting": d["what"], "before": clip(d["before"]), "after": clip(d["after"]),
                         "how": d["how"], "pin": d["flag"]} for d in group["drifts"]], list(group["models"]),
                       [{"setting": d["what"], "before": clip(d["before"]), "after": clip(d["after"])}
                        for d in section["unaffected"]])
            for section in drift_sections(list(changes)) for group in section["groups"]]


def grouped(pairs: Iterable[tuple[Any, str]]) -> list[tuple[Any, list[str]]]:
    """(key, served model name) pairs as one (key, names) per key, keys and names in first-seen order:
    a line said once for every served model it applies to."""
    found: dict[Any, list[str]] = {}
    for key, name in pairs:
        found.setdefault(key, []).append(name)
    return list(found.items())


def _image_cell(before: Any, after: Any) -> list[dict]:
    """An image change as the tag alone when the repository stays (``repo``: ``old`` -> ``new``)."""
    if isinstance(before, str) and isinstance(after, str) and ":" in before and ":" in after:
        repository, old_tag = before.split("@", 1)[0].rsplit(":", 1)
        new_repository, new_tag = after.split("@", 1)[0].rsplit(":", 1)
        if repository == new_repository and "/" not in old_tag and "@" not in before + after:
            return [{"setting": "image", "repository": clip(repository), "before": clip(old_tag), "after": clip(new_tag)}]
    return [{"setting": "image", "repository": None, "before": clip(before), "after": clip(after)}]


def _cells(doc: Any, renames: dict[str, list[dict]]) -> list[dict]:
    cells: list[dict] = []
    for row in doc.rows:
        if row.setting == "image":
            cells += _image_cell(row.before, row.after)
        else:
            cells.append({"setting": row.setting, "repository": None, "before": clip(row.before),
                          "after": clip(row.after)})
    return cells + [{"setting": "flag", "repository": None, "before": r["from"], "after": r["to"]}
                    for r in renames.get(doc.identity, [])]


def change_rows(models: list, rollouts: dict[str, Rollout], renames: dict[str, list[dict]]) -> list[dict]:
    """One row per served model the change restarts: its file, every setting old -> new (``docs.ModelDoc``
    rows: an image as its tag when the repository stays; flags an upgrade renamed), and how it restarts
    (``rollouts``, by identity: the served models the change restarts). One whose edit changes no
    setting's value (a flag spelled out in full) has a row without cells."""
    rows = []
    documented = {doc.identity: doc for doc in models}
    for identity in list(documented) + [i for i in rollouts if i not in documented]:
        doc, found = documented.get(identity), rollouts.get(identity)
        cells = _cells(doc, renames) if doc is not None else []
        if found is None:
            continue
        rows.append({"name": clip(found.name), "path": found.path, "cells": cells,
                     "added": bool(doc is not None and doc.added), "restarts": found.restarts,
                     "outage": found.outage})
    return rows


def lint_groups(findings: list[Finding]) -> list[dict]:
    """Findings alike in severity, rule, message and remediation as one row with every place: the same
    default drift reported on 36 served models is one row "×36". Errors first, then warnings, then notes."""
    groups: dict[tuple, dict] = {}
    for finding in sorted(findings, key=lambda f: (SEVERITY_ORDER.get(f.severity, 3), f.code, f.location.path,
                                                     f.location.line)):
        key = (finding.severity, finding.code, finding.message, finding.remediation)
        group = groups.setdefault(key, {"severity": finding.severity, "code": finding.code, "rule": finding.rule,
                                        "message": clip(finding.message), "remediation": clip(finding.remediation),
                                        "places": [], "more": 0})
        group["places"].append({"where": f"{finding.location.path}:{finding.location.line}",
                                "model": clip(finding.model)})
    return list(groups.values())
