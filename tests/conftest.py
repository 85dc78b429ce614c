# --- fake GitHub REST server (tests/fakegithub.py) -------------------------------
import pytest as _fakegithub_pytest


@_fakegithub_pytest.fixture
def fake_github():
    """A running fake GitHub REST server (``tests/fakegithub.py``).

    Yields a ``FakeGitHub``: ``.url`` (PyGithub ``base_url``), ``.state``,
    ``.client()``, seeding helpers and fault injection.  Skips when
    ../shared/github-api/openapi-subset.json is missing; fails the test at
    teardown if any request/response failed schema validation."""
    import pathlib
    import sys

    here = str(pathlib.Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from fakegithub import fake_github_fixture

    yield from fake_github_fixture()
