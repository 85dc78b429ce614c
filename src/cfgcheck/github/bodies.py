"""The bodies cfgcheck posts on a pull request: inline review comments, the summary comment, and the
hidden markers that find them again. Pure functions: nothing here talks to GitHub.

Values taken from linted files reach the templates raw and are escaped there (the ``md`` filter); here
they are cut at ``MAX_CELL`` characters with a visible note, and a summary that would pass GitHub's
65,536-character limit is cut by severity (``summary.cuts``: notes, then warnings, never an error),
saying what it left out. ``drift_sections`` groups an engine upgrade's drifted defaults for the review
summary and for the ``upgrade``/``propose`` pull-request bodies alike.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

from ..model import Finding
from ..templating import Overrides, render, trusted
from ..reporters.sarif import DOCS
from ..changes import KEY_SETTINGS
from ..drift import catalog_drifts, show
from ..engines.catalog import catalog_for
from ..capacity.concurrency_plot import mermaid_points

SUMMARY_MARKER = "<!-- cfgcheck:summary -->"
REVIEW_MARKER = "<!-- cfgcheck:review -->"
RESOLVED_MARKER = "<!-- cfgcheck:resolved -->"
FP_MARKER = re.compile(r"<!-- cfgcheck:fp=([0-9a-f]{40}) -->")
MAX_COMMENT = 60000  # GitHub refuses bodies over 65,536 characters; redaction and notes need a margin
MAX_CELL = 1000  # characters of one value from a linted file in a comment
MAX_PLACES = 30  # other places of a cause listed in one inline comment
MAX_GIST = 120  # characters of a place's own message listed under its cause
TRUNCATED = " … (truncated)"


def clip(value: Any) -> Any:
    """A value from a linted file cut to ``MAX_CELL`` characters, visibly: one value cannot fill a comment."""
    if isinstance(value, str) and len(value) > MAX_CELL:
        return value[:MAX_CELL] + TRUNCATED
    return value


def gist(finding: Finding, first: Finding) -> str | None:
    """A place's own message beside its cause's first, cut to ``MAX_GIST`` characters (the head of a message
    says what differs: the flag, the model); None when it is the same message."""
    if finding.message == first.message:
        return None
    return finding.message if len(finding.message) <= MAX_GIST else finding.message[:MAX_GIST] + " …"


def fit(body: str) -> str:
    """``body`` within GitHub's size limit; past it (an override template), cut with a visible note."""
    if len(body) <= MAX_COMMENT:
        return body
    return body[:MAX_COMMENT] + f"\n\n… (truncated: over GitHub's limit of {MAX_COMMENT:,} characters)\n"


def fingerprint_id(finding: Finding) -> str:
    return hashlib.sha1(finding.fingerprint().encode("utf-8")).hexdigest()


def doc_url(finding: Finding) -> str:
    return f"{DOCS}#{finding.code.lower()}-{finding.rule}"


def chart_label(text: object) -> str:
    """Text safe inside a mermaid string: letters, digits and a few separators only."""
    return re.sub(r"[^A-Za-z0-9 ._:/+-]", "", str(text))[:60] or "model"


def _sides(change) -> tuple:
    return change.before, change.after


def model_rows(change) -> list[dict]:
    """Before/after rows of one changed served model (values raw; the template formats them)."""

    before, after = _sides(change)
    rows = []
    for name in KEY_SETTINGS:
        b = clip(before.settings.get(name)) if before else None
        a = clip(after.settings.get(name)) if after else None
        if b is None and a is None:
            continue
        rows.append({"name": name, "before": b, "after": a, "before_note": None, "after_note": None,
                     "changed": before is not None and after is not None and a != b})
    _replaced_rows(rows, getattr(change, "replaced", ()))
    pool_b = (before.pool_tokens, clip(before.pool_source)) if before else (None, None)
    pool_a = (after.pool_tokens, clip(after.pool_source)) if after else (None, None)
    rows.append({"name": "KV pool (tokens)", "before": pool_b[0], "after": pool_a[0], "before_note": pool_b[1],
                 "after_note": pool_a[1], "changed": bool(before and after and pool_a[0] != pool_b[0])})
    conc_b = before.concurrency if before else None
    conc_a = after.concurrency if after else None
    rows.append({"name": "pool-limited concurrency (at max_model_len)", "before": conc_b, "after": conc_a,
                 "before_note": None, "after_note": None,
                 "changed": bool(before and after and _rounded(conc_a) != _rounded(conc_b))})
    need_b, need_a = (before.needs if before else None), (after.needs if after else None)
    if need_b is not None or need_a is not None:  # the GPU is not stated: what one GPU needs instead of a pool
        rows.append({"name": "GPU memory needed (one full-length request; GPU not stated)",
                     "before": need_b.need_text if need_b else None, "after": need_a.need_text if need_a else None,
                     "before_note": f"smallest fit: {need_b.smallest_fit}" if need_b else None,
                     "after_note": f"smallest fit: {need_a.smallest_fit}" if need_a else None,
                     "changed": bool(need_b and need_a and need_a.one_request_bytes != need_b.one_request_bytes)})
    return rows


def _replaced_rows(rows: list[dict], replaced) -> None:
    """A setting the change removed shows the default that now applies: "32 -> engine default 160"."""
    by_name = {row["name"]: row for row in rows}
    for item in replaced:
        note = f"engine default: {item['how']}"
        row = by_name.get(item["name"])
        if row is None:
            row = {"name": item["name"], "before": clip(item["before"]), "before_note": None, "changed": True}
            rows.append(row)
        row.update(after=clip(item["default"]), after_note=clip(note), changed=True)


def drift_sections(changes: list) -> list[dict]:
    """The engine upgrades of a change, one section per (engine, from, to), for the review summary and the
    ``upgrade``/``propose`` pull-request bodies and ADRs (values raw: the templates escape them).

    A Renovate bump moves many served models from one version to the same other one; each model's
    ``ModelChange.upgrade`` (``drift.VersionChange``) lists the defaults that drift for it (CFG403 reads the
    same data), the flags it uses that the new version removes and the env variables it stops reading.
    A section holds:

    * ``engine``, ``label`` ("SGLang 0.5.5.post3 → 0.5.23"), ``old``, ``new``; ``models`` (names of the served
      models it moves) and ``files`` (how many files hold them);
    * ``groups``: the served models that share one set of drifted defaults, largest first, each
      ``{"drifts": [row], "models": [name]}``: one drift table per (engine, from, to, drifted-defaults set);
    * ``rows``: each removed flag, drifted default and dropped env variable once, with the ``models`` it
      matters for and, for flags and env, the places (``where``): one table for the whole section;
    * ``unaffected``: defaults the two versions change that matter for none of these models (they set
      them, or the feature is off for them), for one folded line;
    * ``notes``: what could not be compared, once each.

    A row is ``{"kind", "what", "flag", "before", "after", "models", "where"}`` (a drifted default's also
    ``how``: derived at start-up, or None).
    """

    sections: dict[tuple, dict] = {}
    for change in changes:
        upgrade = getattr(change, "upgrade", None)
        if upgrade is None:
            continue
        section = sections.setdefault((upgrade.engine, upgrade.old, upgrade.new), {
            "engine": upgrade.engine, "label": upgrade.label, "old": upgrade.old, "new": upgrade.new,
            "models": [], "paths": set(), "groups": {}, "rows": {}, "notes": []})
        name = clip(change.name)
        section["models"].append(name)
        section["paths"].add(change.path)
        # the defaults this model reads (drift.VersionChange.relevant), and those that matter only if a
        # feature its architecture would tell is on (undecided); the rest fold into ``unaffected``
        drifts = [{"kind": _drift_kind(d), "what": d.dest, "how": d.derived, "flag": d.flag,
                   "before": show(d.old), "after": show(d.new)} for d in _reads(upgrade)]
        same = tuple(sorted((d["what"], d["before"], d["after"]) for d in drifts))
        section["groups"].setdefault(same, {"drifts": drifts, "models": []})["models"].append(name)
        for item in _upgrade_items(upgrade, drifts):
            row = section["rows"].setdefault(item["key"], {**item["row"], "models": [], "where": []})
            row["models"].append(name)
            row["where"] += item["where"]
        section["notes"] += [n for n in map(clip, upgrade.notes) if n not in section["notes"]]
    return [_finish_section(section) for section in sections.values()]


def _reads(upgrade) -> list:
    """The drifted defaults a served model reads or may read (its feature undecided), in the change's order."""
    return [d for d in upgrade.drifts if getattr(d, "applies", True) is not False]


def _drift_kind(drift) -> str:
    """``default``, with how the engine derives it and, when the model's architecture is not known, the
    feature under which it matters (``drift.DefaultDrift.feature``)."""
    parts = [p for p in (drift.derived, f"only for {drift.feature}" if drift.applies is None else "") if p]
    return "default" + (f" ({'; '.join(parts)})" if parts else "")


def _upgrade_items(upgrade, drifts: list[dict]) -> list[dict]:
    """One served model's rows of its upgrade: removed flags, drifted defaults, env no longer read."""
    items = [{"key": ("flag", f.written, f.successor), "where": [f"{f.location.path}:{f.location.line}"],
              "row": {"kind": "flag removed", "what": clip(f.written), "flag": None, "before": "accepted",
                      "after": f"renamed to {f.successor}" if f.successor else "removed"}}
             for f in upgrade.removed_flags]
    items += [{"key": ("default", d["what"], d["before"], d["after"]), "where": [], "row": d} for d in drifts]
    items += [{"key": ("env", e.name), "where": [f"{e.location.path}:{e.location.line}"],
               "row": {"kind": "env no longer read", "what": clip(e.name), "flag": None, "before": "read",
                       "after": "ignored"}} for e in upgrade.dropped_env]
    return items


def _finish_section(section: dict) -> dict:
    """Groups largest first; the defaults these versions change that no row holds, as ``unaffected``."""

    rows = [{**row, "models": list(dict.fromkeys(row["models"]))} for row in section.pop("rows").values()]
    groups = sorted(section.pop("groups").values(), key=lambda g: -len(g["models"]))
    paths = section.pop("paths")
    old, new = catalog_for(section["engine"], section["old"]), catalog_for(section["engine"], section["new"])
    listed = {row["what"] for row in rows}
    unaffected = [] if old is None or new is None or old.version == new.version else [
        {"what": d.dest, "before": show(d.old), "after": show(d.new)}
        for d in catalog_drifts(old, new, set()) if d.dest not in listed]
    return {**section, "files": len(paths), "groups": groups, "rows": rows, "unaffected": unaffected}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def chart(change) -> dict | None:
    """The before/after curves of pool-limited concurrency against max_model_len (a Mermaid xychart,
    which GitHub renders in comments), when the change moves the concurrency or max_num_seqs."""

    before, after = _sides(change)
    if before is None or after is None or before.concurrency is None or after.concurrency is None:
        return None
    if _rounded(before.concurrency) == _rounded(after.concurrency) and before.max_num_seqs == after.max_num_seqs:
        return None
    points = mermaid_points(before.estimate, after.estimate)
    if points is None:
        return None
    seqs = after.max_num_seqs
    line = [seqs] * len(points["labels"]) if seqs else None
    top = max(points["before"] + points["after"] + ([seqs] if seqs else []))
    return {"title": chart_label(change.name), "labels": [re.sub(r"[^0-9Kk.*]", "", x) for x in points["labels"]],
            "before": points["before"], "after": points["after"], "line": line,
            "top": max(1, math.ceil(top * 1.1))}


def finding_row(finding: Finding, placement: str | None, link: str | None) -> dict:
    return {"severity": finding.severity, "code": finding.code, "rule": finding.rule,
            "path": clip(finding.location.path), "line": finding.location.line, "message": clip(finding.message),
            "remediation": clip(finding.remediation), "model": clip(finding.model), "doc_url": doc_url(finding),
            "placement": placement, "link": link}


def render_review_comment(finding: Finding, root: Overrides | Path | None = None,
                          resolved_in: str | None = None, *, others: list[Finding] | None = None,
                          covers: list[str] | None = None, suggestion=None, counted: str | None = None) -> str:
    """One inline comment for ``finding`` and the ``others`` of its cause (listed, folded, up to
    ``MAX_PLACES``; ``counted`` says how many, "×36 served models"); ``covers``: the fingerprint ids the comment stands for (its hidden markers, the
    finding's first), so a re-run knows each of them is commented; ``suggestion``: a
    ``suggestions.Suggestion`` for the commented lines, which replaces the prose about ``cfgcheck fix``."""
    others = others or []
    places = [{"path": clip(f.location.path), "line": f.location.line,
               "message": gist(f, finding)} for f in others[:MAX_PLACES]]
    fix = finding.fix.description if finding.fix is not None and suggestion is None else None
    return render("review_comment.md.j2", root, fp=fingerprint_id(finding), resolved_in=resolved_in,
                  **finding_row(finding, None, None), fix=clip(fix), fps=covers or [fingerprint_id(finding)],
                  places=places, more=len(others) - len(places), counted=counted,
                  suggestion=trusted(suggestion.block()) if suggestion is not None else None).rstrip("\n") + "\n"


def resolve_body(body: str, sha: str) -> str:
    """An existing inline comment's body, marked resolved (kept because someone replied)."""
    markers = "".join(m.group(0) + "\n" for m in FP_MARKER.finditer(body))
    # the heading (severity, rule, served model) and the message: one struck-through line
    text = [line.strip() for line in body.splitlines() if line.strip() and not line.lstrip().startswith("<!--")]
    headline = " — ".join(text[:2])
    return f"{markers}{RESOLVED_MARKER}\n**Resolved in {sha}.** ~~{headline}~~\n"
