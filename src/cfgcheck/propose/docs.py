"""What a proposal's documents are built from: the before/after settings and capacity arithmetic of
each changed served model (``ModelDoc``), the lint result in grouped rows, ADR numbering and dates, and
the template filters. ``documents.py`` assembles the ADR and the PR body from them; wording lives in the
templates (``templates/*.md.j2``, overridable in ``.cfgcheck/templates/``).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..changes import ModelChange
from ..lint import LintResult
from ..model import ServedModel
from ..templating import Overrides, format_number, render as render_template
from ..github.proposals import proposals_of, read_marker
from ..reporters.markdown import escape
from .. import capacity
from .tables import lint_groups

_ADR_NAME = re.compile(r"^(\d{4})-.*\.md$")
# [ \t], not \s, before "Date:": \s* at each line start ran on across the blank lines below it, and two
# of them around [-*]? made a search cubic (2,000 blank lines took 84 s).
_DATE = re.compile(r"^[ \t]*(?:[-*][ \t]*)?Date:\s*(\d{4}-\d{2}-\d{2})", re.M)


def slug(text: str, limit: int = 60) -> str:
    value = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return value[:limit].rstrip("-") or "change"


def next_adr_number(folder: Path) -> int:
    numbers = [int(m.group(1)) for p in folder.glob("*.md") if (m := _ADR_NAME.match(p.name))] if folder.is_dir() else []
    return max(numbers, default=0) + 1


def adr_history(text: str | None) -> list[dict]:
    return proposals_of(read_marker(text))


def adr_date(text: str | None) -> str | None:
    match = _DATE.search(text or "")
    return match.group(1) if match else None


@dataclass
class Row:
    setting: str
    before: Any
    after: Any


@dataclass
class ModelDoc:
    name: str
    path: str
    kind: str
    identity: str = ""
    engine: str = ""
    rows: list[Row] = field(default_factory=list)
    pool_tokens: int | None = None
    pool_source: str = "unknown"
    pool_evidence: str | None = None
    len_before: int | None = None
    len_after: int | None = None
    seqs_before: int | None = None
    seqs_after: int | None = None
    concurrency_before: float | None = None
    concurrency_after: float | None = None
    # the GPU is not stated: device memory one GPU needs for one full-length request, and the smallest that fits
    needs_before: str | None = None
    needs_after: str | None = None
    fit_after: str | None = None
    added: bool = False

    @property
    def capacity(self) -> bool:
        return self.concurrency_before is not None or self.concurrency_after is not None

    @property
    def capacity_changed(self) -> bool:
        """The capacity arithmetic is known and the change moves it (an upgrade alone usually does not)."""
        return self.capacity and (self.added or (self.len_before, self.seqs_before, self.concurrency_before) !=
                                  (self.len_after, self.seqs_after, self.concurrency_after))

    @property
    def settings(self) -> list[str]:
        return [row.setting for row in self.rows]


def _display(value: Any) -> Any:
    return "(unset)" if value is None else value


def _rows(base: ServedModel | None, head: ServedModel) -> list[Row]:
    rows = []
    before_settings = base.settings if base is not None else {}
    names = list(dict.fromkeys(list(before_settings) + list(head.settings)))
    for name in names:
        old, new = before_settings.get(name), head.settings.get(name)
        old_value = old.value if old is not None else None
        new_value = new.value if new is not None else None
        if repr(old_value) != repr(new_value):
            rows.append(Row(name, _display(old_value), _display(new_value)))
    old_image = base.image.value if base is not None and base.image is not None else None
    new_image = head.image.value if head.image is not None else None
    if old_image != new_image:
        rows.insert(0, Row("image", _display(old_image), _display(new_image)))
    return rows


def model_docs(changes: list[ModelChange], head: list[ServedModel], base: list[ServedModel],
               config: dict) -> list[ModelDoc]:
    base_by_id = {m.identity: m for m in base}
    docs = []
    for change in changes:
        if change.after is None:
            continue
        model = next((m for m in head if m.name == change.name and m.path == change.path), None)
        if model is None:
            continue
        previous = base_by_id.get(model.identity)
        estimate = capacity.estimate(model, config)
        doc = ModelDoc(model.name, model.path, model.kind, model.identity, model.engine, _rows(previous, model),
                       added=previous is None)
        doc.pool_tokens, doc.pool_source = change.after.pool_tokens, change.after.pool_source
        doc.pool_evidence = estimate.kv_pool_evidence
        doc.len_after, doc.seqs_after, doc.concurrency_after = (change.after.max_model_len, change.after.max_num_seqs,
                                                               change.after.concurrency)
        if change.after.needs is not None:
            doc.needs_after, doc.fit_after = change.after.needs.need_text, change.after.needs.smallest_fit
        if change.before is not None:
            doc.len_before, doc.seqs_before = change.before.max_model_len, change.before.max_num_seqs
            doc.concurrency_before = change.before.concurrency
            doc.needs_before = change.before.needs.need_text if change.before.needs is not None else None
        if doc.rows or doc.pool_tokens is not None:
            docs.append(doc)
    return docs


def lint_summary(result: LintResult, allowed: bool) -> dict[str, Any]:
    """The re-lint of the proposal as counts and grouped rows (``tables.lint_groups``)."""
    active = result.active()
    counts = {"error": 0, "warning": 0, "note": 0}
    for finding in active:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return {
        "errors": counts["error"], "warnings": counts["warning"], "notes": counts["note"],
        "groups": lint_groups(active), "hidden": {}, "fixed": sorted({f.code for f in result.fixed}),
        "allowed": allowed,
    }


def _code(value: Any) -> str:
    """A value as an inline code span (backticks and line breaks removed, so it cannot break out)."""

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = format_number(value) if isinstance(value, int) else repr(value)
    else:
        text = str(value)
    text = text.replace("`", "'").replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    return f"`{text}`"


def _prose(value: Any) -> str:
    """Free text (a title, the why of a proposal) line by line through the Markdown escape: no HTML,
    no comment end, no mention, the line breaks kept."""

    return "\n".join(escape(line) for line in str(value or "").splitlines())


def _times(value: Any) -> str:
    return "?" if value is None else f"{value:.2f}x"


def relative_link(from_file: str, to_file: str) -> str:
    return Path(os.path.relpath(to_file, os.path.dirname(from_file) or ".")).as_posix()


def _spans(value: Any) -> str:
    """cfgcheck's own text with `code spans`: the prose escaped, each span through ``_code``."""
    parts = str(value or "").split("`")
    return "".join(_code(part) if index % 2 else escape(part) for index, part in enumerate(parts))


def render(overrides: Overrides | None, template: str, **context: Any) -> str:
    return render_template(template, overrides, filters={"code": _code, "times": _times, "prose": _prose,
                                                         "spans": _spans}, **context)


def today() -> str:
    return os.environ.get("CFGCHECK_DATE") or _dt.date.today().isoformat()
