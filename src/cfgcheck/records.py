"""The base of plain record classes with slots: findings (``model.py``), the files and documents every run
reads (``yamlio.py``), the records of a served model (``served.py``) and the engine, capacity and adapter
records a lint of one builds. A module of its own that imports nothing of cfgcheck's, so that ``served``
imports it without ``model`` (which imports ``served`` for its names). None of them is a dataclass: a
one-file lint imports neither ``dataclasses`` nor the ``inspect`` it brings (tests/cli/test_startup_imports.py)."""

from __future__ import annotations

from operator import attrgetter

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
    _values: Any  # the class's: its record's slot values, as a tuple

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the values of its slots in one C call (``__reduce__``, ``__eq__``): a list made in Python cost a
        # third of the time of pickling a GitOps tree's whole run (9,400 records)
        names = tuple(cls.__slots__)
        cls._values = attrgetter(*names) if len(names) > 1 else _one_value(names[0]) if names else _no_values

    def replaced(self, **changes: Any) -> Any:
        """A new record of this class with ``changes`` and this one's other values, made by calling the
        class (what ``dataclasses.replace`` does: a name that is no parameter is a TypeError)."""
        values = {name: getattr(self, name) for name in self.__slots__}
        values.update(changes)
        return type(self)(**values)

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        kind = type(self)
        return kind, kind._values(self)


def _one_value(name: str) -> Any:
    return lambda record: (getattr(record, name),)


def _no_values(record: Record) -> tuple[()]:
    return ()


class ValueRecord(Record):
    """A record compared by the values of its slots, in order, as a dataclass's generated ``__eq__`` compares
    its fields (and so, as such a dataclass, not hashable): comments scanned twice, a rule found in a list."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        values = type(self)._values
        return values(self) == values(other)
