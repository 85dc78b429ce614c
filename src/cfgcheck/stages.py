"""One file's stage of a lint run: read it, test it for a serving marker, parse it, index it and build its
served models, isolated so that nothing going wrong in one file ends the run. ``lint.gather`` runs it
for every file in order; ``staged`` shares it between the run and worker processes (``pool.py``) when
there are many files, and the content cache (``cache.py``) keeps its result for a file that needs
nothing but its own text.

A file whose models may depend on what other files index (``registry.shares_index``: a ConfigMap, a
reference to one, a kustomization ...) is read in a worker but parsed and adapted by the run itself, in
the order of the files, exactly as with one process; any other file is the same whatever the run read
before it, so a worker (or the cache) does all of it and the run takes its result in order: the file,
its served models, what it added to the index spaces that only grow (the run's Services), the
Dockerfiles its workloads build, the notes it said.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import lazy, pool
from .adapters.core.builtin import file_format
from .adapters.core.workspace import Workspace
from .config import Config
from .notes import collected, note
from .packs import PackedCache
from .paths import LOOKED, RESOLVED, UNMARKED, noted, reads_beyond, watching
from .records import Record
from .yamlio import (DEFAULT_LIMITS, LoadedFile, YamlError, check_text, composer, digest_read, forget_parsed,
                     load_file, parse_cache, read_text, relpath, taken_digest, unmarked)

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator
    from .model import ServedModel

# The adapter registry, imported for the first file that holds a serving marker (the run's workspace is made
# without it: lint.py).
adapters = lazy.Module("cfgcheck.adapters.core.registry", Workspace=Workspace)

# ---------------------------------------------------------------- per-file isolation
#
# One file must never end the run: whatever goes wrong while reading or checking it (an adapter, a
# rule, the capacity arithmetic on a value nobody foresaw) becomes a CFG000 finding of that file,
# naming the exception type (never its text or traceback: it may quote file content), and every
# other file is still linted. CFGCHECK_DEBUG=1 re-raises, for the traceback.


def internal_error(exc: Exception, what: str) -> str:
    return (f"cfgcheck failed while {what}: internal error {type(exc).__name__} "
            "(a cfgcheck bug; CFGCHECK_DEBUG=1 shows the traceback)")


def isolated(file: LoadedFile, step: Callable[[], Any], default: Any = None) -> Any:
    """``step()``, or ``default`` when it raised: the exception is recorded as that file's CFG000."""
    try:
        return step()
    except Exception as exc:
        if os.environ.get("CFGCHECK_DEBUG"):
            raise
        if file.error is None:
            file.error = YamlError(internal_error(exc, "reading this file"))
        return default


def isolated_load(rel: str, load: Callable[[], LoadedFile]) -> LoadedFile:
    """``load()``; a file it fails on is an empty file ``rel`` whose error says so."""
    empty = LoadedFile(rel, "", [], {})
    return isolated(empty, load, empty)


def models_of(workspace: adapters.Workspace, file: LoadedFile) -> list[ServedModel]:
    return isolated(file, lambda: adapters.served_models(workspace, file), [])


def release(models: list[ServedModel], file: LoadedFile) -> list[ServedModel]:
    """``models``, once ``file``'s trees are dropped: peak memory follows the largest file, not the run."""
    forget_parsed(file)
    adapters.forget_words(file)
    for document in file.documents:
        document.root = None
    return models


def first_pass(workspace: adapters.Workspace, file: LoadedFile, waiting: list[LoadedFile],
               by_path: bool = True) -> list[ServedModel]:
    """Index ``file``; its served models now, or none yet when it refers to a file not read yet.
    ``by_path`` False: without the index hooks the run calls by path (``registry.BY_PATH``)."""
    adapters.index(workspace, file, by_path)
    if adapters.refers_forward(workspace, file):
        waiting.append(file)
        return []
    return release(adapters.served_models(workspace, file), file)


# ---------------------------------------------------------------- the stage, in order


class Staged(Record):
    """One file after its own stage. ``models`` None: the run indexes and adapts it (``first_pass``)."""

    __slots__ = ("file", "models", "added", "held", "notes", "looked")

    def __init__(self, file: LoadedFile, models: list[ServedModel] | None = None,
                 added: list[tuple[str, str, Any]] | None = None, held: list[str] | None = None,
                 notes: list[str] | None = None, looked: list | None = None) -> None:
        self.file = file
        self.models = models
        self.added = [] if added is None else added  # (space, kind, what it added)
        self.held = [] if held is None else held  # Dockerfiles whose launch its workloads hold
        self.notes = [] if notes is None else notes
        # a worker's stage: what it found beyond the file, for the whole-run cache (``paths.watching``)
        self.looked = [] if looked is None else looked


def load(config: Config, file: Path | str, fast: bool, wanted, text: str | None = None,
         data: bytes | None = None, rel: str | None = None) -> LoadedFile:
    """``file`` read (``text``: read already; ``data``: its bytes, read already) and parsed; ``rel``: its
    repository path, when the caller has it."""
    rel = rel if rel is not None else relpath(config.root, file)

    def read() -> LoadedFile:
        given = text
        if given is None and data is not None:
            given = read_text(rel, file, {**DEFAULT_LIMITS, **(config.limits or {})}, file_format(rel), data)
            if isinstance(given, LoadedFile):
                return given
        return load_file(config.root, file, config.limits, fast, wanted, file_format, given, rel)
    return isolated_load(rel, read)


def tested(serving: bool) -> Callable[[str, str], bool]:
    """The prefilter of a file whose text it has tested already: its answer, not the test again."""
    return lambda _rel, _text: serving


def staged(files: list[str], config: Config, fast: bool, wanted, jobs: int,
           workspace: Callable[[], adapters.Workspace], cache: PackedCache | None = None,
           read: dict[str, bytes] | None = None, started: pool.Workers | None = None,
           looked: dict[str, tuple[int, int]] | None = None) -> Iterator[Staged]:
    """Each of ``files`` (absolute names: ``discover.Inputs.names``) after its stage, in order: in this
    process, or in ``jobs`` workers when there are enough files; what a worker added to the index is added
    to the run's ``workspace()`` before the file is handed on, so the run sees every file as if it had read
    it itself. With ``cache``, a file whose stage follows from its own text is taken from it, or put in it
    (``cache.py``). ``read``: the bytes of files read already in this run by name, each taken once (the
    whole-run cache read them); ``started``: the workers, started already for ``files`` (``start_workers``);
    ``looked``: what discovery's ``lstat`` found at them (``paths.LOOKED``), for the workers' own workspaces."""
    read = read if read is not None else {}
    in_pool = wanted is not None and (started is not None or pool.usable(jobs, len(files)))
    if wanted is None or not in_pool and cache is None:
        for file in files:
            yield Staged(load(config, file, fast, wanted, data=read.pop(file, None)))
        return
    def resolve(name: str) -> Any:
        return _shared(workspace(), name)
    if in_pool:
        bounds = _pool_bounds(config, fast, wanted, cache, read, looked) if started is None else None
        here = _Worker(config, fast, wanted, cache, None, workspace, read)  # the run's own share of the files
        answers = pool.ordered(_work, files, jobs, bounds, here.stage, started)
        messages = (_received(data, file, resolve) if isinstance(data, bytes) else data
                    for file, data in zip(files, answers))
    else:  # the cache without workers: the stage runs in the run's own workspace
        worker = _Worker(config, fast, wanted, cache, None, workspace, read)
        messages = (worker.stage(file) for file in files)
    for kind, file, payload in messages:
        if kind == "text":  # it shares the index: parsed and adapted here, in order
            yield Staged(load(config, file, fast, tested(True), payload))
            continue
        if kind == "cached":
            text, entry = payload
            payload = _entry(entry, resolve)
            if payload is None:  # an entry that does not read back: the file is read here
                yield Staged(load(config, file, fast, tested(True), text))
                continue
            payload.file.text = text
        if kind != "here":  # "here": built in the run's workspace, its index entries are there already
            _merge(workspace(), payload)
        if payload.looked:
            noted(*payload.looked)
        if payload.file.serving:
            isolated(payload.file, lambda: adapters.index_by_path(workspace(), payload.file))
        for message in payload.notes:
            note(message)
        yield payload
    if cache is not None:  # the entries the run's own process kept, as one pack (``packs.py``)
        cache.close()


def start_workers(files: list[str], config: Config, fast: bool, wanted, jobs: int,
                  cache: PackedCache | None, looked: dict[str, tuple[int, int]] | None = None) -> pool.Workers:
    """The ``jobs - 1`` workers of ``staged`` for ``files``, forked now, each with a content cache of its own
    (``cache``, made alike): a first run forks them before it reads its own files (``lint.lint``), within the
    blocks that note their reads beyond their files (``paths.noting``) and the digests of the files they read
    (``yamlio.digests_of_reads``: sent with each file's stage, ``_work``). They stage their share (no chunks
    ahead of it: ``STARTED_AHEAD``) while the run reads and hashes its own; the run ends them
    (``pool.Workers.end``)."""
    # as ``lint.gather`` and ``RunCache.run`` fork them: in a parse cache, and a channel that keeps what a worker
    # says outside a file's stage (the notes of a file's stage go to the run with it)
    with parse_cache(), collected():
        return pool.Workers(_work, files, jobs, _pool_bounds(config, fast, wanted, cache, None, looked), STARTED_AHEAD)


# The chunks the run stages when its workers start before the whole-run key: none ahead of them (they start
# while the run reads and hashes its own files; before the workers hashed theirs, every file), then
# ``pool.RUN_SHARE``. Paired interleaved runs against workers
# started with the stage (the cache cold, --jobs 2, medians of the differences): GitOps tree -49 ms (faster in
# 18 of 24 pairs, of ~1.0 s), dense corpus -60 ms (8 of 14, of ~2.2 s); a run's share of 45% made dense
# slower (+132 ms, faster in 3 of 14: each worker reads its files again, and the run hashed them all), 48%
# and 55% were no better on the tree (-29 and -8 ms).
STARTED_AHEAD = 0


def _pool_bounds(config: Config, fast: bool, wanted, cache: PackedCache | None, read: dict[str, bytes] | None,
                 looked: dict[str, tuple[int, int]] | None) -> tuple[Callable[[], None], Callable[[], None]]:
    """``start`` and ``finish`` of a worker process's stage (``_Worker``, its own workspace, which starts from
    ``looked``: ``paths.LOOKED``), made before the workers fork, with the modules every worker imports
    (``_preload``)."""
    worker = _Worker(config, fast, wanted, cache, _Watched(config=config.as_dict(), looked=looked), read=read)
    worker.alone = _rendered_alone()
    _preload(fast)
    return worker.start, worker.finish


class RunWorkspace(adapters.Workspace):
    """The workspace of a lint run (and of a worker): its index spaces pickle as their names
    (``pool.named``), which the loading run resolves to its own spaces (``_shared``), so that a served
    model kept in the cache or built in a worker refers to the run's list of Services as one built
    here does."""

    def space(self, owner: str, make: Callable[[], Any]) -> Any:
        return super().space(owner, lambda: _named(owner, make()))


def _named(owner: str, made: Any) -> Any:
    return pool.named(made, f"space:{type(made).__name__}:{owner}")


class _Watched(RunWorkspace):
    """A worker's workspace, which notes the index spaces a file's stage asks for (``Workspace.space``
    is the only way to them): a file whose text holds a word of an ordered index hook is built in the
    worker, and kept when its stage asked for none but ``registry.ORDER_FREE``'s."""

    def __init__(self, config: dict[str, Any] | None = None, looked: dict[str, tuple[int, int]] | None = None) -> None:
        super().__init__(config, spaces={LOOKED: looked} if looked else None)
        self.touched: set[str] = set()

    def space(self, owner: str, make: Callable[[], Any]) -> Any:
        self.touched.add(owner)
        return super().space(owner, make)

    def may_render(self) -> bool:
        self.touched.add(RENDERS)  # not order-free: the file goes to the run
        return False

    def forget(self, held: set[str]) -> None:
        """Drop what a file handed to the run wrote here: the ordered spaces it asked for (no file this
        worker keeps reads them) and the Dockerfiles it held (``held``: those held before it)."""
        for owner in self.touched - adapters.ORDER_FREE - MEMOS:
            self.spaces.pop(owner, None)
        self.held.intersection_update(held)


class _Worker:
    """What a worker process runs with: the run's configuration and a workspace of its own; or, in the
    run's process (``run_workspace``), the run's workspace, made when a file first needs it."""

    current: "_Worker | None" = None

    def __init__(self, config: Config, fast: bool, wanted, cache: PackedCache | None,
                 own: adapters.Workspace | None, run_workspace: Callable[[], adapters.Workspace] | None = None,
                 read: dict[str, bytes] | None = None) -> None:
        self.config, self.fast, self.wanted, self.cache = config, fast, wanted, cache
        self.own, self.run_workspace, self.read = own, run_workspace, read if read is not None else {}
        self.limits = {**DEFAULT_LIMITS, **(config.limits or {})}  # merged once, not for every file
        self.root = os.path.abspath(config.root)
        self.done = "staged" if run_workspace is None else "here"  # what a file built by this stage is
        self.alone: tuple[str, ...] = ()  # names of files rendered with others that a worker builds all the same

    @property
    def workspace(self) -> adapters.Workspace:
        return self.own if self.own is not None else self.run_workspace()  # type: ignore[misc]

    def start(self) -> None:
        _Worker.current = self

    def finish(self) -> None:
        """A worker's entries, written as one pack before its last answer (the run merges packs, not it)."""
        if self.cache is not None:
            self.cache.close(merge=False)

    def stage(self, file: str) -> tuple[str, str, Any]:
        """("staged", path, Staged) for a file that needs no other; ("cached", path, (text, entry)) for one
        taken from the cache or put in it; ("text", path, its text) for the run to parse and adapt."""
        config = self.config
        rel = relpath(config.root, file)
        reader = file_format(rel)
        text = isolated_load(rel, lambda: read_text(rel, file, self.limits, reader, self.read.pop(file, None)))
        serving = isinstance(text, str) and self.wanted(rel, text)
        name = rel.rsplit("/", 1)[-1]
        watched = self.own if isinstance(self.own, _Watched) else None
        shares = serving and adapters.shares_index(name, text, cached=self.own is None)
        if shares and (watched is None or adapters.read_with_others(name) and name not in self.alone):
            return ("text", file, text)
        key = self.cache.key(rel, text) if serving and not shares and self.cache is not None else None
        entry = self.cache.get(key) if key is not None else None
        if entry is not None:
            return ("cached", file, (text, entry))
        if isinstance(text, LoadedFile):
            loaded = text
        elif not serving:  # ``load_file``'s answer for a file without a marker, without its glue (most files)
            loaded = isolated_load(rel, lambda: unmarked(rel) if reader is not None
                                   else check_text(rel, text, self.limits, self.fast))
        else:
            loaded = load(config, file, self.fast, tested(serving), text, rel=rel)
        if watched is not None and not loaded.serving and loaded.error is None and reader is None:
            # as the run notes it (``lint.gather``): a kustomization this worker builds need not read it again
            watched.spaces.setdefault(UNMARKED, set()).add(os.path.join(self.root, rel))
        result = Staged(loaded, [])
        if loaded.serving:
            workspace = self.workspace
            before, held, beyond = _sizes(workspace), set(workspace.held), reads_beyond()
            if watched is not None:
                watched.touched.clear()
            waiting: list[LoadedFile] = []  # it refers to what other files index: the run builds it
            with collected() as channel, watching() as looked:  # said again by the run
                result.models = isolated(loaded, lambda: first_pass(workspace, loaded, waiting, by_path=False), [])
            if watched is not None and (waiting or shares and not watched.touched <= adapters.ORDER_FREE | MEMOS):
                watched.forget(held)  # its models may depend on the files before it: the run builds them
                return ("text", file, text)
            result.added, result.held = _added(workspace, before), sorted(workspace.held - held)
            result.notes = channel.said
            result.looked = looked if watched is not None and any(looked) else []
            if key is not None and reads_beyond() == beyond and loaded.error is None:
                entry = self.keep(key, result)
                if self.done == "staged":  # a worker sends the entry: the run reads it as a cached one
                    return ("cached", file, (text, entry))
        return (self.done, file, result)

    def keep(self, key: str, result: Staged) -> bytes:
        """``result`` put in the cache, without the file's text (the next run has read it)."""
        assert self.cache is not None
        text, result.file.text = result.file.text, ""
        entry = pool.dumps(result)
        result.file.text = text
        self.cache.put(key, entry)
        return entry


def _entry(entry: bytes, resolve: Callable[[str], Any]) -> Staged | None:
    try:
        found = pool.loads(entry, resolve, restricted=True)
    except Exception:  # bytes written by another build or by someone else: no entry
        return None
    return found if isinstance(found, Staged) else None


def _work(file: str) -> bytes:
    """A worker's stage of ``file`` (``_Worker.stage``), pickled for the run; a file without a served model
    to build, read and checked without an error (most files of a tree), as ``PLAIN`` and its path."""
    worker = _Worker.current
    assert worker is not None, "a pool worker runs _Worker.start first"
    message = worker.stage(file)
    staged = message[2]
    digest = taken_digest(file)  # a first run's: its whole-run key is worked out from what the stages read
    head = b"" if digest is None else DIGESTED + digest
    if message[0] == "staged" and staged.models == [] and staged.file.unmarked() and not (staged.notes or staged.added):
        return head + PLAIN + staged.file.path.encode("utf-8", "surrogateescape")
    return head + pool.dumps(message)


PLAIN = b"\0"  # no pickle starts with it (protocol 2 and later start with PROTO, 0x80)
DIGESTED = b"\1"  # the digest of the file's bytes follows (``yamlio.digests_of_reads``), then the message
_DIGEST_BYTES = 32  # ``cache.blake2b``'s


def _received(data: bytes, file: str, resolve: Callable[[str], Any]) -> tuple[str, str, Any]:
    """A worker's message about ``file`` (``_work``) as ``_Worker.stage`` made it; the digest of the file's bytes
    it read, when it sent one, put as if read here (``yamlio.digest_read``)."""
    if data[:1] == DIGESTED:
        digest_read(file, data[1:1 + _DIGEST_BYTES])
        data = data[1 + _DIGEST_BYTES:]
    if data[:1] == PLAIN:  # a few bytes, not a pickled file: no object made in the worker, none unpickled here
        rel = data[1:].decode("utf-8", "surrogateescape")
        return ("staged", file, Staged(unmarked(rel), []))
    return pool.loads(data, resolve)


def _rendered_alone() -> tuple[str, ...]:
    """The names of files rendered with others that a worker builds as it builds any other file: a
    kustomization. Its stage reads the files it names from disk (the same whatever the run read before it:
    ``paths.UNMARKED`` only spares reading again what the run found no serving marker in), records the
    references that lead nowhere (order-free); one to be rendered goes to the run (``_Watched.may_render``)."""
    from .adapters.core.registry import read_with_others  # imported before the workers fork: shared by them
    from .render.kustomize import NAMES

    return tuple(name for name in NAMES if read_with_others(name))


_KINDS: dict[str, type] = {"list": list, "dict": dict, "set": set}


def _shared(workspace: adapters.Workspace, name: str) -> Any:
    """The run's own index space for a name ``RunWorkspace`` gave one."""
    _, kind, owner = name.split(":", 2)
    return workspace.space(owner, _KINDS[kind])


def _preload(fast: bool) -> None:
    """Import before the workers fork what every one of them imports (the YAML parser: each file of a run is
    parsed or checked by libyaml), so that they share the run's copy instead of importing it each."""
    composer(fast)


# What a worker's workspace notes for a file whose stage would have rendered it (``may_render``): no index
# space, and not order-free, so that the file goes to the run.
RENDERS = f"{__name__}.renders"
# The index spaces that only remember what is on disk (a folder's resolution, what is at a path, files read
# without a serving marker): right whichever files a process read before, so a worker keeps its own and
# sends none of it to the run (thousands of entries on a GitOps tree's kustomizations).
MEMOS = frozenset({RESOLVED, LOOKED, UNMARKED})


def _sizes(workspace: adapters.Workspace) -> dict[str, Any]:
    return {owner: _size(space) if owner not in adapters.RECORDS else
            {name: _size(value) for name, value in vars(space).items()}
            for owner, space in workspace.spaces.items() if owner not in MEMOS}


def _size(space: Any) -> Any:
    return len(space) if isinstance(space, (list, dict)) else set(space) if isinstance(space, set) else None


def _added(workspace: adapters.Workspace, before: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """What the file added to each index space: items of a list, keys of a dict (the last ones: a dict
    keeps the order keys came in) or of a set; of a record of ``registry.RECORDS`` (the run's cluster
    definitions), what it added to each of its lists and dicts, with the record's class."""
    added = []
    for owner, space in workspace.spaces.items():
        if owner in MEMOS:
            continue
        if owner in adapters.RECORDS:
            was = before.get(owner) or {}
            fields = {name: items for name, value in vars(space).items()
                      for _, items in _grown(value, was.get(name))}
            if fields:
                added.append((owner, "record", (type(space), fields)))
            continue
        added.extend((owner, kind, items) for kind, items in _grown(space, before.get(owner)))
    return added


def _grown(space: Any, was: Any) -> list[tuple[str, Any]]:
    """[(kind, what was added)] of a list, dict or set that was ``was`` (``_size``) before; [] if none."""
    if isinstance(space, list) and len(space) > (was or 0):
        return [("list", space[was or 0:])]
    if isinstance(space, dict) and len(space) > (was or 0):
        return [("dict", {key: space[key] for key in list(space)[was or 0:]})]
    if isinstance(space, set) and space - (was or set()):
        return [("set", space - (was or set()))]
    return []


def _merge(workspace: adapters.Workspace, result: Staged) -> None:
    """What a worker's file added to its index spaces, added to the run's, in the order of the files."""
    for owner, kind, items in result.added:
        if kind == "record":  # a record's dicts keep a key's first value (``core/fleet.note_hosts``)
            record, fields = items
            space = workspace.space(owner, record)
            for name, grown in fields.items():
                found = getattr(space, name)
                if isinstance(found, list):
                    found.extend(grown)
                else:
                    for key, value in grown.items():
                        found.setdefault(key, value)
            continue
        space = workspace.space(owner, _KINDS[kind])
        if kind == "list":
            space.extend(items)
        else:
            space.update(items)
    workspace.held.update(result.held)
