"""``cfgcheck review``: lint a pull request in diff mode and publish the result where reviewers read it.

One run, inside GitHub Actions or outside it with ``--pr/--base/--repo``:

1. lint the working tree against the pull request's base (the merge base with ``HEAD``, so a checkout of
   the PR head and of GitHub's merge commit give the same result);
2. write SARIF (``--sarif``), then through PyGithub post **one review** whose inline comments sit on
   changed lines (side RIGHT; a finding on a line outside the diff goes to the summary, since GitHub
   rejects a whole review for one such comment): one comment per cause, errors first, with a
   ``suggestion`` block where the fix is mechanical (``inline.plan``); clean up the bot's stale
   comments, and keep **one summary comment** (``summary.Layout``) found by its hidden marker and
   edited in place, created only when the pull request has something to say;
3. print workflow annotations, append the summary to ``$GITHUB_STEP_SUMMARY`` and write the step
   outputs to ``$GITHUB_OUTPUT``.

``--baseline FILE``: the findings it records do not fail the run. On a pull request the file is read
from the base commit, like the configuration: a pull request cannot record its own findings there.

Without a pull request (``push``, ``schedule``: ``--mode auto``, see ``decide_mode``) or with
``--mode lint`` it lints the whole repository instead and does step 3 with SARIF, posting nothing:
code scanning needs a full analysis of the default branch before it shows alerts on pull requests.

Idempotence: every inline comment carries ``<!-- cfgcheck:fp=<sha1 of the finding fingerprint> -->``
(rule, served model, setting: it survives line shifts) for each finding of its cause on a changed line.
A re-run posts only causes none of whose fingerprints has a comment yet, and brings a comment it keeps
up to date; a bot comment none of whose findings remains is deleted, or, when someone replied to it,
edited to say it is resolved. The bot's comments are recognised by their marker, top-level (not a reply), and
always by author: ``--bot-login`` (default ``github-actions[bot]``, the author of ``GITHUB_TOKEN``'s
comments). A comment anyone else wrote is never edited or deleted, whatever markers it carries; when
cfgcheck's own comments come back under another login, it says which login to configure.

Every body sent to GitHub passes ``redact`` (token, secret environment values, credentials) and stays
under GitHub's 65,536-character limit: values from linted files are cut at ``MAX_CELL`` characters and
the summary drops notes, then warnings, never an error (``summary.cuts``), saying what it left out. A comment GitHub refuses (422) is
posted alone, so the refusal costs that comment only; the summary still lists it.

A token that cannot write (pull requests from forks get a read-only ``GITHUB_TOKEN``: 403 "Resource
not accessible by integration") degrades the run to annotations and the step summary, says so in one
line, and the exit code still follows ``--fail-on``. So does any answer GitHub's documentation does not
promise (a 5xx after the retries, a timeout, an HTML page, a body of the wrong shape, a 404 on one of the
pull request's endpoints): what could be posted is, the failure is one line on stderr and in the step
summary (``Unanswered``). A missing token, and a 401, 403 or 404 on the repository or the pull request
itself (the run's configuration: ``--repo``, ``--pr``, the token), are one line and exit 2. PyGithub
and jinja2 are imported only here, inside functions.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..redact import redact
from ..templating import Overrides, changed_overrides
from . import client
from .bodies import (FP_MARKER, RESOLVED_MARKER, REVIEW_MARKER, SUMMARY_MARKER, fingerprint_id, fit,
                     resolve_body)
from .client import GitHubError, Unanswered, commit_id, listed_files
from ..changes import model_changes
from ..config import load_for, locate, reviewed
from ..diff import lint_diff, merge_base
from ..lint import lint
from .. import baseline
from ..reporters.annotations import render as render_annotations
from ..reporters import sarif
from .inline import Planned, plan
from .summary import ReviewSettings, render_summary

MAX_INLINE = 50  # inline comments per run; the rest are listed in the summary
DEFAULT_BOT_LOGIN = "github-actions[bot]"  # the author of comments made with GITHUB_TOKEN
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
    mode: str = "auto"  # auto | review | lint
    baseline: Path | None = None  # findings recorded here do not fail the run (review: the base's copy)


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
    posted_as: str | None = None  # the login GitHub recorded for cfgcheck's comments, when not bot_login
    foreign: set[str] = field(default_factory=set)  # logins of comments with cfgcheck's markers, left alone
    placement: dict[str, str] = field(default_factory=dict)  # fingerprint id -> inline | outside | limit | refused


# ---------------------------------------------------------------- pure helpers


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


# ---------------------------------------------------------------- publishing


class _Degraded(Exception):
    """The token cannot write: stop writing, keep the local outputs."""


class Publisher:
    """The GitHub side of a review run: one review, stale-comment cleanup, one summary comment."""

    def __init__(self, conn, ctx: Context, bot_login: str | None, root: Overrides | Path):
        self.conn, self.ctx, self.root = conn, ctx, root
        self.bot_login = bot_login or DEFAULT_BOT_LOGIN
        self.outcome = Outcome()
        self.repo = self.pull = None
        self.api_head: str | None = None
        self.base_sha: str | None = None
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

    def _isolated(self, action: str, call) -> bool:
        """A write whose refusal (422) costs only itself: said in one line, and the run goes on."""
        try:
            self._write(action, call)
        except GitHubError as error:
            if error.status != 422:
                raise
            _say(f"{error}; the run goes on without it", self.conn.token)
            return False
        return True

    def _body(self, text: str) -> str:
        """What is sent to GitHub: redacted, then within the size limit."""
        return fit(redact(text, self.conn.token))

    def _own(self, item) -> bool:
        """Written by the bot's login: markers alone prove nothing, anyone can type them."""
        login = getattr(getattr(item, "user", None), "login", None)
        if login != self.bot_login:
            self.outcome.foreign.add(str(login))
        return login == self.bot_login

    def _created(self, item) -> None:
        """Note the login GitHub recorded for a comment cfgcheck just made, when it is not ``bot_login``."""
        login = getattr(getattr(item, "user", None), "login", None)
        if login and login != self.bot_login:
            self.outcome.posted_as = login

    # -- steps

    def load(self) -> None:
        """The pull request and what the bot finds on it. GitHubError: the repository or the pull request
        refused (401, 403, 404: the configuration); Unanswered: any other failure."""
        gh = self.conn.github
        try:
            self.repo = self._read(f"read repository {self.ctx.repo}", lambda: gh.get_repo(self.ctx.repo))
            self.pull = self._read(f"read pull request #{self.ctx.pr}", lambda: self.repo.get_pull(self.ctx.pr))
        except GitHubError as error:
            if error.status in (401, 403, 404):
                raise
            raise Unanswered(str(error), error.status) from None
        try:
            self.web_url = self._read("read the repository", lambda: str(self.repo.html_url or "") or None)
            self.api_head = self._read("read the pull request's head",
                                       lambda: commit_id(getattr(self.pull.head, "sha", None)))
            self.base_sha = self._read("read the pull request's base",
                                       lambda: commit_id(getattr(self.pull.base, "sha", None)))
            self.files = self._read("list the pull request's files",
                                    lambda: listed_files(list(self.pull.get_files()), self.pull.changed_files))
            self.review_comments = self._read("list review comments", lambda: list(self.pull.get_review_comments()))
            self.issue_comments = self._read("list comments", lambda: list(self.pull.get_issue_comments()))
        except GitHubError as error:
            raise Unanswered(str(error), error.status) from None

    def publish(self, result, changes: list, settings: ReviewSettings) -> Outcome:
        """Post the review, clean up, update the summary; a 403 on a write degrades."""
        if self.ctx.head is not None and self.ctx.head != self.api_head:
            # A newer push has its own run; writing from this one could undo what that run posted.
            self.outcome.notice = (f"the pull request moved on to {self.api_head[:7]} while this run linted "
                                   f"{self.ctx.head[:7]}: no comments from this run (the newer run posts them)")
            self.outcome.degraded = True
            return self.outcome
        try:
            self._review(result, settings)
            self._summary(result, changes, settings)
        except _Degraded as exc:
            self.outcome.degraded = True
            self.outcome.notice = (f"read-only token ({exc}): pull requests from forks cannot be commented on; "
                                   "findings are in the annotations and the step summary")
        return self.outcome

    def _ours(self) -> tuple[dict[str, Any], dict[int, set[str]]]:
        """The bot's own top-level review comments by each fingerprint they carry, and who replied to each."""
        ours: dict[str, Any] = {}
        replied: dict[int, set[str]] = {}
        for comment in self.review_comments:
            parent = getattr(comment, "in_reply_to_id", None)
            if parent is not None:
                replied.setdefault(parent, set()).add(comment.user.login if comment.user else "")
                continue
            prints = FP_MARKER.findall(comment.body or "")
            if prints and self._own(comment):
                for fp in prints:
                    ours.setdefault(fp, comment)
        return ours, replied

    def _review(self, result, settings: ReviewSettings) -> None:
        """One comment per cause on the changed lines, errors first, up to ``MAX_INLINE`` new ones."""
        outcome = self.outcome
        diff_lines = {f.filename: right_lines(f.patch) for f in self.files}
        ours, replied = self._ours()
        current = {fingerprint_id(f) for f in result.active()}
        planned, outcome.placement = plan(
            result.active(), {f.path: f.text for f in result.files}, diff_lines,
            supply_inline=settings.supply_chain == "inline", root=self.root,
            unchanged_by=lambda text: redact(text, self.conn.token) == text)
        claimed: set[int] = set()
        new: list[Planned] = []
        for item in planned:
            existing = next((ours[fp] for fp in item.covers if fp in ours and ours[fp].id not in claimed), None)
            if existing is not None:
                claimed.add(existing.id)
                outcome.placement.update(dict.fromkeys(item.covers, "inline"))
                self._refresh(existing, item)
            elif len(new) >= MAX_INLINE:
                outcome.placement.update(dict.fromkeys(item.covers, "limit"))
            else:
                new.append(item)
        if new:
            self._post(new)
        self._clean_up(ours, current, replied, claimed)

    def _refresh(self, comment, item: Planned) -> None:
        """An earlier run's comment for this cause: brought up to date (places, a finding back after it was
        resolved); the suggestion only while the comment still sits on the lines it replaces."""
        self.outcome.kept += 1
        here = (comment.path, comment.line, getattr(comment, "start_line", None)) == \
            (item.path, item.line, item.start_line)
        fresh = self._body(item.body if here else item.plain)
        if (comment.body or "").strip() != fresh.strip():
            self._isolated("update a review comment", lambda: comment.edit(fresh))

    def _post(self, new: list[Planned]) -> None:
        """One review with every new inline comment; when GitHub refuses it (422), each comment alone."""
        comments = [dict(item.payload(), body=self._body(item.body)) for item in new]
        count = len(comments)
        errors = sum(1 for item in new if item.anchor.severity == "error")
        body = self._body(f"{REVIEW_MARKER}\n**cfgcheck**: {count} comment{'s' if count != 1 else ''} on the changed "
                          f"lines{f', {errors} of them on errors' if errors else ''}, one per cause. The summary "
                          "comment lists every finding, errors first, with the capacity before and after.")
        try:
            review = self._write("post the review", lambda: self.pull.create_review(body=body, event="COMMENT",
                                                                                     comments=comments))
            self._created(review)
            placed = set(range(count))
        except GitHubError as error:
            if error.status != 422:
                raise
            # One refused comment refuses the whole review: post them one by one so that it costs that one only.
            _say(f"{error}; posting the review comments one by one", self.conn.token)
            placed = self._post_each(new, comments)
        for index, item in enumerate(new):
            self.outcome.placement.update(dict.fromkeys(item.covers, "inline" if index in placed else "refused"))
        self.outcome.posted = len(placed)

    def _post_each(self, new: list[Planned], comments: list[dict]) -> set[int]:
        commit = self._read("read the head commit", lambda: self.repo.get_commit(self.api_head))
        placed = set()
        for index, (item, comment) in enumerate(zip(new, comments)):
            made: list = []
            extra = {"start_line": comment["start_line"], "start_side": "RIGHT"} if "start_line" in comment else {}
            if self._isolated(f"post the {item.anchor.code} review comment (listed in the summary)", lambda c=comment, e=extra: (
                    made.append(self.pull.create_review_comment(c["body"], commit, c["path"], line=c["line"],
                                                                side="RIGHT", **e)))):
                self._created(made[0])
                placed.add(index)
        return placed

    def _clean_up(self, ours: dict[str, Any], current: set[str], replied: dict[int, set[str]],
                  claimed: set[int]) -> None:
        """The bot's comments none of whose findings remain: deleted, or marked resolved when someone replied."""
        outcome = self.outcome
        sha = (self.api_head or "")[:7]
        prints: dict[int, set[str]] = {}
        comments: dict[int, Any] = {}
        for fp, comment in ours.items():  # only the bot's own (``_ours``): nobody else's comment is touched
            prints.setdefault(comment.id, set()).add(fp)
            comments[comment.id] = comment
        for number, comment in comments.items():
            body = comment.body or ""
            if number in claimed:
                continue
            if prints[number] & current:  # its finding stays, on a line the review no longer comments
                outcome.kept += 1
                continue
            if RESOLVED_MARKER in body:
                continue
            humans = replied.get(number, set()) - {self.bot_login}
            if humans:
                resolved = self._body(resolve_body(body, sha))
                if self._isolated("mark a review comment resolved", lambda c=comment, b=resolved: c.edit(b)):
                    outcome.resolved += 1
            else:
                self._write("delete a resolved review comment", lambda c=comment: c.delete())
                outcome.deleted += 1

    def _summary(self, result, changes: list, settings: ReviewSettings) -> None:
        """Created only when the pull request has something to say (findings, suppressions it adds, a change to
        cfgcheck's configuration); an existing summary is edited in place, to "no new findings" too."""
        existing = [c for c in self.issue_comments if SUMMARY_MARKER in (c.body or "") and self._own(c)]
        body = self._body(render_summary(result, changes, self.outcome, root=self.root, head=self.api_head,
                                         base=self.ctx.base, web_url=self.web_url, settings=settings,
                                         config_changes=self.ctx.config_changes))
        if existing:
            first = existing[0]
            if (first.body or "").strip() != body.strip():
                self._write("update the summary comment", lambda: first.edit(body))
                self.outcome.summary = "edited"
            else:
                self.outcome.summary = "unchanged"
            for extra in existing[1:]:  # left by a concurrent run: keep one
                self._write("delete a duplicate summary comment", lambda c=extra: c.delete())
        elif result.active() or result.silenced or self.ctx.config_changes:
            created = self._write("post the summary comment", lambda: self.pull.create_issue_comment(body))
            self._created(created)
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


def decide_mode(options: Options, ctx: Context) -> str:
    """``review`` for a pull request (or an explicit ``--base``), else ``lint`` of the whole repository:
    on ``push`` and ``schedule`` code scanning needs a full analysis of the branch, not a diff."""
    if options.mode != "auto":
        return options.mode
    if ctx.pr is not None or options.base or os.environ.get("GITHUB_EVENT_NAME", "").startswith("pull_request"):
        return "review"
    return "lint"


def run(options: Options) -> int:
    """The whole run (review or lint, by ``decide_mode``); returns the exit code. Every message is redacted."""
    try:
        return _run(options)
    except ConfigError as exc:
        raise ConfigError(redact(str(exc), options.token)) from None


def _run(options: Options) -> int:
    paths = options.paths or [Path(".")]
    root = locate(paths)
    ctx = context_from_env(options)
    if decide_mode(options, ctx) == "lint":
        # no pull request: the branch itself is linted, with its own configuration, as `cfgcheck lint` does
        config = load_for(paths, options.config_file)
        event = os.environ.get("GITHUB_EVENT_NAME") or "none"
        _say(f"linting the whole repository (event {event}): annotations, step summary and SARIF, no comments")
        result = lint(paths, config, options.select, options.ignore)
        recorded = _work_tree_baseline(options.baseline)
        return _report(options, config, result, [], None, None, templates=root,
                       baseline=_apply_baseline(result, recorded, options.baseline))
    token: str | None = None
    publisher: Publisher | None = None
    unanswered: Outcome | None = None
    if options.comment and ctx.pr is not None and ctx.repo is not None:
        try:
            token = client.token_from(options.token)
            publisher = Publisher(client.connect(token, options.api_url), ctx, options.bot_login, root)
            publisher.load()
            ctx.base = ctx.base or publisher.base_sha
        except Unanswered as exc:  # nothing can be posted: the local outputs still carry every finding
            publisher, unanswered = None, _degraded(exc, token)
        except GitHubError as exc:
            _say(f"error: {exc}", token)
            return 2
    elif options.comment:
        _say("no pull request (not a pull_request event and no --pr/--repo): annotations and step summary only")
    if not ctx.base:
        raise ConfigError("no base to compare with: run on a pull_request event or pass --base REF")

    # the base commit's configuration, templates and baseline, never the pull request's (docs/SECURITY.md)
    base = merge_base(root, ctx.base).commit
    config, ctx.config_changes = reviewed(root, base, options.config_file)
    ctx.config_changes += [f"template override changed, used once merged: {name}"
                           for name in changed_overrides(root, base)]
    recorded = None
    if options.baseline is not None:

        recorded, changed = baseline.reviewed(root, base, options.baseline)
        ctx.config_changes += changed
    templates = Overrides(root, base)
    if publisher is not None:
        publisher.root = templates
    result = lint_diff(paths, config, ctx.base, options.select, options.ignore)  # compares with the merge base
    applied = _apply_baseline(result, recorded, options.baseline)
    changes = model_changes(result.models, result.base_models, config.as_dict())
    return _report(options, config, result, changes, publisher, ctx, token, templates=templates, baseline=applied,
                   unanswered=unanswered)


def _work_tree_baseline(path: Path | None):
    """The baseline of a whole-repository run (a push to the default branch: its own, trusted copy); a file
    not committed yet is no baseline, as on a pull request whose base has none."""
    if path is None:
        return None
    if not path.exists():
        _say(f"baseline {path} not found: every finding counts (record one with cfgcheck lint --write-baseline)")
        return None

    return baseline.load(path)


def _apply_baseline(result, recorded, path: Path | None) -> tuple[str, int] | None:
    """Mark the findings the baseline records as suppressed (they no longer fail the run); (file name,
    findings it records) for the summary, None without a baseline."""
    if recorded is None or path is None:
        return None

    baseline.apply(result.findings, recorded, path.name)
    return path.name, sum(recorded.values())


def _say(line: str, token: str | None = None) -> None:
    sys.stderr.write(f"cfgcheck: {redact(line, token)}\n")


def _degraded(error: GitHubError, token: str | None, outcome: Outcome | None = None) -> Outcome:
    """The outcome of a run GitHub stopped answering as documented, said in one line (stderr, and the
    step summary's notice): what was posted stays, the findings are in the local outputs."""
    outcome = outcome or Outcome()
    outcome.degraded = True
    outcome.notice = (f"GitHub: {' '.join(str(error).split())[:300]}; review degraded: the findings are in the "
                      "annotations, the step summary and SARIF")
    _say(outcome.notice, token)
    return outcome


def _publish(publisher: Publisher, result, changes: list, settings: ReviewSettings, token: str | None) -> Outcome:
    try:
        outcome = publisher.publish(result, changes, settings)
    except GitHubError as exc:
        return _degraded(exc, token, publisher.outcome)
    except Exception as exc:  # noqa: BLE001 - an answer of the wrong shape, met while reading its attributes
        if os.environ.get("CFGCHECK_DEBUG"):
            raise
        return _degraded(client.describe(exc, token, "read GitHub's answer"), token, publisher.outcome)
    if outcome.notice:
        _say(outcome.notice, token)
    else:
        _say(f"{outcome.posted} new review comment{'s' if outcome.posted != 1 else ''}, {outcome.kept} kept, "
             f"{outcome.deleted} deleted, {outcome.resolved} marked resolved; summary comment {outcome.summary}")
    if outcome.foreign:
        _say(f"comments by {', '.join(sorted(outcome.foreign))} carry cfgcheck's markers but not its login "
             f"'{publisher.bot_login}': left untouched", token)
    if outcome.posted_as:
        _say(f"warning: GitHub recorded cfgcheck's comments as '{outcome.posted_as}', not '{publisher.bot_login}': "
             f"set bot-login (--bot-login, CFGCHECK_BOT_LOGIN) to '{outcome.posted_as}', or re-runs will neither "
             "recognise nor clean up these comments", token)
    return outcome


def _report(options: Options, config, result, changes: list, publisher: Publisher | None, ctx: Context | None,
            token: str | None = None, *, templates: Overrides | Path, baseline: tuple[str, int] | None = None,
            unanswered: Outcome | None = None) -> int:
    """Publish (review mode), then SARIF, annotations, step summary and step outputs; the exit code."""
    # package's own `from __future__ import annotations` would answer instead of the module

    if options.sarif is not None:
        try:
            options.sarif.parent.mkdir(parents=True, exist_ok=True)
            options.sarif.write_text(sarif.render(result), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write {options.sarif}: {exc.strerror or exc}") from None
    settings = ReviewSettings.of(config, options.fail_on, baseline)
    outcome = _publish(publisher, result, changes, settings, token) if publisher is not None else unanswered
    sys.stdout.write(redact(render_annotations(result), token))
    sys.stdout.flush()
    step = render_summary(result, changes, outcome, root=templates,
                          head=publisher.api_head if publisher and publisher.pull else ctx and ctx.head,
                          base=ctx and ctx.base, web_url=publisher.web_url if publisher else None, step=True,
                          whole=ctx is None, config_changes=ctx.config_changes if ctx else None, settings=settings)
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), redact(step, token) + "\n")
    counts = result.counts()
    _append(os.environ.get("GITHUB_OUTPUT"), _outputs({
        "findings": str(len(result.active())), "errors": str(counts["errors"]),
        "sarif-file": str(options.sarif) if options.sarif is not None else ""}))
    return result.exit_code(settings.fail_on)
