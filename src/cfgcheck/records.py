"""The base of plain record classes with slots: findings (``model.py``), the files and documents every run
reads (``yamlio.py``), the records of a served model (``served.py``) and the engine, capacity and adapter
records a lint of one builds. A module of its own that imports nothing of cfgcheck's, so that ``served``
imports it without ``model`` (which imports ``served`` for its names). None of them is a dataclass: a
one-file lint imports neither ``dataclasses`` nor the ``inspect`` it brings (tests/cli/test_startup_imports.py)."""

from __future__ import annotations

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any


class Record:
    """A plain record class: ``__slots__`` are its ``__init__`` parameters in order, each set from its
    argument, and it is compared by identity. A dataclass compiles its generated ``__init__`` when its
    module is imported (about 0.7 ms a class on Python 3.11, paid by every one-file lint of a served model:
    bench/RESULTS.md, "One file: start-up"); a written one is compiled once into the bytecode cache.

    It pickles as its class and the values of its slots, and is made again by calling the class (a
    worker's served models, the content cache): faster than the ``__getstate__`` a dataclass with slots has.
    ``replaced`` makes a changed copy, as ``dataclasses.replace`` does."""

    __slots__ = ()

    def replaced(self, **changes: Any) -> Any:
        """A new record of this class with ``changes`` and this one's other values, made by calling the
        class (what ``dataclasses.replace`` does: a name that is no parameter is a TypeError)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return type(self)(**values)

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), tuple([getattr(self, name) for name in self.__slots__])


class ValueRecord(Record):
    """A record compared by the values of its slots, in order, as a dataclass's generated ``__eq__`` compares
    its fields (and so, as such a dataclass, not hashable): comments scanned twice, a rule found in a list."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple([getattr(self, name) for name in self.__slots__]) == tuple(
            [getattr(other, name) for name in self.__slots__])
