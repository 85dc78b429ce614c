"""The contract every adapter meets, and the registry the core reads (in the spirit of pre-commit's
``languages/`` modules: a small explicit core, one module per format behind one protocol).

An adapter is usually a module; it declares

- ``MARKERS``: lower-case words, one of which is in the raw bytes of every file it can read. The
  prefilter (``has_serving_marker``) is built from the registered adapters, so a format cannot be
  skipped because someone forgot to list its word elsewhere.
- ``served_models(ctx, root)``: the located served models of one YAML document, or ``[]`` when the
  document is not theirs. The first registered adapter that returns models owns the document.

A format that is not YAML (a shell script, a Python spec file) declares instead

- ``SUFFIXES``: the file name endings it reads (``.sh``), whole names (``Makefile``), or stems a name
  starts with, ending with a dot (``Dockerfile.`` for ``Dockerfile.gpu``); discovery lists them beside
  YAML files;
- ``scan_comments(text)``: the file's comments by line, for directives, suppressions and the rules that
  want a reason written beside a value;
- ``file_models(workspace, loaded)``: the located served models of one such file.

and may declare

- ``index(workspace, loaded)``: a first pass over every file, recording what other documents refer to
  (LLMKube ``Model``s by name, Kubernetes ``Service``s).
- ``refers_forward(workspace, root)``: true when the document refers to something not indexed yet, so the
  run reads it after the other files.
- ``INDEX_WORDS``: lower-case words one of which is in the text of every file whose documents the
  ``index`` and ``refers_forward`` hooks act on (what the hooks test first: a kind, an API group, a
  reference key); the run calls them, and imports the module, only for such files. Without it they are
  called for every file with a serving marker.
- ``setting_home(model, root, name, config)``: for ``propose``, where the format keeps setting ``name``
  of one of its models as a typed field (``extra_args``: its argument list), as (mapping, key path
  below it); ``None`` when the model is not theirs or the format has no such field.
- ``DOCUMENTS = "plain"``: it reads only documents that are not Kubernetes resources (no ``apiVersion``:
  a compose file, a workflow, a SkyPilot task); the registry does not try it on a resource, nor import it
  for one.
- ``complete_model(ctx, root, model)``: called for every model any adapter built from a document, to add
  what this module knows whatever the format (the engine ``--config`` file the argv names); a list returned
  replaces the model with those (a llama-server router stands for the models of its preset file).
- ``heredoc_models(workspace, loaded, text, offset)``: the served models of a file of this format that
  another file writes (a shell script's heredoc), its text at ``offset`` of ``loaded``.
- ``OPERATOR_FIELDS``: the typed fields an operator or chart turns into flags, by where the resource keeps
  them: ``{"spec.vllmConfig": {"maxModelLen": ("--max-model-len", "max_model_len"), ...}}`` (field -> flag
  emitted, canonical setting of ``settings.py``); the registry gathers them (``operator_fields``).
- ``settle(workspace, models)``: called once every file of the run is read, with every served model, to
  add what spans files and no document alone tells (the host whose ports a load balancer's upstream
  lists, a device plugin's GPU sharing); it may take out of the list a model another one of the run
  stands for (the kustomize renderings of one container that are alike: ``launch/kustomizations.py``).

Topology the adapter reads (replicas, the GPUs of one pod and of a multi-node group, the node labels
that name the GPU) it records on the ``ServedModel`` (``replicas``, ``gpus``, ``node_labels`` …): rules
and capacity read those, never the YAML.
"""

from __future__ import annotations

import importlib
from collections import Counter
from itertools import chain
from types import ModuleType

from ...discover import named_like

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Protocol, TypeGuard, Union
    from ...model import ServedModel
    from ...yamlio import YNode
    from .contexts import DocContext

# The package the built-in adapters' module names are relative to (``formats.workloads``).
ADAPTERS = __package__.rpartition(".")[0]

# Directives (``# cfgcheck: engine=vllm``) are read by the core for every format: a file holding one is
# always worth reading.
DIRECTIVE_MARKER = "cfgcheck"


if TYPE_CHECKING:  # for type checkers; registration asks an adapter for their members (``meets_protocol``)
    class Adapter(Protocol):
        MARKERS: tuple[str, ...]

        def served_models(self, ctx: DocContext, root: YNode) -> list[ServedModel]: ...

    class FileAdapter(Protocol):
        MARKERS: tuple[str, ...]
        SUFFIXES: tuple[str, ...]

        def scan_comments(self, text: str) -> dict: ...

        def file_models(self, workspace, loaded) -> list[ServedModel]: ...


# What each of the two protocols requires: (its values, its functions), as isinstance on a runtime-checkable
# typing Protocol tests them (present; a function not None), without importing typing.
_MEMBERS = ((("MARKERS",), ("served_models",)), (("MARKERS", "SUFFIXES"), ("scan_comments", "file_models")))


# The members of the protocol an adapter may define (its functions, and its typed-field tables); the core
# asks for them with getattr/hasattr.
HOOKS = ("served_models", "index", "refers_forward", "setting_home", "scan_comments", "file_models", "complete_model",
         "heredoc_models", "settle", "OPERATOR_FIELDS")


class LazyAdapter:
    """A built-in adapter module, named, with what the prefilter reads of it (``MARKERS``, ``SUFFIXES``) and
    which of the protocol's ``HOOKS`` it defines (asking for another one imports nothing: the core's walk for
    ``index`` hooks does not load every adapter). Anything else asked of it imports the module and puts it
    in the registry in its place (the registry is walked for every document: no indirection there), so a
    run whose files hold no serving marker imports no adapter. It is equal to its module, so
    ``register(..., before=workloads)`` finds it."""

    def __init__(self, module: str, markers: tuple[str, ...], suffixes: tuple[str, ...] = (),
                 hooks: tuple[str, ...] = ("served_models",), documents: str | None = None,
                 index_words: tuple[str, ...] | None = None) -> None:
        self.__name__ = f"{ADAPTERS}.{module}"
        self.MARKERS, self.SUFFIXES, self.hooks = markers, suffixes, hooks
        self.DOCUMENTS, self.INDEX_WORDS = documents, index_words

    def module(self) -> ModuleType:
        module = importlib.import_module(self.__name__)
        if self in REGISTRY:
            REGISTRY[REGISTRY.index(self)] = module
        for suffix, reader in _file_formats.items():
            if reader is self:
                _file_formats[suffix] = module
        return module

    def __getattr__(self, name: str):  # only for what __init__ did not set
        if name.startswith("__") or name in HOOKS and name not in self.hooks:
            raise AttributeError(name)
        return getattr(self.module(), name)

    def __eq__(self, other: object) -> bool:
        return other is self or isinstance(other, (ModuleType, LazyAdapter)) and other.__name__ == self.__name__

    def __hash__(self) -> int:
        return hash(self.__name__)

    def __repr__(self) -> str:
        return f"LazyAdapter({self.__name__!r})"


# What the registry holds: a module or object meeting one of the two protocols, or a built-in module's
# ``LazyAdapter`` until it is imported.
if TYPE_CHECKING:
    Registered = Union[Adapter, FileAdapter, LazyAdapter]
# Tried in order; filled by ``core/registry.py`` (one ``register`` line per format).
REGISTRY: list[Registered] = []
_markers: tuple[str, ...] = (DIRECTIVE_MARKER,)
# The prefilter's substring tests (``_grouped``): (a piece several markers share, those markers), or (a
# marker, None) for one that shares none; those of the markers that hold a ``SNAKE`` apart, tested only
# when the text holds one.
_marker_tests: tuple[tuple[str, tuple[str, ...] | None], ...] = ((DIRECTIVE_MARKER, None),)
_snake_marker_tests: tuple[tuple[str, tuple[str, ...] | None], ...] = ()
# Words with an underscore (``max_model_len``, ``node_pool``) are written in engine configurations, env
# names and Terraform, rarely in a Kubernetes manifest (camelCase keys): 3,353 of the 5,000 files of bench's
# GitOps tree hold none. A text without one is not searched for those words (one memchr, not a scan each).
SNAKE = "_"
_names: dict[str, tuple[str, ...]] = {}  # renderer or format module -> the file names it reads whatever their text
_file_formats: dict[str, FileAdapter | LazyAdapter] = {}  # suffix (".sh") -> the adapter that reads such files
_endings: tuple[str, ...] = ()  # its keys, for one ``str.endswith`` call
_stems: tuple[str, ...] = ()  # those that end with a dot: a name that starts with one (``Dockerfile.gpu``)
# Every MARKERS and INDEX_WORDS word of the registry, as declared (``words_in``): without a ``SNAKE``, with one
_words: tuple[str, ...] = ()
_snake_words: tuple[str, ...] = ()
# hook -> (position in REGISTRY, SUFFIXES, INDEX_WORDS) of the adapters that define it (``hooked``)
_hooked: dict[str, list[tuple[int, tuple[str, ...], tuple[str, ...] | None]]] = {}


def register(adapter: Registered, before: Registered | None = None) -> Registered:
    """Add ``adapter`` to the registry (at the end, or just before ``before``) and its markers to the
    prefilter. A module without ``MARKERS`` and ``served_models`` (or, for a format that is not YAML,
    ``SUFFIXES``, ``scan_comments`` and ``file_models``) is refused here, not skipped later (a built-in
    ``LazyAdapter`` when a test imports it)."""
    _refuse_other(adapter)
    if adapter not in REGISTRY:
        REGISTRY.insert(REGISTRY.index(before) if before in REGISTRY else len(REGISTRY), adapter)
    _rebuild_markers()
    return adapter


def register_all(adapters: tuple[Registered, ...]) -> None:
    """``register`` each of ``adapters`` at the end, in order, with one rebuild of the prefilter: the
    built-in table's 39 entries one by one rebuilt it 39 times and compared each with every entry before
    it (1.4 ms of every run's start-up)."""
    for adapter in adapters:
        _refuse_other(adapter)
    REGISTRY.extend([adapter for adapter in adapters if adapter not in REGISTRY])  # tested before any is added
    _rebuild_markers()


def meets_protocol(adapter: object) -> bool:
    """Whether ``adapter`` has the members of ``Adapter`` or of ``FileAdapter`` (asked of a ``LazyAdapter``,
    that imports its module)."""
    return any(all(hasattr(adapter, name) for name in values) and
               all(getattr(adapter, name, None) is not None for name in functions) for values, functions in _MEMBERS)


def _refuse_other(adapter: Registered) -> None:
    if not isinstance(adapter, LazyAdapter) and not meets_protocol(adapter):
        raise TypeError(f"{getattr(adapter, '__name__', adapter)!r} is not an adapter: it needs MARKERS "
                        f"and served_models(ctx, root), or SUFFIXES, scan_comments and file_models")


def read_by_name(owner: str, names: tuple[str, ...]) -> None:
    """Files called ``names`` are read whatever their text (``always_read``): module ``owner`` reads or renders them
    (the input stage's renderers, registered by ``core/registry.py``)."""
    _names[owner] = names


def unregister(adapter: Registered) -> None:
    if adapter in REGISTRY:
        REGISTRY.remove(adapter)
    _rebuild_markers()


def _rebuild_markers() -> None:
    global _markers, _marker_tests, _snake_marker_tests, _file_formats, _endings, _stems, _words, _snake_words
    _hooked.clear()
    words = [DIRECTIVE_MARKER] + [word.lower() for adapter in REGISTRY for word in adapter.MARKERS]
    _markers = tuple(dict.fromkeys(words))
    _words, _snake_words = _snake_apart(dict.fromkeys(
        word for adapter in REGISTRY for word in (*adapter.MARKERS, *(getattr(adapter, "INDEX_WORDS", None) or ()))))
    plain, snake = _snake_apart(_markers)
    # a snake marker that holds a plain one (``vllm_args``, ``vllm``) is found by that one: not tested
    _marker_tests = _grouped(plain)
    _snake_marker_tests = _grouped(tuple(marker for marker in snake if not any(other in marker for other in plain)))
    _file_formats = {suffix: adapter for adapter in reversed(REGISTRY) if _reads_files(adapter)
                     for suffix in adapter.SUFFIXES}
    _endings = tuple(_file_formats)
    _stems = tuple(suffix for suffix in _endings if suffix.endswith("."))  # ``Dockerfile.`` names Dockerfile.gpu


def serving_markers() -> tuple[str, ...]:
    return _markers


def always_read(name: str) -> bool:
    """Whether a file called ``name`` is read whatever its text: it may render files that hold markers."""
    return any(name in names for names in _names.values())


def _snake_apart(words) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``words`` without a ``SNAKE``, and those with one."""
    return tuple(word for word in words if SNAKE not in word), tuple(word for word in words if SNAKE in word)


def has_serving_marker(text: str) -> bool:
    """Substring tests on the lower-cased text (several times faster than one case-blind regex, and than
    one alternation over the lowered text): a piece several markers share first, then those markers; the
    markers that hold a ``SNAKE`` only when the text holds one (bench's GitOps tree: 9% fewer instructions
    in this test)."""
    lowered = text.lower()
    return _holds_marker(_marker_tests, lowered) or SNAKE in lowered and _holds_marker(_snake_marker_tests, lowered)


def _holds_marker(tests: tuple[tuple[str, tuple[str, ...] | None], ...], lowered: str) -> bool:
    for piece, markers in tests:
        if piece in lowered:
            if markers is None:
                return True
            for marker in markers:  # a loop, not any() over a generator: a few markers, for most files
                if marker in lowered:
                    return True
    return False


def _grouped(markers: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...] | None], ...]:
    """``markers`` as the prefilter tests them. Most files of a repository hold no marker, and each test
    scans the whole text: a marker that holds another is left out (the shorter one finds it), and the
    markers that share a three-letter piece are tested only when the text holds the piece (``model``
    in seven of them, ``serv`` in five...): 35 scans for such a file instead of 63. The pieces are
    taken greedily, the one most markers share first (the first counted of those most share), while three
    or more share one: on bench's GitOps tree that cost 20% less than the plain loop; two (more groups of
    two) or longer pieces saved less. Worked out once a process, with C's counting (``Counter``, ``str.count``):
    Python's loops over every pair of markers and every piece were 2 ms of each run's start-up."""
    joined = "\0".join(markers)  # a marker found more than once in it is held by another marker too
    held = [other for other in markers if joined.count(other) > 1]
    kept = [marker for marker in markers if not any(other != marker and other in marker for other in held)]
    pieces = {marker: tuple(dict.fromkeys([marker[i:i + 3] for i in range(len(marker) - 2)])) for marker in kept}
    tests: list[tuple[str, tuple[str, ...] | None]] = []
    while True:
        counts = Counter(chain.from_iterable([pieces[marker] for marker in kept]))
        shared = max(counts, key=counts.__getitem__, default=None)
        if shared is None or counts[shared] < 3:
            break
        tests.append((shared, tuple(marker for marker in kept if shared in marker)))
        kept = [marker for marker in kept if shared not in marker]
    return (*tests, *((marker, None) for marker in kept))


def document_adapters() -> list[Adapter | LazyAdapter]:
    """The registered adapters that read YAML documents, in the order they are tried."""
    return [REGISTRY[position] for position, _, _ in hooked("served_models")]  # type: ignore[misc]


def _reads_files(adapter: Registered) -> TypeGuard[FileAdapter | LazyAdapter]:
    """A format that is not YAML: it names the file endings it reads."""
    return bool(getattr(adapter, "SUFFIXES", ()))


def defines(adapter: Registered, hook: str) -> bool:
    """Whether ``adapter`` defines the protocol function ``hook``: a built-in one not imported yet says so
    from its registry entry (importing nothing)."""
    return hook in adapter.hooks if isinstance(adapter, LazyAdapter) else hasattr(adapter, hook)


def words_in(lowered: str) -> frozenset[str]:
    """The registry's ``MARKERS`` and ``INDEX_WORDS`` that the lower-cased text ``lowered`` holds: the text is
    searched once for each word (a word with a ``SNAKE`` only when the text holds one), and the registry's
    walks ask the set for every adapter and hook (a word is in it exactly when the text holds it)."""
    found = [word for word in _words if word in lowered]
    if SNAKE in lowered:
        found += [word for word in _snake_words if word in lowered]
    return frozenset(found)


def may_read(adapter: Adapter | LazyAdapter, lowered: str | frozenset[str]) -> bool:
    """Whether ``adapter`` can own a document of a file whose lower-cased text is ``lowered`` (or whose
    ``words_in`` are ``lowered``): one of its MARKERS is in it (the contract above), or it declares none. An
    adapter that cannot is not tried, nor imported."""
    markers = adapter.MARKERS
    if not markers:
        return True
    for marker in markers:  # a loop, not any() over a generator: asked of every adapter for every file
        if marker in lowered:
            return True
    return False


def indexes(adapter: Adapter | FileAdapter | LazyAdapter, hook: str, lowered: str) -> bool:
    """Whether ``adapter``'s ``hook`` (``index`` or ``refers_forward``) may act on a file whose lower-cased
    text is ``lowered``: it defines the hook, and the file holds one of its ``INDEX_WORDS`` when it
    declares them (a built-in adapter not imported yet answers from its registry entry)."""
    if not defines(adapter, hook):
        return False
    words = getattr(adapter, "INDEX_WORDS", None)
    return words is None or any(word in lowered for word in words)


def hooked(hook: str) -> list[tuple[int, tuple[str, ...], tuple[str, ...] | None]]:
    """The adapters that define ``hook``, in order: (position in ``REGISTRY``, their ``SUFFIXES``, their
    ``INDEX_WORDS`` or None), worked out once per registry (a walk for every file asks the same). The
    position, not the entry: a built-in adapter imported takes its ``LazyAdapter``'s place."""
    found = _hooked.get(hook)
    if found is None:
        found = _hooked[hook] = [(position, tuple(getattr(adapter, "SUFFIXES", ())), getattr(adapter, "INDEX_WORDS", None))
                                 for position, adapter in enumerate(REGISTRY) if defines(adapter, hook)]
    return found


def may_own(adapter: Adapter | LazyAdapter, root: YNode) -> bool:
    """Whether ``adapter`` may own the document ``root``: one that reads only plain documents
    (``DOCUMENTS = "plain"``) is not tried on a Kubernetes resource (nor imported for one)."""
    return getattr(adapter, "DOCUMENTS", None) != "plain" or root.get("apiVersion") is None


def file_format(path: str) -> FileAdapter | LazyAdapter | None:
    """The registered adapter that reads files named like ``path`` when they are not YAML (looked up
    once per file read: a dictionary, not a walk over the registry)."""
    name = path[path.rfind("/") + 1:]
    dot = name.rfind(".")
    found = _file_formats.get(name) or (_file_formats.get(name[dot:]) if dot >= 0 else None)
    if found is None and name.startswith(_stems) and named_like(name, _stems):  # as discovery lists: Dockerfile.gpu
        return next((adapter for stem, adapter in _file_formats.items() if stem in _stems and name.startswith(stem)),
                    None)
    if found is not None or not name.endswith(_endings):  # a YAML file: one test, not one per ending
        return found
    # as discovery lists them (``listed_file``): by ending, so ``gpu.Dockerfile`` is a Dockerfile
    return next((adapter for suffix, adapter in _file_formats.items() if name.endswith(suffix)), None)


def file_suffixes() -> tuple[str, ...]:
    return tuple(_file_formats)
