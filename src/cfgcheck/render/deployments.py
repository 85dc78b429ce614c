"""The values files the repository's own GitOps deployments render a local chart with.

An Argo CD ``Application`` whose source ``path`` is a chart of the repository renders it with the
source's ``helm.valueFiles``, relative to that path (argo-cd docs, "Helm": "value files must be in the
same repository as the Helm chart"; ``$name/...`` is the root of the multi-source ref ``name``). An
``ApplicationSet`` makes one such Application per parameter set of its generators: a git ``files``
generator one per file matching its ``path`` glob, with ``path`` the file's folder, ``path.filename``,
``path.basename`` (the folder's name), the ``...Normalized`` forms and the file's own keys; a git
``directories`` generator one per folder matching its glob (argo-cd
docs, "Git Generator"; ``goTemplate: true`` spells them ``.path.path``, ``.path.filename`` ...).

What the chart is then rendered with is each deployment's one values file besides the chart's own
``values.yaml``; a deployment that sets inline values, several files, or a parameter this module cannot
resolve is counted as a deployment that renders the chart some other way. Nothing here renders or
runs anything: ``helm.py`` reads it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..adapters.launch.held_values import argo_sources, argo_values
from ..related_files import RepoSearch
from ..yamlio import YNode, parse_text
from .staging import StageError, listed_files

MAX_FILES = 20000  # repository files looked at for deployments
MAX_BYTES = 1 << 20  # a deployment file larger than this is not read
MAX_INSTANCES = 256  # parameter sets of one generator
# the files that may define one: the run's own search (one git grep), not a read of every file in Python
_DEFINES_ONE = ("argoproj[.]io", "helm")
_TAG = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
_PARAM = re.compile(r"\.?[A-Za-z_][\w.-]*")


@dataclass(frozen=True)
class Deployment:
    """One deployment of a chart: the values file it adds (repo-relative), None when it adds values in
    some other way (inline, several files) or none; and what deploys it, for notes and labels."""

    values: str | None
    by: str


def of_chart(repo: Path, folder_rel: str, cache: dict[str, Any]) -> list[Deployment]:
    """The repository's deployments of the chart in ``folder_rel``; ``cache``: the run's, so that the
    repository is read once whatever the number of charts."""
    if "all" not in cache:
        cache["all"] = list(_scan(repo.resolve()))
    return [deployment for chart, deployment in cache["all"] if chart == folder_rel]


def _scan(repo: Path) -> Iterator[tuple[str, Deployment]]:
    try:
        listed = sorted(listed_files(repo, repo))
    except StageError:
        return
    tracked = set(listed)
    found = RepoSearch(repo, []).files([_DEFINES_ONE])
    for rel in listed[:MAX_FILES]:
        if rel not in found or not rel.endswith((".yaml", ".yml")):
            continue
        path = repo / rel
        try:
            if path.is_symlink() or path.stat().st_size > MAX_BYTES:
                continue
            text = path.read_text("utf-8", errors="replace")
        except OSError:
            continue
        if "argoproj.io" not in text or "helm" not in text:
            continue
        loaded = parse_text(rel, text)
        for document in loaded.documents if loaded.error is None else []:
            root = document.root
            if root is not None and root.kind == "map" and str(root.scalar("apiVersion", default="")).startswith("argoproj.io/"):
                yield from _deployments(repo, root, rel, tracked)


def _deployments(repo: Path, root: YNode, rel: str, tracked: set[str]) -> Iterator[tuple[str, Deployment]]:
    spec = root.get("spec")
    name = root.scalar("metadata", "name")
    if root.scalar("kind") == "Application":
        yield from _sources(spec, {}, tracked, f"Application {name} ({rel})", False)
    elif root.scalar("kind") == "ApplicationSet" and spec is not None and spec.kind == "map":
        go = spec.scalar("goTemplate") is True
        generators = spec.get("generators")
        for generator in generators.to_python() if generators is not None and generators.kind == "seq" else []:
            for params, what in _instances(repo, generator, tracked):
                yield from _sources(spec.path("template", "spec"), params, tracked,
                                    f"ApplicationSet {name} ({rel}) for {what}", go)


def _sources(spec: YNode | None, params: dict[str, str], tracked: set[str], by: str,
             go: bool) -> Iterator[tuple[str, Deployment]]:
    sources = [(node, node.to_python()) for node, _ in argo_sources(spec)]
    refs = {str(s["ref"]): s for _, s in sources if s.get("ref")}
    for node, source in sources:
        chart = _resolved(source.get("path"), params, go)
        chart = _normal(chart) if chart is not None else None
        helm = source.get("helm") if isinstance(source.get("helm"), dict) else {}
        if chart is None or _in(chart, "Chart.yaml") not in tracked:
            continue
        files = [_value_file(chart, entry, params, go, source, refs) for entry in helm.get("valueFiles") or []]
        own = _in(chart, "values.yaml")
        added = [file for file in files if file != own]
        inline = bool(argo_values(node) or helm.get("parameters"))
        values = added[0] if len(added) == 1 and added[0] is not None and added[0] in tracked and not inline \
            else None
        yield chart, Deployment(values, by)


def _value_file(chart: str, entry: Any, params: dict[str, str], go: bool, source: dict,
                refs: dict[str, dict]) -> str | None:
    """The repo-relative values file a ``valueFiles`` entry names, None when it cannot be resolved
    here (a parameter not known, another repository's ref, outside the repository)."""
    written = _resolved(entry, params, go)
    if written is None:
        return None
    if written.startswith("$"):
        ref, _, rest = written[1:].partition("/")
        other = refs.get(ref)
        if other is None or other.get("repoURL") != source.get("repoURL"):
            return None
        return _normal(rest)
    return _normal(os.path.join(chart, written))


def _resolved(value: Any, params: dict[str, str], go: bool) -> str | None:
    """``value`` with every ``{{param}}`` (``{{.param}}`` under goTemplate) replaced; None when a tag
    is not a parameter known here (a function, a pipeline) or the value is not a string."""
    if not isinstance(value, str):
        return None
    unknown = False

    def one(match: re.Match) -> str:
        nonlocal unknown
        name = match.group(1)
        if not _PARAM.fullmatch(name) or go != name.startswith("."):
            unknown = True
            return ""
        key = name[1:] if go else name
        key = "path" if go and key == "path.path" else key
        if key not in params:
            unknown = True
            return ""
        return params[key]

    result = _TAG.sub(one, value)
    return None if unknown else result


def _normal(path: str) -> str | None:
    normal = os.path.normpath(path.strip().lstrip("/") or ".").replace(os.sep, "/")
    return None if normal.startswith("..") else normal


def _instances(repo: Path, generator: Any, tracked: set[str]) -> Iterator[tuple[dict[str, str], str]]:
    """The parameter sets of a git ``files`` or ``directories`` generator over this repository."""
    git = generator.get("git") if isinstance(generator, dict) else None
    if not isinstance(git, dict):
        return
    count = 0
    for entry in git.get("files") or []:
        pattern = _glob(entry.get("path")) if isinstance(entry, dict) else None
        for rel in sorted(t for t in tracked if pattern is not None and pattern.fullmatch(t)):
            count += 1
            if count > MAX_INSTANCES:
                return
            yield {**_file_params(repo, rel), **_path_params(os.path.dirname(rel) or ".", rel.rsplit("/", 1)[-1])}, rel
    folders = sorted({os.path.dirname(t) for t in tracked} - {""})
    included = [e for e in git.get("directories") or [] if isinstance(e, dict) and not e.get("exclude")]
    excluded = [_glob(e.get("path")) for e in git.get("directories") or [] if isinstance(e, dict) and e.get("exclude")]
    for folder in folders:
        if any((p := _glob(e.get("path"))) is not None and p.fullmatch(folder) for e in included) and \
                not any(p is not None and p.fullmatch(folder) for p in excluded):
            count += 1
            if count > MAX_INSTANCES:
                return
            yield _path_params(folder, None), folder + "/"


def _path_params(folder: str, filename: str | None) -> dict[str, str]:
    base = folder.rsplit("/", 1)[-1]
    params = {"path": folder, "path.basename": base, "path.basenameNormalized": _normalized(base)}
    params.update({f"path[{i}]": part for i, part in enumerate(folder.split("/"))})
    if filename is not None:
        params.update({"path.filename": filename, "path.filenameNormalized": _normalized(filename)})
    return params


def _normalized(name: str) -> str:
    """argo-cd's ``...Normalized``: lower case, every character other than a-z, 0-9, ``-`` and ``.`` a ``-``."""
    return re.sub(r"[^a-z0-9.-]", "-", name.lower())


def _file_params(repo: Path, rel: str) -> dict[str, str]:
    """A files generator's file's own keys, flattened with dots (``model.name``), scalars only."""
    try:
        loaded = parse_text(rel, (repo / rel).read_text("utf-8", errors="replace"))
    except OSError:
        return {}
    root = loaded.documents[0].root if loaded.error is None and loaded.documents else None
    found: dict[str, str] = {}
    pending = [("", root.to_python() if root is not None else None)]
    while pending and len(found) < 1000:
        prefix, value = pending.pop()
        if isinstance(value, dict):
            pending.extend((f"{prefix}{key}.", item) for key, item in value.items() if isinstance(key, str))
        elif isinstance(value, (str, int, float, bool)) and prefix:
            found[prefix[:-1]] = str(value).lower() if isinstance(value, bool) else str(value)
    return found


def _in(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def _glob(pattern: Any) -> re.Pattern | None:
    """A generator's path glob: ``*`` and ``?`` within one folder, ``**`` across folders."""
    if not isinstance(pattern, str) or not pattern.strip():
        return None
    out = []
    for part in re.split(r"(\*\*/?|\*|\?)", pattern.strip().lstrip("/")):
        out.append({"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part)))
    return re.compile("".join(out))
