"""A local Helm chart (a folder with ``Chart.yaml``), linted as ``helm template`` renders it.

The chart is rendered once with its default ``values.yaml`` and once more for each other values file
beside it (``values-prod.yaml``, ...), as ``helm template NAME CHART --values FILE`` would install it.
The rendered objects go through the other adapters; each value is then mapped back to the values
file and line that set it where the value can be traced there (the environment's file first, then
``values.yaml``), else to the word in a template that holds it literally, else to the template that
produced the object (helm's ``# Source:`` comment). The files under ``templates/`` are not linted
one by one (they are not YAML until rendered); discovery sets them aside and one note says so.

``render-helm`` in the configuration or ``--render-helm/--no-render-helm``: unset renders when
``helm`` is on PATH, ``true`` requires it (the command line checks), ``false`` never renders.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from ..discover import escapes
from ..model import Location, ServedModel
from ..yamlio import DEFAULT_LIMITS, Document, YamlError, YNode, load_data
from .base import DocContext
from .protocol import has_serving_marker
from .kustomize import TIMEOUT, SourceIndex, note, render_models

CHART_FILES = ("Chart.yaml",)
MAX_VALUES_FILES = 16  # renderings per chart: each is a helm run of up to TIMEOUT seconds
_SOURCE = re.compile(r"^# Source: (\S+)", re.M)
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".txt")


def is_chart(ctx: DocContext, root: YNode) -> bool:
    return ctx.path.rsplit("/", 1)[-1] in CHART_FILES and root.scalar("apiVersion") in ("v1", "v2") \
        and isinstance(root.scalar("name"), str)


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    """Served models of every rendering of the chart whose ``Chart.yaml`` this is."""
    if not is_chart(ctx, root) or ctx.workspace.config.get("render-helm") is False:
        return []
    repo = Path(str(ctx.workspace.config.get("root")))
    folder_rel = ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else "."
    folder = repo / folder_rel
    templates = _templates(repo, folder)
    values = sorted(p for p in folder.glob("values*.y*ml") if p.is_file() and p.name != "values.yaml")
    if len(values) > MAX_VALUES_FILES:
        note(f"{folder_rel}: {len(values)} values files; rendered with the first {MAX_VALUES_FILES} only")
        values = values[:MAX_VALUES_FILES]
    default = folder / "values.yaml"
    sources = [text for _, text in templates] + [_read(p) for p in [default, *values] if p.is_file()]
    if not any(has_serving_marker(text) for text in sources):
        return []  # nothing a served model could be rendered from: not worth a helm run
    helm = shutil.which("helm")
    if helm is None:
        note(f"{folder_rel}: helm not found, chart not rendered (its values files are linted one by one)")
        return []
    link = _escaping_link(repo, folder)
    if link is not None:
        note(f"{folder_rel}: chart not rendered: {link} links outside the repository")
        return []
    release = str(root.scalar("name"))
    limit = {**DEFAULT_LIMITS, **(ctx.workspace.config.get("limits") or {})}["max-file-bytes"]
    found: list[ServedModel] = []
    for extra in [None, *values]:
        rendered = _render(helm, release, folder, folder_rel, extra, limit)
        if rendered is None:
            continue
        files = [p for p in (default, extra) if p is not None and p.is_file()]
        index = SourceIndex(repo, files, ctx.workspace, raw=templates)
        label = extra.name if extra is not None else "values.yaml"
        found.extend(render_models(ctx, rendered, index, _fallback(repo, folder_rel, rendered, templates),
                                   f"{ctx.path}#helm[{label}]", keep_unchanged=True))
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return ""


def _templates(repo: Path, folder: Path) -> list[tuple[str, str]]:
    """(repo-relative path, text) of the chart's templates, its subcharts' included."""
    found = []
    for path in sorted(folder.rglob("templates/*")):
        if path.is_file() and path.suffix in _TEMPLATE_SUFFIXES and not path.is_symlink():
            found.append((path.relative_to(repo).as_posix(), _read(path)))
    return found


def _render(helm: str, release: str, folder: Path, folder_rel: str, values: Path | None,
            limit: int) -> str | None:
    """``helm template`` output, at most ``limit`` bytes and ``TIMEOUT`` seconds (a chart from a pull
    request can loop or print without end); None, with a note, when it fails."""
    args = [helm, "template", release, str(folder)]
    if values is not None:
        args += ["--values", str(values)]
    label = f"{folder_rel} with {values.name}" if values is not None else folder_rel
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL)
        except OSError as exc:
            note(f"{label}: helm template failed ({exc.strerror or exc}); chart not rendered")
            return None
        timer = threading.Timer(TIMEOUT, process.kill)
        timer.start()
        try:
            output = process.stdout.read(limit + 1)
            if len(output) > limit:
                process.kill()
            process.stdout.close()
            code = process.wait()
        finally:
            timer.cancel()
        errors.seek(0)
        first = (errors.read(2000).decode("utf-8", "replace").strip().splitlines() or ["killed"])[0]
    if len(output) > limit:
        note(f"{label}: helm template printed more than {limit:,} bytes (limit max-file-bytes); chart not rendered")
        return None
    if code != 0:
        note(f"{label}: helm template failed: {first}")
        return None
    return output.decode("utf-8", "replace")


def _escaping_link(repo: Path, folder: Path) -> str | None:
    """A symlink in the chart that leads outside the repository (helm follows links: a chart from a
    pull request must not render, and so report, a file from elsewhere on the machine)."""
    for path in folder.rglob("*"):
        if path.is_symlink() and escapes(path, repo):
            return path.relative_to(repo).as_posix()
    return None


def _fallback(repo: Path, folder_rel: str, rendered: str, templates: list[tuple[str, str]]):
    """Where a rendered object came from: the ``kind:`` line of the template named by the
    ``# Source:`` comment helm writes above it (``CHART/templates/x.yaml``, subcharts under
    ``CHART/charts/SUB/templates/``)."""
    sources = [(rendered.count("\n", 0, m.start()) + 1, m.group(1)) for m in _SOURCE.finditer(rendered)]
    texts = dict(templates)
    prefix = "" if folder_rel == "." else folder_rel + "/"

    def locate(kind: Any, _name: Any, document: Document) -> Location | None:
        above = [source for line, source in sources if line <= document.line]
        if not above:
            return None
        rel = prefix + above[-1].split("/", 1)[-1]
        text = texts.get(rel)
        if text is None:
            return None
        match = re.search(rf"^kind:[ \t]*['\"]?{re.escape(str(kind))}\b", text, re.M) if kind else None
        line = text.count("\n", 0, match.start()) + 1 if match else 1
        return Location(rel, line, 1)

    return locate


def dependency_keys(config: dict[str, Any], values_path: str) -> list[str]:
    """The keys under which a chart's values file holds the values of the charts it depends on: each
    ``Chart.yaml`` ``dependencies[]`` entry's ``alias``, else its ``name`` (Helm's rule), for the
    ``Chart.yaml`` beside ``values_path``; [] when there is none (or it cannot be read)."""
    root = config.get("root")
    if not root:
        return []
    repo = Path(str(root))
    folder = values_path.rsplit("/", 1)[0] if "/" in values_path else "."
    chart = repo / folder / CHART_FILES[0]
    if not chart.is_file() or escapes(chart, repo):
        return []
    try:
        data = load_data(chart)
    except YamlError:
        return []  # the Chart.yaml is linted on its own: its CFG000 says what is wrong
    entries = data.get("dependencies") if isinstance(data, dict) else None
    keys = [entry.get("alias") or entry.get("name") for entry in entries or () if isinstance(entry, dict)]
    return [key for key in keys if isinstance(key, str) and key]


def charts_holding(root: Path, paths: list[str]) -> list[str]:
    """The ``Chart.yaml`` (repo-relative) of each Helm chart that holds one of ``paths``: a change to any
    file of a chart changes what it renders."""
    found: set[str] = set()
    for path in paths:
        folder = Path(path).parent
        for candidate in [folder, *folder.parents]:
            chart = (candidate / CHART_FILES[0]).as_posix()
            if (root / chart).is_file() and not escapes(root / chart, root):
                found.add(chart)
                break
    return sorted(found)


def rendering(config: dict[str, Any]) -> bool:
    """Whether charts are rendered in this run: helm is on PATH and ``render-helm`` is not false."""
    return config.get("render-helm") is not False and shutil.which("helm") is not None


def note_templates(templates: list[str], config: dict[str, Any]) -> None:
    """One note per chart for the templates discovery set aside, saying how they are (or can be) linted."""
    for folder, files in _by_folder(templates, lambda path: path.rsplit("/templates/", 1)[0]).items():
        count = f"{folder}: {_files(files, 'Helm template file')}"
        if rendering(config):
            note(f"{count} not linted one by one: the chart is linted as helm template renders it")
        else:
            why = "rendering is off (render-helm: false)" if config.get("render-helm") is False else "helm not found"
            note(f"{count} not linted: {why}; lint the rendered output with "
                 f"`helm template NAME {folder} | cfgcheck lint - --stdin-filename {folder}/rendered.yaml`")


def note_unrendered(paths: list[str]) -> None:
    """One note per folder for the other templates (Jinja, Go, envsubst bodies that are not YAML)."""
    for folder, files in _by_folder(paths, lambda path: path.rsplit("/", 1)[0] if "/" in path else ".").items():
        note(f"{folder}: {_files(files, 'template file')} not linted: YAML only once rendered; lint what "
             f"renders them (`<render command> | cfgcheck lint - --stdin-filename {files[0]}`)")


def _by_folder(paths: list[str], folder_of) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in paths:
        found.setdefault(folder_of(path), []).append(path)
    return found


def _files(files: list[str], what: str) -> str:
    return f"{len(files)} {what}{'s' if len(files) != 1 else ''} (such as {files[0].rsplit('/', 1)[-1]})"
