"""The lint engine: files -> located served models -> rules -> stamped findings -> suppressions."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from . import adapters
from .adapters.base import has_serving_marker
from .adapters.kustomize import NAMES as KUSTOMIZATIONS
from .config import Config, ConfigError
from .model import SEVERITY_RANK, Finding, Location, ServedModel
from .registry import Rule, UnknownRule, all_rules, by_code, find
from .yamlio import LoadedFile, load_file, relpath

YAML_SUFFIXES = (".yaml", ".yml")
_SUPPRESSION = re.compile(r"cfgcheck:\s*ignore\[([^\]]*)\]\s*(.*)$")
ANNOTATION = "cfgcheck.io/ignore"


@dataclass
class RuleContext:
    """What a rule sees besides its served model."""

    options: dict[str, Any]
    config: dict[str, Any]
    models: list[ServedModel] = field(default_factory=list)  # every served model of the run
    base: ServedModel | None = None  # diff mode: the same served model at the base
    base_models: list[ServedModel] = field(default_factory=list)
    cache: dict = field(default_factory=dict)  # shared by every rule of one run: facts about ``models``


@dataclass
class LintResult:
    findings: list[Finding]
    files: list[LoadedFile]
    models: list[ServedModel]
    fixed: list[Finding] = field(default_factory=list)  # diff mode: base findings the change removed
    base_models: list[ServedModel] = field(default_factory=list)  # diff mode: changed served models at the base

    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]

    def counts(self) -> dict[str, int]:
        counts = {"errors": 0, "warnings": 0, "notes": 0, "suppressed": 0}
        for finding in self.findings:
            if finding.suppressed is not None:
                counts["suppressed"] += 1
            else:
                counts[{"error": "errors", "warning": "warnings", "note": "notes"}[finding.severity]] += 1
        return counts

    def exit_code(self, fail_on: str) -> int:
        if fail_on == "never":
            return 0
        threshold = SEVERITY_RANK[fail_on]
        return int(any(SEVERITY_RANK[f.severity] >= threshold for f in self.active()))


# ---------------------------------------------------------------- files


def discover(paths: Iterable[Path], root: Path, exclude: list[str]) -> list[Path]:
    """YAML files under ``paths``; symlinks leading outside ``root`` and symlink loops are skipped.

    Folders are walked without following links; a file that is itself a link is resolved (and kept
    only inside the repository). Plain files cost no system call beyond the directory scan.
    """
    root = root.resolve()
    found: list[Path] = []
    seen: set[str] = set()
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise ConfigError(f"path does not exist: {path}")
        if path.is_file():
            _add(path, root, exclude, found, seen)
            continue
        if escapes(path, root):
            continue
        top = Path(os.path.realpath(path))
        stack = [top]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            subfolders = []
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    child = folder / entry.name
                    if not entry.name.startswith(".git") and not _excluded(child, root, exclude):
                        subfolders.append(child)
                elif entry.name.endswith(YAML_SUFFIXES):
                    if entry.is_symlink():
                        _add(folder / entry.name, root, exclude, found, seen)
                    elif entry.is_file(follow_symlinks=False) and entry.path not in seen:
                        file = folder / entry.name
                        if not _excluded(file, root, exclude):
                            seen.add(entry.path)
                            found.append(file)
            stack.extend(reversed(subfolders))
    return found


def _excluded(path: Path, root: Path, exclude: list[str]) -> bool:
    if not exclude:
        return False
    rel = relpath(root, path)
    return any(fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel + "/", pattern) for pattern in exclude)


def _add(path: Path, root: Path, exclude: list[str], found: list[Path], seen: set[str]) -> None:
    """A file named on the command line, or a link met in a folder: resolved, kept inside the repo."""
    if not path.is_file():
        return  # a directory named x.yaml, a dangling or looping symlink
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return
    if escapes(path, root, real):
        return  # never follow a link out of the repository, even one named on the command line
    if str(real) in seen or _excluded(real, root, exclude):
        return
    seen.add(str(real))
    found.append(real)


def escapes(path: Path, root: Path, real: Path | None = None) -> bool:
    """True when ``path`` goes through a symlink (itself or a parent folder) to outside ``root``."""
    try:
        real = real or path.resolve(strict=True)
    except (OSError, RuntimeError):
        return True
    if os.path.normpath(path.absolute()) == str(real):
        return False
    try:
        real.relative_to(root.resolve())
    except ValueError:
        return True
    return False


def serving_filter(config: Config):
    """The prefilter for ``load_file``: serving markers, a kustomization (it may render files that
    have them), or a path named by a mapped ``values:`` entry."""
    globs = [pattern for entry in config.get("values", []) or [] for pattern in entry.get("files", [])]

    def wanted(rel: str, text: str) -> bool:
        return has_serving_marker(text) or rel.rsplit("/", 1)[-1] in KUSTOMIZATIONS \
            or any(fnmatch.fnmatch(rel, g) for g in globs)

    return wanted


class _Progress:
    """A progress line on stderr for long runs on a terminal."""

    def __init__(self, total: int):
        self.total, self.count = total, 0
        self.enabled = total >= 500 and sys.stderr.isatty()

    def step(self) -> None:
        self.count += 1
        if self.enabled and self.count % 100 == 0:
            sys.stderr.write(f"\rcfgcheck: {self.count}/{self.total} files")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 40 + "\r")


def collect(paths: list[Path], config: Config, fast: bool = True, progress: bool = False,
            prefilter: bool = True) -> tuple[list[LoadedFile], list[ServedModel]]:
    """Load files and build their served models in one pass, dropping each YAML tree as soon as its
    models exist: peak memory follows the largest file, not the tree. A file whose LLMKube
    InferenceService names a Model not seen yet waits until every file has been read."""
    files = discover(paths, config.root, config.get("exclude", []))
    workspace = adapters.Workspace(config=config.as_dict())
    wanted = serving_filter(config) if prefilter else None
    reporter = _Progress(len(files)) if progress else None
    loaded: list[LoadedFile] = []
    models: list[ServedModel] = []
    waiting: list[LoadedFile] = []
    for file in files:
        current = load_file(config.root, file, config.limits, fast, wanted)
        loaded.append(current)
        if current.serving:
            adapters.index(workspace, current)
            if adapters.refers_forward(workspace, current):
                waiting.append(current)
            else:
                models.extend(_release(adapters.served_models(workspace, current), current))
        if reporter:
            reporter.step()
    for current in waiting:
        models.extend(_release(adapters.served_models(workspace, current), current))
    if reporter:
        reporter.done()
    order = {file.path: index for index, file in enumerate(loaded)}
    models.sort(key=lambda m: (order.get(m.path, 0), m.document))
    return loaded, models


def _release(models: list[ServedModel], file: LoadedFile) -> list[ServedModel]:
    for document in file.documents:
        document.root = None
    return models


def served_models(loaded: list[LoadedFile], config: Config) -> list[ServedModel]:
    """Served models of files already loaded (diff mode and propose keep their trees)."""
    workspace = adapters.Workspace(config=config.as_dict())
    serving = [file for file in loaded if file.serving]
    for file in serving:
        adapters.index(workspace, file)
    models: list[ServedModel] = []
    for file in serving:
        models.extend(adapters.served_models(workspace, file))
    return models


# ---------------------------------------------------------------- rules


def resolve_codes(values: Iterable[str]) -> set[str]:
    """Codes for a list of codes, code prefixes (``CFG2``) or kebab names."""
    codes: set[str] = set()
    known = by_code()
    for value in values:
        value = value.strip()
        if not value:
            continue
        prefixed = {code for code in known if code.startswith(value.upper())}
        if value.upper().startswith("CFG") and prefixed:
            codes |= prefixed
            continue
        try:
            codes.add(find(value).code)
        except UnknownRule as exc:
            raise ConfigError(str(exc)) from None
    return codes


def enabled_rules(config: Config, select: list[str] | None, ignore: list[str] | None) -> list[Rule]:
    chosen = select if select else config.get("select")
    selected = resolve_codes(chosen) if chosen else {rule.code for rule in all_rules()}
    ignored = resolve_codes((config.get("ignore") or []) + (ignore or []))
    resolve_codes(config.rule_settings)  # an unknown rule under `rules:` is a configuration error
    return [rule for rule in all_rules() if rule.code in selected and rule.code not in ignored]


def rule_options(rule: Rule, config: Config) -> tuple[str, dict[str, Any]]:
    """Severity and options of ``rule``: ``rules:`` keys name rules as ``--select`` does (codes,
    prefixes, names); a key naming fewer rules is more specific and wins (CFG2, then CFG204)."""
    severity, options = rule.severity, dict(rule.options)
    matching = [(len(codes), settings) for key, settings in config.rule_settings.items()
                if rule.code in (codes := resolve_codes([key]))]
    for _, settings in sorted(matching, key=lambda item: -item[0]):
        severity = settings.get("severity", severity)
        options.update({k: v for k, v in settings.items() if k != "severity"})
    return severity, options


def stamp(finding: Finding, rule: Rule, severity: str, model: ServedModel | None) -> Finding:
    finding.code, finding.rule, finding.severity = rule.code, rule.name, severity
    if model is not None:
        finding.model = finding.model or model.name
        finding.model_identity = finding.model_identity or model.identity
    return finding


def run_rules(rules: list[Rule], config: Config, models: list[ServedModel],
              base_of: dict[str, ServedModel] | None = None, base_models: list[ServedModel] | None = None,
              context: list[ServedModel] | None = None) -> list[Finding]:
    """Run ``rules`` on ``models``; ``context`` is every served model rules may look at (siblings)."""
    findings: list[Finding] = []
    settings = config.as_dict()
    everything = context if context is not None else models
    cache: dict = {}
    for rule in rules:
        if rule.check is None or (rule.diff_only and base_of is None):
            continue
        severity, options = rule_options(rule, config)
        if rule.scope == "run":
            ctx = RuleContext(options, settings, everything, None, base_models or [], cache)
            findings.extend(stamp(f, rule, severity, None) for f in rule.check(models, ctx))
            continue
        for model in models:
            base = base_of.get(model.identity) if base_of else None
            ctx = RuleContext(options, settings, everything, base, base_models or [], cache)
            findings.extend(stamp(f, rule, severity, model) for f in rule.check(model, ctx))
    return findings


def unreadable(loaded: list[LoadedFile], rules: list[Rule], config: Config) -> list[Finding]:
    """CFG000 for files and documents that could not be read."""
    rule = by_code().get("CFG000")
    if rule is None or rule not in rules:
        return []
    severity, _ = rule_options(rule, config)
    findings = []
    for file in loaded:
        problems = [(file.error.message, file.error.line, file.error.column)] if file.error else []
        for document in file.documents:
            problems.extend(document.problems)
        for message, line, column in problems:
            findings.append(stamp(Finding(message, Location(file.path, line, column)),
                                  rule, severity, None))
    return findings


# ---------------------------------------------------------------- suppressions


@dataclass
class Suppression:
    codes: set[str]
    written: list[str]
    reason: str
    location: Location
    target_lines: set[int] | None  # None: the whole served model (annotation form)
    model_identity: str | None = None
    used: bool = False


def collect_suppressions(loaded: list[LoadedFile], models: list[ServedModel]) -> tuple[list[Suppression], list[tuple[Location, str]]]:
    """Suppressions from comments and annotations, and the problems with them (location, message)."""
    suppressions: list[Suppression] = []
    problems: list[tuple[Location, str]] = []
    for file in loaded:
        for line, comment in file.comments.items():
            match = _SUPPRESSION.search(comment.text)
            if not match:
                continue
            location = Location(file.path, line, comment.column)
            targets = {line} if not comment.full_line else {_line_below(file, line)}
            _add_suppression(match.group(1).split(","), match.group(2), location, targets, None,
                             suppressions, problems)
    for model in models:
        annotation = model.annotations.get(ANNOTATION)
        if not annotation:
            continue
        for entry in re.split(r"[;\n]", annotation):
            if not entry.strip():
                continue
            codes, _, reason = entry.partition(":")
            _add_suppression(codes.split(","), reason, model.location, None, model.identity, suppressions, problems)
    return suppressions, problems


def _line_below(file: LoadedFile, line: int) -> int:
    probe = line + 1
    while probe in file.comments and file.comments[probe].full_line:
        probe += 1
    return probe


def _add_suppression(written_codes, reason, location, targets, identity, suppressions, problems) -> None:
    written = [c.strip() for c in written_codes if c.strip()]
    codes: set[str] = set()
    for code in written:
        try:
            codes.add(find(code).code)
        except UnknownRule:
            problems.append((location, f"suppression names unknown rule '{code}'"))
    reason = reason.strip()
    if not reason:
        problems.append((location, f"suppression of {', '.join(written) or 'nothing'} gives no reason"))
    if codes:
        suppressions.append(Suppression(codes, written, reason, location, targets, identity))


def apply_suppressions(findings: list[Finding], suppressions: list[Suppression]) -> None:
    for finding in findings:
        for suppression in suppressions:
            if finding.code not in suppression.codes:
                continue
            if suppression.target_lines is not None:
                lines = {finding.location.line}
                if finding.location.path != suppression.location.path or not (lines & suppression.target_lines):
                    continue
            elif finding.model_identity != suppression.model_identity:
                continue
            suppression.used = True
            finding.suppressed = suppression.reason or "(no reason given)"
            break


def suppression_findings(suppressions: list[Suppression], problems: list[tuple[Location, str]],
                         rules: list[Rule], config: Config, ran: set[str]) -> list[Finding]:
    codes = by_code()
    findings = []
    invalid, unused = codes.get("CFG001"), codes.get("CFG002")
    if invalid is not None and invalid in rules:
        severity, _ = rule_options(invalid, config)
        findings.extend(stamp(Finding(message, location), invalid, severity, None)
                        for location, message in problems)
    if unused is not None and unused in rules:
        severity, _ = rule_options(unused, config)
        for suppression in suppressions:
            # Only report what could have matched: a suppression of a rule that did not run is not unused.
            if not suppression.used and suppression.codes & ran:
                message = f"suppression of {', '.join(sorted(suppression.codes))} suppresses nothing"
                findings.append(stamp(Finding(message, suppression.location, remediation="remove the suppression"),
                                      unused, severity, None))
    return findings


# ---------------------------------------------------------------- entry point


def lint(paths: list[Path], config: Config, select: list[str] | None = None, ignore: list[str] | None = None,
         fast: bool = True, progress: bool = False, prefilter: bool = True) -> LintResult:
    """Lint ``paths``. ``fast`` (libyaml composer) and ``prefilter`` (skip files that cannot hold a
    served model) change the cost, never the findings."""
    rules = enabled_rules(config, select, ignore)
    loaded, models = collect(paths, config, fast, progress, prefilter)
    findings = unreadable(loaded, rules, config) + run_rules(rules, config, models)
    return finalize(findings, loaded, models, rules, config)


def finalize(findings: list[Finding], loaded: list[LoadedFile], models: list[ServedModel], rules: list[Rule],
             config: Config) -> LintResult:
    suppressions, problems = collect_suppressions(loaded, models)
    apply_suppressions(findings, suppressions)
    ran = {rule.code for rule in rules}
    findings.extend(suppression_findings(suppressions, problems, rules, config, ran))
    findings.sort(key=lambda f: (f.location.path, f.location.line, f.location.column, f.code))
    return LintResult(findings, loaded, models)
