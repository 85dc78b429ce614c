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


def test_kaitos_runtime_passes_its_own_memory_fraction(tmp_path: Path) -> None:
    """KAITO passes --gpu-memory-utilization 0.84 (0.82 on the A10 SKUs): that, not vLLM's 0.9, is the
    effective default of a workspace whose ConfigMap leaves it unset, and says whose default it is."""
    from cfgcheck.effective import MEMORY_FRACTION, Facts

    (tmp_path / "ws.yaml").write_text(WORKSPACE.format(config="").replace("Standard_NV36ads_A10_v5", "Standard_NC24ads_A100_v4"))
    (model,) = _models(tmp_path)
    fact = Facts(model).get(MEMORY_FRACTION)
    assert (fact.value, fact.source) == (0.84, "default") and fact.describe().startswith("default of KAITO's runtime at v")
    (tmp_path / "ws.yaml").write_text(WORKSPACE.format(config=""))
    (model,) = _models(tmp_path)
    assert Facts(model).get(MEMORY_FRACTION).value == 0.82  # the A10 SKU's GPU model


def test_the_configmap_overrides_kaitos_memory_fraction(tmp_path: Path) -> None:
    from cfgcheck.effective import MEMORY_FRACTION, Facts

    (tmp_path / "ws.yaml").write_text(WORKSPACE.format(config="  config: llama-params\n"))
    (tmp_path / "cm.yaml").write_text(CONFIGMAP + "      gpu-memory-utilization: 0.7\n")
    (model,) = _models(tmp_path)
    fact = Facts(model).get(MEMORY_FRACTION)
    assert (fact.value, fact.source, fact.location.path) == (0.7, "written", "cm.yaml")
