"""Diff mode (``cfgcheck lint --base REF``): what a change introduces, and the change rules.

The base version of each changed file is read with ``git show`` (the user's tree is never checked
out); served models are paired by identity (same file and resource, renames followed); a head
finding is reported only when the base has no finding with the same fingerprint (rule, served model,
setting), so a line shift does not re-report. Only the changed files and the files they depend on are
parsed: LLMKube Models their InferenceServices name, and files that document a shared ceiling.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from . import git as _git_module, precedence, sandbox, stale
from .config import Config
from .errors import ConfigError
from .adapters.core.registry import file_format, file_suffixes
from .render import staging
from .render.charts import CHART_FILE, charts_by_name, charts_holding, dependency_folders, note_templates, rendering
from .discover import excluded, is_chart_template, listed_file
from .related_files import related_paths, within
from .lint import LintResult, enabled_rules, finalize, run_rules, served_models, unreadable
from .model import ServedModel
from .notes import per_run
from .paths import escapes
from .suppressions import silenced_by_change
from .yamlio import LoadedFile, YamlError, decode, load_file, parse_text


@dataclass(frozen=True)
class Base:
    """The commit a diff-mode run compared with: the merge base of ``ref`` and HEAD (here, not in lint.py:
    a run that compares with nothing does not create its class)."""

    ref: str
    commit: str

    def describe(self) -> str:
        return f"compared with {self.ref} at {self.commit[:12]} (merge base with HEAD)"


@dataclass
class Change:
    status: str  # A, M, D, R
    path: str  # head path (repo-relative)
    base_path: str | None  # path at the base (None for an added file)


# git for diff mode: a failure where an answer is needed is a ConfigError (exit 2, one line)
git = functools.partial(_git_module.run, check=True, error=ConfigError)


def merge_base(root: Path, ref: str) -> Base:
    """The commit to compare with: the merge base of ``ref`` and HEAD, so that a branch is answerable
    only for its own changes, not for what ``ref`` gained after the branch was cut (``git diff A...B``).
    Without a common history (unrelated histories, or before the first commit) it is ``ref`` itself;
    in a shallow clone a missing merge base means missing history, so that would blame the branch for
    what ``ref`` changed: stop, and say how to fetch it."""
    commit = resolve_base(root, ref)
    found = git(root, "merge-base", "--end-of-options", commit, "HEAD", check=False)
    if found.returncode == 0 and found.stdout.strip():
        return Base(ref, found.stdout.decode().strip())
    if _is_shallow(root):
        raise ConfigError(f"base '{ref}' has no common history with HEAD in this shallow clone; fetch it with its "
                          f"history: `{fetch_command(root, ref)}` (actions/checkout: fetch-depth: 0)")
    return Base(ref, commit)


def _is_shallow(root: Path) -> bool:
    return git(root, "rev-parse", "--is-shallow-repository", check=False).stdout.decode().strip() == "true"


def resolve_base(root: Path, ref: str) -> str:
    if git(root, "rev-parse", "--is-inside-work-tree", check=False).returncode != 0:
        raise ConfigError(f"--base needs a git repository; {root} is not one")
    found = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if found.returncode == 0:
        return found.stdout.decode().strip()
    if _is_shallow(root):
        raise ConfigError(f"base '{ref}' is not in this shallow clone; fetch it with its history: "
                          f"`{fetch_command(root, ref)}` (actions/checkout: fetch-depth: 0)")
    raise ConfigError(f"base '{ref}' is not a commit, branch or tag in this repository")


def fetch_command(root: Path, ref: str) -> str:
    """A git command that makes ``ref`` resolvable, with the history a merge base needs.

    A single-branch shallow clone (actions/checkout's default) fetches only its own branch, so the
    refspec names where the base goes: ``origin/main`` -> ``refs/remotes/origin/main``; a bare branch
    name -> a local branch of that name; a commit id -> the commit itself.
    """
    remotes = git(root, "remote", check=False).stdout.decode().split()
    remote, _, branch = ref.partition("/")
    if remote in remotes and branch:
        return f"git fetch --unshallow {remote} +refs/heads/{branch}:refs/remotes/{remote}/{branch}"
    upstream = "origin" if "origin" in remotes or not remotes else remotes[0]
    if re.fullmatch(r"[0-9a-fA-F]{7,64}", ref):
        return f"git fetch --unshallow {upstream} {ref}"
    return f"git fetch --unshallow {upstream} +refs/heads/{ref}:refs/heads/{ref}"


def changed_files(root: Path, base: str) -> list[Change]:
    """Files that differ between ``base`` and the working tree, renames followed, plus untracked ones
    (every file: a chart's ``_helpers.tpl`` matters too)."""
    out = git(root, "diff", "--name-status", "-M", "-z", "--end-of-options", base, "--").stdout.decode("utf-8", "replace")
    fields = out.split("\0")
    changes: list[Change] = []
    index = 0
    while index < len(fields) - 1:
        status = fields[index]
        if not status:
            break
        if status.startswith(("R", "C")):
            changes.append(Change("R", fields[index + 2], fields[index + 1]))
            index += 3
        else:
            path = fields[index + 1]
            changes.append(Change(status[0], path, None if status[0] == "A" else path))
            index += 2
    untracked = git(root, "ls-files", "--others", "--exclude-standard", "-z").stdout.decode("utf-8", "replace")
    changes.extend(Change("A", path, None) for path in untracked.split("\0") if path)
    return changes


def _yaml(change: Change) -> bool:
    return listed_file(change.path, file_suffixes()) or listed_file(change.base_path or "", file_suffixes())


def _base_text(root: Path, base: str, path: str) -> str | None:
    raw = _base_blob(root, base, path)
    return decode(raw) if raw is not None else None


@per_run
def lint_diff(paths: list[Path], config: Config, ref: str, select: list[str] | None = None,
              ignore: list[str] | None = None) -> LintResult:
    with sandbox.scope():  # one rendering budget and one private folder for the head and the base
        return _lint_diff(paths, config, ref, select, ignore)


def _lint_diff(paths: list[Path], config: Config, ref: str, select: list[str] | None,
               ignore: list[str] | None) -> LintResult:
    root = config.root
    compared = merge_base(root, ref)
    base = compared.commit
    scopes = [_relative(root, p) for p in paths]
    exclude = config.get("exclude", [])
    every = [c for c in changed_files(root, base) if within(c.path, scopes) and not excluded(c.path, exclude)]
    charts = charts_holding(root, [c.path for c in every]) if rendering(config.as_dict()) else []
    changes = _without_templates(root, [c for c in every if _yaml(c)], config)
    changed = {c.path for c in changes}
    rules = enabled_rules(config, select, ignore)
    limits = config.limits

    head_files: list[LoadedFile] = []
    for change in changes:
        if change.status != "D" and (root / change.path).is_file() and not escapes(root / change.path, root):
            head_files.append(load_file(root, root / change.path, limits, readers=file_format))
    base_files: list[LoadedFile] = []
    for change in changes:
        if change.base_path is None:
            continue
        try:
            text = _base_text(root, base, change.base_path)
        except YamlError as exc:
            base_files.append(LoadedFile(change.path, "", [], {}, exc))
            continue
        if text is not None:
            base_files.append(parse_text(change.path, text, limits, reader=file_format(change.path)))

    # Unchanged files the changed ones may depend on: parsed once, the same at base and head.
    dependencies = [load_file(root, root / rel, limits, readers=file_format) for rel in related_paths(
        root, [f.text for f in head_files + base_files], exclude, changed, scopes, suffixes=file_suffixes())]
    # Charts a change touches are rendered at head and, from a copy of the base's chart, at the base.
    head_charts = [load_file(root, root / rel, limits, readers=file_format) for rel in charts if rel not in changed]

    # the files they name (a compose .env) from each side's commit, never the work tree's untracked ones
    head_unparsed: list = []  # Helm templates that do not parse, each side's (their CFG000)
    base_unparsed: list = []
    head_context = served_models(head_files + head_charts + dependencies, config, _head(root), head_unparsed)
    base_context = served_models(base_files + dependencies, config, base) + [
        model for rel in charts for model in _base_chart_models(root, base, rel, config, base_unparsed)]
    in_change = changed | set(charts)
    head_models = [m for m in head_context if m.path in changed or m.identity.split("#", 1)[0] in in_change]
    base_models = [m for m in base_context if m.path in changed or m.identity.split("#", 1)[0] in in_change]
    base_by_identity = {m.identity: m for m in base_models}

    if any(rule.code == "CFG402" for rule in rules):
        _stale_comments(root, base, head_models, base_by_identity)
    head_findings = unreadable(head_files, rules, config, head_unparsed) + run_rules(
        rules, config, head_models, base_by_identity, base_context, head_context)
    base_rules = [r for r in rules if not r.diff_only]
    base_findings = unreadable(base_files, base_rules, config, base_unparsed) + run_rules(
        base_rules, config, base_models, context=base_context)
    base_findings = precedence.resolve(base_findings)[0]  # as the head's: an answered finding is not "fixed"
    result = finalize(head_findings, head_files, head_models, rules, config)
    base_prints = {f.fingerprint() for f in base_findings}
    head_prints = {f.fingerprint() for f in result.findings}
    introduced = []
    for finding in result.findings:
        finding.introduced = finding.fingerprint() not in base_prints
        if finding.introduced:
            introduced.append(finding)
    result.findings = introduced
    result.silenced = silenced_by_change(introduced, result.suppressions, head_files, base_files, base_models)
    # a file the head cannot read, or a chart it cannot render, hides its findings, it does not fix them
    unread = {file.path for file in head_files if file.error is not None}
    unrendered = tuple("" if found.folder == "." else found.folder + "/" for found in head_unparsed)
    result.fixed = [f for f in base_findings if f.fingerprint() not in head_prints and f.location.path not in unread
                    and not (unrendered and f.location.path.startswith(unrendered))]
    result.base_models = base_models
    result.base = compared
    return result


def _stale_comments(root: Path, base: str, head_models: list[ServedModel],
                    base_by_identity: dict[str, ServedModel]) -> None:
    """Comments in the repository that each changed served model's change made stale (CFG402 reads
    them from the model's cache: rules open no files)."""
    for model in head_models:
        before = base_by_identity.get(model.identity)
        changed = stale.changed_settings(before, model) if before is not None else []
        if changed:
            model.cache["stale-comments"] = stale.find(root, base, model, changed)


def _without_templates(root: Path, changes: list[Change], config: Config) -> list[Change]:
    """The changes without chart templates (not YAML until rendered; their chart is rendered instead)."""
    charts: dict[str, bool] = {}
    templates = [c.path for c in changes if c.status != "D" and is_chart_template(root / c.path, charts)]
    note_templates(templates, config.as_dict())
    return [c for c in changes if c.path not in templates]


def _base_chart_models(root: Path, base: str, chart: str, config: Config, unparsed: list) -> list[ServedModel]:
    """Served models of a chart as the base commit has it, rendered from a copy of its blobs (links are
    not copied; the copy is staged whole: Git tracks every file of it), so that its findings pair with
    the head's by identity; ``unparsed`` receives its templates that do not parse."""
    folder = chart.rsplit("/", 1)[0] if "/" in chart else "."
    if _base_text(root, base, chart) is None:
        return []
    # with the local charts it renders with (file:// dependencies), as the base has them
    folders = [folder, *dependency_folders(folder, lambda path: _base_blob(root, base, path),
                                           lambda: _base_charts(root, base))]
    listing = git(root, "ls-tree", "-r", "-z", "--end-of-options", base, "--", *folders).stdout
    with sandbox.scope() as run, run.folder("cfgcheck-chart-") as copy, staging.from_commit(copy):
        for entry in filter(None, listing.decode("utf-8", "surrogateescape").split("\0")):
            meta, _, path = entry.partition("\t")
            mode, kind, sha = meta.split(" ")
            if kind != "blob" or mode == "120000" or ".." in path.split("/"):
                continue
            target = copy / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(git(root, "cat-file", "blob", "--end-of-options", sha).stdout)
        base_config = Config(copy, config.data, config.source)
        return served_models([load_file(copy, copy / chart, config.limits)], base_config, unparsed=unparsed)


def _head(root: Path) -> str | None:
    """The commit checked out (None before the first commit: Git's index decides what is read)."""
    found = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", "HEAD^{commit}", check=False)
    return found.stdout.decode().strip() or None if found.returncode == 0 else None


def _base_blob(root: Path, base: str, path: str) -> bytes | None:
    shown = git(root, "cat-file", "blob", "--end-of-options", f"{base}:{path}", check=False)
    return shown.stdout if shown.returncode == 0 else None


def _base_charts(root: Path, base: str) -> dict[str, list[str]]:
    """The base commit's chart folders by chart name (for a remote dependency the repository publishes)."""
    listing = git(root, "ls-tree", "-r", "-z", "--name-only", "--end-of-options", base).stdout.decode("utf-8", "surrogateescape")
    paths = [p for p in listing.split("\0") if p.rsplit("/", 1)[-1] == CHART_FILE]
    return charts_by_name(paths, lambda path: _base_blob(root, base, path))


def _relative(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        raise ConfigError(f"{path} is outside the repository at {root}") from None
