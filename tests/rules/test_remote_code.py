"""CFG306 says what is true: code runs only where the repository ships it (auto_map in config.json)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import lint_text

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "{model}", "--trust-remote-code"]
"""


def _one(tmp_path: Path, model: str, config: dict | None = None):
    result = lint_text(tmp_path, DEPLOYMENT.format(model=model), config=config)
    found = [f for f in result.findings if f.code == "CFG306"]
    assert len(found) == 1, [f.message for f in result.findings]
    return found[0]


def test_code_the_table_knows_is_an_error(tmp_path: Path) -> None:
    finding = _one(tmp_path, "deepseek-ai/DeepSeek-V3")
    assert finding.severity == "error"
    assert "runs the Python code deepseek-ai/DeepSeek-V3 ships (auto_map" in finding.message


def test_unknown_code_is_a_warning_that_says_if(tmp_path: Path) -> None:
    finding = _one(tmp_path, "Qwen/Qwen3-8B")
    assert finding.severity == "warning"
    assert "if the repository ships any" in finding.message and "--online" in finding.message
    assert "runs code in this pod" not in finding.message


def _configs(tmp_path: Path, model: str, config: dict) -> dict:
    folder = tmp_path / "model-configs" / model
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config))
    return {"model_configs": str(tmp_path / "model-configs")}


LLAMA = {"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "hidden_size": 4096, "max_position_embeddings": 8192}


def test_no_auto_map_in_a_local_config_says_the_flag_is_unneeded(tmp_path: Path) -> None:
    finding = _one(tmp_path, "team/plain-llama", _configs(tmp_path, "team/plain-llama", LLAMA))
    assert finding.severity == "warning"
    assert finding.message.startswith("team/plain-llama ships no modelling code (no auto_map in its config.json")
    assert "would run code the repository adds later" in finding.message


def test_auto_map_in_a_local_config_is_an_error(tmp_path: Path) -> None:
    config = dict(LLAMA, auto_map={"AutoModelForCausalLM": "modeling_team.TeamForCausalLM"})
    finding = _one(tmp_path, "team/custom", _configs(tmp_path, "team/custom", config))
    assert finding.severity == "error"
    assert "auto_map in its config.json in the repository" in finding.message


def test_another_id_of_a_table_entry_is_not_taken_for_its_code(tmp_path: Path) -> None:
    # DeepSeek-R1 shares DeepSeek-V3's architecture entry; the table's config is V3's, not R1's
    finding = _one(tmp_path, "deepseek-ai/DeepSeek-R1")
    assert finding.severity == "warning"
