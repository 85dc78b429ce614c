"""`cfgcheck init` on a real git repository: it lists the nodes, node pools and served models it finds, adds
the hosts whose GPU nothing states to `nodes:` in .cfgcheck.yaml (keeping every other key and comment),
and after the map is filled in, capacity reads the GPU from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import make_repo

POD = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      nodeSelector:
        kubernetes.io/hostname: {host}
      containers:
        - name: server
          image: {image}
          resources:
            limits:
              nvidia.com/gpu: 1
"""
ENGINE = 'vllm/vllm-openai:v0.10.1\n          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]'
NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["g6.xlarge"]
"""
CONFIG = "# team settings\nprofile: recommended  # keep this\nexclude:\n  - \"vendor/**\"\nnodes:\n  nas: null  # no GPU\n"


def cfgcheck(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=repo, capture_output=True, text=True, env=env)


def test_init_lists_what_it_found_and_writes_the_map_for_the_user(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {
        "apps/qwen.yaml": POD.format(name="qwen", host="gpu-box", image=ENGINE),
        "media/jellyfin.yaml": POD.format(name="jellyfin", host="media-1", image="jellyfin/jellyfin:10.10.0"),
        "infra/nodepool.yaml": NODEPOOL,
        ".cfgcheck.yaml": CONFIG,
    })
    out = cfgcheck(repo, "init")
    assert out.returncode == 0, out.stderr
    assert "Nodes:\n  gpu-box  GPU not stated  used by qwen/server\n" in out.stdout
    assert "  media-1  GPU not stated  used by a GPU workload at media/jellyfin.yaml:" in out.stdout
    assert "Node pools:\n  Karpenter NodePool gpu (infra/nodepool.yaml:1): L4\n" in out.stdout
    assert "Served models:\n  qwen/server  apps/qwen.yaml:11  host gpu-box  GPU unknown\n" in out.stdout
    assert "Wrote .cfgcheck.yaml: nodes: gpu-box, media-1" in out.stdout
    written = (repo / ".cfgcheck.yaml").read_text()
    assert written.startswith(CONFIG)  # every other key, value and comment as it was; nas left alone
    assert "  gpu-box:  # fill in: the GPU of gpu-box (e.g. RTX-3090); runs qwen/server\n" in written
    again = cfgcheck(repo, "init")
    assert "nothing to add" in again.stdout and (repo / ".cfgcheck.yaml").read_text() == written  # idempotent

    (repo / ".cfgcheck.yaml").write_text(written.replace("  gpu-box:  # fill in", "  gpu-box: RTX-3090  # fill in"))
    rows = json.loads(cfgcheck(repo, "capacity", "--format", "json").stdout)["models"]
    qwen = next(row for row in rows if row["name"] == "qwen/server")
    assert (qwen["gpu"], qwen["gpu_source"], qwen["gpu_origin"]) == ("RTX-3090", "exact", "nodes.gpu-box in .cfgcheck.yaml")


def test_init_dry_run_writes_nothing_and_a_new_file_holds_only_the_map(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"apps/qwen.yaml": POD.format(name="qwen", host="gpu-box", image=ENGINE)})
    dry = cfgcheck(repo, "init", "--dry-run")
    assert dry.returncode == 0 and "(--dry-run: .cfgcheck.yaml not written)" in dry.stdout
    assert not (repo / ".cfgcheck.yaml").exists()
    assert cfgcheck(repo, "init").returncode == 0
    assert (repo / ".cfgcheck.yaml").read_text() == (
        "nodes:\n  gpu-box:  # fill in: the GPU of gpu-box (e.g. RTX-3090); runs qwen/server\n")
    assert cfgcheck(repo, "lint").returncode in (0, 1)  # the placeholder is a valid configuration


def test_init_refuses_a_configuration_outside_the_repository_or_in_pyproject(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("profile: strict\n")
    repo = make_repo(tmp_path, {"apps/qwen.yaml": POD.format(name="qwen", host="gpu-box", image=ENGINE)})
    (repo / ".cfgcheck.yaml").symlink_to(outside)
    out = cfgcheck(repo, "init")
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert outside.read_text() == "profile: strict\n"
    (repo / ".cfgcheck.yaml").unlink()
    (repo / "pyproject.toml").write_text("[tool.cfgcheck]\nprofile = \"strict\"\n")
    out = cfgcheck(repo, "init")
    assert out.returncode == 2 and "[tool.cfgcheck] in pyproject.toml" in out.stderr
    assert not (repo / ".cfgcheck.yaml").exists()
