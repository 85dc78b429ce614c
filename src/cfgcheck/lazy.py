"""What a module needs only on some runs, made the first time it is used: another module, a regular
expression. Start-up is what every pre-commit run and editor save pays, and most of them lint files that
hold no served model (bench/RESULTS.md, "One file: start-up"): such a run never pickles, never reaches the
adapter registry and never matches most of the patterns the adapters and rules define."""

from __future__ import annotations

import importlib
import re
import sys

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any


class Module:
    """Stands for the module ``name``, imported the first time one of its attributes is asked for; the
    ``ready`` attributes are given without importing it (they must be the module's own objects: the
    same class or function it imports from a smaller module)."""

    def __init__(self, name: str, **ready: Any) -> None:
        self._name = name
        vars(self).update(ready)

    def __getattr__(self, attribute: str) -> Any:  # only for what __init__ did not set
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        # sys.modules first: ``import_module`` takes the import lock on every call (a run asks for the
        # adapter registry's functions some 15,000 times on a GitOps tree)
        module = sys.modules.get(self._name) or importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


class Pattern:
    """``re.compile(pattern, flags)`` the first time it matches anything: compiling a module's patterns at
    import costs every run that never uses them (a rule's, a launch format's). It answers the methods of
    ``re.Pattern`` the code calls on it."""

    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source, self._flags, self._compiled = pattern, flags, None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    # the methods the code calls, spelled out: a call does not first fail the ordinary attribute lookup
    def search(self, *args: Any) -> re.Match | None:
        return self.compiled().search(*args)

    def match(self, *args: Any) -> re.Match | None:
        return self.compiled().match(*args)

    def fullmatch(self, *args: Any) -> re.Match | None:
        return self.compiled().fullmatch(*args)

    def finditer(self, *args: Any) -> Any:
        return self.compiled().finditer(*args)

    def findall(self, *args: Any) -> list:
        return self.compiled().findall(*args)

    def sub(self, *args: Any) -> str:
        return self.compiled().sub(*args)

    def split(self, *args: Any) -> list:
        return self.compiled().split(*args)

    def __getattr__(self, attribute: str) -> Any:  # anything else of re.Pattern (pattern, groupindex ...)
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(self.compiled(), attribute)
