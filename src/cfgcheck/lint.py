"""The lint engine: files -> located served models -> rules -> stamped findings -> suppressions."""

from __future__ import annotations

import fnmatch
import os
import sys
from pathlib import Path

from . import lazy, pool, precedence, suppressions
from .adapters.core.builtin import always_read, file_format, file_suffixes, has_serving_marker
from .adapters.core.references import dangling as _dangling
from .adapters.core.workspace import Workspace
from . import whole_run
from .packs import PackedCache
from .config import Config
from .context import RuleContext
from .discover import STDIN, Inputs, discover, load_stream
from .related_files import CEILING_SEARCH, RepoSearch, referrers, related_paths
from .model import SEVERITY_RANK, Finding, Location
from .notes import collected, note, per_run
from .paths import LOOKED, UNMARKED, noted, read_beyond, watching
from .render.charts import Unrenderable, note_templates, note_unrendered, unrenderable
from .registry import (Rule, enabled_codes, enabled_rules, load, resolve_codes, rule_options,  # noqa: F401
                       rules_needed)
from .stages import (first_pass as _first_pass, internal_error as _internal_error, isolated as _isolated,
                     isolated_load as _isolated_load, models_of as _models_of, release as _release, staged,
                     RunWorkspace, Staged)
from .yamlio import LoadedFile, TemplateSyntax, load_file, parse_cache, relpath

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable, Iterator
    from .diff import Base
    from .model import ServedModel

# The adapter registry, imported for the first file that holds a serving marker (its workspace, and the
# references that lead nowhere, which only adapters record, are asked of every run without it).
adapters = lazy.Module("cfgcheck.adapters.core.registry", Workspace=Workspace, dangling=_dangling)


# one per run, never compared: a value __eq__ is not worth creating at start-up
class LintResult:
    """What a lint run found: the findings, the files read and their served models (and, in diff mode, the base's)."""

    def __init__(self, findings: list[Finding], files: list[LoadedFile], models: list[ServedModel],
                 fixed: list[Finding] | None = None, base_models: list[ServedModel] | None = None,
                 base: 'Base | None' = None, suppressions: list | None = None, silenced: list | None = None) -> None:
        self.findings = findings
        self.files = files
        self.models = models
        self.fixed = [] if fixed is None else fixed  # diff mode: base findings the change removed
        self.base_models = [] if base_models is None else base_models  # diff mode: changed served models at the base
        self.base = base  # diff mode: the commit compared with
        self.suppressions = [] if suppressions is None else suppressions  # the suppressions read (suppressions.Suppression)
        self.silenced = [] if silenced is None else silenced  # diff mode: suppressions.Silenced, new findings a new suppression hides

    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]

    def served_count(self) -> int:
        """Served models, without the runtime templates (KServe ServingRuntime...) that only describe one."""
        return sum(1 for served in self.models if not served.template)

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


def serving_filter(config: Config, unmarked: set[str] | None = None):
    """The prefilter for ``load_file``: serving markers, a kustomization or a Helm chart (they may
    render files that have them), or a path named by a mapped ``values:`` entry. ``unmarked``: the run's
    files (absolute paths) found without a marker before their turn (``paths.UNMARKED``: the kustomize
    renderer tests the files a kustomization draws from as it reads them ahead), not tested again."""
    globs = [pattern for entry in config.get("values", []) or [] for pattern in entry.get("files", [])]
    root = os.path.join(os.path.abspath(config.root), "")  # with its separator: a file's path is root + rel

    def wanted(rel: str, text: str) -> bool:
        return (not (unmarked and root + rel in unmarked) and has_serving_marker(text)) \
            or always_read(rel.rsplit("/", 1)[-1]) or any(fnmatch.fnmatch(rel, g) for g in globs)

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


class Collection:
    """The files a run read and their served models, before the rules run."""

    def __init__(self, loaded: list[LoadedFile], models: list[ServedModel], context: list[ServedModel],
                 dangling: list | None = None, unrenderable: list[Unrenderable] | None = None) -> None:
        self.loaded = loaded  # the files linted
        self.models = models  # their served models
        self.context = context  # served models of related files read only for context (not reported)
        # references that lead nowhere (adapters/core/references.py), when the run read the whole repository
        self.dangling = [] if dangling is None else dangling
        # Helm templates that do not parse (render/charts.py): the chart cannot be installed
        self.unrenderable = [] if unrenderable is None else unrenderable


def collect(paths: list[Path], config: Config, fast: bool = True, progress: bool = False,
            prefilter: bool = True) -> tuple[list[LoadedFile], list[ServedModel]]:
    """Files and their served models (see ``gather``)."""
    collection = gather(paths, config, fast, progress, prefilter)
    return collection.loaded, collection.models


def gather(paths: list[Path], config: Config, fast: bool = True, progress: bool = False, prefilter: bool = True,
           stdin_filename: Path | None = None, jobs: int = 1, cache: bool = False,
           inputs: Inputs | None = None, read: dict[str, bytes] | None = None,
           started: pool.Workers | None = None) -> Collection:
    """Load files and build their served models in one pass, dropping each YAML tree as soon as its
    models exist: peak memory follows the largest file, not the tree. A file whose LLMKube
    InferenceService names a Model not seen yet waits until every file has been read; a Model that
    is still missing then, and (when files are named one by one, as pre-commit does) the files that
    document a shared GPU ceiling, are read from the rest of the repository as context. ``jobs``: the
    processes that read files (``stages.staged``: the same result with any number); ``cache``: files
    whose stage follows from their own text are kept in the content cache (``cache.py``); ``inputs``:
    what ``discover`` found for ``paths``, when the caller asked it already; ``read``: the bytes of
    files read already (the whole-run cache's), each taken once; ``started``: the workers that stage
    ``inputs.files``, started already (``starter``)."""
    inputs = inputs or discover(paths, config.root, config.get("exclude", []), file_suffixes())
    named_files = any(path != STDIN and not path.is_dir() for path in paths)
    # one git grep for the users of the named files and the files that document a GPU ceiling
    search = RepoSearch(config.root, config.get("exclude", []), [CEILING_SEARCH] if named_files else [],
                        file_suffixes())
    if named_files:  # as pre-commit names them: a changed .env or --config file re-lints its users
        named = [relpath(config.root, file) for file in inputs.files] + inputs.related
        inputs.files.extend(config.root / rel for rel in referrers(config.root, named, config.get("exclude", []), search))
    settings = config.as_dict()
    if inputs.templates:
        note_templates(inputs.templates, settings)
    unmarked: set[str] = set()  # the files read without a serving marker (paths.UNMARKED)
    workspace = _lazy_workspace(settings, unmarked, inputs.looked)
    wanted = serving_filter(config, unmarked) if prefilter else None
    root = os.path.join(os.path.abspath(config.root), "")  # as serving_filter joins it: root + a file's path
    reporter = _Progress(inputs.count()) if progress else None
    loaded: list[LoadedFile] = []
    models: list[ServedModel] = []
    waiting: list[LoadedFile] = []
    with parse_cache():  # a file an adapter reads again (a kustomization and its bases) is parsed once
        kept = PackedCache(settings, fast) if cache and wanted is not None else None
        for done in _read(inputs, config, fast, wanted, stdin_filename, (jobs, read, started), workspace, kept):
            current = done.file
            loaded.append(current)
            if done.models is not None:  # its stage built them (a file that shares no index)
                models.extend(done.models)
            elif current.serving:
                models.extend(_isolated(current, lambda: _first_pass(workspace(), current, waiting), []))
            if not current.serving and current.error is None and file_format(current.path) is None:
                unmarked.add(root + current.path)  # YAML read, and its text tested
            if reporter:
                reporter.step()
        if waiting:
            workspace().indexed = True
        context = _context(config, workspace, loaded, [f for f in waiting if adapters.refers_forward(workspace(), f)],
                           named_files, search)
        for current in waiting:
            models.extend(_release(_models_of(workspace(), current), current))
    if reporter:
        reporter.done()
    if models:  # a Dockerfile whose image a workload deploys is that workload's launch, not a model of its own
        models = adapters.settle(workspace(), models)
        adapters.attach_fleet(workspace(), models + context, loaded)
    order = {file.path: index for index, file in enumerate(loaded)}
    models.sort(key=lambda m: (order.get(m.path, 0), m.document))
    found = adapters.dangling(workspace())  # reported only when nothing outside the run may hold what is named
    return Collection(loaded, models, context, found if found and whole_repository(paths, inputs, config) else [],
                      unrenderable(workspace()))


def whole_repository(paths: list[Path], inputs: Inputs, config: Config) -> bool:
    """Whether the run reads every file a lint of the repository root would: the root folder itself, or
    files and folders that together are all of it. Only then is a reference that leads nowhere known to
    lead nowhere (pre-commit names changed files, a subfolder lint leaves the rest unread)."""
    if inputs.streams:
        return False
    root = config.root.resolve()
    if any(path.is_dir() and path.resolve() == root for path in paths):
        return True
    everything = discover([root], root, config.get("exclude", []), file_suffixes())
    return set(everything.files) <= set(inputs.files) and set(everything.templates) <= set(inputs.templates)


def _lazy_workspace(settings: dict, unmarked: set[str],
                    looked: dict[str, tuple[int, int]]) -> Callable[[], adapters.Workspace]:
    """The run's adapter workspace, made for the first file that holds a serving marker: a run over files
    without one imports no adapter, nor the capacity model and catalogs they read. ``unmarked``: the
    files read without a serving marker so far, as the kustomize renderer asks (``paths.UNMARKED``);
    ``looked``: what discovery's ``lstat`` found (``paths.LOOKED``)."""
    made: list[adapters.Workspace] = []

    def workspace() -> adapters.Workspace:
        if not made:
            made.append(RunWorkspace(config=settings, spaces={UNMARKED: unmarked, LOOKED: looked}))
        return made[0]
    return workspace


def _read(inputs: Inputs, config: Config, fast: bool, wanted, stdin_filename: Path | None,
          jobs: tuple[int, dict[str, bytes] | None, pool.Workers | None], workspace: Callable[[], adapters.Workspace],
          cache: PackedCache | None) -> Iterator[Staged]:
    """Each file after its stage; ``jobs``: the processes, the bytes of files read already, and the workers
    started already."""
    yield from staged(inputs.names(), config, fast, wanted, jobs[0], workspace, cache, jobs[1], jobs[2], inputs.looked)
    for stream in inputs.streams:
        yield Staged(load_stream(config.root, stream, config.limits, fast, stdin_filename, file_format))


def _context(config: Config, workspace: Callable[[], adapters.Workspace], loaded: list[LoadedFile], unresolved: list[LoadedFile],
             ceilings: bool, search: RepoSearch) -> list[ServedModel]:
    """Served models of related files outside the run: Models that ``unresolved`` InferenceServices
    name, the KubeAI values their KubeAI Models take, and with ``ceilings`` the files that document a
    ceiling for a memory fraction set here. Each file read is noted for the whole-run cache (cache.py)."""
    if not unresolved and not ceilings:
        return []
    texts = [file.text for file in (unresolved if not ceilings else loaded) if file.serving]
    # a file read without a serving marker (a ConfigMap of engine flags only) was not indexed: read it again
    indexed = {file.path for file in loaded if file.serving}
    related = related_paths(config.root, texts, config.get("exclude", []), indexed, ceilings=ceilings, search=search)
    for rel in related:
        read_beyond(config.root / rel)
    files = [_isolated_load(rel, lambda: load_file(config.root, config.root / rel, config.limits, readers=file_format))
             for rel in related]
    for file in files:
        _isolated(file, lambda: adapters.index(workspace(), file))
    return [model for file in files for model in _release(_models_of(workspace(), file), file)]


def served_models(loaded: list[LoadedFile], config: Config, commit: str | None = None,
                  unparsed: list[Unrenderable] | None = None) -> list[ServedModel]:
    """Served models of files already loaded (diff mode and propose keep their trees); the files a
    repository names (a compose ``.env``) are read at ``commit`` when given (adapters/launch/named_files.py).
    ``unparsed`` receives the Helm templates that do not parse (the files' CFG000, ``unreadable``)."""
    workspace = adapters.Workspace(config=config.as_dict(), commit=commit)
    serving = [file for file in loaded if file.serving]
    for file in serving:
        _isolated(file, lambda: adapters.index(workspace, file))
    models: list[ServedModel] = []
    for file in serving:
        models.extend(_models_of(workspace, file))
    models = adapters.settle(workspace, models)
    if models:
        adapters.attach_fleet(workspace, models, serving)
    if unparsed is not None:
        unparsed.extend(unrenderable(workspace))
    return models


# ---------------------------------------------------------------- rules


def stamp(finding: Finding, rule: Rule, severity: str, model: ServedModel | None,
          default: str | None = None) -> Finding:
    """Code, rule and severity: the configured one, or lower when the rule lowered it (a finding that
    rests on an assumed engine version), or the rule's own for one finding it is sure breaks (raised)
    when the severity is the ``default`` of the run's profile (not configured)."""
    own = finding.severity if finding.severity in SEVERITY_RANK else None
    if own is not None and (SEVERITY_RANK[own] < SEVERITY_RANK.get(severity, 0) or severity == (default or rule.severity)):
        severity = own
    finding.code, finding.rule, finding.severity = rule.code, rule.name, severity
    if model is not None:
        finding.model = finding.model or model.name
        finding.model_identity = finding.model_identity or model.identity
        assumed = model.conventions.get(finding.setting or "")
        if assumed and severity == "error":  # an error only when cfgcheck is sure of the value
            finding.severity = "warning"
            finding.message += f" (assumed: {assumed})"
    return finding


def run_rules(rules: list[Rule], config: Config, models: list[ServedModel],
              base_of: dict[str, ServedModel] | None = None, base_models: list[ServedModel] | None = None,
              context: list[ServedModel] | None = None, jobs: int = 1) -> list[Finding]:
    """Run ``rules`` on ``models``; ``context`` is every served model rules may look at (siblings). ``jobs``
    2 or more, outside diff mode and with ``RULES_APART`` models or more: the per-model rules check the last
    ``CHILD_SHARE`` of the models in a forked process while this one checks the rest; the findings are
    joined rule by rule, as one process finds them, and what the child read beyond the files (a README naming
    a GPU) is noted by this run, for the whole-run cache (not with CFGCHECK_DEBUG: a rule's exception is
    raised here, with its traceback)."""
    plan = _RulePlan(rules, config, models, base_of, base_models, context)
    if jobs > 1 and base_of is None and len(models) >= RULES_APART and pool.forks() \
            and not os.environ.get("CFGCHECK_DEBUG"):
        split = int(len(models) * (1 - CHILD_SHARE))
        child = pool.forked(lambda: pool.dumps(_said_while(lambda: plan.found(split, None, False)), names=False))
        try:
            found = plan.found(0, split, True)
            theirs, said, looked = pool.loads(child.receive(), _no_shared)
        finally:
            child.end()
        if looked:  # [] outside a run the whole-run cache notes
            noted(*looked)
        for message in said:
            note(message)
        found = [mine + other for mine, other in zip(found, theirs)]
    else:
        found = plan.found(0, None, True)
    return _at_references([finding for per_rule in found for finding in per_rule], models)


# Served models from which the per-model rules pay a forked process (a fork, the findings pickled): on the
# tree (158 served models) the run's CPU time after gather went from 0.19 s to 0.17 s with it.
RULES_APART = 100
# The share of the models the forked process checks: a little more than half, as the run also runs the
# cross-model rules and unpickles the findings (dense: 0.6 s of CPU time each with 0.55).
CHILD_SHARE = 0.55


def _no_shared(name: str) -> None:
    raise ValueError(f"findings name no shared object ({name})")


def _said_while(step: Callable[[], list]) -> tuple[list, list[str], list]:
    """``step()``, the notes it said and what it read beyond the files (``paths.watching``): a forked process
    says them, and the run notes them, through the run."""
    with collected() as channel, watching() as looked:
        found = step()
    return found, channel.said, looked


class _RulePlan:
    """What every rule checks in a run: its severities, options and served models."""

    def __init__(self, rules: list[Rule], config: Config, models: list[ServedModel],
                 base_of: dict[str, ServedModel] | None, base_models: list[ServedModel] | None,
                 context: list[ServedModel] | None) -> None:
        self.rules, self.config, self.models, self.base_of, self.base_models = rules, config, models, base_of, base_models
        self.settings = config.as_dict()
        self.everything = [m for m in (context if context is not None else models) if not m.template]
        self.crashed = _CrashReport(rules, config)

    def found(self, start: int, stop: int | None, whole: bool) -> list[list[Finding]]:
        """The findings of each rule, on the per-model rules' ``checked[start:stop]`` (``start`` and ``stop``
        counted in ``models``, scaled to each rule's own list); the run-scope rules' when ``whole``."""
        found: list[list[Finding]] = []
        base_of, base_models, settings = self.base_of, self.base_models or [], self.settings
        for rule in self.rules:
            findings: list[Finding] = []
            found.append(findings)
            if rule.check is None or (rule.diff_only and base_of is None):
                continue
            severity, options = rule_options(rule, self.config)
            graded = (severity, rule.severity_in(self.config.profile))  # (configured, the profile's)
            checked = self.models if rule.templates else [m for m in self.models if not m.template]
            if rule.scope == "run":
                if whole:
                    ctx = RuleContext(options, settings, self.everything, None, base_models, base_of or {})
                    findings.extend(_run_scope(rule, graded, checked, ctx, self.crashed))
                continue
            # outside diff mode every served model's context is alike (no rule changes its context): one per rule
            alike = None if base_of else RuleContext(options, settings, self.everything, None, base_models)
            for model in checked[self._scaled(start, checked):self._scaled(stop, checked)]:
                ctx = alike or RuleContext(options, settings, self.everything, base_of.get(model.identity), base_models)
                try:
                    findings.extend([stamp(f, rule, graded[0], model, graded[1]) for f in rule.check(model, ctx)])
                except Exception as exc:
                    findings.extend(self.crashed(exc, rule, model))
        return found

    def _scaled(self, at: int | None, checked: list[ServedModel]) -> int | None:
        return at if at is None or len(checked) == len(self.models) else at * len(checked) // len(self.models)


def _at_references(findings: list[Finding], models: list[ServedModel]) -> list[Finding]:
    """A finding at a value that a model's document takes by name from another file (a compose command's
    ``${MAX_LEN}`` written in ``.env``) is shown where the document refers to it, where a reviewer reads
    the command; the value's line becomes its first related location."""
    references = {m.identity: m.referenced_at for m in models if m.referenced_at}
    for finding in findings if references else ():
        at = finding.location
        where = references.get(finding.model_identity or "", {}).get((at.path, at.line, at.column))
        if where is not None:
            finding.location, finding.related = where, (at, *(r for r in finding.related if r != at))
    return findings


class _CrashReport:
    """CFG000 findings for a rule that raised on a served model (when CFG000 is enabled)."""

    def __init__(self, rules: list[Rule], config: Config):
        self.rule = load("CFG000")
        self.enabled = self.rule is not None and self.rule in rules
        self.severity = rule_options(self.rule, config)[0] if self.enabled else "error"

    def __call__(self, exc: Exception, rule: Rule, model: ServedModel) -> list[Finding]:
        if os.environ.get("CFGCHECK_DEBUG"):
            raise exc
        if not self.enabled:
            return []
        message = _internal_error(exc, f"checking {rule.code} {rule.name} on this served model")
        return [stamp(Finding(message, model.location, setting=f"crash:{rule.code}"), self.rule, self.severity, model)]


def _run_scope(rule: Rule, graded: tuple[str, str], models: list[ServedModel], ctx: RuleContext,
               crashed: _CrashReport) -> list[Finding]:
    """A rule that checks every served model at once; when it raises, it runs again file by file so
    that only the files it fails on are reported, and the others keep their findings. ``graded``:
    (the configured severity, the profile's)."""
    severity, default = graded
    try:
        return [stamp(f, rule, severity, None, default) for f in rule.check(models, ctx)]
    except Exception:
        if os.environ.get("CFGCHECK_DEBUG"):
            raise
    by_file: dict[str, list[ServedModel]] = {}
    for model in models:
        by_file.setdefault(model.path, []).append(model)
    findings: list[Finding] = []
    for group in by_file.values():
        try:
            findings.extend([stamp(f, rule, severity, None, default) for f in rule.check(group, ctx)])
        except Exception as exc:
            findings.extend(crashed(exc, rule, group[0]))
    return findings


_UNPARSED_FIX = ("close what the template opens ({{ if }}, {{ range }}, {{ with }} and {{ define }} each need "
                 "their {{ end }}; every {{ needs its }}) and check with `helm template` before merging")


def unreadable(loaded: list[LoadedFile], rules: list[Rule], config: Config,
               unparsed: list[Unrenderable] = ()) -> list[Finding]:
    """CFG000 for files and documents that could not be read, and for the Helm templates that do not parse
    (``unparsed``); other templates get a note per folder instead."""
    templates = [file.path for file in loaded if isinstance(file.error, TemplateSyntax)]
    if templates:
        note_unrendered(templates)
    rule = load("CFG000")
    if rule is None or rule not in rules:
        return []
    severity, _ = rule_options(rule, config)
    findings = []
    for file in loaded:
        if isinstance(file.error, TemplateSyntax):
            continue
        problems = [(file.error.message, file.error.line, file.error.column)] if file.error else []
        for document in file.documents:
            problems.extend(document.problems)
        for message, line, column in problems:
            findings.append(stamp(Finding(message, Location(file.path, line, column)),
                                  rule, severity, None))
    findings += [stamp(Finding(found.message, found.location, remediation=_UNPARSED_FIX), rule, severity, None)
                 for found in unparsed]
    return findings


def dangling(found: list[adapters.Dangling], rules: list[Rule], config: Config) -> list[Finding]:
    """CFG003 for the references that lead nowhere (recorded only when the run read the whole repository)."""
    rule = load("CFG003")
    if rule is None or rule not in rules:
        return []
    severity, _ = rule_options(rule, config)
    return [stamp(Finding(d.message, d.location, remediation=d.remediation, setting=d.named), rule, severity, None)
            for d in found]


# ---------------------------------------------------------------- entry point


@per_run
def lint(paths: list[Path], config: Config, select: list[str] | None = None, ignore: list[str] | None = None,
         fast: bool = True, progress: bool = False, prefilter: bool = True,
         stdin_filename: Path | None = None, jobs: int = 1, cache: bool = False) -> LintResult:
    """Lint ``paths``. ``fast`` (libyaml composer) and ``prefilter`` (skip files that cannot hold a
    served model) change the cost, never the findings. ``-`` in ``paths`` is standard input, reported
    as ``stdin_filename``. ``jobs``: worker processes for many files; ``cache``: use the content cache
    (``cache.py``); neither changes the result."""
    codes = enabled_codes(config, select, ignore)
    inputs = discover(paths, config.root, config.get("exclude", []), file_suffixes())
    started: list[pool.Workers] = []  # the workers, when they start before the whole-run key (``starter``)
    whole = whole_run.whole_run(paths, inputs, config, codes, fast, whole_run.starter(
        inputs, config, fast, jobs, serving_filter(config, set()), started)) if cache and prefilter else None
    inputs.stats.clear()  # what discovery's lstat said, asked by the whole-run key only: freed (5,000 files: 4 MiB)

    def linted() -> LintResult:
        collection = gather(paths, config, fast, progress, prefilter, stdin_filename, jobs, cache, inputs,
                            whole.read if whole is not None else None, started[0] if started else None)
        loaded, models = collection.loaded, collection.models
        rules = rules_needed(codes, models)
        findings = unreadable(loaded, rules, config, collection.unrenderable) + dangling(collection.dangling, rules, config) + \
            run_rules(rules, config, models, context=models + collection.context, jobs=jobs)
        return finalize(findings, loaded, models, rules, config, codes)
    try:
        return whole.run(linted) if whole is not None else linted()
    finally:
        for workers in started:  # the run failed before it took their stages: none left running
            workers.end()


def finalize(findings: list[Finding], loaded: list[LoadedFile], models: list[ServedModel], rules: list[Rule],
             config: Config, ran: set[str] | None = None) -> LintResult:
    """Findings deduplicated, one per cause (``precedence``), suppressed and sorted, with the suppression
    findings; ``ran`` are the codes of the enabled rules (default: those of ``rules``)."""
    findings, answered = precedence.resolve(distinct(findings))
    source = config.source.name if config.source is not None else ".cfgcheck.yaml"
    found = suppressions.collect(loaded, models, config.get("per-file-ignores"), source)
    # a suppression written for a finding another one now answers for is used, not reported as unused
    suppressions.apply(findings + answered, found.suppressions)
    ran = ran if ran is not None else {rule.code for rule in rules}
    findings.extend(suppression_findings(found, rules, config, ran))
    findings.sort(key=lambda f: (f.location.path, f.location.line, f.location.column, f.code))
    return LintResult(findings, loaded, models, suppressions=found.suppressions)


def distinct(findings: list[Finding]) -> list[Finding]:
    """The first of findings alike in code, severity, place, message and remediation. One patch line
    rendered through several kustomize overlays (or components) is in every rendered served model; it is
    one problem, reported once. Overlays that render it differently give different messages: kept."""
    seen: set[tuple] = set()
    kept: list[Finding] = []
    for finding in findings:
        where = finding.location
        key = (finding.code, finding.severity, where.path, where.line, where.column, finding.message,
               finding.remediation)
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return kept


def suppression_findings(found: suppressions.Collected, rules: list[Rule], config: Config,
                         ran: set[str]) -> list[Finding]:
    """CFG001 for malformed suppressions, CFG002 for those that suppress nothing."""
    findings = []
    invalid, unused = load("CFG001"), load("CFG002")
    if invalid is not None and invalid in rules:
        severity, _ = rule_options(invalid, config)
        findings.extend(stamp(Finding(message, location), invalid, severity, None)
                        for location, message in found.problems)
    if unused is not None and unused in rules:
        severity, _ = rule_options(unused, config)
        for suppression in suppressions.unused(found.suppressions, ran):
            message = f"suppression of {suppression.written} suppresses nothing"
            findings.append(stamp(Finding(message, suppression.location, remediation="remove the suppression"),
                                  unused, severity, None))
    return findings
