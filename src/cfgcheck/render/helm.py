"""A local Helm chart (a folder with ``Chart.yaml``), linted as ``helm template`` renders it.

The chart is staged with its local dependencies (``helm_sandbox.py``) and rendered once with its default
``values.yaml`` and once more for each other values file beside it (``values-prod.yaml``,
``gaudi-values.yaml``, chart-testing's ``ci/*.yaml``, ``overrides/**``) or that one of the repository's
Argo CD deployments adds (``deployments.py``), as ``helm template NAME CHART --values FILE`` would
install it; the defaults alone are not rendered when every deployment adds a values file. The adapter registry reads the rendered objects like any file
(``source_map.Reader``); each value is then mapped back
to the values file and line that set it where the value can be traced there (the environment's file
first, then ``values.yaml``, then the dependencies' defaults), else to the word in a template that
holds it literally, else to the template that produced the object (helm's ``# Source:`` comment). A
served model is placed where its model is set; one a values adapter already reads from that line, or
one a rendering repeats unchanged, is reported once. The files under ``templates/`` are not linted one
by one (they are not YAML until rendered); discovery sets them aside and one note says so.

``render-helm`` in the configuration or ``--render-helm/--no-render-helm``: unset renders when
``helm`` is on PATH, ``true`` requires it (the command line checks), ``false`` never renders. Every
rendering of a run shares one time budget (``render-budget``, ``sandbox.RenderRun``): a chart left when
it is spent, or whose rendering hit a limit, is one note; after a rendering timed out, the chart's other
values files are not rendered.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import sandbox
from ..adapters.core.contexts import DocContext
from ..model import Location, ServedModel
from ..notes import note
from ..paths import read_beyond
from ..yamlio import DEFAULT_LIMITS, Document, YNode, load_file, parse_text
from .charts import CHART_FILE, Unrenderable, helm_binary, record_unrenderable
from .deployments import of_chart
from .helm_sandbox import run_template, stage, stage_values
from .source_map import ScopedSourceMap, SourceMap, read_rendering
from .staging import StageError

if TYPE_CHECKING:
    from .source_map import Reader
    from .helm_sandbox import Staged

NAMES = (CHART_FILE,)
MAX_VALUES_FILES = 16  # renderings per chart: each is a helm run (all of a run share one time budget)
_IMAGE_SPAN = 6  # lines from an image's repository to its tag (pullPolicy and comments between)
_SOURCE = re.compile(r"^# Source: (\S+)", re.M)
# helm's message for a template Go's text/template cannot parse (helm pkg/engine/engine.go cleanupParseError:
# "parse error at (%s): %s", the location "CHART/templates/x.yaml:LINE", sometimes ":COLUMN" after it)
_PARSE_ERROR = re.compile(r"parse error at \(([^()\s:]+):(\d+)(?::\d+)?\): (.+)")
_MAX_WHY = 160  # characters of helm's reason kept in the message (it quotes the template's own text)
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".txt")
_NOT_FILES = ("templates", "charts", "ci", "overrides")  # a chart's folders that are not files it includes
_MAX_CHART_FILE, _MAX_CHART_FILES = 64 * 1024, 64


def is_chart(ctx: DocContext, root: YNode) -> bool:
    return ctx.path.rsplit("/", 1)[-1] in NAMES and root.scalar("apiVersion") in ("v1", "v2") \
        and isinstance(root.scalar("name"), str)


def served_models(ctx: DocContext, root: YNode, reader: Reader) -> list[ServedModel]:
    """Served models of every rendering of the chart whose ``Chart.yaml`` this is, read by ``reader``."""
    if not is_chart(ctx, root) or ctx.workspace.config.get("render-helm") is False:
        return []
    read_beyond()  # a chart's folder, templates and dependencies, and helm itself: no whole-run cache entry
    repo = Path(str(ctx.workspace.config.get("root")))
    folder_rel = ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else "."
    folder = repo / folder_rel
    if folder.parent.name == "charts" and (folder.parent.parent / CHART_FILE).is_file():
        return []  # a subchart vendored in another chart: rendered through that chart only
    templates = _templates(repo, folder)
    deployed = of_chart(repo, folder_rel, ctx.workspace.space(__name__, dict))
    values = values_files(folder) + [v for v in dict.fromkeys(repo / d.values for d in deployed if d.values)]
    values = list(dict.fromkeys(values))
    if len(values) > MAX_VALUES_FILES:
        note(f"{folder_rel}: {len(values)} values files; rendered with the first {MAX_VALUES_FILES} only")
        values = values[:MAX_VALUES_FILES]
    default = folder / "values.yaml"
    serving = _serving(templates, [default, *values], reader.serving)
    if not serving and root.get("dependencies") is None:
        return []  # nothing a served model could be rendered from: not worth a helm run
    helm = helm_binary()
    if helm is None:
        note(f"{folder_rel}: helm not found, chart not rendered (its values files are linted one by one)")
        return []
    with sandbox.scope() as run:  # the run's, when there is one: one budget for every rendering
        if run.allowed(ctx.workspace.config) <= 0:
            note(f"{folder_rel}: chart not rendered: {run.budget_note(ctx.workspace.config)}")
            return []
        with run.folder("cfgcheck-helm-") as scratch:
            staged = _staged(repo, folder, folder_rel, scratch)
            if staged is None:
                return []
            for dependency in staged.dependency_folders:
                templates += _templates(repo, dependency)
            templates += _chart_files(staged.path, folder_rel)
            if not serving and not _serving(templates, staged.dependency_values, reader.serving):
                return []
            # every deployment of the chart adds its own values file: its defaults alone are never served
            alone = not deployed or not all(d.values for d in deployed)
            return _renderings(ctx, root, helm, staged, scratch, templates, [default, *values], run, reader, alone)


def _staged(repo: Path, folder: Path, folder_rel: str, scratch: Path) -> Staged | None:
    """The chart staged in ``scratch`` with its local dependencies, the notes on what was left out; None
    (with a note) when it cannot be staged."""

    try:
        staged = stage(repo, folder, scratch / "chart")
    except StageError as exc:
        note(f"{folder_rel}: chart not rendered: {exc}")
        return None
    if staged.substituted:
        note(f"{folder_rel}: remote dependencies rendered with the repository's own chart of that name: "
             f"{', '.join(staged.substituted)}")
    if staged.dropped:
        note(f"{folder_rel}: rendered without its remote dependencies {', '.join(staged.dropped)}: not "
             "vendored under charts/ and cfgcheck does not download (run `helm dependency build` and commit "
             "charts/ to lint them); their values are read by the values adapters")
    return staged


def _renderings(ctx: DocContext, root: YNode, helm: str, staged: Staged, scratch: Path,
                templates: list[tuple[str, str]], values: list[Path], run: sandbox.RenderRun,
                reader: Reader, alone: bool = True) -> list[ServedModel]:
    """One ``helm template`` per values file (the chart's defaults alone first, unless not ``alone``:
    every deployment adds values), mapped back; after a rendering that timed out, the chart's other
    values files are not rendered. The defaults' served models that set no model are left out when a
    values file sets one (the chart is a template for its per-model values)."""

    repo = Path(str(ctx.workspace.config.get("root")))
    folder_rel = ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else "."
    home = scratch / "home"
    home.mkdir()
    default, extras = values[0], values[1:]
    tracked = stage_values(repo, repo / folder_rel, extras, scratch / "values")
    found: list[ServedModel] = []
    seen: set[tuple] = set()
    defaults: set[int] = set()  # ids of the served models of the chart's defaults alone
    renderings: list[Path | None] = [None, *extras] if alone or not extras else list(extras)
    for index, extra in enumerate(renderings):
        label = _label(repo, folder_rel, extra)
        where = f"{folder_rel}{'' if extra is None else ' with ' + label}"
        if extra is not None and extra not in tracked:
            note(f"{where}: not rendered: the values file is not tracked by git")
            continue
        rendered, stopped = _render(ctx, root, helm, staged, tracked.get(extra), home, run, where, templates)
        if rendered is None:
            if stopped in ("budget", "parse"):
                break  # the run's budget is spent, or a template does not parse: the other values files are not tried
            if stopped == "timeout" and index < len(renderings) - 1:
                note(f"{folder_rel}: its other {len(renderings) - index - 1} values file(s) not rendered after that")
                break
            continue
        own = [p for p in (extra, default) if p is not None and p.is_file()]
        models = _mapped(ctx, staged, rendered, own, templates, label, reader)
        for model in _anchored(models, _places(repo, own, staged.keys, ctx.workspace),
                               _read_directly(repo, [*staged.dependency_values, *reversed(own)], reader)):
            signature = _signature(model)
            if signature in seen:
                continue  # a values file that changes nothing this served model runs with: one report
            seen.add(signature)
            if extra is not None:
                _place_in(model, own[0].resolve().relative_to(repo.resolve()).as_posix())
            else:
                defaults.add(id(model))
            found.append(model)
    return _kept(found, defaults, folder_rel)


def _kept(found: list[ServedModel], defaults: set[int], folder_rel: str) -> list[ServedModel]:
    """``found`` less the served models of the chart's defaults alone that serve no model, when a values
    file sets one, or when the defaults set an empty model (``model: ""``, a placeholder each deployment
    fills: the engine would not start with it)."""
    variants = any(_serves_a_model(model) for model in found if id(model) not in defaults)
    kept = [model for model in found if id(model) not in defaults or _serves_a_model(model)
            or not variants and not (model.model is not None and model.model.value == "")]
    if len(kept) < len(found) and not variants:
        note(f"{folder_rel}: its defaults set an empty model, a placeholder for the values each deployment adds: "
             "not linted as a served model (lint the chart with a values file that sets the model)")
    return kept


def _serves_a_model(model: ServedModel) -> bool:
    return model.model is not None and model.model.value not in (None, "")


def _label(repo: Path, folder_rel: str, extra: Path | None) -> str:
    """A rendering's name: its values file, relative to the chart, or to the repository when outside it."""
    if extra is None:
        return "values.yaml"
    real, folder = extra.resolve(), (repo / folder_rel).resolve()
    return (real.relative_to(folder) if real.is_relative_to(folder) else real.relative_to(repo.resolve())).as_posix()


def _render(ctx: DocContext, root: YNode, helm: str, staged: Staged, values: Path | None, home: Path,
            run: sandbox.RenderRun, where: str, templates: list[tuple[str, str]]) -> tuple[str | None, str | None]:
    """One ``helm template`` within the run's budget: (output, None), or (None, what stopped it) with
    one note."""
    limit = {**DEFAULT_LIMITS, **(ctx.workspace.config.get("limits") or {})}["max-file-bytes"]
    timeout = run.allowed(ctx.workspace.config)
    if timeout <= 0:
        note(f"{where}: chart not rendered: {run.budget_note(ctx.workspace.config)}")
        return None, "budget"
    with run.timed():
        rendered, failure, stopped = run_template(helm, str(root.scalar("name")), staged.path, values, home, limit,
                                                  timeout, staged.kube_version)
    if rendered is not None:
        return rendered, None
    if stopped == "timeout" and timeout < run.timeout:  # cut short by the run's budget, not its own time
        note(f"{where}: chart not rendered: {run.budget_note(ctx.workspace.config)}")
        return None, "budget"
    if stopped is None and _unparsable(ctx, str(root.scalar("name")), staged, failure, templates):
        return None, "parse"  # the same in every rendering: the chart's other values files are not tried
    note(f"{where}: {failure.replace(str(home.parent), '…')}; chart not rendered")
    return None, stopped


def _mapped(ctx: DocContext, staged: Staged, rendered: str, own: list[Path], templates: list[tuple[str, str]],
            label: str, reader: Reader) -> list[ServedModel]:
    """The served models of one rendering, each value mapped back to the values file or template line."""
    repo = Path(str(ctx.workspace.config.get("root")))
    folder_rel = ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else "."
    whole = parse_text(ctx.path, rendered)
    reader.index(whole)  # the whole rendering first: envFrom across subcharts
    ctx.workspace.held.update(_mounted(whole, templates))
    models = []
    for key, part in _by_subchart(rendered).items():
        # a subchart's values: its own defaults, then the chart's values under its key (the same model
        # id written for several subcharts of an umbrella is traced to the right one)
        scoped = [(p, None) for p in staged.dependency_values if staged.keys.get(p) == key] if key else []
        index = ScopedSourceMap(repo, scoped + [(p, key or None) for p in reversed(own)], ctx.workspace, templates)
        fallback = _fallback(folder_rel, staged.origins, part, templates)
        rendered_models = read_rendering(ctx, part, index, fallback, f"{ctx.path}#helm[{label}]", reader,
                                         keep_unchanged=True, indexed=True)
        for model in rendered_models:
            _image_beside_its_repository(model, index)
        models += rendered_models
    return models


def _by_subchart(rendered: str) -> dict[str, str]:
    """The rendered documents by the subchart whose template made them (helm's ``# Source:
    CHART/charts/SUB/templates/...``; "" for the chart's own), in order, each group one YAML stream."""
    groups: dict[str, list[str]] = {}
    for chunk in re.split(r"(?m)^---[ \t]*\n", rendered):
        if not chunk.strip():
            continue
        source = _SOURCE.search(chunk)
        parts = source.group(1).split("/") if source else []
        groups.setdefault(parts[2] if len(parts) > 3 and parts[1] == "charts" else "", []).append(chunk)
    return {key: "".join(f"---\n{chunk}" for chunk in chunks) for key, chunks in groups.items()}


def _image_beside_its_repository(model: ServedModel, index: SourceMap) -> None:
    """Helm values split an image into ``repository`` and ``tag``; a tag such as ``latest`` is written in
    many values files (an umbrella's own app image), so the image is placed at the tag written within a
    few lines after its repository, else at the repository, when the tag line found first is not there."""
    image = model.image
    if image is None or not isinstance(image.value, str) or "@" in image.value or ":" not in image.value:
        return
    repository, tag = image.value.rsplit(":", 1)
    if "/" in tag or image.value in index.by_text:
        return  # a registry port, no tag; or the image is written whole in a values file
    at = index.find(repository, None)
    if at is None or (at.path == image.location.path and 0 <= image.location.line - at.line <= _IMAGE_SPAN):
        return
    near = [held.location for held in index.by_text.get(tag, [])
            if held.location.path == at.path and 0 <= held.location.line - at.line <= _IMAGE_SPAN]
    image.location = near[0] if near else at


def _signature(model: ServedModel) -> tuple:
    """What a rendered served model runs: its object, argv, image, env, GPUs (not where it is reported)."""
    return (model.identity.split("]", 1)[-1], tuple(token.text for token in model.argv),
            *(str(s.value) if s is not None else None for s in (model.image, model.model, model.gpus, model.replicas)),
            tuple(sorted((name, str(setting.value)) for name, setting in model.env.items())))


def _place_in(model: ServedModel, values: str) -> None:
    """A served model of a rendering with an extra values file whose model that file does not set: placed
    at the first line of that file that sets one of its settings (what makes this rendering differ)."""
    if model.location.path == values:
        return
    settings = [s for group in model.occurrences.values() for s in group]
    settings += [s for s in (model.image, model.gpus, model.replicas) if s is not None] + list(model.env.values())
    lines = [s.location for s in settings if s.location.path == values]
    if lines:
        first = min(lines, key=lambda location: (location.line, location.column))
        model.location = Location(first.path, first.line, first.column)
        model.path = first.path


def _anchored(models: list[ServedModel], places: dict[str, Location | None],
              direct: set[tuple[str, int]]) -> list[ServedModel]:
    """Rendered served models placed where their model is set, when the chart's values file sets it
    (the line a user edits to change what is served), or at the umbrella's key of the dependency whose
    defaults set it; those a values adapter reads from that same line already (the production-stack
    chart's ``modelSpec``, an umbrella's ``app-template`` values) are left to it, so that one setting is
    not reported twice."""
    kept = []
    for model in models:
        where = model.model.location if model.model is not None else None
        if where is not None and where.path in places:
            if (where.path, where.line) in direct:
                continue
            anchor = places[where.path] or where
            model.location = Location(anchor.path, anchor.line, anchor.column)
            model.path = anchor.path
        kept.append(model)
    return kept


def _places(repo: Path, own: list[Path], keys: dict[Path, str], workspace) -> dict[str, Location | None]:
    """Repo-relative values files -> where a served model whose model one of them sets is placed: None
    for the chart's own values files (at the model), the dependency's key in them for a dependency's."""
    base = repo.resolve()
    places: dict[str, Location | None] = {p.resolve().relative_to(base).as_posix(): None for p in own}
    for values, key in keys.items():
        for file in own:
            loaded = load_file(repo, file)
            root = loaded.documents[0].root if loaded.documents else None
            node = root.key_node(key) if root is not None and root.kind == "map" else None
            if node is not None:
                places[values.relative_to(base).as_posix()] = DocContext(loaded, loaded.documents[0],
                                                                         workspace).location(node)
                break
    return places


def _read_directly(repo: Path, files: list[Path], reader: Reader) -> set[tuple[str, int]]:
    """(path, line) of the model of every served model the registry reads from the values ``files``."""
    found: set[tuple[str, int]] = set()
    for file in files:
        for model in reader.models(load_file(repo, file)):
            if model.model is not None:
                found.add((model.model.location.path, model.model.location.line))
    return found


def values_files(folder: Path) -> list[Path]:
    """The values files a user would apply to the chart besides its ``values.yaml``: those beside it
    (``values-prod.yaml``, ``gaudi-values.yaml``), the chart-testing ``ci/*-values.yaml``
    (helm/chart-testing: every file of ``ci/`` is one install) and the per-model override files of an
    ``overrides/`` folder (``overrides/models/<name>.yaml``), in name order."""
    found = [p for p in folder.glob("*values*.y*ml") if p.name != "values.yaml"]
    found += folder.glob("ci/*.y*ml")
    found += folder.glob("overrides/**/*.y*ml")  # per-model overrides kept in the chart (applied with -f)
    return sorted((p for p in found if p.is_file() and not p.is_symlink()), key=lambda p: p.relative_to(folder))


def _serving(templates: list[tuple[str, str]], values: list[Path], serving: Callable[[str], bool]) -> bool:
    return any(serving(text) for text in [text for _, text in templates] + [_read(p) for p in values if p.is_file()])


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return ""


def _chart_files(staged: Path, folder_rel: str) -> list[tuple[str, str]]:
    """(repo-relative path, text) of the files a chart's templates may include (``.Files.Get``), as
    staged (what Git tracks, less ``.helmignore``): those of its sub-folders other than ``templates/``,
    ``charts/``, ``ci/`` and ``overrides/`` (a ``files/`` or ``scripts/`` folder), searched for a
    rendered word after the templates."""
    found = []
    prefix = "" if folder_rel == "." else folder_rel + "/"
    for top, folders, files in os.walk(staged):
        inside = Path(top).relative_to(staged)
        if inside == Path("."):
            folders[:] = [name for name in folders if name not in _NOT_FILES]
            continue
        for name in sorted(files):
            path = Path(top) / name
            if path.suffix in (".tgz", ".md") or path.stat().st_size > _MAX_CHART_FILE:
                continue
            if len(found) >= _MAX_CHART_FILES:
                return found
            found.append((prefix + (inside / name).as_posix(), _read(path)))
    return found


def _mounted(rendered, files: list[tuple[str, str]]) -> set[str]:
    """The chart's files a rendered ConfigMap holds whole (a script the chart mounts and runs as its
    container's command): the rendering's served model runs them, they are not launchers of their own."""
    texts = {text.strip(): path for path, text in files if text.strip()}
    held = set()
    for document in rendered.documents if rendered.error is None else []:
        root = document.root
        data = root.get("data") if root is not None and root.kind == "map" and root.scalar("kind") == "ConfigMap" else None
        for _, value in data.items() if data is not None and data.kind == "map" else []:
            path = texts.get(value.value.strip()) if isinstance(value.value, str) else None
            if path is not None:
                held.add(path)
    return held


def _templates(repo: Path, folder: Path) -> list[tuple[str, str]]:
    """(repo-relative path, text) of the chart's templates, its subcharts' included."""
    found = []
    base, real = repo.resolve(), folder.resolve()
    for path in sorted(folder.rglob("templates/*")):
        if path.is_file() and path.suffix in _TEMPLATE_SUFFIXES and not path.is_symlink():
            found.append(((real / path.relative_to(folder)).relative_to(base).as_posix(), _read(path)))
    return found


def _fallback(folder_rel: str, origins: dict[str, str], rendered: str, templates: list[tuple[str, str]]):
    """Where a rendered object came from: the ``kind:`` line of the template named by the
    ``# Source:`` comment helm writes above it (``CHART/templates/x.yaml``, subcharts under
    ``CHART/charts/SUB/templates/``, a staged ``file://`` dependency in its own folder)."""
    sources = [(rendered.count("\n", 0, m.start()) + 1, m.group(1)) for m in _SOURCE.finditer(rendered)]
    texts = dict(templates)

    def locate(kind: Any, _name: Any, document: Document) -> Location | None:
        above = [source for line, source in sources if line <= document.line]
        if not above:
            return None
        rel = _origin(folder_rel, origins, above[-1])
        text = texts.get(rel)
        if text is None:
            return None
        match = re.search(rf"^kind:[ \t]*['\"]?{re.escape(str(kind))}\b", text, re.M) if kind else None
        line = text.count("\n", 0, match.start()) + 1 if match else 1
        return Location(rel, line, 1)

    return locate


def _origin(folder_rel: str, origins: dict[str, str], source: str) -> str:
    """The repository path of a template helm names ``CHART/templates/x.yaml`` (``CHART/charts/SUB/...`` for
    a subchart, a staged ``file://`` dependency in its own folder)."""
    inside = source.split("/", 1)[-1]
    for sub in sorted(origins, key=len, reverse=True):
        if inside.startswith(sub + "/"):
            return f"{origins[sub]}/{inside[len(sub) + 1:]}"
    return inside if folder_rel == "." else f"{folder_rel}/{inside}"


def _unparsable(ctx: DocContext, chart: str, staged: Staged, failure: str, templates: list[tuple[str, str]]) -> bool:
    """Record the template helm cannot parse (``parse error at (CHART/templates/x.yaml:LINE): WHY``) as
    the chart's CFG000, at that line (the last one when helm names the end of the file); False for any
    other failure (a ``required`` value, a limit), which depends on the values or on cfgcheck's sandbox."""
    found = _PARSE_ERROR.search(failure)
    if found is None:
        return False
    folder_rel = ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else "."
    path, why = _origin(folder_rel, staged.origins, found.group(1)), found.group(3).strip()[:_MAX_WHY]
    text = dict(templates).get(path)
    last = max(1, len(text.splitlines())) if text is not None else int(found.group(2))
    line = min(int(found.group(2)), last)
    record_unrenderable(ctx.workspace, Unrenderable(Location(path, line, 1), (
        f"helm cannot parse this template ({why}): chart '{chart}' renders nothing and cannot be installed"), folder_rel))
    return True
