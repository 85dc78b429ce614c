"""``cfgcheck propose``: plan -> edit (comment-preserving) -> re-lint against the base -> ADR and PR
body -> one commit -> push -> pull request.

The proposal is built in a temporary worktree of the base branch (or of the open proposal's branch it
joins), so the user's working tree, index, HEAD and stash are never touched. Re-running is safe:
the branch name is stable, edits that are already made produce no commit, and a pushed branch
without a pull request gets one.

Everything a branch or pull request holds is someone else's: an existing branch (the open proposal's,
or one with the predictable name) is joined only when every commit on it since the base carries
propose's ``Cfgcheck-Proposal: <branch>`` trailer, otherwise propose refuses and names the count;
files are read and written in the worktree without following symbolic links; text from the
proposal or an earlier one is escaped in the ADR and the body; ``--dry-run`` writes nothing in the
repository (``gitops.Scratch``); everything printed passes ``redact``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..adapters.core.registry import file_format, file_suffixes
from ..config import Config, load as load_config, relative_config
from ..github.client import GitHubError
from ..lint import discover, lint as run_lint, served_models
from ..model import ServedModel
from ..redact import redact
from ..yamlio import load_file
from . import docs, edit, plan, upgrade
from .documents import Documents, build as build_documents, one_line
from .fix import compute as compute_fixes, write as write_files
from .gitops import TRAILER, Git, Scratch, Worktree, repository_from_url
from .plan import PlanError
from ..github.proposals import Hub
from ..diff import lint_diff
from ..reporters import renderer

class ProposeError(PlanError):
    pass


@dataclass
class Options:
    sets: list[str] = field(default_factory=list)
    file: Path | None = None
    title: str | None = None
    why: str | None = None
    fix: bool = False
    paths: list[Path] = field(default_factory=list)
    base: str | None = None
    remote: str = "origin"
    repo: str | None = None
    dry_run: bool = False
    allow_findings: bool = False
    config_file: Path | None = None
    token: str | None = None
    api_url: str | None = None
    cwd: Path | None = None
    upgrade: Any = None  # upgrade.Target: ``cfgcheck upgrade`` plans the changes from the served models


@dataclass
class Work:
    """What the proposal changes, recomputed for whichever commit the worktree is at."""

    identities: list[str]
    names: list[str]
    labels: list[str]
    files: list[edit.FileResult]
    specs: list[str]
    resolved: list[plan.Resolved] = field(default_factory=list)
    fixed_codes: list[str] = field(default_factory=list)
    explanations: list = field(default_factory=list)  # comments.Explanation: comments at a changed value


def _relative(root: Path, path: Path, cwd: Path) -> str:
    absolute = (path if path.is_absolute() else cwd / path).resolve()
    try:
        rel = absolute.relative_to(root).as_posix()
    except ValueError:
        raise ProposeError(f"{path} is outside the repository at {root}") from None
    return rel or "."


def _branch_name(work: Work, fix: bool, target: Any = None) -> str:
    if target is not None:
        return "cfgcheck/upgrade-" + docs.slug(f"{target.engine}-{target.version}", 60)
    if fix:
        return "cfgcheck/fix-" + docs.slug("-".join(work.fixed_codes) or "findings", 60)
    return "cfgcheck/" + docs.slug("-".join(sorted(set(work.names))), 40) + "-" + docs.slug(
        "-".join(sorted(set(work.labels))), 60)


def _load(root: Path, scopes: list[str], config: Config):
    paths = [root / scope for scope in scopes]
    for path, scope in zip(paths, scopes):
        if not path.exists():
            raise ProposeError(f"{scope} does not exist on the base branch")
    # every file with its tree kept (the edits need the nodes), unlike lint's streaming collect()
    files = [load_file(config.root, path, config.limits, readers=file_format)
             for path in discover(paths, config.root, config.get("exclude", []), file_suffixes()).files]
    return files, served_models(files, config)


def _plan_work(root: Path, scopes: list[str], config: Config, opts: Options, proposal: plan.Proposal | None) -> Work:
    if opts.fix:
        result = run_lint([root / s for s in scopes], config)
        fixes = compute_fixes(result)
        models = {f.model_identity for f in fixes.applied if f.model_identity}
        names = sorted({f.model for f in fixes.applied if f.model})
        codes = sorted({f.code for f in fixes.applied})
        specs = [f"{f.code} {f.location.path}:{f.location.line}: {f.fix.description}" for f in fixes.applied]
        return Work(sorted(models), names, codes, fixes.files, specs, fixed_codes=codes)
    files, models = _load(root, scopes, config)
    resolved = plan.resolve(proposal, models)
    by_path = {f.path: f for f in files}
    edits: dict[str, list] = {}
    explanations = []
    settings = config.as_dict()
    for item in resolved:
        loaded = by_path.get(item.model.path)
        if loaded is None:
            raise ProposeError(f"cannot read {item.model.path}")
        edits.setdefault(item.model.path, []).extend(edit.edits_for(item, loaded, settings))
        comment_edits, said = edit.comment_edits(item, loaded, docs.today())
        edits[item.model.path].extend(comment_edits)
        explanations += said
    if opts.upgrade is not None:  # removed flags renamed to their successors, on this commit's models
        for path, renames in upgrade.flag_edits(upgrade.plan_models(models, opts.upgrade, settings)).items():
            edits.setdefault(path, []).extend(renames)
    results = edit.apply(by_path, edits)
    for note in explanations:  # the comment's line in the edited file
        note.line = edit.shifted(note.line, edits[note.path])
    return Work(sorted({r.model.identity for r in resolved}), sorted({r.model.name for r in resolved}),
                [r.label for r in resolved], results, [c.spec() for c in proposal.changes], resolved,
                explanations=explanations)


def _verify(root: Path, scopes: list[str], config: Config, work: Work) -> None:
    """Read the edited tree back: every requested value must now be what the engine gets."""
    if not work.resolved:
        return
    _, models = _load(root, scopes, config)
    by_identity = {m.identity: m for m in models}
    for item in work.resolved:
        model = by_identity.get(item.model.identity)
        if model is None:
            raise ProposeError(f"{item.change.spec()}: after the edit, {item.model.name} is no longer found in "
                               f"{item.model.path}; nothing was proposed")
        got = _value(model, item)
        if not _same(got, item.value):
            raise ProposeError(f"{item.change.spec()}: after the edit the engine would get {got!r}; "
                               "nothing was proposed (edit this one by hand)")


def _value(model: ServedModel, item: plan.Resolved) -> Any:
    if item.name == "image" and item.flag is None:
        return model.image.value if model.image is not None else None
    if item.name == "model_revision" and item.flag is None:
        return model.model_revision.value if model.model_revision is not None else None
    if item.flag is not None:
        found = [s for occ in model.occurrences.values() for s in occ if s.source == item.flag]
        if found:
            return found[-1].value
    return model.value(item.name)


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return got == want or str(got).lower() == str(want).lower()
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return float(got) == float(want)
    return str(got) == str(want)


def _commit_message(title: str, history: list[dict], specs: list[str], branch: str) -> str:
    """The commit message, ending with the trailer that marks the commit as propose's own."""
    why = "\n".join(one_line(line) for line in str(history[-1].get("why") or "").splitlines())
    changes = "\n".join(f"- {one_line(spec)}" for spec in specs)
    return f"{title}\n\n{why}\n\n{changes}\n\nProposed with cfgcheck propose.\n\n{TRAILER}: {branch}\n"


@dataclass
class Start:
    """The repository, the proposal as asked, and where it goes."""

    user: Git
    root: Path
    scopes: list[str]
    proposal: plan.Proposal | None
    url: str | None
    hub: Any  # .github.Hub, None on a dry run


def _start(opts: Options, cwd: Path, token: str | None) -> Start:
    start = opts.paths[0] if opts.paths else cwd
    start = start if start.is_absolute() else cwd / start
    if not start.exists():
        raise ProposeError(f"path does not exist: {start}")
    user = Git(start if start.is_dir() else start.parent, token)
    root = user.toplevel()
    user = Git(root, token)
    scopes = [_relative(root, p, cwd) for p in opts.paths] or ["."]

    proposal = None
    if opts.upgrade is not None:
        proposal = plan.Proposal(title=opts.title, why=opts.why)  # the changes come from the served models
    elif not opts.fix:
        if opts.file is not None and not opts.file.is_absolute():
            opts.file = cwd / opts.file
        proposal = plan.build(opts.sets, opts.file, opts.title, opts.why, [])  # names resolved later
        if not proposal.changes:
            raise ProposeError("nothing to propose: give --set NAME.SETTING=VALUE, --file P or --fix")
        if not proposal.title:
            raise ProposeError("--title is required (the PR and ADR title)")
        if not proposal.why:
            raise ProposeError("--why is required (the decision the ADR records)")
    elif opts.sets or opts.file:
        raise ProposeError("--fix proposes the mechanical fixes only; give --set/--file in a separate proposal")

    url = user.remote_url(opts.remote)
    if url is None and not opts.dry_run:
        raise ProposeError(f"no remote '{opts.remote}' in {root} (add one with git remote add, or pass --remote)")
    hub = None
    if not opts.dry_run:

        repository = opts.repo or os.environ.get("GITHUB_REPOSITORY") or repository_from_url(url)
        if not repository or "/" not in repository:
            raise ProposeError(f"cannot tell the GitHub repository from remote '{opts.remote}'; pass --repo OWNER/NAME")
        hub = Hub(repository, token, opts.api_url)  # fails now, before anything is pushed, when there is no token
    return Start(user, root, scopes, proposal, url, hub)


def _check_out_base(tree: Worktree, begin: Start, opts: Options) -> tuple[str, str]:
    """Check the base out in ``tree``; the base's name and sha."""
    if begin.url is not None:
        base = opts.base or begin.user.remote_head(opts.remote) or begin.user.current_branch() or "main"
        if begin.user.remote_branch(opts.remote, base) is None:
            raise ProposeError(f"base branch '{base}' is not on remote '{opts.remote}'")
        base_sha = tree.fetch(opts.remote, base)
    else:  # no remote (a dry run): the branch checked out, by its name; a detached HEAD by its commit
        base_sha = begin.user.resolve(opts.base or "HEAD")
        base = opts.base or begin.user.current_branch() or base_sha[:12]
    tree.checkout(base_sha)
    return base, base_sha


def _refuse_foreign(tree: Worktree, base_sha: str, branch_sha: str, branch: str, remote: str,
                    existing: Any) -> None:
    """A branch is joined only when every commit on it since the base is propose's own: whatever else
    is on it (a workflow file, a symlink) would enter the pull request unmentioned."""
    foreign = tree.git.foreign_commits(base_sha, branch_sha, branch)
    if not foreign:
        return
    where = f"the branch {branch} of pull request #{existing.number}" if existing is not None else \
        f"the branch {branch} on '{remote}'"
    raise ProposeError(f"{where} has {foreign} commit{'s' if foreign != 1 else ''} that cfgcheck propose did not "
                       f"make (no '{TRAILER}: {branch}' trailer); cfgcheck does not add to it: review those commits, "
                       "then merge, close or delete it and run again")


def run(opts: Options, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    cwd = (opts.cwd or Path.cwd()).resolve()
    token = opts.token or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    begin = _start(opts, cwd, token)
    user, scopes, proposal, url, hub = begin.user, begin.scopes, begin.proposal, begin.url, begin.hub

    config_file = None
    if opts.config_file is not None:
        config_file = relative_config(begin.root, cwd / opts.config_file)  # read in the worktree, at the base

    with (Scratch if opts.dry_run else Worktree)(user) as tree:
        base, base_sha = _check_out_base(tree, begin, opts)
        config = load_config(tree.root, tree.root / config_file if config_file else None)
        if proposal is not None:
            # names are only known once the models are: split NAME.SETTING against them
            _, models = _load(tree.root, scopes, config)
            title, why = opts.title, opts.why
            if opts.upgrade is not None:
                opts.sets, title, why = upgrade.prepare(opts.upgrade, models, config.as_dict(), title, why, out)
            proposal = plan.build(opts.sets, opts.file, title, why, [m.name for m in models])
        work = _plan_work(tree.root, scopes, config, opts, proposal)
        if opts.fix and not work.files:
            out.write("nothing to fix: no finding on the base branch has a mechanical fix\n")
            return 0

        existing = hub.find_for_models(work.identities, base) if hub is not None and work.identities else None
        branch = existing.branch if existing is not None else _branch_name(work, opts.fix, opts.upgrade)
        remote_sha = user.remote_branch(opts.remote, branch) if url is not None else None
        if existing is not None and remote_sha is None:
            raise ProposeError(f"the branch {branch} of pull request #{existing.number} is gone from "
                               f"'{opts.remote}'; close that pull request or restore the branch")
        lint_base = base_sha
        if remote_sha is not None:
            branch_sha = tree.fetch(opts.remote, branch)
            if existing is not None or not tree.git.is_ancestor(branch_sha, base_sha):
                # an open proposal to join, or a pushed branch whose pull request is still to open
                _refuse_foreign(tree, base_sha, branch_sha, branch, opts.remote, existing)
                tree.checkout(branch_sha)
                lint_base = tree.git.merge_base(branch_sha, base_sha)
                on_branch = _plan_work(tree.root, scopes, config, opts, proposal)
                if opts.fix:  # the documents describe every fix against the base, made or not
                    on_branch.identities, on_branch.names, on_branch.specs = work.identities, work.names, work.specs
                    on_branch.fixed_codes, on_branch.labels = work.fixed_codes, work.labels
                work = on_branch
            # else: the old branch is merged; start again from the base (the push lease replaces it)

        write_files(tree.root, work.files)
        _verify(tree.root, scopes, config, work)
        return _propose(tree, config, opts, Context(base, base_sha, branch, lint_base, remote_sha, existing, hub,
                                                    work, proposal, scopes), out, err)


@dataclass
class Context:
    """Where the proposal stands once the edits are in the worktree."""

    base: str
    base_sha: str  # the commit whose template overrides are used (never the joined branch's)
    branch: str
    lint_base: str
    remote_sha: str | None
    existing: Any  # .github.OpenProposal or None
    hub: Any
    work: Work
    proposal: plan.Proposal | None
    scopes: list[str]


def _propose(tree: Worktree, config: Config, opts: Options, ctx: Context, out: TextIO, err: TextIO) -> int:
    result = lint_diff([tree.root / s for s in ctx.scopes], config, ctx.lint_base)
    errors = [f for f in result.active() if f.severity == "error"]
    if errors and not opts.allow_findings:

        out.write(renderer("text")(result, color=False))
        err.write(f"cfgcheck: proposal refused: the change introduces {len(errors)} error"
                  f"{'s' if len(errors) != 1 else ''} (fix them, or pass --allow-findings)\n")
        return 1
    documents = build_documents(tree, config, ctx, result, opts.allow_findings,
                                opts.upgrade.report if opts.upgrade is not None else None)
    changed = tree.stage()
    if opts.dry_run:
        out.write(tree.staged_diff(*documents.changed_files) if documents.changed_files else "")
        if documents.adr_text is not None:
            out.write(f"\n==> {documents.adr_path} <==\n{documents.adr_text}")
        out.write(f"\n==> pull request into {ctx.base}: {documents.title} <==\n{documents.body}")
        err.write("cfgcheck: dry run: nothing was committed, pushed or opened\n")
        return 0
    _publish(tree, opts, ctx, documents, changed, out)
    return 0


def _publish(tree: Worktree, opts: Options, ctx: Context, documents: Documents, changed: bool, out: TextIO) -> None:
    """Commit, push and open (or update) the pull request. The body is checked against GitHub's limit
    before anything is pushed; a pull request call that fails after the push says so in one line with
    what to do (the branch is there: run again, or open it by hand)."""
    branch, hub = ctx.branch, ctx.hub
    title, body = hub.outgoing(documents.title, documents.body)  # what GitHub will get, or refused here
    if changed:
        sha = tree.commit_staged(_commit_message(documents.title, documents.history, ctx.work.specs, branch))
        out.write(f"committed {sha[:12]} on {branch}\n")
    else:
        out.write(f"no new commit: {branch} already has this change\n")
    if tree.head() != ctx.remote_sha:
        tree.push(opts.remote, branch, ctx.remote_sha)
        out.write(f"pushed {branch} to {opts.remote}\n")
    try:
        pull = ctx.existing.pull if ctx.existing is not None else hub.find_for_branch(branch, ctx.base)
        if pull is None:
            pull, opened = hub.create(ctx.base, branch, title, body)
            if opened:
                out.write(f"opened pull request #{pull.number}: {pull.html_url}\n")
                return
        updated = hub.update(pull, title, body)
    except GitHubError as exc:
        raise GitHubError(f"{exc}; the branch {branch} is pushed to '{opts.remote}': run the same command again, "
                          f"or open the pull request by hand: {hub.compare_url(ctx.base, branch)}") from None
    out.write(f"updated pull request #{pull.number}: {pull.html_url}\n" if updated else
              f"pull request #{pull.number} is up to date: {pull.html_url}\n")


class _Redacted:
    """A stream whose every write passes ``redact``: nothing propose prints carries a credential."""

    def __init__(self, stream: TextIO, token: str | None):
        self.stream, self.token = stream, token

    def write(self, text: str) -> int:
        return self.stream.write(redact(text, self.token))


def main(opts: Options, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """``run`` with every expected failure as one line on ``err`` and exit 2; every line redacted."""
    token = opts.token or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    out, err = _Redacted(out, token), _Redacted(err, token)
    try:
        return run(opts, out, err)
    except (PlanError, GitHubError) as exc:
        err.write(f"cfgcheck: error: {exc}\n")
        return getattr(exc, "code", 2) if isinstance(exc, PlanError) else 2
