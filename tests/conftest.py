"""Test-suite set-up: ``tests/support`` on ``sys.path``, the two tiers (``e2e`` marked here, from what a
test's code reaches: ``tests/support/tiers.py``) and the ``fake_github`` fixture.

Test modules live in packages named for what they test (``tests/rules/``, ``tests/github/`` ...) and
import one another as ``tests.<folder>.<module>``; the shared helpers are imported by their own names
(``from helpers import ...``, ``from fakegithub import ...``) from ``tests/support``. ``tests/`` itself is
never put on ``sys.path``: its ``github`` folder would hide PyGithub."""

import sys
from pathlib import Path

import pytest

SUPPORT = str(Path(__file__).resolve().parent / "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

import tiers  # noqa: E402 - from tests/support, just put on sys.path


def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile cfgcheck once for the interpreters the e2e tier spawns: with PYTHONDONTWRITEBYTECODE
    set (as on the project's machines) an editable install is otherwise compiled from source by every
    ``python -m cfgcheck`` a test starts (about 40% of its start-up CPU). Under pytest-xdist the controller
    compiles before it starts the workers (xdist starts them in its own, later, ``pytest_sessionstart``);
    a worker (``workerinput``) does not compile again."""
    if sys.dont_write_bytecode and not hasattr(session.config, "workerinput"):
        tiers.compile_sources()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that spawns a process, builds a git repository or talks to a fake server ``e2e``
    (``pytest -m "not e2e"`` is the unit tier). The ``slow`` fuzz runs are left out unless the ``-m``
    expression names them (``-m slow``): an ``addopts = -m 'not slow'`` would be replaced by any other ``-m``."""
    tiers.mark(items)
    if "slow" not in (config.option.markexpr or ""):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]
    if hasattr(config, "workerinput"):
        # A pytest-xdist worker: hand out the e2e tier first. Its tests take 10-1000 times a unit test's
        # time, and the ones left for last would keep one worker busy while the others idle; the unit tier
        # then fills the end evenly. Every worker sorts the same way (xdist requires one collection order).
        items.sort(key=lambda item: item.get_closest_marker("e2e") is None)


@pytest.fixture(scope="session", autouse=True)
def _cache_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory):
    """`cfgcheck lint` keeps a content cache in $XDG_CACHE_HOME/cfgcheck (src/cfgcheck/cache.py): the suite's
    runs, in-process and spawned, keep theirs in a folder of the session, never the developer's."""
    import os

    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(scope="session", autouse=True)
def _repository_templates(tmp_path_factory: pytest.TempPathFactory):
    """``helpers.make_repo`` builds each repository once per session here and copies it for every test."""
    import helpers

    helpers.TEMPLATES["root"] = tmp_path_factory.mktemp("repository-templates")
    yield
    helpers.TEMPLATES.clear()
    helpers._BUILT.clear()


@pytest.fixture(autouse=True)
def _unit_tier_spawns_nothing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A unit-tier test that starts a process after all (cfgcheck's own git or helm call) fails and says
    so: the marker is then missing, and the unit tier would silently grow slow."""
    if request.node.get_closest_marker("e2e"):
        yield
        return
    guard = tiers.SpawnGuard(monkeypatch)
    yield
    guard.check(request.node.nodeid)


@pytest.fixture
def fake_github():
    """A running fake GitHub REST server (``tests/support/fakegithub.py``).

    Yields a ``FakeGitHub``: ``.url`` (PyGithub ``base_url``), ``.state``,
    ``.client()``, seeding helpers and fault injection.  Skips when
    ../shared/github-api/openapi-subset.json is missing; fails the test at
    teardown if any request/response failed schema validation."""
    from fakegithub import fake_github_fixture

    yield from fake_github_fixture()
