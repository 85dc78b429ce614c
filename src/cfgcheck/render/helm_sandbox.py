"""A Helm chart copied into a private folder with its local dependencies, and ``helm template`` run on
it in the renderers' sandbox (every byte of a pull request is hostile: docs/SECURITY.md,
"Rendering threat model").

``helm template`` needs every dependency of ``Chart.yaml`` under ``charts/``; ``helm dependency build``
would put them there, but it also downloads remote ones. So the chart is staged instead: a dependency
already vendored (``charts/NAME/`` or ``charts/NAME-VERSION.tgz``) stays as it is; a ``file://`` one
that stays inside the repository is copied to ``charts/NAME/`` (its own dependencies staged the same
way, as ``helm dependency build`` packages them); a remote one that is not vendored cannot be had
without the network, so it is left out of the staged ``Chart.yaml`` and the caller says so.

Only the files Git tracks are staged (``staging.py``: no untracked or ignored file, no link into
``.git`` or out of the repository, the chart's ``.helmignore`` applied). helm runs with fixed options
before ``--`` and the release name and the chart's absolute path after it (a chart named
``--post-renderer=sh`` is a name, and not a valid one: the release is then ``release``), with
``HELM_NO_PLUGINS`` and its cache, configuration and data folders inside the staging folder (no plugin,
repository list, registry credential or kubeconfig of the machine is read), no ``--dependency-update``,
no post-renderer, no ``--enable-dns`` and no schema validation (a schema's remote ``$ref`` would be
fetched), in ``sandbox.run_bounded``: an allow-listed environment, no network where the platform
allows, resource limits, and bounds on time and output.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import sandbox
from ..paths import UnsafePath, inside_repo
from ..yamlio import YamlError, load_data
from . import staging
from .charts import CHART_FILE, MAX_CHARTS, charts_by_name
from .staging import StageError

MAX_STAGED_BYTES = 64 * 1024 * 1024  # a chart with its dependencies; larger ones are not rendered
_LOWER_BOUND = re.compile(r"(?:^|>=?|\^|~|=)\s*v?(\d+\.\d+(?:\.\d+)?)")
MAX_DEPTH = 8  # dependencies of dependencies: deeper nesting is a loop or a hostile chart
# helm's release-name rule (helm/helm pkg/chartutil/validate_name.go, ValidateReleaseName): DNS-1123
_RELEASE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
MAX_RELEASE_NAME = 53
FALLBACK_RELEASE = "release"


@dataclass
class Staged:
    """A staged chart: ``path`` to render; ``origins`` maps each staged subchart folder (relative to
    the staged chart, ``charts/vllm``) to its folder in the repository; ``dependency_values`` are the
    repository's ``values.yaml`` of the staged dependencies (lowest priority first); ``dropped`` the
    remote dependencies left out; ``substituted`` the remote ones staged from the repository's own chart
    of that name (a repository that publishes the chart it depends on); ``keys`` the key of the chart's
    values under which each dependency's values sit (its alias or name; a nested one's, its parent's)."""

    path: Path
    origins: dict[str, str] = field(default_factory=dict)
    dependency_values: list[Path] = field(default_factory=list)
    dependency_folders: list[Path] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    substituted: list[str] = field(default_factory=list)
    keys: dict[Path, str] = field(default_factory=dict)
    kube_version: str | None = None


def stage(repo: Path, folder: Path, into: Path) -> Staged:
    """Copy the chart at ``folder`` (inside ``repo``) to ``into``/NAME with its local dependencies."""
    staged = Staged(into / folder.name)
    budget = staging.new_budget(MAX_STAGED_BYTES)
    _stage(repo, folder, staged.path, "", staged, budget, [folder.resolve()], None)
    staged.kube_version = lowest_kube_version(_chart_data(staged.path).get("kubeVersion"))
    return staged


def stage_values(repo: Path, folder: Path, files: list[Path], into: Path) -> dict[Path, Path]:
    """The values files to render the chart with (``--values``), staged as tracked files into ``into``
    (apart from the chart: helm reads them whatever its ``.helmignore`` says): repository path ->
    staged path, for those Git tracks. A file outside the chart (a GitOps deployment's per-model values)
    is staged from its own folder."""
    by_folder: dict[Path, dict[str, Path]] = {}
    real = folder.resolve()
    for path in files:
        home = real if path.resolve().is_relative_to(real) else path.resolve().parent
        by_folder.setdefault(home, {})[path.resolve().relative_to(home).as_posix()] = path
    found: dict[Path, Path] = {}
    budget = staging.new_budget(MAX_STAGED_BYTES)
    for index, (home, wanted) in enumerate(by_folder.items()):
        target = into if home == real else into.parent / f"{into.name}-{index}"
        try:
            staging.stage(repo, home, target, budget, only=set(wanted))
        except staging.StageError:
            continue  # nothing of that folder is tracked (or it is too large): each file's note says so
        found.update({path: target / rel for rel, path in wanted.items() if (target / rel).is_file()})
    return found


def release_name(chart_name: object) -> str:
    """The release to render as: the chart's name when helm would accept it as a release name, else
    ``release`` (a name is never an option: it comes after ``--`` too)."""
    name = str(chart_name)
    return name if len(name) <= MAX_RELEASE_NAME and _RELEASE_NAME.fullmatch(name) else FALLBACK_RELEASE


def lowest_kube_version(constraint: object) -> str | None:
    """The version a chart's ``kubeVersion`` constraint starts at (``>=1.33.0-0`` -> ``1.33.0``), to render
    it as such a cluster would (helm's own default, its client library's version, may be older); None when
    the chart sets none or it has no lower bound."""
    if not isinstance(constraint, str):
        return None
    match = _LOWER_BOUND.search(constraint)
    return match.group(1) if match else None


def _stage(repo: Path, folder: Path, target: Path, prefix: str, staged: Staged, budget: list[int],
           chain: list[Path], top: str | None) -> None:
    staging.stage(repo, folder, target, budget, helm=True)
    data = _chart_data(target)
    entries = data.get("dependencies") if isinstance(data, dict) else None
    kept: list[object] = []
    changed = False
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            kept.append(entry)
            continue
        name, alias = entry["name"], entry.get("alias")
        source = str(entry.get("repository") or "")
        vendored = _vendored(target / "charts", name)  # as staged: what Git tracks, .helmignore applied
        if vendored is not None:
            unpacked = folder / vendored.relative_to(target)
            if (unpacked / "values.yaml").is_file() and not (unpacked / "values.yaml").is_symlink():
                staged.dependency_values.insert(0, unpacked.resolve() / "values.yaml")
                staged.keys[unpacked.resolve() / "values.yaml"] = top or (alias if isinstance(alias, str) and alias
                                                                          else name)
            kept.append(entry)
        elif source.startswith("file://") or _published_here(repo, name, chain):
            if source.startswith("file://"):
                dependency = _local_dependency(repo, folder, source[len("file://"):], chain)
            else:
                dependency = _published_here(repo, name, chain)
                staged.substituted.append(f"{name} ({source}) with {dependency.relative_to(repo.resolve()).as_posix()}")
            sub = f"{prefix}charts/{name}"
            if not (target / "charts" / name).exists():  # a chart used twice (two aliases) is staged once
                key = top or (alias if isinstance(alias, str) and alias else name)
                staged.dependency_values.insert(0, dependency / "values.yaml")
                staged.keys[dependency / "values.yaml"] = key
                staged.dependency_folders.append(dependency)
                _stage(repo, dependency, target / "charts" / name, sub + "/", staged, budget, [*chain, dependency],
                       key)
            relative = dependency.relative_to(repo.resolve()).as_posix()
            staged.origins[sub] = relative
            if isinstance(alias, str) and alias:
                staged.origins[f"{prefix}charts/{alias}"] = relative  # helm names an aliased subchart by its alias
            kept.append(entry)
        else:
            if f"{name} ({source or 'no repository'})" not in staged.dropped:
                staged.dropped.append(f"{name} ({source or 'no repository'})")
            changed = True
    if changed:
        data["dependencies"] = kept
        (target / CHART_FILE).write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    staged.dependency_values = [p for p in staged.dependency_values if p.is_file()]


def _chart_data(folder: Path) -> dict:
    """The staged chart's ``Chart.yaml``: what Git tracks, never a link."""
    try:
        data = load_data(folder / CHART_FILE)
    except YamlError as exc:
        raise StageError(f"{CHART_FILE} cannot be read ({exc})") from None
    except OSError:
        raise StageError(f"{CHART_FILE} is not tracked by git") from None
    return data if isinstance(data, dict) else {}


def _vendored(charts: Path, name: str) -> Path | None:
    """Where ``charts/`` holds the dependency already: the folder whose ``Chart.yaml`` is named so (helm
    matches by that name, not the folder's), or the archive helm packages (``NAME-VERSION.tgz``)."""
    if (charts / name / CHART_FILE).is_file() and _chart_name(charts / name) == name:
        return charts / name
    for chart in sorted(charts.glob(f"*/{CHART_FILE}")) if charts.is_dir() else []:
        if not chart.is_symlink() and _chart_name(chart.parent) == name:
            return chart.parent
    return next(iter(sorted(charts.glob(f"{name}-*.tgz"))), None) if charts.is_dir() else None


def _chart_name(folder: Path) -> object:
    try:
        data = load_data(folder / CHART_FILE)
    except YamlError:
        return None
    return data.get("name") if isinstance(data, dict) else None


def _published_here(repo: Path, name: str, chain: list[Path]) -> Path | None:
    """The repository's own chart named ``name`` (``Chart.yaml`` ``name:``), if exactly one, not in ``chain``."""
    found = [repo.resolve() / folder for folder in repository_charts(repo.resolve()).get(name, [])]
    found = [folder for folder in found if folder not in chain]
    return found[0] if len(found) == 1 else None


@functools.lru_cache(maxsize=8)
def repository_charts(repo: Path) -> dict[str, list[str]]:
    """The work tree's chart folders (repo-relative) by chart name."""
    paths = []
    for chart in repo.rglob(CHART_FILE):
        if len(paths) >= MAX_CHARTS:
            break
        if ".git" not in chart.relative_to(repo).parts and not chart.is_symlink() and chart.is_file():
            paths.append(chart.relative_to(repo).as_posix())
    return charts_by_name(paths, lambda path: (repo / path).read_bytes())


def _local_dependency(repo: Path, folder: Path, written: str, chain: list[Path]) -> Path:
    """The folder of a ``file://`` dependency, refused outside the repository, in a loop or too deep."""
    target = Path(os.path.normpath(folder / written))
    try:
        resolved = inside_repo(repo, target, what="chart dependency")
    except UnsafePath as exc:
        raise StageError(str(exc)) from None
    if not (resolved / CHART_FILE).is_file():
        raise StageError(f"dependency file://{written} has no {CHART_FILE}")
    if resolved in chain or len(chain) > MAX_DEPTH:
        raise StageError(f"dependency file://{written} depends on itself or nests deeper than {MAX_DEPTH}")
    return resolved


def helm_env(home: Path) -> dict[str, str]:
    """helm's environment: the sandbox's allow-list, every helm folder inside ``home``, no plugins."""
    return sandbox.child_env(home, {
        "HELM_NO_PLUGINS": "1", "HELM_CACHE_HOME": str(home / "cache"), "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"), "HELM_PLUGINS": str(home / "plugins"),
        "HELM_REGISTRY_CONFIG": str(home / "registry.json"), "HELM_REPOSITORY_CONFIG": str(home / "repositories.yaml"),
        "HELM_REPOSITORY_CACHE": str(home / "repository"), "KUBECONFIG": str(home / "kubeconfig")})


def run_template(helm: str, release: str, chart: Path, values: Path | None, home: Path, limit: int,
                 timeout: float, kube_version: str | None = None) -> tuple[str | None, str, str | None]:
    """``helm template [OPTIONS] -- RELEASE CHART``: (output, "", None) or (None, why it failed, the bound
    that stopped it or None). At most ``limit`` bytes and ``timeout`` seconds, in the sandbox: a chart
    from a pull request can loop, print or allocate without end."""
    options = ["--skip-tests"]  # test hooks (templates/tests/) are pods that probe a release, not servers
    # a values.schema.json may $ref an http(s) URL, which the schema loader would fetch
    options.append("--skip-schema-validation")
    if kube_version is not None:
        options.append(f"--kube-version={kube_version}")
    if values is not None:
        options.append(f"--values={values.resolve()}")
    args = [helm, "template", *options, "--", release_name(release), str(chart.resolve())]
    try:
        outcome = sandbox.run_bounded(args, cwd=home, env=helm_env(home), timeout=timeout, limit=limit,
                                      sandboxed=True)
    except OSError as exc:
        return None, f"helm template failed ({exc.strerror or exc})", None
    if outcome.stopped is not None or outcome.returncode != 0:
        return None, sandbox.describe(outcome, "helm template", timeout, limit), outcome.stopped
    return outcome.stdout.decode("utf-8", "replace"), "", None
