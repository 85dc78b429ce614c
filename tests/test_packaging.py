"""The wheel built from the sdist ships the rules, the templates and the data (offline build)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from helpers import REPO


def test_wheel_from_sdist_contains_rules_templates_and_data(tmp_path: Path) -> None:
    pytest.importorskip("build")
    out = tmp_path / "dist"
    # --no-isolation: use the installed setuptools, so the test needs no network.
    sdist = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(out), str(REPO)],
                           capture_output=True, text=True)
    assert sdist.returncode == 0, sdist.stderr[-2000:]
    (archive,) = out.glob("cfgcheck-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "src", filter="data")
    (unpacked,) = (tmp_path / "src").iterdir()
    wheel = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(unpacked)],
                           capture_output=True, text=True)
    assert wheel.returncode == 0, wheel.stderr[-2000:]
    (built,) = out.glob("cfgcheck-*.whl")
    names = set(zipfile.ZipFile(built).namelist())
    rules = {Path(n).name for n in names if n.startswith("cfgcheck/rules/") and n.endswith(".py")}
    shipped_rules = {p.name for p in (REPO / "rules").glob("*.py")}
    assert shipped_rules <= rules, shipped_rules - rules
    templates = {Path(n).name for n in names if n.startswith("cfgcheck/templates/")}
    assert {p.name for p in (REPO / "templates").glob("*.j2")} <= templates
    assert "cfgcheck/data/config.schema.json" in names
    assert any(n.startswith("cfgcheck/engines/catalogs/") and n.endswith((".json", ".json.gz")) for n in names)
    assert "cfgcheck/data/models.json" in names and "cfgcheck/data/gpus.json" in names
