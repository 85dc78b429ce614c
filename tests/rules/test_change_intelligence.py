"""Change intelligence in diff mode, on real git repositories with base and head commits: default drift
on an engine upgrade (CFG403), stale explanations anywhere in the repository (CFG402), and the third
seed's pin removal end to end."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.config import Config
from cfgcheck.diff import lint_diff
from helpers import git, make_repo, write

SPEC = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen35-epd
spec:
  replicas: 1
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: engine
          image: lightseekorg/tokenspeed:v0.1.1
          command: ["tokenspeed", "serve", "Qwen/Qwen3.5-9B"]
          args:
            - --attention-backend
            - fa3
            - --max-model-len
            - "8192"
            # raised from 4 after the first PD run deadlocked on bootstrap
            - --max-num-seqs
            - "32"
            - --gpu-memory-utilization
            - "0.8"
          resources:
            limits:
              nvidia.com/gpu: 1
"""

WORKFLOW = """\
name: pr-test
on: pull_request
jobs:
  e2e-2gpu-pd:
    strategy:
      matrix:
        include:
          - engine: tokenspeed
            # TokenSpeed's Qwen3.5-9B spec pins --max-num-seqs 32; at the old pin of
            # 4 (prefill waits for a decode that is never admitted). The window
            # now covers the suite's bursts.
            timeout: 75
          - engine: sglang
            # sglang lanes set --max-running-requests per worker, not in the spec.
            timeout: 60
    runs-on: ubuntu-latest
    steps:
      - run: pytest e2e_test/router  # max_num_seqs for other engines is the default
"""

SCRIPT = """\
#!/bin/sh
# Launch the TokenSpeed decode worker; the spec's maxNumSeqs (32) keeps bursts admitted.
exec tokenspeed serve "$MODEL"
"""


def commit(repo: Path, files: dict[str, str | None], message: str) -> None:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def diff(repo: Path, base: str = "HEAD~1"):
    return lint_diff([repo], Config(repo.resolve()), base)


def test_seed_pin_removal_reports_stale_workflow_comment(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC, ".github/workflows/pr-test.yml": WORKFLOW,
                                "scripts/decode.sh": SCRIPT})
    removed = SPEC.replace('            # raised from 4 after the first PD run deadlocked on bootstrap\n'
                           '            - --max-num-seqs\n            - "32"\n', "")
    commit(repo, {"e2e/spec.yaml": removed}, "stop pinning the window")
    stale = [f for f in diff(repo).findings if f.code == "CFG402"]
    where = sorted((f.location.path, f.location.line) for f in stale)
    # the workflow comment that names the flag with TokenSpeed, and the script's camelCase with the old value
    assert where == [(".github/workflows/pr-test.yml", 9), ("scripts/decode.sh", 2)], where
    first = stale[0]
    assert "max_num_seqs 32" in first.message and "removed at e2e/spec.yaml:22" in first.message
    assert first.related[0].path == "e2e/spec.yaml"
    # the sglang comment names another flag of another engine; the run: line is not a stale claim
    assert not any(f.location.line in (13, 17) for f in stale)


def test_changed_value_is_stale_only_where_the_old_value_is_stated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC, ".github/workflows/pr-test.yml": WORKFLOW})
    commit(repo, {"e2e/spec.yaml": SPEC.replace('"32"', '"64"')}, "raise the window")
    stale = [f for f in diff(repo).findings if f.code == "CFG402"]
    assert [(f.location.path, f.location.line) for f in stale] == [(".github/workflows/pr-test.yml", 9)]
    assert "changed to 64" in stale[0].message


def test_comment_added_by_the_change_is_not_stale(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC})
    removed = SPEC.replace('            - --max-num-seqs\n            - "32"\n', "").replace(
        "# raised from 4 after the first PD run deadlocked on bootstrap",
        "# no --max-num-seqs for TokenSpeed: the engine default window applies")
    commit(repo, {"e2e/spec.yaml": removed}, "drop the pin, say why")
    assert [f for f in diff(repo).findings if f.code == "CFG402"] == []


def test_hostile_spelling_is_a_fixed_string(tmp_path: Path) -> None:
    """A key written by the pull request reaches git grep only as a fixed -e pattern."""
    hostile = SPEC.replace("--max-num-seqs", "--max-num-seqs").replace(
        "containers:", "containers:\n        # --(.*)+$ --output=/tmp/pwned  --max-num-seqs")
    repo = make_repo(tmp_path, {"e2e/spec.yaml": hostile})
    commit(repo, {"e2e/spec.yaml": hostile.replace('            - --max-num-seqs\n            - "32"\n', "")}, "x")
    assert not (tmp_path / "pwned").exists() and not Path("/tmp/pwned").exists()
    assert any(f.code == "CFG402" for f in diff(repo).findings)
