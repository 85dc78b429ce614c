"""Every speed optimisation changes the cost, never the findings (issue: speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import REPO


def _findings(result) -> list[tuple]:
    return sorted((f.code, f.location.path, f.location.line, f.location.column, f.message, f.suppressed)
                  for f in result.findings)


@pytest.fixture(scope="module")
def dense(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "dense"
    subprocess.run([sys.executable, str(REPO / "bench" / "gen_dense.py"), "--out", str(out), "--files", "120"],
                   check=True, capture_output=True)
    return out


def test_findings_identical_with_and_without_optimisations(dense: Path) -> None:
    config = Config(dense.resolve())
    optimised = lint([dense], config)
    assert optimised.findings and optimised.models
    for fast, prefilter in [(True, False), (False, True), (False, False)]:
        other = lint([dense], config, fast=fast, prefilter=prefilter)
        assert _findings(other) == _findings(optimised), f"fast={fast} prefilter={prefilter}"
        assert len(other.models) == len(optimised.models)


def test_prefilter_keeps_unreadable_ordinary_files(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n data: x\n")
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    result = lint([tmp_path], Config(tmp_path))
    assert [(f.code, f.location.path) for f in result.findings] == [("CFG000", "broken.yaml")]
    assert not any(f.serving for f in result.files)


def test_a_kustomization_does_not_look_again_at_files_discovery_looked_at(tmp_path: Path, monkeypatch) -> None:
    """The files a kustomization names were looked at by discovery (``Inputs.looked``): its index hook and its
    renderer take that answer (``paths.LOOKED``), not another ``lstat`` each (4,843 of a GitOps tree's 5,000);
    a name discovery did not list is still looked at, and its absence still found."""
    import os

    app = tmp_path / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("resources:\n  - deployment.yaml\n  - missing.yaml\n")
    (app / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: web\n          image: vllm/vllm-openai:v0.6.3\n"
        "          args: [--model, Qwen/Qwen2.5-7B-Instruct]\n")
    looked_at: list[str] = []
    real_lstat = os.lstat

    def lstat(path, *args, **kwargs):
        looked_at.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # not rendered: staging for kubectl looks again
    monkeypatch.setattr(os, "lstat", lstat)
    result = lint([tmp_path], Config(tmp_path))
    monkeypatch.undo()
    assert looked_at.count(str(app / "deployment.yaml")) == 1  # discovery's
    assert looked_at.count(str(app / "kustomization.yaml")) == 1
    assert str(app / "missing.yaml") in looked_at
    assert any(f.code == "CFG003" and "missing.yaml" in f.message for f in result.findings)


def test_a_runs_file_names_are_its_paths_as_strings(tmp_path: Path) -> None:
    """The run's stages read the files by name (``Inputs.names``: no Path made in the run's process for a
    file its workers stage); each name is the string of the file's Path, which the whole-run cache's key,
    the bytes it read for the run and the kustomize renderer's reads ahead look files up by."""
    from cfgcheck.discover import discover

    (tmp_path / "apps" / "web").mkdir(parents=True)
    for name in ("apps/web/deployment.yaml", "apps/web/kustomization.yaml", "apps/values.yml", "top.yaml"):
        (tmp_path / name).write_text("a: 1\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    inputs = discover([tmp_path], tmp_path, [], ())
    names = inputs.names()
    assert inputs.count() == len(names) == 4 and all(isinstance(name, str) for name in names)
    assert [inputs.name(position) for position in range(inputs.count())] == names
    assert names == [str(path) for path in inputs.files]  # made Paths now: the same files, the same order
    assert set(names) == {stat_name for stat_name, _ in inputs.stats.values()}
    named = discover([tmp_path / "top.yaml"], tmp_path, [], ())  # a file named one by one: a Path already
    assert named.names() == [str(tmp_path / "top.yaml")]
