"""Work on many files in worker processes, the results in the order of the files.

A lint run over tens of files or more parses and adapts them in ``jobs`` processes (``lint --jobs``;
one process, no pool, below ``MIN_FILES`` or with ``--jobs 1``). Workers are forked: they start with
the run's configuration, registry and imports, and nothing is pickled to them but file paths. What a
worker sends back is pickled here, not by multiprocessing, so that objects the run shares (an adapter
module's index space, such as the list of Services every pod keeps) travel as names and are the
parent's own objects once unpickled (``named``, ``Shared``): a served model built in a worker refers to the run's
list, as one built in the parent does. Without ``fork`` (Windows) the run stays in one process.
"""

from __future__ import annotations

import functools
import io
import os
import signal

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator

MIN_FILES = 32  # fewer files than this: starting workers costs more than they save
CHUNK = 8  # files sent to a worker at a time: few messages, and the order kept cheaply


def default_jobs() -> int:
    """The processors this process may run on (a CI runner's cores, a container's CPU set)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def usable(jobs: int, files: int) -> bool:
    return jobs > 1 and files >= MIN_FILES and hasattr(os, "fork")


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
    """The restricted unpickler's class, made by the first ``loads``: pickle (with struct and
    _compat_pickle, 1.5% of a one-file lint's instructions) is imported by the runs that pickle: a
    worker pool's, and a whole run's cache entry (cache.py)."""
    import pickle

    class Unpickler(pickle.Unpickler):
        def __init__(self, stream, restricted: bool) -> None:
            super().__init__(stream)
            self.restricted = restricted

        def find_class(self, module: str, name: str) -> Any:
            if not self.restricted:
                return super().find_class(module, name)
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
        return _unpickler()(io.BytesIO(data), restricted).load()
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


def _quiet_worker(start: Callable[[], None]) -> None:
    # The parent handles Ctrl-C and termination (the sandbox session cleans its folder there, once): a
    # worker ignores SIGINT and dies on SIGTERM without running the handlers it inherited.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    start()


def ordered(work: Callable[[Any], bytes], items: Iterable[Any], jobs: int, start: Callable[[], None]) -> Iterator[bytes]:
    """``work(item)`` for each item, in ``jobs`` forked processes that ran ``start()`` first, in the
    order of ``items``. A worker that dies ends the run with the pool's error (not a partial result)."""
    # imported here: multiprocessing brings threading, socket and selectors (7 ms of a one-file lint's
    # start-up, measured with -X importtime), and a run of fewer than MIN_FILES files starts no worker
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with context.Pool(jobs, initializer=_quiet_worker, initargs=(start,)) as pool:
        yield from pool.imap(work, items, CHUNK)
