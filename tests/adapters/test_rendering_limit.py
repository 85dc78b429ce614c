"""A rendering past ``limits.max-served-models`` is said at what renders it (CFG000 at the kustomization), as a
file's own served models are: its first models are checked, the rest are not dropped without a word."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import lint

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat{number}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.0
          args: ["--model", "Qwen/Qwen3-8B", "--max-num-seqs", "{number}"]
"""


@pytest.mark.e2e  # cfgcheck spawns kubectl (a fake one)
def test_a_rendering_past_the_limit_is_said_at_the_kustomization(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for number in range(3):
        (repo / f"chat{number}.yaml").write_text(DEPLOYMENT.format(number=number + 1), encoding="utf-8")
    (repo / "kustomization.yaml").write_text(
        "resources: [chat0.yaml, chat1.yaml, chat2.yaml]\nnamePrefix: prod-\n", encoding="utf-8")
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text("---\n".join(DEPLOYMENT.format(number=number + 1).replace("name: chat", "name: prod-chat")
                                     for number in range(3)), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kubectl = bin_dir / "kubectl"
    kubectl.write_text(f"#!/bin/sh\n[ \"$1\" = kustomize ] || exit 2\ncat '{rendered}'\n")
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    result = lint([repo], Config(repo, {"limits": {"max-served-models": 2}}))
    said = [(f.code, f.location.path, f.location.line) for f in result.findings
            if "(limit max-served-models)" in f.message]
    assert said == [("CFG000", "kustomization.yaml", 1)], [f.message for f in result.findings]
    assert "only the first 2 are checked" in next(f.message for f in result.findings if f.code == "CFG000")
    within = lint([repo], Config(repo, {"limits": {"max-served-models": 3}}))
    assert not [f for f in within.findings if f.code == "CFG000"]  # within the limit: nothing said
