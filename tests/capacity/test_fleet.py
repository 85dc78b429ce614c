"""The GPU from the cluster's own definitions: each fixture under tests/fixtures/fleet/ is a small
repository (a definition and a workload matched to it, or not) with what `cfgcheck capacity --format json`
must say in expect.json: the GPU, exact or assumed, where it comes from, or what would state it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cfgcheck.capacity.report import capacity_rows
from cfgcheck.config import Config
from cfgcheck.lint import collect
from helpers import FIXTURES, git

CASES = sorted(path for path in (FIXTURES / "fleet").iterdir() if path.is_dir())


def rows(repo: Path, config: dict | None = None) -> list[dict]:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    settings = Config(repo, dict(config or {}))
    _, models = collect([repo], settings)
    return capacity_rows([m for m in models if not m.template], settings.as_dict())


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_cluster_definitions(case: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(case, repo)
    expect = json.loads((repo / "expect.json").read_text())
    (repo / "expect.json").unlink()
    found = rows(repo, expect.get("config"))
    assert len(found) == 1, [r["name"] for r in found]
    row = found[0]
    assert row["gpu"] == expect["gpu"], (row["gpu_origin"], row["gpu_hint"])
    assert row["gpu_source"] == expect.get("source")
    for key in ("origin", "hint", "shared"):
        if key in expect:
            assert expect[key] in (row[f"gpu_{key}"] or ""), row[f"gpu_{key}"]
    if case.name.startswith("fail-"):
        assert row["gpu_hint"], "an unknown GPU says what would state it"


def test_pass_and_fail_fixtures_for_every_definition_kind() -> None:
    kinds = ("karpenter", "eksctl", "terraform-eks", "terraform-gke", "terraform-aks", "gke-compute-class", "talos",
             "k3s", "node-object", "nfd", "ome", "time-slicing", "mig-config")
    names = [case.name for case in CASES]
    for kind in kinds:
        assert any(kind in name for name in names if name.startswith("pass-")), kind
    for kind in ("karpenter", "eksctl", "terraform", "gke-compute-class", "talos"):
        assert any(kind in name for name in names if name.startswith("fail-")), kind
