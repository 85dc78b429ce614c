"""``cfgcheck review``: lint a pull request in diff mode and publish the result where reviewers read it.

One run, inside GitHub Actions or outside it with ``--pr/--base/--repo``:

1. lint the working tree against the pull request's base (the merge base with ``HEAD``, so a checkout of
   the PR head and of GitHub's merge commit give the same result);
2. write SARIF (``--sarif``), then through PyGithub post **one review** whose inline comments sit on
   changed lines (side RIGHT; a finding on a line outside the diff goes to the summary, since GitHub
   rejects a whole review for one such comment), clean up the bot's stale comments, and keep **one
   summary comment** found by its hidden marker and edited in place;
3. print workflow annotations, append the summary to ``$GITHUB_STEP_SUMMARY`` and write the step
   outputs to ``$GITHUB_OUTPUT``.

Idempotence: every inline comment carries ``<!-- cfgcheck:fp=<sha1 of the finding fingerprint> -->``
(rule, served model, setting: it survives line shifts). A re-run posts only fingerprints that have no
comment yet; a bot comment whose finding is gone is deleted, or, when someone replied to it, edited
to say it is resolved. The bot's comments are recognised by their marker, top-level (not a reply), and
by author when ``--bot-login`` is known: ``GET /user`` is not among the operations cfgcheck uses.

A token that cannot write (pull requests from forks get a read-only ``GITHUB_TOKEN``: 403 "Resource
not accessible by integration") degrades the run to annotations and the step summary, says so in one
line, and the exit code still follows ``--fail-on``. 401/404 and other API failures are one line and
exit 2. PyGithub and jinja2 are imported only here, inside functions.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..config import ConfigError
from ..model import Finding
from ..render import Overrides
from . import client
from .client import GitHubError, redact

SUMMARY_MARKER = "<!-- cfgcheck:summary -->"
REVIEW_MARKER = "<!-- cfgcheck:review -->"
RESOLVED_MARKER = "<!-- cfgcheck:resolved -->"
FP_MARKER = re.compile(r"<!-- cfgcheck:fp=([0-9a-f]{40}) -->")
MAX_INLINE = 50  # inline comments per run; the rest are listed in the summary
MAX_COMMENT = 60000  # GitHub refuses bodies over 65,536 characters
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class Options:
    paths: list[Path]
    config_file: Path | None = None
    base: str | None = None
    pr: int | None = None
    repo: str | None = None
    token: str | None = None
    api_url: str | None = None
    sarif: Path | None = None
    fail_on: str | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    comment: bool = True
    bot_login: str | None = None


@dataclass
class Context:
    """Where the run is: repository, pull request, base and head, from options and the Actions event."""

    repo: str | None
    pr: int | None
    base: str | None
    head: str | None
    config_changes: list[str] = field(default_factory=list)  # what the PR changes in cfgcheck's configuration


@dataclass
class Outcome:
    """What publishing did, for the summary and the log."""

    posted: int = 0  # new inline comments
    kept: int = 0  # inline comments of earlier runs still current
    deleted: int = 0
    resolved: int = 0
    summary: str = "skipped"  # created | edited | unchanged | skipped
    notice: str | None = None  # degraded mode or another reason comments are missing
    degraded: bool = False  # the token could not write
    placement: dict[str, str] = field(default_factory=dict)  # fingerprint id -> inline | outside | limit | stale


# ---------------------------------------------------------------- pure helpers


def fingerprint_id(finding: Finding) -> str:
    return hashlib.sha1(finding.fingerprint().encode("utf-8")).hexdigest()


def right_lines(patch: str | None) -> set[int]:
    """Head-side (RIGHT) line numbers a review comment may target in a GitHub file patch."""
    lines: set[int] = set()
    if not patch:
        return lines
    right = None
    for raw in patch.split("\n"):
        match = _HUNK.match(raw)
        if match:
            right = int(match.group(1))
            continue
        if right is None or raw.startswith("\\"):
            continue
        if raw.startswith("-"):
            continue
        lines.add(right)
        right += 1
    return lines


def context_from_env(options: Options) -> Context:
    event: dict[str, Any] = {}
    event_path = os.environ.get("GITHUB_EVENT_PATH")
    if event_path and Path(event_path).is_file():
        try:
            event = json.loads(Path(event_path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the event file GITHUB_EVENT_PATH: {exc}") from None
    pull = event.get("pull_request") if isinstance(event.get("pull_request"), dict) else {}
    number = options.pr or pull.get("number") or (event.get("number") if pull else None)
    repo = options.repo or os.environ.get("GITHUB_REPOSITORY") or (event.get("repository") or {}).get("full_name")
    base = options.base or (pull.get("base") or {}).get("sha")
    head = (pull.get("head") or {}).get("sha") if not options.pr or options.pr == pull.get("number") else None
    if repo is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise ConfigError(f"--repo must be OWNER/NAME, not '{repo}'")
    return Context(repo, int(number) if number else None, base, head)


def doc_url(finding: Finding) -> str:
    from ..reporters.sarif import DOCS

    return f"{DOCS}#{finding.code.lower()}-{finding.rule}"


def chart_label(text: object) -> str:
    """Text safe inside a mermaid string: letters, digits and a few separators only."""
    return re.sub(r"[^A-Za-z0-9 ._:/+-]", "", str(text))[:60] or "model"


def _sides(change) -> tuple:
    return change.before, change.after


def model_rows(change) -> list[dict]:
    """Before/after rows of one changed served model (values raw; the template formats them)."""
    from ..changes import KEY_SETTINGS

    before, after = _sides(change)
    rows = []
    for name in KEY_SETTINGS:
        b = before.settings.get(name) if before else None
        a = after.settings.get(name) if after else None
        if b is None and a is None:
            continue
        rows.append({"name": name, "before": b, "after": a, "before_note": None, "after_note": None,
                     "changed": before is not None and after is not None and a != b})
    pool_b = (before.pool_tokens, before.pool_source) if before else (None, None)
    pool_a = (after.pool_tokens, after.pool_source) if after else (None, None)
    rows.append({"name": "KV pool (tokens)", "before": pool_b[0], "after": pool_a[0], "before_note": pool_b[1],
                 "after_note": pool_a[1], "changed": bool(before and after and pool_a[0] != pool_b[0])})
    conc_b = before.concurrency if before else None
    conc_a = after.concurrency if after else None
    rows.append({"name": "pool-limited concurrency (at max_model_len)", "before": conc_b, "after": conc_a,
                 "before_note": None, "after_note": None,
                 "changed": bool(before and after and _rounded(conc_a) != _rounded(conc_b))})
    return rows


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def chart(change) -> dict | None:
    """A mermaid xychart of pool-limited concurrency before/after against max_num_seqs, when either moved."""
    before, after = _sides(change)
    if before is None or after is None or before.concurrency is None or after.concurrency is None:
        return None
    if _rounded(before.concurrency) == _rounded(after.concurrency) and before.max_num_seqs == after.max_num_seqs:
        return None
    bars = [round(before.concurrency, 2), round(after.concurrency, 2)]
    seqs = [before.max_num_seqs, after.max_num_seqs]
    line = seqs if None not in seqs else None
    top = max(bars + (line or []))
    return {"title": chart_label(change.name), "bars": bars, "line": line,
            "top": max(1, math.ceil(top * 1.1))}


def finding_row(finding: Finding, placement: str | None, link: str | None) -> dict:
    return {"severity": finding.severity, "code": finding.code, "rule": finding.rule, "path": finding.location.path,
            "line": finding.location.line, "message": finding.message, "remediation": finding.remediation,
            "model": finding.model, "doc_url": doc_url(finding), "placement": placement, "link": link}


def render_review_comment(finding: Finding, root: Overrides | Path | None = None, resolved_in: str | None = None) -> str:
    from ..render import render

    return render("review_comment.md.j2", root, fp=fingerprint_id(finding), resolved_in=resolved_in,
                  **finding_row(finding, None, None),
                  fix=finding.fix.description if finding.fix else None).rstrip("\n") + "\n"


def resolve_body(body: str, sha: str) -> str:
    """An existing inline comment's body, marked resolved (kept because someone replied)."""
    markers = "".join(m.group(0) + "\n" for m in FP_MARKER.finditer(body))
    # the heading (severity, rule, served model) and the message: one struck-through line
    text = [line.strip() for line in body.splitlines() if line.strip() and not line.lstrip().startswith("<!--")]
    headline = " — ".join(text[:2])
    return f"{markers}{RESOLVED_MARKER}\n**Resolved in {sha}.** ~~{headline}~~\n"


def render_summary(result, changes: list, outcome: Outcome | None, *, root: Overrides | Path | None = None,
                   head: str | None = None, base: str | None = None, web_url: str | None = None,
                   step: bool = False, config_changes: list[str] | None = None) -> str:
    """The summary comment (and step summary) body; shortened to fit GitHub's comment size limit."""
    from .. import __version__
    from ..render import render, trusted

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
    models = [{"name": c.name, "path": c.path, "added": c.before is None, "removed": c.after is None,
               "rows": model_rows(c), "chart": chart(c),
               "overcommitted": c.after is not None and c.after.overcommitted,
               "seqs": c.after.max_num_seqs if c.after else None,
               "concurrency": c.after.concurrency if c.after else None} for c in changes]
    limit = len(rows)
    while True:
        body = render("summary_comment.md.j2", root, marker=trusted(SUMMARY_MARKER), step=step, counts=counts,
                      config_changes=config_changes or [],
                      findings=rows[:limit], hidden=len(rows) - limit, fixed=len(result.fixed), models=models,
                      outcome=outcome, show_placement=show_placement, head=(head or "")[:12],
                      base=(base or "")[:12], version=__version__)
        if len(body) <= MAX_COMMENT or limit == 0:
            return body
        limit = limit // 2


# ---------------------------------------------------------------- publishing


class _Degraded(Exception):
    """The token cannot write: stop writing, keep the local outputs."""


class Publisher:
    """The GitHub side of a review run: one review, stale-comment cleanup, one summary comment."""

    def __init__(self, conn, ctx: Context, bot_login: str | None, root: Overrides | Path):
        self.conn, self.ctx, self.bot_login, self.root = conn, ctx, bot_login, root
        self.outcome = Outcome()
        self.repo = self.pull = None
        self.api_head: str | None = None
        self.web_url: str | None = None

    # -- calls

    def _read(self, action: str, call):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - PyGithub, requests and urllib3 errors alike
            raise client.describe(exc, self.conn.token, action) from None

    def _write(self, action: str, call):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001
            error = client.describe(exc, self.conn.token, action)
            if error.status == 403:
                raise _Degraded(str(error)) from None
            raise error from None

    def _own(self, item) -> bool:
        user = getattr(item, "user", None)
        return self.bot_login is None or (user is not None and user.login == self.bot_login)

    # -- steps

    def load(self) -> None:
        gh = self.conn.github
        self.repo = self._read(f"read repository {self.ctx.repo}", lambda: gh.get_repo(self.ctx.repo))
        self.pull = self._read(f"read pull request #{self.ctx.pr}", lambda: self.repo.get_pull(self.ctx.pr))
        self.web_url = self.repo.html_url
        self.api_head = self.pull.head.sha
        self.files = self._read("list the pull request's files", lambda: list(self.pull.get_files()))
        self.review_comments = self._read("list review comments", lambda: list(self.pull.get_review_comments()))
        self.issue_comments = self._read("list comments", lambda: list(self.pull.get_issue_comments()))

    def publish(self, result, changes: list) -> Outcome:
        """Post the review, clean up, update the summary; a 403 on a write degrades."""
        if self.ctx.head is not None and self.ctx.head != self.api_head:
            # A newer push has its own run; writing from this one could undo what that run posted.
            self.outcome.notice = (f"the pull request moved on to {self.api_head[:7]} while this run linted "
                                   f"{self.ctx.head[:7]}: no comments from this run (the newer run posts them)")
            self.outcome.degraded = True
            return self.outcome
        try:
            self._review(result)
            self._summary(result, changes)
        except _Degraded as exc:
            self.outcome.degraded = True
            self.outcome.notice = (f"read-only token ({exc}): pull requests from forks cannot be commented on; "
                                   "findings are in the annotations and the step summary")
        return self.outcome

    def _review(self, result) -> None:
        outcome = self.outcome
        diff_lines = {f.filename: right_lines(f.patch) for f in self.files}
        ours: dict[str, Any] = {}
        replied: dict[int, set[str]] = {}
        for comment in self.review_comments:
            parent = getattr(comment, "in_reply_to_id", None)
            if parent is not None:
                replied.setdefault(parent, set()).add(comment.user.login if comment.user else "")
                continue
            match = FP_MARKER.search(comment.body or "")
            if match and self._own(comment):
                ours.setdefault(match.group(1), comment)

        current: dict[str, Finding] = {}
        for finding in result.active():
            current.setdefault(fingerprint_id(finding), finding)
        new: list[tuple[str, Finding]] = []
        for fp, finding in current.items():
            if fp in ours:
                outcome.placement[fp] = "inline"
                continue
            if finding.location.line not in diff_lines.get(finding.location.path, ()):
                outcome.placement[fp] = "outside"
            elif len(new) >= MAX_INLINE:
                outcome.placement[fp] = "limit"
            else:
                new.append((fp, finding))

        if new:
            comments = [{"path": f.location.path, "line": f.location.line, "side": "RIGHT",
                         "body": render_review_comment(f, self.root)} for _, f in new]
            count = len(comments)
            body = (f"{REVIEW_MARKER}\n**cfgcheck**: {count} new finding{'s' if count != 1 else ''} on the changed "
                    "lines. The summary comment lists every finding with the capacity before and after.")
            try:
                self._write("post the review", lambda: self.pull.create_review(body=body, event="COMMENT",
                                                                                comments=comments))
                for fp, _ in new:
                    outcome.placement[fp] = "inline"
                outcome.posted = count
            except GitHubError as error:
                if error.status != 422:
                    raise
                # GitHub refused a comment position: list them in the summary rather than fail the check.
                sys.stderr.write(f"cfgcheck: {error}; the findings are listed in the summary instead\n")
                for fp, _ in new:
                    outcome.placement[fp] = "outside"

        sha = (self.api_head or "")[:7]
        for fp, comment in ours.items():
            body = comment.body or ""
            if fp in current:
                outcome.kept += 1
                if RESOLVED_MARKER in body:  # the finding is back: restore the comment
                    fresh = render_review_comment(current[fp], self.root)
                    self._write("reopen a review comment", lambda c=comment, b=fresh: c.edit(b))
                continue
            if RESOLVED_MARKER in body:
                continue
            humans = replied.get(comment.id, set()) - {comment.user.login if comment.user else ""}
            if humans:
                self._write("mark a review comment resolved",
                            lambda c=comment, b=resolve_body(body, sha): c.edit(b))
                outcome.resolved += 1
            else:
                self._write("delete a resolved review comment", lambda c=comment: c.delete())
                outcome.deleted += 1

    def _summary(self, result, changes: list) -> None:
        existing = [c for c in self.issue_comments if SUMMARY_MARKER in (c.body or "") and self._own(c)]
        body = render_summary(result, changes, self.outcome, root=self.root, config_changes=self.ctx.config_changes,
                              head=self.api_head,
                              base=self.ctx.base, web_url=self.web_url)
        if existing:
            first = existing[0]
            if (first.body or "").strip() != body.strip():
                self._write("update the summary comment", lambda: first.edit(body))
                self.outcome.summary = "edited"
            else:
                self.outcome.summary = "unchanged"
            for extra in existing[1:]:  # left by a concurrent run: keep one
                self._write("delete a duplicate summary comment", lambda c=extra: c.delete())
        elif result.active() or result.fixed or changes:
            self._write("post the summary comment", lambda: self.pull.create_issue_comment(body))
            self.outcome.summary = "created"


# ---------------------------------------------------------------- the command


def _append(path: str | None, text: str) -> None:
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        sys.stderr.write(f"cfgcheck: cannot write {path}: {exc.strerror or exc}\n")


def _outputs(values: dict[str, str]) -> str:
    lines = []
    for key, value in values.items():
        value = str(value)
        if "\n" in value or "\r" in value:
            delimiter = "cfgcheck_" + hashlib.sha1(value.encode()).hexdigest()[:16]
            lines.append(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{key}={value}\n")
    return "".join(lines)


def run(options: Options) -> int:
    """The whole review run; returns the exit code."""
    from ..changes import model_changes
    from ..config import locate, reviewed
    from ..diff import lint_diff, merge_base
    from ..render import changed_overrides
    from ..reporters import github as annotations
    from ..reporters import sarif

    paths = options.paths or [Path(".")]
    root = locate(paths)
    ctx = context_from_env(options)
    token: str | None = None
    error: GitHubError | None = None
    publisher: Publisher | None = None
    commenting = options.comment and ctx.pr is not None and ctx.repo is not None

    if commenting:
        try:
            token = client.token_from(options.token)
            conn = client.connect(token, options.api_url)
            publisher = Publisher(conn, ctx, options.bot_login, root)
            publisher.load()
            ctx.base = ctx.base or publisher.pull.base.sha
        except GitHubError as exc:
            sys.stderr.write(f"cfgcheck: error: {redact(str(exc), token)}\n")
            return 2
    elif options.comment:
        sys.stderr.write("cfgcheck: no pull request (not a pull_request event and no --pr/--repo): "
                         "annotations and step summary only\n")
    if not ctx.base:
        raise ConfigError("no base to compare with: run on a pull_request event or pass --base REF")

    # the base commit's configuration and templates, never the pull request's (docs/SECURITY.md)
    base = merge_base(root, ctx.base).commit
    config, ctx.config_changes = reviewed(root, base, options.config_file)
    ctx.config_changes += [f"template override changed, used once merged: {name}"
                           for name in changed_overrides(root, base)]
    templates = Overrides(root, base)
    if publisher is not None:
        publisher.root = templates
    result = lint_diff(paths, config, ctx.base, options.select, options.ignore)  # compares with the merge base
    changes = model_changes(result.models, result.base_models, config.as_dict())
    if options.sarif is not None:
        try:
            options.sarif.parent.mkdir(parents=True, exist_ok=True)
            options.sarif.write_text(sarif.render(result), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write {options.sarif}: {exc.strerror or exc}") from None

    outcome: Outcome | None = None
    if publisher is not None:
        try:
            outcome = publisher.publish(result, changes)
        except GitHubError as exc:
            error = exc
        if outcome is not None and outcome.notice:
            sys.stderr.write(f"cfgcheck: {redact(outcome.notice, token)}\n")
        elif outcome is not None:
            sys.stderr.write(f"cfgcheck: {outcome.posted} new review comment{'s' if outcome.posted != 1 else ''}, "
                             f"{outcome.kept} kept, {outcome.deleted} deleted, {outcome.resolved} marked resolved; "
                             f"summary comment {outcome.summary}\n")

    sys.stdout.write(annotations.render(result))
    sys.stdout.flush()
    step = render_summary(result, changes, outcome, root=templates, config_changes=ctx.config_changes,
                          head=publisher.api_head if publisher and publisher.pull else ctx.head,
                          base=ctx.base, web_url=publisher.web_url if publisher else None, step=True)
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), redact(step, token) + "\n")
    counts = result.counts()
    _append(os.environ.get("GITHUB_OUTPUT"), _outputs({
        "findings": str(len(result.active())), "errors": str(counts["errors"]),
        "sarif-file": str(options.sarif) if options.sarif is not None else ""}))
    if error is not None:
        sys.stderr.write(f"cfgcheck: error: {redact(str(error), token)}\n")
        return 2
    threshold = options.fail_on or config.get("fail-on", "error")
    return result.exit_code(threshold)
