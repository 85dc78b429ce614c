"""Triton's vLLM backend: ``model_repository/<name>/<version>/model.json`` beside a ``config.pbtxt`` with
``backend: "vllm"`` is a vLLM served model whose engine arguments are the JSON keys, located there."""

from __future__ import annotations

from helpers import write

from cfgcheck.config import Config
from cfgcheck.lint import lint

MODEL_JSON = """\
{
    "model": "meta-llama/Llama-3.2-3B-Instruct",
    "disable_log_requests": true,
    "gpu_memory_utilization": 0.9,
    "enforce_eager": true,
    "enable_prefix_caching": false
}
"""

CONFIG = 'backend: "vllm"\n\ninstance_group [\n  {\n    count: 1\n    kind: KIND_MODEL\n  }\n]\n'


def _lint(tmp_path, files: dict[str, str]):
    write(tmp_path, files)
    return lint([tmp_path], Config(tmp_path, {}))


def test_model_json_of_the_vllm_backend_is_a_served_model(tmp_path):
    result = _lint(tmp_path, {"model_repository/llama32/1/model.json": MODEL_JSON,
                              "model_repository/llama32/config.pbtxt": CONFIG})
    (model,) = result.models
    assert model.name == "llama32" and model.engine == "vllm"
    assert model.model.value == "meta-llama/Llama-3.2-3B-Instruct" and model.model.location.line == 2
    assert model.value("gpu_memory_utilization") == 0.9 and model.value("enforce_eager") is True
    assert model.value("enable_prefix_caching") is None  # false: the field's default, no flag
    assert model.engine_version is None  # the Triton image's vLLM: not stated here
    cfg303 = [f for f in result.findings if f.code == "CFG303"]
    assert [(f.location.path, f.location.line) for f in cfg303] == [("model_repository/llama32/1/model.json", 2)]
    assert not [f for f in result.findings if f.severity == "error"]


def test_other_model_json_files_are_not_engines(tmp_path):
    onnx = CONFIG.replace('"vllm"', '"onnxruntime"')
    result = _lint(tmp_path, {"model_repository/a/1/model.json": MODEL_JSON, "model_repository/a/config.pbtxt": onnx,
                              "model_repository/b/model.json": MODEL_JSON, "model_repository/config.pbtxt": CONFIG})
    assert result.models == []
