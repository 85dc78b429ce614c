"""The compute-capability column of gpus.json and its use by CFG211."""

from __future__ import annotations

import json
import re
from importlib import resources

from cfgcheck.capacity import lookup_gpu
from helpers import lint_text


def _table() -> dict:
    return json.loads(resources.files("cfgcheck").joinpath("data", "gpus.json").read_text(encoding="utf-8"))


def test_every_nvidia_gpu_has_a_cited_capability() -> None:
    table = _table()
    assert "developer.nvidia.com/cuda-gpus" in table["compute_capability_source"]
    for entry in table["gpus"]:
        if entry["vendor"] == "nvidia":
            assert re.fullmatch(r"\d+\.\d", entry["compute_capability"]), entry["name"]
        else:
            assert "compute_capability" not in entry, entry["name"]


def test_capability_reaches_resolved_gpus() -> None:
    assert lookup_gpu("Tesla-T4").compute_capability == "7.5"
    assert lookup_gpu("NVIDIA-A100-SXM4-80GB").compute_capability == "8.0"
    assert lookup_gpu("NVIDIA-H100-80GB-HBM3").compute_capability == "9.0"
    assert lookup_gpu("MI300X").compute_capability is None


def test_directive_gpu_drives_the_finding_and_message_has_the_numbers(tmp_path) -> None:
    text = """\
# cfgcheck: gpu=V100-32GB
apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--dtype=bfloat16"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""
    findings = [f for f in lint_text(tmp_path, text).findings if f.code == "CFG211"]
    assert len(findings) == 1
    assert "8.0" in findings[0].message and "7.0" in findings[0].message and "V100-32GB" in findings[0].message
    assert findings[0].location.line == 12
