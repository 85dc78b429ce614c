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


def _compiling(name: str) -> Any:
    """The method ``name`` of ``Pattern``: its first call compiles the pattern and puts the compiled pattern's
    own bound method in the instance's dictionary, which answers every later lookup of ``name`` (it comes
    before a method of the class): a call then costs a few hundred instructions more than one of a pattern
    compiled at import (255), not the 3,200 of a Python method that calls it (callgrind, 100,000 searches,
    2026-12-02). No ``__getattr__`` on the class: its hook would slow every lookup by some 150 more."""

    def first_call(self: Pattern, *args: Any, **kwargs: Any) -> Any:
        method = vars(self)[name] = getattr(self.compiled(), name)
        return method(*args, **kwargs)

    first_call.__name__ = first_call.__qualname__ = name
    return first_call


class Pattern:
    """``re.compile(pattern, flags)`` the first time it matches anything: compiling a module's patterns at
    import costs every run that never uses them (a rule's, a launch format's). It answers what
    ``re.Pattern`` answers."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source, self._flags, self._compiled = pattern, flags, None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    search = _compiling("search")
    match = _compiling("match")
    fullmatch = _compiling("fullmatch")
    finditer = _compiling("finditer")
    findall = _compiling("findall")
    sub = _compiling("sub")
    subn = _compiling("subn")
    split = _compiling("split")
    scanner = _compiling("scanner")
    pattern = property(lambda self: self._source)
    flags = property(lambda self: self.compiled().flags)
    groups = property(lambda self: self.compiled().groups)
    groupindex = property(lambda self: self.compiled().groupindex)


def pyyaml() -> Any:
    """PyYAML, imported with its own modules' patterns made ``Pattern``s: compiled the first time one matches.
    cfgcheck parses with libyaml's C parser, which matches none of them (nor does the composer: scalars are
    resolved by ``yamltree``); the pure-Python reader's pattern of printable characters alone took 9 ms to
    compile, its resolver's and constructor's 3 ms more, a tenth of a one-file lint (bench/RESULTS.md,
    thirteenth session). Only a call from a module of PyYAML's is deferred: another thread's ``re.compile``
    while PyYAML imports is the real one. Raises ImportError as ``import yaml`` does."""
    module = sys.modules.get("yaml")
    if module is not None:
        return module
    compile_now = re.compile

    def deferred(pattern: Any, flags: int = 0) -> Any:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if isinstance(pattern, str) and (caller == "yaml" or caller.startswith("yaml.")):
            return Pattern(pattern, flags)
        return compile_now(pattern, flags)

    re.compile = deferred  # type: ignore[assignment]
    try:
        return importlib.import_module("yaml")
    finally:
        re.compile = compile_now
