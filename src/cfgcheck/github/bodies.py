"""The bodies cfgcheck posts on a pull request: inline review comments, the summary comment, and the
hidden markers that find them again. Pure functions: nothing here talks to GitHub.

Values taken from linted files reach the templates raw and are escaped there (the ``md`` filter); here
they are cut at ``MAX_CELL`` characters with a visible note, and a summary that would pass GitHub's
65,536-character limit drops rows from the end of its tables, saying how many.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..model import Finding
from ..render import Overrides, render, trusted
from ..reporters.sarif import DOCS
from ..changes import KEY_SETTINGS
from ..drift import show
from ..capacity.concurrency_plot import mermaid_points
from .. import __version__

SUMMARY_MARKER = "<!-- cfgcheck:summary -->"
REVIEW_MARKER = "<!-- cfgcheck:review -->"
RESOLVED_MARKER = "<!-- cfgcheck:resolved -->"
FP_MARKER = re.compile(r"<!-- cfgcheck:fp=([0-9a-f]{40}) -->")
MAX_COMMENT = 60000  # GitHub refuses bodies over 65,536 characters; redaction and notes need a margin
MAX_CELL = 1000  # characters of one value from a linted file in a comment
TRUNCATED = " … (truncated)"


def clip(value: Any) -> Any:
    """A value from a linted file cut to ``MAX_CELL`` characters, visibly: one value cannot fill a comment."""
    if isinstance(value, str) and len(value) > MAX_CELL:
        return value[:MAX_CELL] + TRUNCATED
    return value


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


def upgrade_tables(changes: list) -> list[dict]:
    """One table per engine version change: flags in use it removes or renames, defaults that drift,
    env variables it stops reading (values raw; the template escapes them). Served models whose change
    brings the same rows (a Renovate bump of several manifests) share one table."""

    tables: dict[tuple, dict] = {}
    for change in changes:
        upgrade = getattr(change, "upgrade", None)
        if upgrade is None:
            continue
        rows = [{"kind": "flag removed", "what": clip(f.written), "before": "accepted",
                 "after": f"renamed to {f.successor}" if f.successor else "removed",
                 "where": f"{f.location.path}:{f.location.line}"} for f in upgrade.removed_flags]
        rows += [{"kind": "default" + (f" ({d.derived})" if d.derived else ""), "what": d.dest,
                  "before": show(d.old), "after": show(d.new), "where": None} for d in upgrade.drifts]
        rows += [{"kind": "env no longer read", "what": clip(e.name), "before": "read", "after": "ignored",
                  "where": f"{e.location.path}:{e.location.line}"} for e in upgrade.dropped_env]
        notes = [clip(n) for n in upgrade.notes]
        key = (upgrade.label, repr(rows), repr(notes))
        table = tables.setdefault(key, {"label": upgrade.label, "old": upgrade.old, "new": upgrade.new,
                                        "rows": rows, "notes": notes, "models": []})
        table["models"].append(clip(change.name))
    return list(tables.values())


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
                          resolved_in: str | None = None) -> str:
    return render("review_comment.md.j2", root, fp=fingerprint_id(finding), resolved_in=resolved_in,
                  **finding_row(finding, None, None),
                  fix=clip(finding.fix.description) if finding.fix else None).rstrip("\n") + "\n"


def resolve_body(body: str, sha: str) -> str:
    """An existing inline comment's body, marked resolved (kept because someone replied)."""
    markers = "".join(m.group(0) + "\n" for m in FP_MARKER.finditer(body))
    # the heading (severity, rule, served model) and the message: one struck-through line
    text = [line.strip() for line in body.splitlines() if line.strip() and not line.lstrip().startswith("<!--")]
    headline = " — ".join(text[:2])
    return f"{markers}{RESOLVED_MARKER}\n**Resolved in {sha}.** ~~{headline}~~\n"


def render_summary(result, changes: list, outcome, *, root: Overrides | Path | None = None,
                   head: str | None = None, base: str | None = None, web_url: str | None = None,
                   step: bool = False, whole: bool = False, config_changes: list[str] | None = None) -> str:
    """The summary comment (and step summary) body; shortened to fit GitHub's comment size limit.
    ``whole``: the result of linting the whole repository (push, schedule), not of a change."""

    counts = result.counts()
    active = result.active()
    placement = outcome.placement if outcome is not None else {}
    show_placement = bool(placement) and not (outcome is not None and outcome.degraded)
    rows = []
    for finding in active:
        link = None
        if web_url and head:
            link = f"{web_url}/blob/{head}/{quote(finding.location.path)}#L{finding.location.line}"
        rows.append(finding_row(finding, placement.get(fingerprint_id(finding)) if show_placement else None, link))
    models = [{"name": clip(c.name), "path": clip(c.path), "added": c.before is None, "removed": c.after is None,
               "rows": model_rows(c), "chart": chart(c),
               "overcommitted": c.after is not None and c.after.overcommitted,
               "seqs": c.after.max_num_seqs if c.after else None,
               "concurrency": c.after.concurrency if c.after else None} for c in changes]
    upgrades = upgrade_tables(changes)
    limit, model_limit = len(rows), len(models)
    while True:  # halve the rows of both tables until the body fits; the template says how many are left out
        body = render("summary_comment.md.j2", root, marker=trusted(SUMMARY_MARKER), step=step, counts=counts,
                      config_changes=config_changes or [],
                      findings=rows[:limit], hidden=len(rows) - limit, fixed=len(result.fixed),
                      models=models[:model_limit], hidden_models=len(models) - model_limit, outcome=outcome,
                      upgrades=upgrades[:max(model_limit, 1)],
                      show_placement=show_placement, head=(head or "")[:12], base=(base or "")[:12],
                      version=__version__, whole=whole)
        if len(body) <= MAX_COMMENT or limit == model_limit == 0:
            return fit(body)
        limit, model_limit = limit // 2, model_limit // 2
