"""The runtime rules' facts and their diff-mode case: pod facts read from each format, and the
rolling-update deadlock folded into CFG401."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.diff import lint_diff
from cfgcheck.lint import lint
from helpers import FIXTURES, git, lint_fixture

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  replicas: {replicas}
{strategy}  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "{length}"]
          resources:
            limits:
              nvidia.com/gpu: 2
"""


def _rollout(tmp_path: Path, replicas: int, strategy: str = "") -> list:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "qwen.yaml").write_text(DEPLOYMENT.format(replicas=replicas, strategy=strategy, length=8192))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "qwen.yaml").write_text(DEPLOYMENT.format(replicas=replicas, strategy=strategy, length=16384))
    result = lint_diff([repo], Config(repo.resolve()), "HEAD")
    return [f for f in result.findings if f.code == "CFG401"]


def test_rolling_update_of_whole_gpu_pods_asks_for_spare_capacity_or_a_restart(tmp_path: Path) -> None:
    found = _rollout(tmp_path, replicas=1)
    assert len(found) == 1, [f.message for f in found]
    assert "needing 2 GPUs" in found[0].message and "Pending" in found[0].message
    assert "keep 2 GPUs free" in found[0].remediation and "Recreate" in found[0].remediation


@pytest.mark.parametrize("replicas, strategy", [
    (4, ""),  # 25% of 4 rounds down to 1 unavailable: the rollout frees a pod's GPUs first
    (1, "  strategy:\n    type: RollingUpdate\n    rollingUpdate:\n      maxSurge: 0\n      maxUnavailable: 1\n"),
])
def test_rollouts_that_make_room_themselves_are_quiet(tmp_path: Path, replicas: int, strategy: str) -> None:
    assert _rollout(tmp_path, replicas, strategy) == []


def test_recreate_outage_also_offers_the_choice(tmp_path: Path) -> None:
    found = _rollout(tmp_path, 1, "  strategy:\n    type: Recreate\n")
    assert len(found) == 1 and "outage" in found[0].message and "spare capacity" in found[0].remediation


def test_services_in_another_file_are_matched(tmp_path: Path) -> None:
    """A Service read from another file of the run still reaches the engine's pod (CFG503)."""
    (tmp_path / "a-service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: qwen\n  labels: {app: vllm}\nspec:\n"
        "  selector:\n    app: qwen\n  ports:\n    - port: 80\n      targetPort: 9000\n")
    (tmp_path / "b-deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: qwen\nspec:\n  template:\n"
        "    metadata:\n      labels:\n        app: qwen\n    spec:\n      containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.26.0\n          command: [vllm, serve, Qwen/Qwen3-8B]\n")
    result = lint([tmp_path], Config(tmp_path.resolve()))
    messages = [f.message for f in result.findings if f.code == "CFG503"]
    assert any("Service qwen sends traffic to port 9000" in m and ":8000" in m for m in messages), messages


def test_compose_memory_units_are_binary(tmp_path: Path) -> None:
    from cfgcheck.adapters.formats.compose import docker_bytes

    assert docker_bytes("16g") == docker_bytes("16GB") == 16 * 1024**3
    assert docker_bytes("512m") == 512 * 1024**2 and docker_bytes("${MEM}") is None


def test_sglang_health_generation_on_an_assumed_version_is_a_note_that_says_so(tmp_path: Path) -> None:
    result = lint_fixture(FIXTURES / "rules" / "CFG502" / "fail-sglang-health-version-assumed.yaml", tmp_path)
    found = [f for f in result.findings if f.code == "CFG502"]
    assert [f.severity for f in found] == ["note"]
    assert "from SGLang 0.4.10.post2; the version is assumed" in found[0].message
