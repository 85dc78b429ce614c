"""mypy on the contracts other code is written against (``[tool.mypy]`` in pyproject.toml names them: the rule
api, the rule context, the effective facts and the adapter protocol)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import REPO


def test_the_contracts_type_check() -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml")],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success" in out.stdout
