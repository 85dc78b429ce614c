"""Kustomize overlays that share a patch (through a component or a common base): one problem at one
source line is one finding, however many overlays render it; overlays that render it differently are
each reported. A reference that leaves the repository is never rendered nor read."""

from __future__ import annotations

import os
import shutil
import stat
from collections import Counter
from pathlib import Path

import pytest

from cfgcheck.render import kustomize
from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import FIXTURES
from tests.adapters.test_adapters_formats import RENDERED as ONE_OVERLAY

OVERLAYS = FIXTURES / "formats" / "kustomize-overlays"

# What `kubectl kustomize` prints for envs/dev and envs/staging (v0.10.0 from the base) and envs/prod
# (its images: newTag v0.11.0), captured from kubectl v1.32 on this fixture; the base alone renders as
# its one file.
RENDERED = (ONE_OVERLAY.replace('        - "65536"\n', '        - "65536"\n        - --max-num-seqz\n        - "64"\n')
            .replace("vllm/vllm-openai:v0.10.0", "vllm/vllm-openai:{tag}"))


def fake_kubectl(tmp_path: Path) -> Path:
    """A kubectl that renders the fixture's overlays as the real one does, and logs every folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tag in ("v0.10.0", "v0.11.0"):
        (tmp_path / f"{tag}.yaml").write_text(RENDERED.format(tag=tag), encoding="utf-8")
    script = bin_dir / "kubectl"
    # `kubectl kustomize -- FOLDER`: the folder is the third argument
    script.write_text(f"#!/bin/sh\n[ \"$1\" = kustomize ] && [ \"$2\" = -- ] || exit 2\n"
                      f"echo \"$3\" >> '{tmp_path}/calls'\n"
                      f"case \"$3\" in */prod) cat '{tmp_path}/v0.11.0.yaml';;"
                      " */components/*) echo 'Error: a Component' >&2; exit 1;;"
                      f" */base) cat '{OVERLAYS}/base/deployment.yaml';; *) cat '{tmp_path}/v0.10.0.yaml';; esac\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.fixture(params=["fake-kubectl", "real-kubectl"])
def kubectl(request, tmp_path: Path, monkeypatch) -> str:
    if request.param == "real-kubectl":
        if shutil.which("kubectl") is None:
            pytest.skip("kubectl is not installed: the overlays are checked with the fake kubectl only")
        return request.param
    monkeypatch.setenv("PATH", str(fake_kubectl(tmp_path)) + os.pathsep + os.environ.get("PATH", ""))
    return request.param


def placed(result) -> Counter:
    return Counter((f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings)


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_one_patch_rendered_through_three_overlays_is_one_finding(kubectl: str) -> None:
    result = lint([OVERLAYS], Config(OVERLAYS))
    counts = placed(result)
    assert counts and max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
    too_long = [f for f in result.findings if f.code == "CFG207"]
    assert [(f.location.path, f.location.line, f.location.column) for f in too_long] == \
        [("components/sim/patch.yaml", 10, 66)]
    unpinned = [f for f in result.findings if f.code == "CFG301"]
    assert sorted(f.location.path for f in unpinned) == ["base/deployment.yaml", "envs/prod/kustomization.yaml"]


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_overlays_that_render_a_line_differently_are_each_reported(kubectl: str) -> None:
    """dev and staging run vLLM 0.10.0, prod 0.11.0: the typo at the shared patch line is one finding
    per version, not one per overlay, and not one in all."""
    result = lint([OVERLAYS], Config(OVERLAYS))
    typo = [f for f in result.findings if f.code == "CFG103"]
    assert {(f.location.path, f.location.line, f.location.column) for f in typo} == \
        {("components/sim/patch.yaml", 10, 75)}
    assert sorted(f.message for f in typo) == ["unknown flag '--max-num-seqz' in vLLM 0.10.0",
                                              "unknown flag '--max-num-seqz' in vLLM 0.11.0"]


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_component_is_rendered_only_through_what_includes_it(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(fake_kubectl(tmp_path)) + os.pathsep + os.environ.get("PATH", ""))
    lint([OVERLAYS], Config(OVERLAYS))
    calls = (tmp_path / "calls").read_text(encoding="utf-8").split()
    assert sorted(Path(c).name for c in calls) == ["base", "dev", "prod", "staging"]
    assert "kubectl kustomize failed" not in capsys.readouterr().err


def test_a_reference_outside_the_repository_is_not_followed(tmp_path: Path, monkeypatch, capsys) -> None:
    """``resources: ../../outside`` in a pull request: not read by cfgcheck, not rendered by kubectl."""
    monkeypatch.setenv("PATH", str(fake_kubectl(tmp_path)) + os.pathsep + os.environ.get("PATH", ""))
    outside = tmp_path / "outside"
    shutil.copytree(OVERLAYS / "base", outside)
    repo = tmp_path / "repo"
    (repo / "envs" / "evil").mkdir(parents=True)
    (repo / "envs" / "evil" / "kustomization.yaml").write_text("resources:\n  - ../../../outside\n", encoding="utf-8")
    reach = kustomize._reach(repo, repo / "envs" / "evil")
    assert reach.outside == "../../../outside" and not reach.remote
    assert all(outside not in file.parents for file in reach.files)
    result = lint([repo], Config(repo))
    assert not result.models and not (tmp_path / "calls").exists()
    assert "draws from outside the repository (../../../outside), not rendered" in capsys.readouterr().err


def test_a_symlink_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(OVERLAYS / "base", outside)
    repo = tmp_path / "repo"
    (repo / "envs" / "evil").mkdir(parents=True)
    (repo / "base").symlink_to(outside, target_is_directory=True)
    (repo / "envs" / "evil" / "kustomization.yaml").write_text("resources:\n  - ../../base\n", encoding="utf-8")
    assert kustomize._reach(repo, repo / "envs" / "evil").outside == "../../base"
