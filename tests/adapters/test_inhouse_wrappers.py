"""An in-house image that wraps vLLM and is configured only by environment variables: read with the env
names every known vLLM wrapper reads the same way (data/wrappers.json ``generic``), and only when the
image's name or vLLM's own env variables say it runs vLLM."""

from __future__ import annotations

from cfgcheck.adapters.core.registry import Workspace, index, served_models
from cfgcheck.yamlio import parse_text

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: server
          image: {image}
          env:{extra}
            - name: MODEL
              value: Qwen/Qwen3-8B
            - name: MAX_MODEL_LEN
              value: "32768"
            - name: GPU_MEMORY_UTILIZATION
              value: "0.85"
            - name: TENSOR_PARALLEL_DEGREE
              value: "2"
"""
VLLM_ENV = '\n            - name: VLLM_ATTENTION_BACKEND\n              value: FLASHINFER'


def _models(image: str, extra: str = ""):
    loaded = parse_text("d.yaml", POD.format(image=image, extra=extra))
    workspace = Workspace(config={"root": "."})
    index(workspace, loaded)
    return served_models(workspace, loaded)


def test_an_image_named_for_vllm_reads_the_names_wrappers_agree_on() -> None:
    (model,) = _models("ghcr.io/acme/vllm-server:1.4.0")
    assert model.engine == "vllm" and model.model.value == "Qwen/Qwen3-8B"
    assert model.value("max_model_len") == 32768 and model.setting("max_model_len").location.line == 15
    assert model.value("gpu_memory_utilization") == 0.85
    assert model.setting("tensor_parallel_size") is None  # DJL's own spelling: no guess


def test_vllms_own_env_variables_say_the_image_runs_vllm() -> None:
    (model,) = _models("registry.example.com/ml/llm-server:1.4.0", VLLM_ENV)
    assert model.engine == "vllm" and model.value("max_model_len") == 32768


def test_an_image_that_says_nothing_is_not_taken_for_an_engine() -> None:
    assert _models("registry.example.com/ml/llm-server:1.4.0") == []


def test_a_finding_on_a_value_read_by_the_convention_is_a_warning_that_says_so(tmp_path) -> None:
    """Qwen3-8B holds 40,960 positions: 131,072 read from MAX_MODEL_LEN would be a CFG207 error, but the image
    only is assumed to read the name as vLLM's option: a warning that names the assumption."""
    from helpers import lint_text

    text = POD.format(image="ghcr.io/acme/vllm-server:1.4.0", extra="").replace('"32768"', '"131072"')
    result = lint_text(tmp_path, text, select=["CFG207"])
    (finding,) = [f for f in result.findings if f.code == "CFG207"]
    assert finding.severity == "warning"
    assert finding.message.endswith("(assumed: MAX_MODEL_LEN read as the vLLM option, as every known vLLM wrapper "
                                    "reads it; this image is not a known one)")
