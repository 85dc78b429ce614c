"""Fixtures shared by the hostile-input tests (``test_hostile.py``, ``test_security_input.py``)."""

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def repo(tmp_path: Path, request) -> Path:
    """A git repository named after the test, holding one good served model that must still be linted."""
    from tests.security.test_hostile import GOOD

    root = tmp_path / request.node.name.replace("[", "_").replace("]", "").replace("/", "_")[:60]
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    (root / "good.yaml").write_text(GOOD, encoding="utf-8")
    return root
