"""Test-suite set-up: ``tests/support`` on ``sys.path`` and the ``fake_github`` fixture.

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


@pytest.fixture
def fake_github():
    """A running fake GitHub REST server (``tests/support/fakegithub.py``).

    Yields a ``FakeGitHub``: ``.url`` (PyGithub ``base_url``), ``.state``,
    ``.client()``, seeding helpers and fault injection.  Skips when
    ../shared/github-api/openapi-subset.json is missing; fails the test at
    teardown if any request/response failed schema validation."""
    from fakegithub import fake_github_fixture

    yield from fake_github_fixture()
