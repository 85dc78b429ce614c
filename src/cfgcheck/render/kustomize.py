"""A folder with a ``kustomization.yaml``, linted as ``kubectl kustomize`` renders it.

The adapter registry reads the rendered objects like any file (``source_map.Reader``); every location is then mapped back to the source
file and line the value came from (a patch, the base, the kustomization's ``images:``), else to the
source object the rendered one was built from, else to the kustomization itself. A rendered served
model whose every setting comes from one base file is left out: linting that file already covers it;
one the overlay changes is placed where that file's own served model is, with the pod facts both hold
alike, so that what they share is one finding.
Without ``kubectl`` (or when the kustomization names a URL anywhere, draws from outside the
repository, or when rendering fails or hits a limit) the folder is linted file by file, and one note
says so on stderr. A ``Component`` is rendered only through the kustomizations that include it; the
same patch line rendered through several of them gives one finding (``lint.distinct``).

kubectl renders a copy of the tracked files of every folder the kustomization reaches (no ``.git``, no
untracked file: ``staging.py``), in the renderers' sandbox (``cfgcheck/sandbox.py``: an allow-listed environment,
no network where possible, resource limits, the run's time budget); never with ``--enable-helm``,
``--enable-exec`` or ``--enable-alpha-plugins`` (docs/SECURITY.md, "Rendering threat model").
"""

from __future__ import annotations

import os
import re
from stat import S_ISDIR, S_ISREG
from pathlib import Path

from .. import sandbox
from ..adapters.core.contexts import DocContext
from ..adapters.core.references import forget_since, recorded_count
from ..adapters.launch.kustomizations import REMOTE_FORMS, RENDERED, URL_WORDS, may_be_remote
from ..model import PodFacts, ServedModel
from ..notes import note
from ..records import ValueRecord
from ..paths import LOOKED, RESOLVED, UNMARKED, UnsafePath, child, inside_by_strings, inside_repo, looked, read_beyond
from ..yamlio import DEFAULT_LIMITS, YNode, load_file, read_ahead
from . import staging
from .source_map import SourceMap, read_rendering
from .staging import StageError

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable
    from .source_map import Reader

NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_STAGED_BYTES = 64 * 1024 * 1024  # the folders a kustomization reaches; larger ones are not rendered
# what kustomize fetches (in a reference, or any string of a kustomization: a configMapGenerator's URL)
_REMOTE = re.compile(REMOTE_FORMS, re.I)
# ``URL_WORDS`` as re.I reads them: some letters beyond ASCII match these words' own (the dotless i, the Kelvin sign)
_URL_WORDS_FOLDED = re.compile("|".join(map(re.escape, URL_WORDS)), re.I)


def is_kustomization(ctx: DocContext, root: YNode) -> bool:
    if ctx.path.rsplit("/", 1)[-1] not in NAMES:
        return False
    kind = root.scalar("kind")
    return kind in (None, "Kustomization", "Component")


def served_models(ctx: DocContext, root: YNode, reader: Reader) -> list[ServedModel]:
    """The served models of the kustomization ``root`` as kubectl renders it, read by ``reader``."""
    if not is_kustomization(ctx, root) or root.scalar("kind") == "Component":
        return []  # a Component patches what includes it: rendered through those kustomizations only
    folder_rel = ctx.path.rsplit("/", 1)[0] if "/" in ctx.path else "."
    top = os.path.abspath(str(ctx.workspace.config.get("root") or os.getcwd()))  # by strings: a Path is made
    reach = _reach(top, os.path.join(top, folder_rel), resolved=ctx.workspace.space(RESOLVED, dict),  # to render
                   looks=ctx.workspace.space(LOOKED, dict))
    if reach.outside:
        note(f"{folder_rel}: kustomization draws from outside the repository ({reach.outside}), not rendered")
        return []
    unmarked = ctx.workspace.space(UNMARKED, set)
    if not reach.remote and not any(_may_serve(file, reader.serving, unmarked, reach.texts) for file in reach.found):
        return []  # nothing a served model could be rendered from: not worth a kubectl run
    import shutil  # only a kustomization that may serve a model is rendered: not at import

    if not ctx.workspace.may_render():  # a worker process: the run renders it, in the order of the files
        return []
    read_beyond()  # kubectl and the tracked files it renders: no whole-run cache entry (cache.py)
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        note(f"{folder_rel}: kubectl not found, kustomization not rendered (its files are linted one by one)")
        return []
    if reach.url is not None:
        note(f"{folder_rel}: kustomization names a URL ({_shown(reach.url)}), not rendered (no network access)")
        return []
    repo = Path(top)
    rendered = _render(ctx, repo, kubectl, reach, folder_rel)
    if rendered is None:
        return []
    sources = SourceMap(repo, reach.files, ctx.workspace)
    identity, source_name = f"{ctx.path}{RENDERED}", _source_name(root)
    models = read_rendering(ctx, rendered, sources, lambda kind, name, _document: sources.objects.get((kind, name))
                            or sources.objects.get((kind, source_name(name))), identity, reader)
    return _at_own_places(models, sources, identity, reader, source_name)


def _source_name(root: YNode) -> Callable[[str], str]:
    """The name a rendered object has in its source: without the kustomization's ``namePrefix`` and
    ``nameSuffix`` (kustomize adds them to every resource it renders)."""
    prefix, suffix = str(root.scalar("namePrefix") or ""), str(root.scalar("nameSuffix") or "")

    def source_name(name: str) -> str:
        if not isinstance(name, str) or not name.startswith(prefix) or not name.endswith(suffix):
            return name
        return name[len(prefix):len(name) - len(suffix)]

    return source_name


def _at_own_places(models: list[ServedModel], sources: SourceMap, identity: str, reader: Reader,
                   source_name: Callable[[str], str]) -> list[ServedModel]:
    """A rendered served model whose object a source file defines, placed where that file's own served
    model is (the container, not the object's ``metadata.name``), its pod too: a problem both have there
    is one finding (``lint.distinct``), whatever order the run reads the files in."""
    own: dict[str, dict[str, ServedModel]] = {}
    for model in models:
        loaded = sources.files.get(model.path)
        if loaded is None or model.path.rsplit("/", 1)[-1] in NAMES:
            continue  # placed at a kustomization: reading it would render it again
        if model.path not in own:
            mark = recorded_count(reader.workspace)
            own[model.path] = {m.identity: m for m in reader.models(loaded)}
            forget_since(reader.workspace, mark)  # read ahead of its turn: the index may be incomplete
        kind, _, rest = model.identity.removeprefix(identity + "/").partition("/")
        name, _, inside = rest.partition("/")
        base = own[model.path].get(f"{model.path}#{kind}/{source_name(name)}/{inside}".rstrip("/"))
        if base is None:
            continue
        model.location = base.location
        # kubectl prints no comment: what the file says on and above the definition still describes it (the
        # GPU a comment names, capacity/evidence.py)
        model.definition_comments = base.definition_comments
        if model.pod is not None and base.pod is not None:
            _at_base_pod(model.pod, base.pod)
    return models


_PROBE_VALUES = ("handler", "path", "port", "initial_delay", "period", "timeout", "failure_threshold")


def _at_base_pod(pod: PodFacts, base: PodFacts) -> None:
    """The facts of a rendered pod that the base file's own pod holds alike, at the base's places: the
    source map finds a value by its text, and equal texts (a probe's ``/health``, a count of 2) may be
    another line of that file."""
    pod.location, pod.resources_at = base.location, base.resources_at
    for kind, probe in pod.probes.items():
        same = base.probes.get(kind)
        if same is not None and all(getattr(probe, name) == getattr(same, name) for name in _PROBE_VALUES):
            probe.location, probe.port_location = same.location, same.port_location
            probe.timeout_location = same.timeout_location
    for name, volume in pod.volumes.items():
        if name in base.volumes and (volume.type, volume.medium, volume.size) == \
                (base.volumes[name].type, base.volumes[name].medium, base.volumes[name].size):
            volume.location = base.volumes[name].location
    mounts = {(mount.path, mount.volume): mount for mount in base.mounts}
    for mount in pod.mounts:
        mount.location = mounts[(mount.path, mount.volume)].location if (mount.path, mount.volume) in mounts \
            else mount.location
    for own, based in ((pod.requests, base.requests), (pod.limits, base.limits), (pod.env, base.env)):
        for name, setting in own.items():
            if name in based and based[name].value == setting.value:
                setting.location, setting.key_location = based[name].location, based[name].key_location


def _render(ctx: DocContext, repo: Path, kubectl: str, reach: Reach, folder_rel: str) -> str | None:
    """``kubectl kustomize -- FOLDER`` on a staged copy of the tracked files of every folder the
    kustomization reaches, in the renderers' sandbox and the run's time budget; None (one note) when it
    cannot be staged, is out of budget, fails or hits a limit."""
    config = ctx.workspace.config
    limit = {**DEFAULT_LIMITS, **(config.get("limits") or {})}["max-file-bytes"]
    with sandbox.scope() as run:
        timeout = run.allowed(config)
        if timeout <= 0:
            note(f"{folder_rel}: kustomization not rendered: {run.budget_note(config)}")
            return None
        with run.folder("cfgcheck-kustomize-") as scratch:
            try:
                tree = _stage(repo, reach.folders, scratch / "tree")
            except StageError as exc:
                note(f"{folder_rel}: kustomization not rendered: {exc}")
                return None
            home = scratch / "home"
            home.mkdir()
            args = [kubectl, "kustomize", "--", str(tree / folder_rel)]
            with run.timed():
                outcome = sandbox.run_bounded(args, cwd=home, env=sandbox.child_env(home, {
                    "KUBECONFIG": str(home / "kubeconfig")}), timeout=timeout, limit=limit, sandboxed=True)
    if outcome.stopped == "timeout" and timeout < run.timeout:  # cut short by the run's budget
        note(f"{folder_rel}: kustomization not rendered: {run.budget_note(config)}")
        return None
    if outcome.stopped is not None or outcome.returncode != 0:
        why = sandbox.describe(outcome, "kubectl kustomize", timeout, limit)
        note(f"{folder_rel}: {why.replace(str(scratch), '…')}; kustomization not rendered")
        return None
    return outcome.stdout.decode("utf-8", "replace")


def _stage(repo: Path, folders: list[Path], into: Path) -> Path:
    """The tracked files of ``folders`` (each once, a folder inside another with it) under ``into`` at
    the paths the kustomizations name them by (a linked folder at the link's path: links are not copied)."""
    top = Path(os.path.abspath(repo))
    budget = staging.new_budget(MAX_STAGED_BYTES)
    done: list[Path] = []
    for folder in sorted(set(folders), key=lambda f: len(f.parts)):
        if any(folder == above or above in folder.parents for above in done):
            continue
        staging.stage(repo, folder, into / folder.relative_to(top), budget)
        done.append(folder)
    return into


def _may_serve(file: str, serving: Callable[[str], bool], unmarked: set[str], texts: dict[str, str]) -> bool:
    """Whether ``file`` holds a serving marker; ``unmarked``: the files the run has read and found none in
    (``lint.gather``), not read again, and where a file read here before its turn is noted when it holds
    none; ``texts``: the kustomization files the walk read (``Reach``), tested as they were read (a
    thousand kustomizations of a GitOps tree, each read again before)."""
    if file in unmarked:
        return False
    if file in texts:
        return serving(texts[file])
    data = read_ahead(file)  # kept for the file's turn in the run: read once
    if data is None:
        return False
    text = data.decode("utf-8", "replace")
    if serving(_as_opened(text)):
        return True
    if not data.startswith(_BOMS) and "\ufffd" not in text:  # the text its turn tests (yamlio.decode)
        unmarked.add(file)  # not tested again then (lint.serving_filter)
    return False


# what yamlio.decode reads other than as UTF-8 (a UTF-8 BOM is dropped, UTF-16 decoded)
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _as_opened(text: str) -> str:
    """``text`` with its line breaks as ``open()`` reads them."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


class Reach(ValueRecord):
    """What a kustomization reaches: the YAML files it draws from (``found``, absolute paths), in apply
    order; the kustomization folders (``within``); whether it has ``remote`` resources; the first ``url``
    any of its kustomizations, or the generator, transformer and validator configurations they name, holds
    in any string (kustomize would fetch it: a ``configMapGenerator`` file, ``openapi.path``, a remote
    base); the first reference that leaves the repository (``outside``: neither cfgcheck nor kubectl reads
    outside the checkout); ``texts``: the text of each kustomization file it read (absolute path -> text, as
    ``open()`` reads it), when the file was read without an error."""

    __slots__ = ("found", "texts", "within", "remote", "url", "outside")

    def __init__(self, found: list[str] | None = None, texts: dict[str, str] | None = None,
                 within: list[str] | None = None, remote: bool = False, url: str | None = None,
                 outside: str | None = None) -> None:
        self.found = [] if found is None else found
        self.texts = {} if texts is None else texts
        self.within = [] if within is None else within
        self.remote = remote
        self.url = url
        self.outside = outside

    @property
    def files(self) -> list[Path]:
        return [Path(file) for file in self.found]

    @property
    def folders(self) -> list[Path]:
        return [Path(folder) for folder in self.within]


def _reach(repo: Path | str, folder: Path | str, reach: Reach | None = None, seen: set[str] | None = None,
           resolved: dict[str, str | None] | None = None, looks: dict[str, tuple[int, int]] | None = None) -> Reach:
    """:class:`Reach` of the kustomization in ``folder``, its bases and components followed; ``resolved``:
    the paths resolved so far in the run (``paths.inside_repo``'s memo), ``looks``: what the run found at
    the paths it looked at (``paths.looked``; by strings: thousands of references in a GitOps tree)."""
    reach = reach if reach is not None else Reach()
    seen = seen if seen is not None else set()
    top = os.path.abspath(folder)  # lexical (abspath normalises): one kustomization per folder
    if top in seen:
        return reach
    named = next((name for name in NAMES if S_ISREG(looked(child(top, name), looks)[1])), None)
    if named is None:
        return reach
    seen.add(top)
    base = os.path.abspath(repo)
    kfile = child(top, named)
    reach.within.append(top)
    read_beyond(top)  # which kustomization file it holds, for the whole-run cache (cache.py)
    loaded = load_file(base, kfile, rel=kfile[len(base) + 1:] if kfile.startswith(base + os.sep) else None)
    if loaded.text or loaded.error is None:  # read (one that cannot be read, or decoded, has no text)
        reach.texts[kfile] = _as_opened(loaded.text)
    root = loaded.documents[0].root if loaded.documents else None
    for document in loaded.documents if _may_name_url(loaded.text) else ():
        reach.url = reach.url or _url_in(document.root)
    if root is None or root.kind != "map":
        reach.found.append(kfile)
        return reach
    for ref in _references(root):
        if may_be_remote(ref) and (_REMOTE.search(ref) or "?ref=" in ref):
            reach.remote = True
            reach.url = reach.url or ref
            continue
        target = os.path.normpath(os.path.join(top, ref))  # lexical, as the findings name it
        read_beyond(target)
        try:
            inside_by_strings(base, target, what="kustomize reference", memo=resolved if resolved is not None else {},
                              looks=looks)
        except UnsafePath:
            reach.outside = reach.outside or ref
            return reach
        mode = looked(target, looks)[1]
        if S_ISDIR(mode):
            _reach(repo, target, reach, seen, resolved, looks)
            if reach.outside:
                return reach
        elif S_ISREG(mode):
            reach.found.append(target)
    reach.url = reach.url or _url_in_configurations(base, top, root)
    reach.found.append(kfile)  # inline patches and images: last, they win
    return reach


def _references(root: YNode) -> list[str]:
    """The files and folders a kustomization draws resources and patches from, as written."""
    refs: list[str] = []
    for key in ("resources", "bases", "components", "patchesStrategicMerge", "crds"):
        node = root.get(key)
        if node is not None and node.kind == "seq":
            refs.extend(str(c.value) for c in node.value if c.kind == "scalar")
    for key in ("patches", "patchesJson6902"):
        node = root.get(key)
        if node is not None and node.kind == "seq":
            refs.extend(str(c.scalar("path")) for c in node.value if c.kind == "map" and c.scalar("path"))
            refs.extend(str(c.value) for c in node.value if c.kind == "scalar")
    return refs


def _may_name_url(text: str) -> bool:
    """Whether any string of a kustomization with this text may name a URL (``_REMOTE``): each form holds
    one of these words, and a string holds no text its file does not but through a double-quoted escape
    (``\\``); a plain or block scalar folded over lines gains a space, never a joined word."""
    if not text or "\\" in text:
        return True
    if not text.isascii():
        return _URL_WORDS_FOLDED.search(text) is not None
    return may_be_remote(text)  # a scan a word (and ``?ref=``, which only walks more), not a regex a position


def _url_in(node: YNode | None) -> str | None:
    """The first string (key or value) under ``node`` that names a URL or a remote repository."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if current.kind == "map":
            for key, value in current.items():
                stack += [key, value]
        elif current.kind == "seq":
            stack.extend(current.value)
        elif isinstance(current.value, str) and _REMOTE.search(current.value):
            return current.value
    return None


def _url_in_configurations(repo: str, folder: str, root: YNode) -> str | None:
    """A URL in the plugin configurations a kustomization loads (``generators``, ``transformers``,
    ``validators``: a ``ConfigMapGenerator`` there fetches what its ``files`` name)."""
    for key in ("generators", "transformers", "validators"):
        node = root.get(key)
        for item in node.value if node is not None and node.kind == "seq" else []:
            if item.kind != "scalar" or not isinstance(item.value, str):
                continue
            target = Path(os.path.normpath(os.path.join(folder, item.value)))
            read_beyond(target)
            try:
                real = inside_repo(Path(repo), target, what="kustomize plugin configuration")
            except UnsafePath:
                continue  # kustomize's load restrictor refuses it too
            if real.is_file():
                found = next((_url_in(d.root) for d in load_file(repo, target).documents if _url_in(d.root)), None)
                if found:
                    return found
    return None


def _shown(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."
