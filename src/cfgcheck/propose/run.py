"""``cfgcheck propose``: plan -> edit (comment-preserving) -> re-lint against the base -> ADR and PR
body -> one commit -> push -> pull request.

The proposal is built in a temporary worktree of the base branch (or of the open proposal's branch it
joins), so the user's working tree, index, HEAD and stash are never touched. Re-running is safe:
the branch name is stable, edits that are already made produce no commit, and a pushed branch
without a pull request gets one.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..config import Config, load as load_config, relative_config
from ..github.client import GitHubError
from ..lint import discover, lint as run_lint, served_models
from ..model import ServedModel
from ..render import Overrides
from ..yamlio import load_file
from . import docs, edit, plan
from .fix import compute as compute_fixes, write as write_files
from .gitops import Git, Worktree, repository_from_url
from .plan import PlanError

DEFAULT_ADR_DIR = "docs/adr"


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


def _relative(root: Path, path: Path, cwd: Path) -> str:
    absolute = (path if path.is_absolute() else cwd / path).resolve()
    try:
        rel = absolute.relative_to(root).as_posix()
    except ValueError:
        raise ProposeError(f"{path} is outside the repository at {root}") from None
    return rel or "."


def _branch_name(work: Work, fix: bool) -> str:
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
    files = [load_file(config.root, path, config.limits) for path in discover(paths, config.root, config.get("exclude", [])).files]
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
    settings = config.as_dict()
    for item in resolved:
        loaded = by_path.get(item.model.path)
        if loaded is None:
            raise ProposeError(f"cannot read {item.model.path}")
        edits.setdefault(item.model.path, []).extend(edit.edits_for(item, loaded, settings))
    results = edit.apply(by_path, edits)
    return Work(sorted({r.model.identity for r in resolved}), sorted({r.model.name for r in resolved}),
                [r.label for r in resolved], results, [c.spec() for c in proposal.changes], resolved)


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


def _title_of(history: list[dict]) -> str:
    first = str(history[0].get("title") or "Serving configuration change")
    return first if len(history) == 1 else f"{first} (+{len(history) - 1} more)"


def run(opts: Options, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    cwd = (opts.cwd or Path.cwd()).resolve()
    token = opts.token or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    start = opts.paths[0] if opts.paths else cwd
    start = start if start.is_absolute() else cwd / start
    if not start.exists():
        raise ProposeError(f"path does not exist: {start}")
    user = Git(start if start.is_dir() else start.parent, token)
    root = user.toplevel()
    user = Git(root, token)
    scopes = [_relative(root, p, cwd) for p in opts.paths] or ["."]

    proposal = None
    if not opts.fix:
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
        from .github import Hub

        repository = opts.repo or os.environ.get("GITHUB_REPOSITORY") or repository_from_url(url)
        if not repository or "/" not in repository:
            raise ProposeError(f"cannot tell the GitHub repository from remote '{opts.remote}'; pass --repo OWNER/NAME")
        hub = Hub(repository, token, opts.api_url)  # fails now, before anything is pushed, when there is no token
    if url is not None:
        base = opts.base or user.remote_head(opts.remote) or "main"
        if user.remote_branch(opts.remote, base) is None:
            raise ProposeError(f"base branch '{base}' is not on remote '{opts.remote}'")
        base_sha = user.fetch(opts.remote, base)
    else:
        base = opts.base or "HEAD"
        base_sha = user.resolve(base)

    config_file = None
    if opts.config_file is not None:
        config_file = relative_config(root, cwd / opts.config_file)  # read in the worktree, at the base

    with Worktree(user, base_sha) as tree:
        config = load_config(tree.root, tree.root / config_file if config_file else None)
        if proposal is not None:
            # names are only known once the models are: split NAME.SETTING against them
            _, models = _load(tree.root, scopes, config)
            proposal = plan.build(opts.sets, opts.file, opts.title, opts.why, [m.name for m in models])
        work = _plan_work(tree.root, scopes, config, opts, proposal)
        if opts.fix and not work.files:
            out.write("nothing to fix: no finding on the base branch has a mechanical fix\n")
            return 0

        existing = hub.find_for_models(work.identities, base) if hub is not None and work.identities else None
        branch = existing.branch if existing is not None else _branch_name(work, opts.fix)
        remote_sha = user.remote_branch(opts.remote, branch) if url is not None else None
        if existing is not None and remote_sha is None:
            raise ProposeError(f"the branch {branch} of pull request #{existing.number} is gone from "
                               f"'{opts.remote}'; close that pull request or restore the branch")
        lint_base = base_sha
        if remote_sha is not None:
            branch_sha = user.fetch(opts.remote, branch)
            if existing is not None or not user.is_ancestor(branch_sha, base_sha):
                # an open proposal to join, or a pushed branch whose pull request is still to open
                tree.checkout(branch_sha)
                lint_base = user.merge_base(branch_sha, base_sha)
                on_branch = _plan_work(tree.root, scopes, config, opts, proposal)
                if opts.fix:  # the documents describe every fix against the base, made or not
                    on_branch.identities, on_branch.names, on_branch.specs = work.identities, work.names, work.specs
                    on_branch.fixed_codes, on_branch.labels = work.fixed_codes, work.labels
                work = on_branch
            # else: the old branch is merged; start again from the base (the push lease replaces it)

        write_files(tree.root, work.files)
        _verify(tree.root, scopes, config, work)

        from ..diff import lint_diff

        result = lint_diff([tree.root / s for s in scopes], config, lint_base)
        errors = [f for f in result.active() if f.severity == "error"]
        if errors and not opts.allow_findings:
            from ..reporters import renderer

            out.write(renderer("text")(result, color=False))
            err.write(f"cfgcheck: proposal refused: the change introduces {len(errors)} error"
                      f"{'s' if len(errors) != 1 else ''} (fix them, or pass --allow-findings)\n")
            return 1

        settings = config.as_dict()
        from ..changes import model_changes

        changes = model_changes(result.models, result.base_models, settings)
        models_doc = docs.model_docs(changes, result.models, result.base_models, settings)
        changed_files = sorted({f.path for f in work.files} | {m.path for m in models_doc})

        adr_dir = str(config.get("adr_dir") or DEFAULT_ADR_DIR).strip("/")
        adr_path = None
        adr_text = None
        existing_adr = None
        ours = [p for p in tree.added_files(lint_base, adr_dir) if docs._ADR_NAME.match(Path(p).name)]
        if ours:
            adr_path = ours[0]
            existing_adr = (tree.root / adr_path).read_text(encoding="utf-8")
        history = docs.adr_history(existing_adr) or (existing.proposals if existing is not None else [])
        if opts.fix:
            entry = {"title": "Apply cfgcheck's mechanical fixes (" + ", ".join(work.fixed_codes) + ")",
                     "why": "These findings have mechanical fixes that keep the engine's behaviour: "
                            "the flags are written out in full.", "changes": work.specs, "fix": True}
        else:
            entry = {"title": proposal.title, "why": proposal.why, "changes": work.specs}
        if entry not in history:
            history.append(entry)
        title = _title_of(history)
        if adr_path is None and any(not p.get("fix") for p in history):
            number = docs.next_adr_number(tree.root / adr_dir)
            adr_path = f"{adr_dir}/{number:04d}-{docs.slug(title)}.md"
        html_url = hub.html_url() if hub is not None else None

        def link(path: str) -> str:
            return f"{html_url}/blob/{branch}/{path}" if html_url else path

        fix_only = all(p.get("fix") for p in history)
        facts = docs.facts(models_doc, fix_only, docs.outages(models_doc, result, work.identities))
        lint = docs.lint_summary(result, opts.allow_findings)
        adr = None
        if adr_path is not None:
            number_text = Path(adr_path).name[:4]
            adr = {"path": adr_path, "number": number_text, "link": link(adr_path), "title": title}
        context = dict(title=title, proposals=history, models=models_doc, lint=lint, facts=facts, adr=adr,
                       files=[{"path": p, "link": link(p), "relative": docs.relative_link(adr_path or p, p)}
                              for p in changed_files],
                       base=base, branch=branch, date=docs.adr_date(existing_adr) or docs.today(),
                       fix=fix_only)
        if adr_path is not None:
            adr_text = docs.render(Overrides(tree.root, base_sha), "adr.md.j2", **context)
            adr_text = docs.with_marker(adr_text, {"proposals": history})
            target = tree.root / adr_path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(adr_text.encode("utf-8"))
        models_marker = sorted(set(work.identities) | set(existing.models if existing is not None else []))
        body = docs.render(Overrides(tree.root, base_sha), "pr_body.md.j2", **context)
        body = docs.with_marker(body, {"models": models_marker, "branch": branch, "adr": adr_path,
                                       "proposals": history})

        changed = tree.stage()
        if opts.dry_run:
            config_paths = [p for p in changed_files]
            out.write(tree.staged_diff(*config_paths) if config_paths else "")
            if adr_text is not None:
                out.write(f"\n==> {adr_path} <==\n{adr_text}")
            out.write(f"\n==> pull request into {base}: {title} <==\n{body}")
            err.write("cfgcheck: dry run: nothing was committed, pushed or opened\n")
            return 0

        if changed:
            message = title + "\n\n" + "\n".join(str(p.get("why") or "") for p in history[-1:]) + "\n\n" + \
                "\n".join(f"- {spec}" for spec in work.specs) + "\n\nProposed with cfgcheck propose.\n"
            sha = tree.commit_staged(message)
            out.write(f"committed {sha[:12]} on {branch}\n")
        else:
            out.write(f"no new commit: {branch} already has this change\n")
        if tree.head() != remote_sha:
            tree.push(opts.remote, branch, remote_sha)
            out.write(f"pushed {branch} to {opts.remote}\n")

        pull = existing.pull if existing is not None else hub.find_for_branch(branch, base)
        if pull is None:
            pull = hub.create(base, branch, title, body)
            out.write(f"opened pull request #{pull.number}: {pull.html_url}\n")
        elif hub.update(pull, title, body):
            out.write(f"updated pull request #{pull.number}: {pull.html_url}\n")
        else:
            out.write(f"pull request #{pull.number} is up to date: {pull.html_url}\n")
    return 0


def main(opts: Options, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """``run`` with every expected failure as one line on ``err`` and exit 2."""
    try:
        return run(opts, out, err)
    except (PlanError, GitHubError) as exc:
        err.write(f"cfgcheck: error: {exc}\n")
        return getattr(exc, "code", 2) if isinstance(exc, PlanError) else 2
