"""The summary comment's layout, as a reviewer reads it (``templates/summary_comment.md.j2`` renders it).

From the top:

1. the headline says what blocks the merge (findings at or above ``fail-on``), how many new findings a
   suppression the pull request adds silences, and the engine upgrade;
2. **Must fix**: every error, one row per cause (``causes``) with its first place linked and the others
   folded; an error on a line the pull request does not change is here too (a flag the new engine
   version removed is an error of the change even on an unchanged line), and nothing ever cuts it;
3. **Silenced by this PR**: findings the change introduces that a suppression it adds silences
   (``LintResult.silenced``: ``suppressions.Silenced``), each with the suppression's place and reason
   (``suppressions.silenced_report``, what ``lint --base`` prints too);
4. **Engine upgrade**: one section per (engine, from, to) (``bodies.drift_sections``); the CFG403 findings
   it summarises are not repeated as rows;
5. warnings, then notes, one row per cause;
6. **Supply chain**: CFG301/302/303 as counts with the places folded;
7. **Capacity**: a before/after table only for served models whose settings or numbers moved, one row
   each for added served models whose numbers are known; the models whose capacity did not move named
   in one line; those whose numbers are unknown in one line naming what is missing and how to state it;
   a chart only where the before and after curves differ (else it repeats the table).

A body over GitHub's limit is cut by ``cuts``, least important first: charts, long place lists, notes,
capacity tables, warnings, then the folded detail of the sections; an error row is never cut, and the
summary says what it left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator
from urllib.parse import quote

from ..model import SEVERITY_RANK, Finding
from .. import __version__
from ..templating import Overrides, render, trusted
from ..suppressions import silenced_report
from .bodies import (MAX_COMMENT, SUMMARY_MARKER, chart, clip, doc_url, drift_sections, fingerprint_id, finding_row,
                     fit, gist, model_rows)
from .causes import Cause, group, supply_chain_counts

PLACEMENTS = {  # fingerprint placement -> what the summary's comment column says, most useful first
    "inline": "inline", "refused": "here only (GitHub refused the comment)",
    "limit": "here only (comment limit)", "outside": "not in the diff", "summary": "summarised here"}
ALL = 10 ** 9  # "no limit" for a count of rows or places


@dataclass(frozen=True)
class ReviewSettings:
    """What the configuration and the command line decide about the review's bodies."""

    fail_on: str = "error"
    supply_chain: str = "summary"  # summary | inline (``review: {supply-chain: ...}``)
    baseline: str | None = None  # the baseline file in use (its name)
    baseline_size: int = 0  # findings it records
    profile: str | None = None  # the configuration's ``profile``, when it sets one

    @classmethod
    def of(cls, config, fail_on: str | None = None, baseline: tuple[str, int] | None = None) -> "ReviewSettings":
        review = config.get("review") or {}
        name, size = baseline or (None, 0)
        return cls(fail_on or config.get("fail-on", "error"), review.get("supply-chain", "summary"), name, size,
                   config.get("profile"))


@dataclass(frozen=True)
class Cut:
    """What a summary leaves out to fit GitHub's limit; ``cuts`` tightens it one step at a time."""

    charts: bool = True
    places: int = ALL  # places listed per warning or note row
    notes: int = ALL  # note rows kept
    capacity: bool = True  # capacity tables (the line naming the models stays)
    warnings: int = ALL  # warning rows kept
    details: bool = True  # folded detail of the upgrade and supply-chain sections
    error_places: int = ALL  # places listed per error row (the row itself always stays)
    error_text: int = ALL  # characters of an error row's message and fix (hundreds of distinct errors)


def cuts(notes: int, warnings: int) -> Iterator[Cut]:
    """Ever tighter cuts: charts, long place lists, notes (halved), capacity tables, warnings (halved),
    section detail, the places listed under each error, and last the length of each error's text."""
    cut = Cut()
    yield cut
    cut = replace(cut, charts=False)
    yield cut
    cut = replace(cut, places=20)
    yield cut
    while cut.notes:
        cut = replace(cut, notes=min(cut.notes, notes) // 2)
        yield cut
    cut = replace(cut, capacity=False)
    yield cut
    while cut.warnings:
        cut = replace(cut, warnings=min(cut.warnings, warnings) // 2)
        yield cut
    cut = replace(cut, places=5, details=False)
    yield cut
    cut = replace(cut, error_places=3)
    yield cut
    yield replace(cut, error_text=200)


class Layout:
    """Everything the summary shows, computed once; ``context(cut)`` is what the template renders."""

    def __init__(self, result, changes: list, outcome, *, web_url: str | None, head: str | None,
                 settings: ReviewSettings, whole: bool):
        self.settings, self.whole = settings, whole
        placement = outcome.placement if outcome is not None else {}
        self.show_placement = bool(placement) and not (outcome is not None and outcome.degraded)
        self._placement = placement if self.show_placement else {}
        self._link = _linker(web_url, head)
        causes = group(result.active())
        self.upgrades = drift_sections(changes)
        drift = [c for c in causes if c.code == "CFG403" and c.severity != "error" and self.upgrades]
        self.errors = [c for c in causes if c.severity == "error"]
        self.supply = [c for c in causes if c.supply_chain]
        self.others = [c for c in causes if c.severity != "error" and c not in drift and not c.supply_chain]
        self.drift_counts = _severity_counts([f for c in drift for f in c.findings])
        silenced = list(result.silenced)
        self.silenced_report = silenced_report(silenced, "this PR")
        self.silenced = group([s.finding for s in silenced])
        self._silenced_by = {id(s.finding): row["suppression"]
                             for s, row in zip(silenced, self.silenced_report["rows"] if silenced else [])}
        self.capacity = capacity(changes)
        self.active = result.active()

    def counts(self) -> tuple[int, int]:
        """Note and warning rows, for ``cuts``."""
        return (sum(1 for c in self.others if c.severity == "note"),
                sum(1 for c in self.others if c.severity == "warning"))

    def row(self, cause: Cause, cap: int) -> dict:
        """One cause as a table row: the first place linked, every place (up to ``cap``) folded below."""
        first = cause.first
        places = [{"path": clip(f.location.path), "line": f.location.line, "link": self._link(f),
                   "message": gist(f, first)}
                  for f in cause.findings]
        shown = places[:cap] if len(places) > 1 else []
        seen = {self._placement.get(fingerprint_id(f)) for f in cause.findings}
        where = ", ".join(text for key, text in PLACEMENTS.items() if key in seen) or None
        return {**finding_row(first, where, self._link(first)), "count": len(places), "counted": cause.counted(),
                "places": shown, "more": len(places) - len(shown) if shown else 0}

    def context(self, cut: Cut) -> dict:
        notes = [c for c in self.others if c.severity == "note"][:cut.notes]
        warnings = [c for c in self.others if c.severity == "warning"][:cut.warnings]
        rows = [self.row(c, cut.places) for c in warnings + notes]
        all_notes, all_warnings = self.counts()
        tables = self.capacity["tables"]
        dropped = {"charts": not cut.charts and any(t["chart"] for t in tables),
                   "notes": all_notes - len(notes), "warnings": all_warnings - len(warnings),
                   "capacity": 0 if cut.capacity else len(tables) + bool(self.capacity["added"]),
                   "places": cut.places < ALL or cut.error_places < ALL, "details": not cut.details,
                   "text": cut.error_text < ALL}
        return {
            "headline": headline(self.active, self.settings.fail_on, self.upgrades, self.whole,
                                 self.silenced_report["headline"] if self.silenced_report else None),
            "must_fix": [_shortened(self.row(c, cut.error_places), cut.error_text) for c in self.errors],
            "must_fix_places": sum(len(c.findings) for c in self.errors),
            "outside_errors": sum(1 for c in self.errors for f in c.findings
                                  if self._placement.get(fingerprint_id(f)) == "outside"),
            "silenced": [{**self.row(c, cut.places), "reason": self._suppression(c.first)} for c in self.silenced],
            "upgrades": [_section(s, cut.details) for s in self.upgrades],
            "drift_counts": self.drift_counts,
            "rows": rows,
            "supply": self._supply(cut),
            "models": [dict(t, chart=t["chart"] if cut.charts else None) for t in tables] if cut.capacity else [],
            "added_capacity": self.capacity["added"] if cut.capacity else [],
            "unchanged_capacity": self.capacity["unchanged"],
            "unknown_capacity": self.capacity["unknown"],
            "dropped": dropped if any(dropped.values()) else None,
            "show_placement": self.show_placement,
            "settings": self.settings,
        }

    def _suppression(self, finding: Finding) -> str:
        """Where the suppression that silences ``finding`` is written, what it names and its reason."""
        by = self._silenced_by[id(finding)]
        return clip(f"{by['path']}:{by['line']} {by['codes']}: {by['reason'] or '(no reason given)'}")

    def _supply(self, cut: Cut) -> dict | None:
        """The supply-chain section: counts per rule, and the places by file (one line each when shown)."""
        if not self.supply:
            return None
        files: dict[str, list[dict]] = {}
        for cause in self.supply:
            for f in cause.findings:
                files.setdefault(f.location.path, []).append({"code": f.code, "line": f.location.line,
                                                              "link": self._link(f)})
        severities = sorted({c.severity for c in self.supply}, key=lambda s: -SEVERITY_RANK[s])
        return {"counts": supply_chain_counts(self.supply), "severities": severities,
                "files": [{"path": clip(path), "places": sorted(places, key=lambda p: p["line"])}
                          for path, places in sorted(files.items())] if cut.details else [],
                "inline": self.settings.supply_chain == "inline",
                "codes": sorted({(c.code, c.first.rule, doc_url(c.first)) for c in self.supply})}


def _shortened(row: dict, limit: int) -> dict:
    """An error row whose message and fix are cut to ``limit`` characters, visibly (the row stays)."""
    for key in ("message", "remediation"):
        text = row[key]
        if isinstance(text, str) and len(text) > limit:
            row[key] = text[:limit] + " …"
    return row


def _linker(web_url: str | None, head: str | None) -> Callable[[Finding], str | None]:
    def link(finding: Finding) -> str | None:
        if not (web_url and head):
            return None
        return f"{web_url}/blob/{head}/{quote(finding.location.path)}#L{finding.location.line}"

    return link


def _severity_counts(findings: list[Finding]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "note": 0}
    for finding in findings:
        counts[finding.severity] += 1
    return counts


def headline(active: list[Finding], fail_on: str, upgrades: list[dict], whole: bool, silenced: str | None = None) -> str:
    """"2 errors block the merge · SGLang 0.5.5.post3 → 0.5.23 on 36 served models"; "no new findings";
    ``silenced`` ("1 new finding silenced by a suppression this PR adds") follows the findings."""
    def listed(findings: list[Finding]) -> str:
        counts = _severity_counts(findings)
        return " and ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items() if n)

    rank = SEVERITY_RANK.get(fail_on, len(SEVERITY_RANK) + 1)  # "never": nothing blocks
    blocking = [f for f in active if SEVERITY_RANK[f.severity] >= rank]
    if blocking:
        text = f"{listed(blocking)} {'blocks' if len(blocking) == 1 else 'block'} {'this run' if whole else 'the merge'}"
    elif active:
        text = f"{listed(active)}, none blocking (fail-on {fail_on})"
    else:
        text = "no findings" if whole else "no new findings"
    if silenced:
        text += f" · {silenced}"
    if len(upgrades) == 1:
        section = upgrades[0]
        count = len(section["models"])
        text += f" · {section['label']} on {count} served model{'s' if count != 1 else ''}"
    elif upgrades:
        text += f" · {len(upgrades)} engine upgrades"
    return text


def _section(section: dict, details: bool) -> dict:
    """A drift section as the summary shows it: ``groups`` (for PR bodies) left out, detail when it fits."""
    return {"label": section["label"], "old": section["old"], "new": section["new"], "models": section["models"],
            "files": section["files"], "rows": section["rows"], "notes": section["notes"],
            "unaffected": section["unaffected"] if details else [], "unaffected_count": len(section["unaffected"]),
            "details": details}


def capacity(changes: list) -> dict:
    """The capacity part of the summary: a before/after ``tables`` entry for each changed served model whose
    numbers or settings moved (the image aside: the upgrade section covers it), rows unknown on both sides
    left out; one ``added`` row per added or removed served model whose numbers are known; the names of
    the models whose capacity did not move (``unchanged``); the others grouped by what is missing
    (``unknown``), for one line."""
    out: dict = {"tables": [], "added": [], "unchanged": [], "unknown": {}}
    for change in changes:
        sides = [s for s in (change.before, change.after) if s is not None]
        known = any(s.pool_tokens is not None or s.concurrency is not None or s.needs is not None for s in sides)
        rows = [r for r in model_rows(change) if r["before"] is not None or r["after"] is not None]
        if change.before is None or change.after is None:
            if known:
                out["added"].append(_added_row(change, sides[0]))
            else:
                _unknown(out["unknown"], change)
        elif any(r["changed"] for r in rows if r["name"] != "image"):
            out["tables"].append({
                "name": clip(change.name), "path": clip(change.path), "added": False, "removed": False, "rows": rows,
                "missing": None if known else _missing(change.after), "chart": _telling(chart(change)),
                "overcommitted": change.after.overcommitted, "seqs": change.after.max_num_seqs,
                "concurrency": change.after.concurrency})
        elif known:
            out["unchanged"].append(clip(change.name))
        else:
            _unknown(out["unknown"], change)
    out["unknown"] = sorted(out["unknown"].values(), key=lambda e: -len(e["models"]))
    return out


def _telling(data: dict | None) -> dict | None:
    """The before/after chart when it tells more than the table: the curves differ by more than 5% somewhere
    (the same pool draws one curve twice); the flat max_num_seqs line only when it is within twice the
    curves' height, so it does not flatten them into the x-axis."""
    if data is None or all(abs(a - b) <= 0.05 * max(abs(b), 1e-9) for a, b in zip(data["after"], data["before"])):
        return None
    height = max(data["before"] + data["after"])
    if data["line"] and data["line"][0] > 2 * height:
        return dict(data, line=None, top=max(1, math.ceil(height * 1.1)))
    return data


def _added_row(change, side) -> dict:
    return {"name": clip(change.name), "path": clip(change.path), "removed": change.after is None,
            "max_model_len": side.max_model_len, "max_num_seqs": side.max_num_seqs, "pool": side.pool_tokens,
            "pool_source": side.pool_source, "concurrency": side.concurrency,
            "needs": side.needs.need_text if side.needs is not None else None}


def _unknown(groups: dict, change) -> None:
    missing = _missing(change.after or change.before)
    groups.setdefault(missing, {"missing": missing, "models": []})["models"].append(clip(change.name))


def _missing(side) -> str:
    """What keeps a served model's capacity unknown: the first reason the estimate gives, and the GPU
    when it is not stated either."""
    reasons = list(side.estimate.reasons) if side is not None and side.estimate is not None else []
    if not reasons:
        return "the KV pool could not be estimated"
    picked = [reasons[0]] + [r for r in reasons[1:] if r.startswith("GPU not stated")]
    return "; ".join(r.split(" (add a ", 1)[0] for r in picked)


def render_summary(result, changes: list, outcome, *, root: Overrides | Path | None = None,
                   head: str | None = None, base: str | None = None, web_url: str | None = None,
                   step: bool = False, whole: bool = False, config_changes: list[str] | None = None,
                   settings=None) -> str:
    """The summary comment (and step summary) body, laid out by ``summary.Layout``; cut by ``summary.cuts``
    (notes, then warnings, never an error) until it fits GitHub's comment size limit, saying what it left
    out. ``whole``: the result of linting the whole repository (push, schedule), not of a change;
    ``settings``: a ``summary.ReviewSettings`` (fail-on, supply-chain placement, baseline)."""

    settings = settings or ReviewSettings()
    layout = Layout(result, changes, outcome, web_url=web_url, head=head, settings=settings, whole=whole)
    fixed = {"marker": trusted(SUMMARY_MARKER), "step": step, "counts": result.counts(), "outcome": outcome,
             "config_changes": config_changes or [], "fixed": len(result.fixed), "head": (head or "")[:12],
             "base": (base or "")[:12], "version": __version__, "whole": whole}
    body = ""
    for cut in cuts(*layout.counts()):
        body = render("summary_comment.md.j2", root, **fixed, **layout.context(cut))
        if len(body) <= MAX_COMMENT:
            return body
    return fit(body)
