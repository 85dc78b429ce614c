"""The base of plain record classes with slots (``served.py`` and the engine and adapter records a lint of
a served model builds): a module of its own, which a run without a served model never imports, and which
``served`` imports without ``model`` (which imports ``served`` for its names)."""

from __future__ import annotations

from typing import Any


class Record:
    """A plain record class: ``__slots__`` are its ``__init__`` parameters in order, each set from its
    argument, and it is compared by identity. A dataclass compiles its generated ``__init__`` when its
    module is imported (about 0.7 ms a class on Python 3.11, paid by every one-file lint of a served model:
    bench/RESULTS.md, "One file: start-up"); a written one is compiled once into the bytecode cache.

    It pickles as its class and the values of its slots, and is made again by calling the class (a
    worker's served models, the content cache): what ``pool`` does for a dataclass with slots, without
    asking ``dataclasses.fields`` for each object."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), tuple([getattr(self, name) for name in self.__slots__])
