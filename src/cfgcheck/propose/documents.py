"""A proposal's ADR and pull-request body, assembled from the re-lint of the edited tree: one table of
the changed served models, one drift table per engine version pair and set of drifted defaults, the
grouped lint result, rollback and success criteria (``board``), the governance checklist's facts, and
a final fit (``fit``) that keeps the body within GitHub's limit and says what it folded.

The ADR is written into the worktree (never through a link); the body is returned for the pull request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..changes import model_changes
from ..github.proposals import marker
from ..templating import Overrides
from . import board, docs, files
from .files import read_bytes, write_bytes
from .fit import LIMIT, Fold, fit
from .rollout import rollout
from .tables import change_rows, drift_groups, grouped

DEFAULT_ADR_DIR = "docs/adr"
MAX_LISTED_CHANGES = 10  # a proposal's change specs above this are folded under a summary line
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BLANK_LINES = re.compile(r"\n(?:[ \t]*\n){2,}")


@dataclass
class Documents:
    title: str
    body: str
    history: list[dict]
    adr_path: str | None = None
    adr_text: str | None = None
    changed_files: list[str] = field(default_factory=list)


def one_line(text: Any) -> str:
    """Text for a one-line field (commit subject, pull request title): control characters and line
    breaks become spaces."""
    return " ".join(_CONTROL.sub(" ", str(text or "")).split())


def title_of(history: list[dict]) -> str:
    first = one_line(history[0].get("title")) or "Serving configuration change"
    return first if len(history) == 1 else f"{first} (+{len(history) - 1} more)"


def read_adr(tree, since: str, adr_dir: str) -> tuple[str | None, str | None]:
    """The ADR this proposal's branch added (path and text), read without following a link."""
    ours = [p for p in tree.added_files(since, adr_dir) if docs._ADR_NAME.match(Path(p).name)]
    if not ours:
        return None, None
    return ours[0], read_bytes(tree.root, ours[0]).decode("utf-8", "replace")


def history(ctx, existing_adr: str | None) -> list[dict]:
    """Every proposal this pull request carries, the new one last."""
    work = ctx.work
    found = docs.adr_history(existing_adr) or (ctx.existing.proposals if ctx.existing is not None else [])
    if ctx.proposal is None:
        entry = {"title": "Apply cfgcheck's mechanical fixes (" + ", ".join(work.fixed_codes) + ")",
                 "why": "These findings have mechanical fixes that keep the engine's behaviour: "
                        "the flags are written out in full.", "changes": work.specs, "fix": True}
    else:
        entry = {"title": ctx.proposal.title, "why": ctx.proposal.why, "changes": work.specs}
    if entry not in found:
        found.append(entry)
    return found


def upgrade_context(report: dict | None) -> dict | None:
    """``cfgcheck upgrade``'s plan for the documents: served models not moved (grouped by reason), flags
    renamed (by identity, for the change table), removed flags left, notes (grouped by text)."""
    if report is None:
        return None
    models = report["models"]
    skipped = grouped((m["skipped"], m["name"]) for m in models if m["skipped"])
    notes = grouped((n, m["name"]) for m in models if not m["skipped"]
                    for n in ([m["digest_note"]] if m["digest_note"] else []) + m["notes"])
    return {"target": report["target"], "renamed": {m["identity"]: m["renamed"] for m in models if m["renamed"]},
            "unrewritten": [dict(r, name=m["name"], path=m["path"]) for m in models for r in m["unrewritten"]],
            "skipped": [{"reason": key, "models": names} for key, names in skipped],
            "notes": [{"text": key, "models": names} for key, names in notes]}


def facts(models: list, rows: list[dict], fix_only: bool, upgrade: dict, outcome: dict) -> dict[str, Any]:
    """What changed, for the governance checklist to choose its items by (``upgrade``: the release
    notes, drift groups and removed flags; ``outcome``: rollouts, explanations, lint)."""
    changed = {row.setting for m in models for row in m.rows}
    raised = [m for m in models if None not in (m.seqs_before, m.seqs_after) and m.seqs_after > m.seqs_before]
    capped = [m for m in models if None not in (m.len_before, m.len_after) and m.len_after < m.len_before]
    rollouts = list(outcome["rollouts"].values())
    moved = [m.name for m in models if any(r.setting == "image" for r in m.rows)]
    return {
        "fix_only": fix_only,
        "seqs_raised": raised,
        "context_capped": capped,
        "cap_with_raise": [m for m in raised if m in capped],
        "raise_without_cap": [m for m in raised if m not in capped],
        "performance": not fix_only and not upgrade["planned"] and bool(changed - {"image", "model", "model_revision"}),
        "pool_measured": [m for m in models if m.pool_source == "measured"],
        "upgrade": bool(upgrade["release_notes"]),
        "release_notes": upgrade["release_notes"],
        "drift": [g for g in upgrade["drift_groups"] if g["drifts"]],
        "unrewritten": upgrade["unrewritten"],
        "canary": moved[0] if len(moved) > 1 else None,
        "image_changed": "image" in changed,
        "model_changed": bool({"model", "model_revision"} & changed),
        "outage": [{"name": r.name, "restarts": r.restarts} for r in rollouts if r.outage],
        "free_gpus": [{"name": r.name, "gpus": r.needs_free_gpus} for r in rollouts if r.needs_free_gpus],
        "strategy_unknown": [r.name for r in rollouts if r.strategy is None],
        "explanations": [e for e in outcome["explanations"] if e.action == "flagged"],
        "changed": sorted(changed),
        "rows": len(rows),
    }


def _names(items: list) -> list:
    """Each item's list of served models emptied, its length kept as ``count``."""
    return [dict(item, count=len(item["models"]), models=[]) for item in items]


def _fold_places(c: dict) -> dict | None:
    groups = c["lint"]["groups"]
    if all(len(g["places"]) <= 1 for g in groups):
        return None
    return dict(c, lint=dict(c["lint"], groups=[dict(g, places=g["places"][:1], more=len(g["places"]) - 1)
                                                for g in groups]))


def _fold_model_lists(c: dict) -> dict | None:
    if not any(g["models"] for g in c["drift_groups"] + c["success"]) and \
            not any(p["models"] for p in c["rollback"]["previous"] + c["rollback"]["recovery"]):
        return None
    rollback = dict(c["rollback"], previous=_names(c["rollback"]["previous"]), recovery=_names(c["rollback"]["recovery"]))
    return dict(c, drift_groups=_names(c["drift_groups"]), success=_names(c["success"]), rollback=rollback)


def _fold_specs(c: dict) -> dict | None:
    if not any(p["changes"] for p in c["proposals"]):
        return None
    return dict(c, proposals=[dict(p, count=len(p["changes"]), changes=[]) for p in c["proposals"]])


def _fold_severity(severity: str):
    def fold(c: dict) -> dict | None:
        kept = [g for g in c["lint"]["groups"] if g["severity"] != severity]
        if len(kept) == len(c["lint"]["groups"]):
            return None
        hidden = dict(c["lint"]["hidden"], **{severity: len(c["lint"]["groups"]) - len(kept)})
        return dict(c, lint=dict(c["lint"], groups=kept, hidden=hidden))
    return fold


def _halve(key: str, hidden: str):
    def fold(c: dict) -> dict | None:
        rows = c[key]
        if len(rows) <= 1:
            return None
        keep = len(rows) // 2
        return dict(c, **{key: rows[:keep], hidden: c.get(hidden, 0) + len(rows) - keep})
    return fold


def _fold_upgrade_lists(c: dict) -> dict | None:
    upgrade = c["upgrade"]
    if upgrade is None or not any(g["models"] for g in upgrade["skipped"] + upgrade["notes"]):
        return None
    return dict(c, upgrade=dict(upgrade, skipped=_names(upgrade["skipped"]), notes=_names(upgrade["notes"])))


# Least informative first; lint errors are never folded.
FOLDS = [
    Fold("the places of repeated findings (the first of each kept)", _fold_places),
    Fold("the lists of served models in grouped tables (their counts kept)", _fold_model_lists),
    Fold("the upgrade's lists of served models not moved and of notes (their counts kept)", _fold_upgrade_lists),
    Fold("the change list of each proposal (the table of changes has them)", _fold_specs),
    Fold("lint notes (their count kept)", _fold_severity("note")),
    Fold("lint warnings (their count kept)", _fold_severity("warning")),
    Fold("rows of the table of changes (the diff has every file)", _halve("changes", "hidden_changes")),
    Fold("the list of files changed (the diff has it)", _halve("files", "hidden_files")),
]


def body_marker(data: dict, limit: int = LIMIT) -> str:
    """The hidden marker of the body within a quarter of ``limit``: the change specs of the proposals
    it records go first (titles and reasons stay), then served models past what fits (a later proposal
    for one of those opens a pull request of its own)."""
    text = marker(data)
    if len(text) > limit // 4:
        data = dict(data, proposals=[dict(p, changes=[]) for p in data.get("proposals", [])])
        text = marker(data)
    models = list(data.get("models", []))
    while len(text) > limit // 4 and models:
        models = models[:len(models) // 2]
        text = marker(dict(data, models=models))
    return text


def _adr(tree, adr_dir: str, title: str, hist: list[dict], path: str | None) -> dict | None:
    """The ADR's path, number and title: the one the branch added, or the next free number."""
    if path is None and any(not p.get("fix") for p in hist):
        path = f"{adr_dir}/{docs.next_adr_number(tree.root / adr_dir):04d}-{docs.slug(title)}.md"
    if path is None:
        return None
    return {"path": path, "number": Path(path).name[:4], "title": title}


def _parts(result, settings: dict, ctx, upgrade_report: dict | None) -> dict:
    """The tables and facts of the documents, from the re-lint ``result`` of the edited tree."""
    changes = model_changes(result.models, result.base_models, settings)
    models = docs.model_docs(changes, result.models, result.base_models, settings)
    served = {m.identity: m for m in result.models}
    upgrade = upgrade_context(upgrade_report)
    renames = upgrade["renamed"] if upgrade else {}
    for doc in models:  # a renamed flag is one "flag old -> new" entry, not a setting gone and one added
        renamed = {r[end].lstrip("-").replace("-", "_") for r in renames.get(doc.identity, []) for end in ("from", "to")}
        doc.rows = [row for row in doc.rows if row.setting not in renamed]
    restarted = [m.identity for m in models if m.rows or m.identity in renames] + list(ctx.work.identities)
    rollouts = {i: rollout(served[i]) for i in dict.fromkeys(restarted) if i in served}
    rows = change_rows(models, rollouts, renames)
    groups = [{"engine": g.engine, "label": g.label, "old": g.old, "new": g.new, "drifts": g.drifts,
               "models": g.models, "count": len(g.models), "unaffected": g.unaffected} for g in drift_groups(changes)]
    notes = board.release_notes(changes)
    return {"models": models, "rollouts": rollouts, "upgrade": upgrade, "renames": renames, "rows": rows,
            "drift_groups": groups, "release_notes": notes,
            "engines": {m.identity: served[m.identity].engine for m in models if m.identity in served},
            "explanations": ctx.work.explanations}


def _context(parts: dict, ctx, hist: list[dict], title: str, adr: dict | None, lint: dict, link, date: str) -> dict:
    models, rollouts, upgrade = parts["models"], parts["rollouts"], parts["upgrade"]
    fix_only = all(p.get("fix") for p in hist)
    checklist = facts(models, parts["rows"], fix_only, {"release_notes": parts["release_notes"],
                      "drift_groups": parts["drift_groups"], "unrewritten": upgrade["unrewritten"] if upgrade else [],
                      "planned": upgrade is not None},
                      {"rollouts": rollouts, "explanations": parts["explanations"]})
    why = "\n".join(str(p.get("why") or "") for p in hist)
    changed_files = sorted({f.path for f in ctx.work.files} | {m.path for m in models})
    return dict(
        title=title, proposals=[dict(p, count=len(p["changes"])) for p in hist], models=models,
        changes=parts["rows"], hidden_changes=0, drift_groups=parts["drift_groups"],
        release_notes=parts["release_notes"], lint=lint, facts=checklist, adr=adr,
        rollback=board.rollback(models, rollouts, title, adr, parts["renames"]),
        success=board.success_criteria(models, parts["engines"], why, checklist["upgrade"], checklist["canary"]),
        explanations=parts["explanations"],
        files=[{"path": p, "link": link(p), "relative": docs.relative_link(adr["path"] if adr else p, p)}
               for p in changed_files],
        hidden_files=0, base=ctx.base, branch=ctx.branch, date=date, fix=fix_only, upgrade=upgrade,
        listed=MAX_LISTED_CHANGES, limit=LIMIT, folded=[], total=len(parts["rows"]))


def build(tree, config, ctx, result, allow_findings: bool, upgrade_report: dict | None) -> Documents:
    """The ADR (written into the worktree) and the pull request body of the proposal in ``ctx``."""
    adr_dir = "/".join(files.parts(str(config.get("adr_dir") or DEFAULT_ADR_DIR)))
    adr_path, existing_adr = read_adr(tree, ctx.lint_base, adr_dir)
    hist = history(ctx, existing_adr)
    title = title_of(hist)
    adr = _adr(tree, adr_dir, title, hist, adr_path)
    html_url = ctx.hub.html_url() if ctx.hub is not None else None

    def link(path: str) -> str:
        return f"{html_url}/blob/{ctx.branch}/{path}" if html_url else path

    if adr is not None:
        adr["link"] = link(adr["path"])
    parts = _parts(result, config.as_dict(), ctx, upgrade_report)
    context = _context(parts, ctx, hist, title, adr, docs.lint_summary(result, allow_findings), link,
                       docs.adr_date(existing_adr) or docs.today())
    overrides = Overrides(tree.root, ctx.base_sha)

    def render(template: str):  # the runs of blank lines that template blocks leave become one
        return lambda c: _BLANK_LINES.sub("\n\n", docs.render(overrides, template, **c)).strip("\n") + "\n"

    documents = Documents(title, "", hist, adr["path"] if adr else None,
                          changed_files=[f["path"] for f in context["files"]])
    if adr is not None:
        # a file, not a body: the marker it keeps for the next proposal does not count against the limit
        tail = "\n" + marker({"proposals": hist}) + "\n"
        documents.adr_text = fit(render("adr.md.j2"), context, FOLDS, tail, LIMIT + len(tail))
        write_bytes(tree.root, adr["path"], documents.adr_text.encode("utf-8"))
    existing_models = ctx.existing.models if ctx.existing is not None else []
    tail = body_marker({"models": sorted(set(ctx.work.identities) | set(existing_models)), "branch": ctx.branch,
                        "adr": documents.adr_path, "proposals": hist}, LIMIT)
    documents.body = fit(render("pr_body.md.j2"), context, FOLDS, "\n" + tail + "\n", LIMIT)
    return documents
