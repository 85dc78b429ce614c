"""The adapter registry: every built-in adapter, in the order they are tried, and the walks the lint run
makes over them (index every file, the served models of a file, what waits for a file not read yet).

Every adapter meets ``protocol.Adapter`` and is registered in ``builtin.py``: the first adapter that recognises a
document owns it. Adding a format is one module in ``formats/`` and one ``BUILT_IN`` entry. The registry
names its modules (``LazyAdapter``) and imports one the first time a file may hold its documents, so a run
over files without a serving marker imports no format, launch helper or renderer.

The input stage (``cfgcheck.render``) renders the files of ``RENDERERS`` (a kustomization, a chart's
``Chart.yaml``): the registry imports a renderer when it reads such a file and hands it a ``Reader``, so that
what it renders is read here like any file, then placed at its source lines by the renderer.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from ...model import ServedModel
from ...yamlio import LoadedFile, YamlError
from .contexts import DocContext, Workspace, one_file, served_limit
from .protocol import (ADAPTERS, REGISTRY, LazyAdapter, always_read, defines, document_adapters, file_format,  # noqa: F401
                       file_suffixes, has_serving_marker, hooked, indexes, may_own, may_read, read_by_name, register,
                       words_in)
# file_format, file_suffixes, always_read, has_serving_marker: the run's questions, asked here (lint, diff)
from .resources import file_resources, resources
# the built-in adapters and renderers, registered (their table is a module of its own: the run tests files
# for serving markers before it imports the registry)
from .builtin import (BUILT_IN, ENGINE_CONFIG_WORDS, FILE_HOOKS, NAMED_FORMATS, RENDER_PACKAGE, RENDERERS,  # noqa: F401
                      YAML_WORDS)
# what the run reports of the references the adapters found leading nowhere (CFG003)
from .references import Dangling, dangling  # noqa: F401

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from .protocol import Registered

# Launch helpers a module every served model passes through needs only for an uncommon file: the registry
# imports one the first time it is asked for (a Deployment splices env values, but only a script mounted
# from a ConfigMap needs the shell-command reader; only an image cfgcheck does not know asks which
# Dockerfile of the repository builds it).
LAUNCH_HELPERS = {"scalar_launches": "launch.scripts", "deployed_dockerfile": "launch.image_builds"}


def launch_helper(name: str):
    """The launch helper ``name`` of ``LAUNCH_HELPERS``, its module imported now."""
    return getattr(importlib.import_module(f"{ADAPTERS}.{LAUNCH_HELPERS[name]}"), name)


# What a rendering adds to the run's index: the ConfigMaps it makes (a configMapGenerator's name carries a
# hash, a namePrefix renames them, and the rendered pods take env from them by those names). Every other
# object it holds is a copy of a source object the run has indexed already, which must not be shadowed
# by a copy located in rendered text for the files read after it.
RENDERED_INDEX = (f"{__package__.rpartition('.')[0]}.launch.configmaps",)


def index(workspace: Workspace, loaded: LoadedFile, by_path: bool = True) -> None:
    """First pass over every file: what other documents refer to (LLMKube Models by name, Services). Each
    module's hook only for a file that holds one of its ``INDEX_WORDS``; a format that is not YAML indexes
    only its own files (nor is it imported for another's). ``by_path`` False: not the ``BY_PATH`` hooks
    (a worker's stage: the run calls them, ``index_by_path``)."""
    for adapter in _indexing("index", loaded.path, file_words(loaded)):
        if by_path or _short(adapter) not in BY_PATH:
            adapter.index(workspace, loaded)


# Index hooks that read a file's path only (and files beside it), never its documents: the run calls them
# itself, in the order of the files, also for a file whose stage a worker or the cache did (stages.py).
BY_PATH = ("formats.readme_nodes",)


def index_by_path(workspace: Workspace, loaded: LoadedFile) -> None:
    for position, _, _ in hooked("index"):  # the adapters that define the hook (the run asks for each file)
        adapter = REGISTRY[position]
        if _short(adapter) in BY_PATH:
            adapter.index(workspace, loaded)


def _short(adapter: Registered) -> str:
    return adapter.__name__.rpartition("adapters.")[2]


def _indexing(hook: str, path: str | None, present: frozenset[str]) -> list[Registered]:
    """The adapters whose ``hook`` (``index`` or ``refers_forward``) may act on the file ``path`` whose
    text holds the registry's words ``present`` (``file_words``): it reads such files (``SUFFIXES``; None:
    whatever its name) and holds one of their ``INDEX_WORDS`` (``protocol.indexes``, from the registry's table)."""
    return [REGISTRY[position] for position, suffixes, words in hooked(hook)
            if (path is None or not suffixes or path.endswith(suffixes))
            and (words is None or not present.isdisjoint(words))]


def file_words(loaded: LoadedFile) -> frozenset[str]:
    """The registry's words ``loaded``'s text holds (``protocol.words_in``): found once for the file's index,
    forward-reference and served-model walks, and forgotten with its trees (``forget_words``)."""
    found = loaded.shared.get(_WORDS)
    if found is None:
        found = loaded.shared[_WORDS] = text_words(loaded.text)
    return found


def text_words(text: str) -> frozenset[str]:
    """``words_in`` of ``text`` lower-cased, the last text's kept: a file's stage asks first whether it shares
    the index (``shares_index``), then its walks ask again (``file_words``), of the same text (the dense
    corpus: 2,111 scans of some 90 words each in the run's process, 57 us a file, for 1,111 files)."""
    if _LAST_WORDS[0] is text:
        return _LAST_WORDS[1]
    found = words_in(text.lower())
    _LAST_WORDS[:] = [text, found]
    return found


_LAST_WORDS: list = [None, frozenset()]  # the last text asked about and its words (one: no text is held longer)


def forget_words(loaded: LoadedFile) -> None:
    """``file_words`` of a file whose served models are built: a set a file, held to the run's end by every file
    it read, was 1.3 MB of the dense corpus's peak."""
    loaded.shared.pop(_WORDS, None)


_WORDS = "registry-words"


def served_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    reader = file_format(loaded.path)
    with one_file():  # the file's variable expansions share one budget (launch/expansion.py)
        models = reader.file_models(workspace, loaded) if reader is not None else document_models(workspace, loaded)
    limit = served_limit(workspace)
    if len(models) <= limit:
        return models
    if loaded.error is None:  # the file's CFG000: its other models are not checked (nor counted fixed in review)
        at = models[limit].location
        loaded.error = YamlError(f"more than {limit:,} served models in this file (limit max-served-models): only "
                                 f"the first {limit:,} are checked", at.line, at.column)
    return models[:limit]


def document_models(workspace: Workspace, loaded: LoadedFile, complete: bool = True) -> list[ServedModel]:
    """The served models of the YAML documents of ``loaded``, whatever its file name (the Kubernetes
    manifest a shell script writes in a heredoc is read through this too): a file a renderer reads is
    rendered first. ``complete``: with what every ``complete_model`` hook adds (a renderer reads its
    output without, and the models it places are completed here, at their source lines)."""
    found: list[ServedModel] = []
    first_line = 1
    name = loaded.path.rpartition("/")[2]
    candidates = _readers(name, loaded)
    renderer = renderer_of(name)
    if renderer is not None:
        candidates.insert(0, _Rendered(renderer, Reader(workspace)))
    completers = [REGISTRY[position] for position, _, _ in hooked("complete_model")] if complete else []
    limit = served_limit(workspace)
    for document in loaded.documents:
        if len(found) > limit:
            break  # served_models reports the limit; the documents after it are not read
        root = document.root
        for resource in resources(root):
            ctx = DocContext(loaded, document, workspace, first_line)
            for adapter in candidates:
                if not may_own(adapter, resource):
                    continue
                try:
                    models = adapter.served_models(ctx, resource)
                    owned = bool(models)  # the document is this adapter's, even if completing leaves no model
                    for completer in completers if owned else ():  # an engine --config file, wherever
                        models = completed(completer, ctx, resource, models)  # the model's format keeps it
                except Exception as exc:  # one odd document must not end the run: CFG000 at it
                    if os.environ.get("CFGCHECK_DEBUG"):
                        raise
                    document.problems.append((f"cannot interpret this document: {type(exc).__name__}: "
                                              f"{' '.join(str(exc).split())[:200]}", resource.line, resource.column))
                    break
                if owned:
                    found.extend(models)
                    break
        if root is not None:
            first_line = root.end_line + 1
    return found


def _readers(name: str, loaded: LoadedFile) -> list[Registered]:
    """The adapters that may own a document of ``loaded``, a file called ``name`` (``may_read``, asked of the
    registry's words its text holds: ``file_words``). A file read for its name whose text holds no serving
    marker (most kustomizations of a GitOps tree) has only the adapters that declare no MARKERS: each
    adapter's MARKERS are serving markers (``protocol``), so one test of the text answers for all of them."""
    adapters = document_adapters()
    if always_read(name) and not has_serving_marker(loaded.text):
        return [adapter for adapter in adapters if not adapter.MARKERS]
    present = file_words(loaded)
    return [adapter for adapter in adapters if may_read(adapter, present)]


def completed(completer, ctx: DocContext, resource, models: list[ServedModel]) -> list[ServedModel]:
    """``models`` as ``completer`` completes them: a hook that returns a list replaces the model it was given
    with those (a llama-server router by the models of its preset file), None keeps it."""
    found: list[ServedModel] = []
    for model in models:
        replaced = completer.complete_model(ctx, resource, model)
        found.extend([model] if replaced is None else replaced)
    return found


def renderer_of(name: str) -> ModuleType | None:
    """The renderer of the input stage that renders files called ``name``, imported now; None for others."""
    module = next((module for module, names in RENDERERS.items() if name in names), None)
    return importlib.import_module(f"{RENDER_PACKAGE}.{module}") if module is not None else None


class Reader:
    """What a renderer is handed (``cfgcheck.render.source_map.Reader``): the registry's walks over the
    files it renders, as over any file of the run."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def index(self, loaded: LoadedFile) -> None:
        for adapter in REGISTRY:
            if adapter.__name__ in RENDERED_INDEX:
                adapter.index(self.workspace, loaded)

    def models(self, loaded: LoadedFile) -> list[ServedModel]:
        return document_models(self.workspace, loaded, complete=False)

    @staticmethod
    def serving(text: str) -> bool:
        return has_serving_marker(text)


class _Rendered:
    """A renderer tried first on the documents of the files it renders, as an adapter is."""

    MARKERS: tuple[str, ...] = ()

    def __init__(self, renderer: ModuleType, reader: Reader) -> None:
        self.renderer, self.reader = renderer, reader

    def served_models(self, ctx: DocContext, root) -> list[ServedModel]:
        return self.renderer.served_models(ctx, root, self.reader)


def heredoc_models(workspace: Workspace, loaded: LoadedFile, name: str, text: str, offset: int) -> list[ServedModel]:
    """The served models of a file called ``name`` that ``loaded`` writes (a shell heredoc), ``text``
    at ``offset`` of it: read by the format of such files when it defines ``heredoc_models`` and one of
    its MARKERS is in the text (a supervisord configuration a script writes)."""
    reader = file_format(name)
    if reader is None or not defines(reader, "heredoc_models") or not any(marker in text for marker in reader.MARKERS):
        return []
    return reader.heredoc_models(workspace, loaded, text, offset)


def settle(workspace: Workspace, models: list[ServedModel]) -> list[ServedModel]:
    """Once every file of the run is read: ``models`` less those of the files whose launch another served
    model holds (a Dockerfile whose image a workload of the run deploys: ``launch/image_builds.py``; a
    script a compose service runs), then each adapter's ``settle`` hook adds what spans files."""
    held = workspace.held
    kept = [m for m in models if m.path not in held] if held else models
    for adapter in REGISTRY:
        if defines(adapter, "settle"):
            adapter.settle(workspace, kept)
    return kept


def operator_fields() -> list[dict[str, tuple[str, str]]]:
    """Every registered format's typed-field tables (field -> (flag emitted, canonical setting)): the names
    an operator resource may give a setting (the formats that declare them are imported now)."""
    return [table for adapter in REGISTRY if defines(adapter, "OPERATOR_FIELDS")
            for table in adapter.OPERATOR_FIELDS.values()]


# The index hooks whose spaces a file only adds to, and which nothing reads before every file is read, so
# that a file holding their words has the same served models whatever files the run read before it (a
# worker builds them; the run adds what the file added, in the order of the files: stages._merge):
# - formats.workloads: the run's Services, a list a pod keeps and rules read after the run;
# - formats.gpu_workloads: the hosts and GPU comments of GPU workloads, added to the cluster definitions
#   (core/fleet.py), read by attach_fleet, the settle hooks and capacity once the run has read every file;
# - launch.claim_downloads: the downloads Jobs make onto claims, a list its settle hook reads;
# - launch.colocation: load-balancer upstreams, a list its settle hook reads.
APPEND_ONLY = ("formats.workloads", "formats.gpu_workloads", "launch.claim_downloads", "launch.colocation")
# The append-only hooks whose files the content cache keeps when the run's own process builds them (no
# worker): a worker pickles a file's result for the run anyway and keeps that as its entry, the run's own
# process would pickle it for the cache alone. The other append-only hooks' files (a GPU workload: most
# served files) are built in order there and not kept, so a cold run (CI, a changed file in pre-commit or
# an editor) pays no pickle per served file: 1.5 s of 10 on the bench's dense corpus, 0.03 s on one file.
CACHED_APPEND_ONLY = ("formats.workloads",)
# The index spaces that are records rather than lists, dicts or sets (the cluster definitions,
# cluster.Fleet): what a worker's file added to each of a record's lists and dicts is merged field
# by field, a dict's key keeping its first value (core/fleet.note_hosts); other records are not merged.
RECORDS = (f"{__package__}.fleet",)
# Index hooks that act only on files a renderer reads by name (``always_read``: such a file shares anyway).
RENDERED_ONLY = ("launch.kustomizations",)


# The index spaces a file's stage may read or write in a worker process even when its text holds a word of
# an ordered hook (``stages``: a worker watches the spaces a file's stage asks for, and hands the file to
# the run when it asked for any other): what the APPEND_ONLY hooks add to (the Services a pod keeps,
# launch.pods; the cluster definitions; the Jobs' downloads; the upstreams), the references that lead
# nowhere (each recorded once per place, read after the run), the texts of the repository's files
# read from disk (launch.named_files: the same whichever file asks first), and what each kustomization
# includes and its images: (by its own folder, read by the settle hook once every file is read).
ORDER_FREE = frozenset({f"{ADAPTERS}.launch.pods", f"{__package__}.fleet", f"{ADAPTERS}.launch.claim_downloads",
                        f"{ADAPTERS}.launch.colocation", f"{__package__}.references", f"{ADAPTERS}.launch.named_files",
                        f"{ADAPTERS}.launch.kustomizations.kustomized"})


def read_with_others(name: str) -> bool:
    """Whether a file called ``name`` is rendered with other files (a kustomization, a chart) or is not
    YAML (a script may write manifests): it needs the run's order whatever its stage asks for."""
    return always_read(name) or file_format(name) is not None


def shares_index(name: str, text: str, cached: bool = False) -> bool:
    """Whether a file called ``name`` holding ``text`` may read or write what other files index, and so
    needs the run's order: it is rendered with others (a kustomization, a chart), is not YAML (a script
    may write manifests), or holds a word of an ``index`` or ``refers_forward`` hook (a ConfigMap, a
    reference to one, an LLMKube Model ...) other than an append-only one's or one the run calls by path
    (``BY_PATH``). Any other file's served
    models are the same whatever files the run read before it (``lint``'s worker processes). ``cached``:
    asked for the content cache in the run's own process (``CACHED_APPEND_ONLY``)."""
    if read_with_others(name):
        return True
    present = text_words(text)
    free = (CACHED_APPEND_ONLY if cached else APPEND_ONLY) + BY_PATH + RENDERED_ONLY
    return any(_short(adapter) not in free for hook in ("index", "refers_forward") for adapter in _indexing(hook, name, present))


def attach_fleet(workspace: Workspace, models: list[ServedModel], files=()) -> None:
    """Give the run's served models its cluster definitions (``core/fleet.attach``), once every file is read."""
    from .fleet import attach  # loads capacity: only a run with served models needs it

    attach(workspace, models, files)


def refers_forward(workspace: Workspace, loaded: LoadedFile) -> bool:
    """True when a document of the file refers to something not indexed yet (an LLMKube modelRef)."""
    hooks = [adapter.refers_forward for adapter in _indexing("refers_forward", None, file_words(loaded))]
    return bool(hooks) and any(hook(workspace, resource) for _, resource in file_resources(loaded) for hook in hooks)
