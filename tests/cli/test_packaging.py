"""The wheel built from the sdist ships every module, the rules, the templates and the data (offline build); the
development tools (ruff in CI, the test extra and pre-commit) agree."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

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
    package = REPO / "src" / "cfgcheck"  # every module, subpackages included (pyproject lists them)
    modules = {f"cfgcheck/{path.relative_to(package).as_posix()}" for path in package.rglob("*.py")}
    assert modules <= names, sorted(modules - names)


def test_ci_and_pre_commit_run_the_ruff_the_test_extra_pins() -> None:
    """One ruff version everywhere (a new release cannot turn CI red on its own), and CI runs it."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (pin,) = [req for req in project["project"]["optional-dependencies"]["test"] if req.startswith("ruff")]
    version = pin.split("==", 1)[1]
    hooks = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"]
    (ruff,) = [repo for repo in hooks if repo["repo"].endswith("/ruff-pre-commit")]
    assert ruff["rev"] == f"v{version}"
    local = [hook["id"] for repo in hooks if repo["repo"] == "local" for hook in repo["hooks"]]
    assert "cfgcheck" in local  # the hook the repository ships (.pre-commit-hooks.yaml), on itself
    assert "ruff check src rules scripts tests bench" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert project["tool"]["ruff"]["lint"]["select"]
