"""What a run knows of Helm charts without rendering one: where the charts of a repository are, which
local charts one renders with, whether charts are rendered in this run, and the notes on the templates
that are not linted one by one. Nothing here starts a process: the lint run and diff mode read it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..model import Location
from ..notes import note
from ..records import ValueRecord
from ..paths import escapes
from ..yamlio import YamlError, data_of

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable

CHART_FILE = "Chart.yaml"
MAX_CHARTS = 2000  # Chart.yaml files read to find a chart the repository publishes itself


def charts_holding(root: Path, paths: list[str]) -> list[str]:
    """The ``Chart.yaml`` (repo-relative) of each Helm chart that holds one of ``paths``: a change to any
    file of a chart changes what it renders."""
    found: set[str] = set()
    for path in paths:
        folder = Path(path).parent
        for candidate in [folder, *folder.parents]:
            chart = (candidate / CHART_FILE).as_posix()
            if (root / chart).is_file() and not escapes(root / chart, root):
                found.add(chart)
                break
    return sorted(found)


def charts_by_name(paths: list[str], read: Callable[[str], bytes | None]) -> dict[str, list[str]]:
    """Chart folders by the ``name:`` of their ``Chart.yaml`` (``paths``; at most ``MAX_CHARTS`` read)."""
    found: dict[str, list[str]] = {}
    for path in paths[:MAX_CHARTS]:
        try:
            data = data_of(read(path) or b"", path)
        except (YamlError, OSError):
            continue
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str):
            found.setdefault(name, []).append(path.rsplit("/", 1)[0] if "/" in path else ".")
    return found


def dependency_folders(chart_folder: str, read: Callable[[str], bytes | None],
                       charts: Callable[[], dict[str, list[str]]]) -> list[str]:
    """Repo-relative folders of the local charts ``chart_folder`` renders with, transitively: ``file://``
    dependencies inside the repository and remote ones the repository publishes itself (``charts()``:
    chart folders by name), as ``helm_sandbox.stage`` takes them; ``read(path)`` gives a file's bytes (the
    work tree, or a commit in diff mode), None when absent. Vendored ones are inside the chart folder."""
    found: list[str] = []
    pending = [chart_folder]
    while pending and len(found) <= MAX_CHARTS:
        folder = pending.pop()
        raw = read(f"{folder}/{CHART_FILE}" if folder != "." else CHART_FILE)
        try:
            data = data_of(raw, CHART_FILE) if raw is not None else None
        except YamlError:
            data = None
        entries = data.get("dependencies") if isinstance(data, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                continue
            source = str(entry.get("repository") or "")
            if source.startswith("file://"):
                target = os.path.normpath(os.path.join(folder, source[len("file://"):]))
                targets = [] if target.startswith("..") or os.path.isabs(target) else [target]
            else:
                targets = charts().get(entry["name"], [])[:1]
            for target in targets:
                if target not in found and target != chart_folder:
                    found.append(target)
                    pending.append(target)
    return found


class Unrenderable(ValueRecord):
    """A template helm cannot parse: the chart renders nothing, so ``helm install`` fails whatever the values
    (Go's template parser reads every template of a chart before any is executed). Reported as the
    template's CFG000 (``lint.unreadable``); a record compared by value (recorded once per place), which
    creates no method at import."""

    __slots__ = ("location", "message", "folder")

    def __init__(self, location: Location, message: str, folder: str) -> None:
        self.location = location  # the template and the line helm names
        self.message = message
        self.folder = folder  # the chart's folder, repo-relative ("." at the root)


def record_unrenderable(workspace: Any, found: Unrenderable) -> None:
    """Record a template that does not parse, once per place (every values file's rendering fails at it)."""
    recorded = workspace.space(__name__, list)
    if found not in recorded:
        recorded.append(found)


def unrenderable(workspace: Any) -> list[Unrenderable]:
    """Every template the run's renderings could not parse, as recorded."""
    return list(workspace.space(__name__, list))


def helm_binary() -> str | None:
    """helm on PATH, else the one the ``helm`` extra installed beside this Python (a venv's bin folder,
    found also when cfgcheck runs by its full path without the venv activated)."""
    import shutil

    beside = Path(sys.executable).parent / "helm"
    return shutil.which("helm") or (str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None)


def rendering(config: dict[str, Any]) -> bool:
    """Whether charts are rendered in this run: helm is installed and ``render-helm`` is not false."""
    return config.get("render-helm") is not False and helm_binary() is not None


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
