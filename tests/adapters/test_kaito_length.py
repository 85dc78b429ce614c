"""KAITO's context length: vLLM's auto-fit unless the workspace's inference ConfigMap sets one, wherever
that ConfigMap is written (a YAML file, or a heredoc of the script that applies it)."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.config import load
from cfgcheck.lint import collect, lint

WORKSPACE = """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-llama
resource:
  instanceType: Standard_NV36ads_A10_v5
inference:
  preset:
    name: llama-3.1-8b-instruct
{config}"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: llama-params
data:
  inference_config.yaml: |
    vllm:
      max-model-len: 16384
"""


def _models(root: Path):
    return collect([root], load(root))[1]


def test_no_length_is_vllms_auto_fit(tmp_path: Path) -> None:
    (tmp_path / "ws.yaml").write_text(WORKSPACE.format(config=""))
    (model,) = _models(tmp_path)
    assert model.value("max_model_len") == "auto"
    assert not [f for f in lint([tmp_path], load(tmp_path)).findings if f.code in ("CFG202", "CFG106")]


def test_a_configmap_written_in_a_script_heredoc_sets_the_length(tmp_path: Path) -> None:
    (tmp_path / "ws.yaml").write_text(WORKSPACE.format(config="  config: llama-params\n"))
    (tmp_path / "apply.sh").write_text(f"#!/bin/sh\nkubectl apply -f - <<EOF\n{CONFIGMAP}EOF\n")
    (model,) = _models(tmp_path)
    setting = model.setting("max_model_len")
    assert setting.value == 16384 and (setting.location.path, setting.location.line) == ("apply.sh", 10)
