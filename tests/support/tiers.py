"""The two test tiers: which tests are end to end (``e2e``), found from what their code reaches.

A test is ``e2e`` when it spawns a process (the CLI in a fresh interpreter, git, helm, kubectl, a
script), builds a git repository, or talks to a fake server. Nobody has to remember the marker: at
collection ``tests/conftest.py`` reads each test's code, the fixtures it uses and every test-suite
function or class they name (transitively, through ``tests/support`` too), and marks the test when
that code names ``subprocess``, a fake server, an ``http.server`` server or an e2e fixture.

What reading the code cannot see is a process cfgcheck itself spawns (``lint --base`` runs git, a
chart is rendered with helm when it is installed): ``SpawnGuard`` records every process a test of the
unit tier starts, and the test fails naming the command, so a misfiled test is found on its first run.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
# fixtures that start a server, build a repository or spawn a process; a fixture that uses one of them
# (or names subprocess) is found by reading its code like a test's
E2E_FIXTURES = frozenset({"fake_github"})
# modules whose functions and classes make a test e2e when a test names them
E2E_MODULES = frozenset({"subprocess", "http.server", "socketserver", "fakegithub", "fakeregistry", "pty",
                         "multiprocessing"})
# the autouse fixture that runs SpawnGuard: it names subprocess to watch it, not to spawn
GUARD_FIXTURE = "_unit_tier_spawns_nothing"
REASON = "spawns a process, builds a git repository or talks to a fake server"


def _suite_module(name: str | None) -> bool:
    """Code of the test suite itself (test modules, conftest files, tests/support): read, not trusted."""
    if not name:
        return False
    if name.startswith("tests.") or name == "conftest" or name.endswith(".conftest"):
        return True
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    return bool(path) and Path(path).resolve().is_relative_to(TESTS)


def _names(code: types.CodeType) -> set[str]:
    """Names a code object (and the functions, lambdas and comprehensions inside it) uses: its globals,
    and attribute names too (``co_names`` does not tell them apart; only those bound in the function's
    module are followed, so an attribute that shares a global's name at most files a test as e2e)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _module(name: str) -> types.ModuleType | None:
    """A module a test imports by name; a test module not collected in this run is imported to be read."""
    if name not in sys.modules:
        try:
            importlib.import_module(name)
        except ImportError:
            return None
    return sys.modules[name]


class Reach:
    """Whether a piece of test code reaches a process, a repository or a server (cached per object)."""

    def __init__(self) -> None:
        self._seen: dict[int, bool] = {}

    def value(self, obj: object) -> bool:
        if isinstance(obj, types.ModuleType):
            return obj.__name__ in E2E_MODULES
        module = getattr(obj, "__module__", None)
        if module in E2E_MODULES or (isinstance(module, str) and module.split(".")[0] in E2E_MODULES):
            return True
        if not _suite_module(module):
            return False
        key = id(obj)
        if key not in self._seen:
            self._seen[key] = False  # a cycle (a function naming itself) reaches nothing new
            self._seen[key] = self._reads(obj)
        return self._seen[key]

    def _reads(self, obj: object) -> bool:
        if isinstance(obj, type):
            return any(self.value(member) for member in vars(obj).values()
                       if inspect.isfunction(member) or isinstance(member, (staticmethod, classmethod, property)))
        if isinstance(obj, (staticmethod, classmethod)):
            return self.value(obj.__func__)
        if isinstance(obj, property):
            return any(self.value(f) for f in (obj.fget, obj.fset) if f is not None)
        function = inspect.unwrap(obj) if callable(obj) else obj
        code = getattr(function, "__code__", None)
        if code is None:
            return False
        scope = getattr(function, "__globals__", {})
        names = _names(code)
        # a name imported inside the function (``from helpers import git``) is an attribute of a module
        # it also names; ``import subprocess`` there names the module itself
        imported = [_module(name) for name in names if name in sys.modules or name.startswith("tests.")]
        imported = [m for m in imported if m is not None]
        for name in names:
            found = [scope[name]] if name in scope else [getattr(m, name) for m in imported if hasattr(m, name)]
            if name in sys.modules and name not in scope:  # ``import subprocess`` inside the function
                found.append(sys.modules[name])
            if any(self.value(obj) for obj in found):
                return True
        return False


def is_e2e(item: pytest.Item, reach: Reach) -> bool:
    if item.get_closest_marker("e2e"):
        return True
    names = set(getattr(item, "fixturenames", ()))
    if names & E2E_FIXTURES:
        return True
    function = getattr(item, "function", None)
    if function is not None and reach.value(function):
        return True
    info = getattr(item, "_fixtureinfo", None)
    definitions = getattr(info, "name2fixturedefs", {}) if info is not None else {}
    return any(reach.value(d.func) for name in names - {GUARD_FIXTURE} for d in definitions.get(name, ()))


def mark(items: list[pytest.Item]) -> None:
    reach = Reach()
    for item in items:
        if not item.get_closest_marker("e2e") and is_e2e(item, reach):
            item.add_marker(pytest.mark.e2e(reason=REASON))


def compile_sources() -> None:
    """Write the bytecode of ``src/`` and ``rules/`` beside them (``__pycache__``, ignored by git)."""
    import compileall

    for folder in ("src", "rules"):
        compileall.compile_dir(TESTS.parent / folder, quiet=2)


def _discovery(words: list[str]) -> bool:
    """How cfgcheck finds its way in a folder that is in a git checkout: ``git rev-parse --show-toplevel``
    (where ``.cfgcheck.yaml`` is looked for, ``config.py``), ``git -C DIR ls-files|grep`` (the files of a
    folder and their prefilter, ``discover.py``). Linting this repository's examples or fixtures in-process
    runs them; they read the index in milliseconds, and would otherwise file every in-process lint of a
    folder of the checkout as e2e."""
    if not words or Path(words[0]).name != "git":
        return False
    rest = words[1:]
    while rest[:1] in (["-C"], ["-c"]):  # git.py's HARDENING options (-c NAME=VALUE) and a -C DIR
        rest = rest[2:]
    return rest[:1] in (["ls-files"], ["grep"]) or rest[:2] == ["rev-parse", "--show-toplevel"]


class SpawnGuard:
    """Records the processes a unit-tier test starts (cfgcheck's own git or helm calls included), but
    for the file listing of ``_discovery``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.commands: list[str] = []
        original = subprocess.Popen.__init__
        guard = self

        def recording_init(popen, args, *rest, **kwargs):
            words = [str(args)] if isinstance(args, (str, bytes, Path)) else [str(w) for w in args]
            if not _discovery(words):
                guard.commands.append(" ".join(words)[:120])
            original(popen, args, *rest, **kwargs)

        monkeypatch.setattr(subprocess.Popen, "__init__", recording_init)

    def check(self, nodeid: str) -> None:
        if self.commands:
            pytest.fail(f"{nodeid} is in the unit tier but started {len(self.commands)} process(es), first "
                        f"`{self.commands[0]}`: mark it `@pytest.mark.e2e` (or give it an in-process path)",
                        pytrace=False)
