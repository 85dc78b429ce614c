"""Work on many files in ``jobs`` processes in all, the results in the order of the files.

A lint run over tens of files or more stages them in ``jobs`` processes (``lint --jobs``, by default the
cores; one process below ``MIN_FILES`` or with ``--jobs 1``): the run itself stages its share of the
chunks of files while ``jobs - 1`` forked workers stage the rest (``ordered``), each chunk's owner dealt
when the workers are forked (``owners``), so a worker needs no queue and the run reads its answers from
a pipe in the order of the files. With many served models a forked process runs a share of the rules
too (``forked``, ``lint.run_rules``). Workers are forked: they start with the run's configuration,
registry and imports, and nothing is sent to them. What a worker sends back is pickled here, so that
objects the run shares (an adapter module's index space, such as the list of Services every pod keeps)
travel as names and are the parent's own objects once unpickled (``named``, ``Shared``): a served model
built in a worker refers to the run's list, as one built in the parent does. Without ``fork`` (Windows)
the run stays in one process.
"""

from __future__ import annotations

import functools
import io
import os
import signal

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

MIN_FILES = 32  # fewer files than this: starting workers costs more than they save
CHUNK = 8  # files dealt to a process at a time (32 cost the tree's run the same instructions)


# The most processes ``--jobs`` unset starts: each holds its own heap (54-95 MiB on the bench corpora), and
# the run unpickles every worker's stages, so a 64-core node's default would cost gigabytes and gain nothing.
MAX_DEFAULT_JOBS = 4


def default_jobs() -> int:
    """The processors this process may run on (a CI runner's cores, a container's CPU set), no more than its
    CPU quota (a Kubernetes pod's limit on a large node) and ``MAX_DEFAULT_JOBS``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = cpu_quota()
    return max(1, min(cores, quota if quota is not None else cores, MAX_DEFAULT_JOBS))


# where the kernel says how much CPU time the process's cgroup may use per period: v2, then v1
# (docs.kernel.org/admin-guide/cgroup-v2.html "cpu.max"; cgroup v1 "CFS Bandwidth Control")
CGROUP_V2 = "/sys/fs/cgroup/cpu.max"
CGROUP_V1 = ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")


def cpu_quota() -> int | None:
    """The CPUs the process's cgroup quota allows, rounded up; None without a quota (or where none is read)."""
    try:
        with open(CGROUP_V2) as found:
            quota, _, period = found.read().strip().partition(" ")
    except OSError:
        try:
            with open(CGROUP_V1[0]) as found_quota, open(CGROUP_V1[1]) as found_period:
                quota, period = found_quota.read().strip(), found_period.read().strip()
        except OSError:
            return None
    if not quota.lstrip("-").isdigit() or not period.isdigit() or int(quota) <= 0 or int(period) <= 0:
        return None  # "max" (v2) or -1 (v1): no quota
    return max(1, -(-int(quota) // int(period)))


def forks() -> bool:
    """Whether this system forks processes (not Windows: there a run stays in one process)."""
    return hasattr(os, "fork")


def usable(jobs: int, files: int) -> bool:
    return jobs > 1 and files >= MIN_FILES and forks()


class Shared:
    """What an object the run shares pickles as (``named``): its name, the loading process's own object
    once unpickled (``loads``' ``resolve``). A class, so that a cache entry that names it is loaded."""

    def __new__(cls, name: str) -> Any:  # type: ignore[misc]
        return _resolving[-1](name)


_resolving: list[Callable[[str], Any]] = []  # the resolve of each ``loads`` under way


# What an entry of the content cache may name besides cfgcheck's own classes: the cache folder is the
# user's, but a CI cache restored from another job is bytes someone else wrote, and unpickling calls
# what the bytes name (docs.python.org/3/library/pickle.html, "Restricting Globals").
_BUILTINS = frozenset({"set", "frozenset", "slice", "complex", "bytearray", "range"})


@functools.lru_cache(maxsize=1)
def _unpickler() -> type:
    """The restricted unpickler's class, made by the first ``loads`` of bytes read from the cache: pickle
    (with struct and _compat_pickle, 1.5% of a one-file lint's instructions) is imported by the runs that
    pickle: a worker pool's, and a whole run's cache entry (cache.py)."""
    import pickle

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if module.split(".")[0] != "cfgcheck" and not (module == "builtins" and name in _BUILTINS):
                raise pickle.UnpicklingError(f"{module}.{name} is not a cfgcheck class")  # not imported
            found = super().find_class(module, name)
            if not isinstance(found, type):
                raise pickle.UnpicklingError(f"{module}.{name} is not a class")
            return found

    return Unpickler


def dumps(value: Any, names: bool = True) -> bytes:
    """``value`` pickled, each object of a ``named`` class as the name it carries (``Shared``; ``names``
    False: with what it holds, as a whole run's result is kept). No function is called for every object
    pickled (a ``persistent_id`` would be: a third of the time of pickling served models); a record pickles
    as its class and the values of its slots (``records.Record``)."""
    import pickle

    _naming.append(names)
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        _naming.pop()


def loads(data: bytes, resolve: Callable[[str], Any], restricted: bool = False) -> Any:
    """``dumps`` undone, each shared object's name resolved by ``resolve`` to the loading run's object;
    ``restricted``: only cfgcheck's classes and a few plain builtin types may be named."""
    _resolving.append(resolve)
    try:
        if not restricted:  # bytes a process of this run made (a worker's stage, the rules' child): in C, no
            import pickle  # class looked up in Python (a GitOps tree's run reads 554 such answers)

            return pickle.loads(data)
        return _unpickler()(io.BytesIO(data)).load()
    finally:
        _resolving.pop()


_naming: list[bool] = []  # a ``dumps`` under way: named objects pickle as their names


class _Named:
    """An index space of the run or of a worker: pickled by ``dumps`` as its name (``Shared``), by any
    other pickling (the whole-run cache, ``copy``) with what it holds."""

    __slots__ = ()
    name: str

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Shared, (self.name,)) if _naming and _naming[-1] else super().__reduce_ex__(protocol)


class _NamedList(_Named, list):
    __slots__ = ("name",)


class _NamedDict(_Named, dict):
    __slots__ = ("name",)


class _NamedSet(_Named, set):
    __slots__ = ("name",)


NAMED = {list: _NamedList, dict: _NamedDict, set: _NamedSet}


def named(made: Any, name: str) -> Any:
    """``made`` (an empty list, dict or set) as one that ``dumps`` pickles as ``name`` (``Shared``): an
    index space, which served models built in a worker or kept in the cache refer to as the loading
    run's own; another object as it is."""
    kind = NAMED.get(type(made))
    if kind is None or made:
        return made
    found = kind()
    found.name = name
    return found


class WorkerDied(RuntimeError):
    """A worker process ended before it sent what it owed: the run ends with this, not a partial result."""


class _Child:
    """A forked process that runs ``task(send)`` and sends each answer through a pipe, as its length and its
    bytes; the parent reads them in the order sent (``receive``). No queue, no thread in either process: what
    a child answers is known when it is forked."""

    def __init__(self, task: Callable[[Callable[[bytes, bool], None]], None]) -> None:
        read, write = os.pipe()
        _widen(write)
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns into the run
            os.close(read)
            _serve(task, write)
        os.close(write)
        self.stream = os.fdopen(read, "rb")
        self.status: int | None = None

    def receive(self) -> bytes:
        head = self.stream.read(_HEAD)
        size = int.from_bytes(head, "little") if len(head) == _HEAD else -1
        data = self.stream.read(size) if size >= 0 else b""
        if len(data) != size:
            self.end()
            raise WorkerDied(f"a worker process ended before it answered ({self._how()})")
        return data

    def end(self) -> None:
        """The child ended (terminated when it is still running) and waited for."""
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == 0:
                os.kill(self.pid, signal.SIGTERM)
                pid, status = os.waitpid(self.pid, 0)
            self.status = status
        self.stream.close()

    def _how(self) -> str:
        status = self.status or 0
        return f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit code {os.waitstatus_to_exitcode(status)}"


_HEAD = 4  # bytes of an answer's length


def _widen(pipe: int) -> None:
    """A pipe of 1 MiB (Linux; 64 KiB otherwise): a child stages ahead while the run stages its own share."""
    try:
        import fcntl

        fcntl.fcntl(pipe, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def _serve(task: Callable[[Callable[[bytes, bool], None]], None], pipe: int) -> None:
    # The parent handles Ctrl-C and termination (the sandbox session cleans its folder there, once): a
    # child ignores SIGINT and dies on SIGTERM without running the handlers it inherited, nor any ``finally``
    # or exit handler of the run it was forked from (os._exit).
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with os.fdopen(pipe, "wb") as out:
            def send(data: bytes, flush: bool) -> None:
                out.write(len(data).to_bytes(_HEAD, "little") + data)
                if flush:
                    out.flush()
            task(send)
        code = 0
    except BaseException:  # the parent reports it (``receive``); CFGCHECK_DEBUG shows the traceback
        if os.environ.get("CFGCHECK_DEBUG"):
            import traceback

            traceback.print_exc()
    finally:
        os._exit(code)


def forked(task: Callable[[], bytes]) -> _Child:
    """``task()`` run in a forked child; ``receive()`` of what is returned is its answer."""
    return _Child(lambda send: send(task(), True))


def owners(chunks: int, jobs: int, ahead: int | None = None) -> list[int]:
    """Which process stages each chunk: 0 the run's, 1 to ``jobs - 1`` a worker's. The run stages the first
    ``ahead`` chunks (default ``RUN_AHEAD``) while the workers start, then ``RUN_SHARE`` (in percent of an
    equal share) of the others, spread evenly; the workers the rest in turn."""
    ahead = RUN_AHEAD if ahead is None else ahead
    return [_chunk_owner(chunk, jobs, ahead) for chunk in range(chunks)]


# How the run shares the chunks with its workers. A worker starts later (the fork, the imports its first files
# need) and also pickles what it sends, and the run waited for it (38-75 ms of a GitOps tree's --jobs 2 run
# were spent reading the pipe): the run stages the first chunks alone and then a little more than an equal
# share (in percent of one). Interleaved wall times with 2 processes, the cache cold (medians):
# - equal shares against 54% (RUN_SHARE 108, no chunks ahead): GitOps tree 1.069 -> 0.962 s (15 runs each),
#   0.746 -> 0.708 s at 55% (20 runs); dense corpus 2.115 -> 1.985 s (10 runs); 55% was worse on dense (1.979
#   against 1.857 s), 60% no better on the tree, 45% or less slower on both;
# - 6 chunks ahead, then 52%, against 54% alone: tree 0.813 -> 0.751, 0.763 -> 0.736 and 0.825 -> 0.799 s (15
#   runs each, three rounds); dense 1.635 against 1.639 s (8 runs); 12 chunks ahead or 50% after 6 no better.
RUN_AHEAD = 6
RUN_SHARE = 104


def _chunk_owner(chunk: int, jobs: int, ahead: int) -> int:
    """``owners`` of one chunk: after the first ``ahead``, the run's when its share of the chunks up to this
    one grows by it (by whole numbers: a share of 1/3 deals every third chunk exactly)."""
    if jobs < 2 or chunk < ahead:
        return 0
    chunk -= ahead
    share, whole = RUN_SHARE, 100 * jobs  # the run's chunks in ``chunk + 1`` are ceil((chunk + 1) * share / whole)
    before = -(-chunk * share // whole)
    if -(-(chunk + 1) * share // whole) > before:
        return 0
    return 1 + (chunk - before) % (jobs - 1)


class Workers:
    """The ``jobs - 1`` forked processes of ``ordered``, each staging the chunks ``owners`` deals it (``ahead``:
    the chunks the run stages before its share, as ``owners`` takes it), started by ``ordered`` or before it (a
    first run's workers stage while the run works out the whole-run cache's key: ``stages.start_workers``)."""

    def __init__(self, work: Callable[[Any], bytes], items: list[Any], jobs: int,
                 bounds: tuple[Callable[[], None], Callable[[], None]], ahead: int | None = None) -> None:
        self.chunks = [items[at:at + CHUNK] for at in range(0, len(items), CHUNK)]
        self.dealt = owners(len(self.chunks), jobs, ahead)
        self.children: list[_Child] = []
        try:
            for worker in range(1, jobs):
                own = [chunk for chunk, owner in zip(self.chunks, self.dealt) if owner == worker]
                self.children.append(_Child(functools.partial(_stage_chunks, work, bounds, own)))
        except BaseException:
            self.end()
            raise

    def runs(self, position: int) -> bool:
        """Whether the run stages the item at ``position`` itself."""
        return self.dealt[position // CHUNK] == 0

    def end(self) -> None:
        """Every worker ended (terminated when it is still running) and waited for; again, nothing more."""
        for child in self.children:
            child.end()


def ordered(work: Callable[[Any], bytes], items: list[Any], jobs: int,
            bounds: tuple[Callable[[], None], Callable[[], None]] | None, here: Callable[[Any], Any],
            started: Workers | None = None) -> Iterator[Any]:
    """For each item in order, ``here(item)`` for the run's own share of the chunks, else ``work(item)``
    computed in one of ``jobs - 1`` forked processes that run ``start()`` first and ``finish()`` before
    their last answer (``bounds``: both): ``jobs`` processes in all; ``started``: those processes, forked
    already for ``items`` (``bounds`` None). A worker that dies ends the run with ``WorkerDied`` (not a
    partial result)."""
    workers = started
    try:
        if workers is None:
            assert bounds is not None, "workers not started yet start with their bounds"
            workers = Workers(work, items, jobs, bounds)
        assert sum(map(len, workers.chunks)) == len(items), "the workers were started for these items"
        for chunk, owner in zip(workers.chunks, workers.dealt):
            if owner == 0:
                yield from map(here, chunk)
            else:
                yield from (workers.children[owner - 1].receive() for _ in chunk)
    finally:
        if workers is not None:
            workers.end()


def _stage_chunks(work: Callable[[Any], bytes], bounds: tuple[Callable[[], None], Callable[[], None]],
                  chunks: list[list[Any]], send: Callable[[bytes, bool], None]) -> None:
    start, finish = bounds
    start()
    left = sum(map(len, chunks))
    if not left:
        finish()
    for chunk in chunks:
        for position, item in enumerate(chunk, 1):
            answer = work(item)
            left -= 1
            if not left:  # before the last answer: the run ends a worker once it has every answer
                finish()
            send(answer, position == len(chunk))
