"""Remediation worded where the user writes the setting: the chart key or values mapping key that sets it,
else the chart's argument list, else the flag (fixtures written for the test: a Flux HelmRelease of the
vLLM production-stack chart, a values file read through a `values:` mapping, a plain Deployment)."""

from __future__ import annotations

from helpers import lint_text
from tests.rules.test_precision_wave2 import DEPLOYMENT as WAVE2_DEPLOYMENT

HELMRELEASE = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: stack}
spec:
  chart: {spec: {chart: vllm-stack}}
  values:
    servingEngineSpec:
      modelSpec:
        - name: llama
          repository: vllm/vllm-openai
          tag: v0.26.0
          modelURL: meta-llama/Llama-3.1-8B-Instruct
          requestGPU: 1
          vllmConfig:
            dtype: bfloat16
            trustRemoteCode: true
"""

VALUES = """servers:
  chat:
    model: Qwen/Qwen3-8B
    gpus: 1
    args: ["--max-model-len", "8192"]
"""

DEPLOYMENT = WAVE2_DEPLOYMENT.format(image="vllm/vllm-openai:v0.26.0", ports="", probe="",
                                    args='["--model", "Qwen/Qwen3-8B", "--dtype", "bfloat16"]')


def remediation(result, code: str) -> str:
    return next(f.remediation for f in result.findings if f.code == code)


def test_production_stack_revision_goes_in_the_charts_extra_args(tmp_path):
    result = lint_text(tmp_path, HELMRELEASE, "release.yaml")
    # the chart has no key for --revision (helm/templates/deployment-vllm-multi.yaml renders typed
    # vllmConfig fields, then vllmConfig.extraArgs): the advice names that list, not a raw flag
    assert remediation(result, "CFG303") == ('add "--revision", "<commit sha>" to '
                                             'spec.values.servingEngineSpec.modelSpec[0].vllmConfig.extraArgs')


def test_production_stack_dtype_names_its_typed_key(tmp_path):
    from rules._pod_rules import how_to_pass

    model = lint_text(tmp_path, HELMRELEASE, "release.yaml").models[0]
    assert how_to_pass(model, "dtype", "float16") == \
        "set spec.values.servingEngineSpec.modelSpec[0].vllmConfig.dtype: float16"


def test_values_mapping_names_the_mapped_revision_key(tmp_path):
    config = {"values": [{"files": ["values.yaml"], "models": "servers.*", "engine": "vllm",
                          "settings": {"model": "model", "model_revision": "revision", "gpus": "gpus",
                                       "extra_args": "args"}}]}
    result = lint_text(tmp_path, VALUES, "values.yaml", config=config)
    assert remediation(result, "CFG303") == "set servers.chat.revision: <commit sha>"
    config["values"][0]["settings"].pop("model_revision")
    result = lint_text(tmp_path, VALUES, "values.yaml", config=config)
    assert remediation(result, "CFG303") == 'add "--revision", "<commit sha>" to servers.chat.args'


def test_a_deployment_is_told_the_flag(tmp_path):
    from rules._pod_rules import how_to_pass

    result = lint_text(tmp_path, DEPLOYMENT, "deploy.yaml")
    assert remediation(result, "CFG303") == "add --revision <commit sha>"
    assert how_to_pass(result.models[0], "dtype", "float16") == "use --dtype float16"


KUBEAI = """apiVersion: kubeai.org/v1
kind: Model
metadata: {name: qwen}
spec:
  features: [TextGeneration]
  url: hf://Qwen/Qwen3-8B
  engine: VLLM
  resourceProfile: nvidia-gpu-l4:1
  args: ["--max-model-len=8192"]
"""

LLMD_VALUES = """modelArtifacts:
  uri: hf://Qwen/Qwen3-8B
  name: Qwen/Qwen3-8B
decode:
  replicas: 1
  containers:
    - name: vllm
      image: ghcr.io/llm-d/llm-d:v0.2.0
      modelCommand: vllmServe
      args: ["--max-model-len", "8192"]
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_operator_and_chart_argument_lists_are_named(tmp_path):
    """A KubeAI Model passes spec.args to vLLM; the llm-d model service chart a container's args."""
    kubeai = lint_text(tmp_path / "kubeai", KUBEAI, "model.yaml")
    assert remediation(kubeai, "CFG303") == 'add "--revision", "<commit sha>" to spec.args'
    llmd = lint_text(tmp_path / "llmd", LLMD_VALUES, "values.yaml")
    assert remediation(llmd, "CFG303") == 'add "--revision", "<commit sha>" to decode.containers[0].args'


VLLM_RUNTIME = """apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata: {name: rt}
spec:
  model:
    modelURL: Qwen/Qwen3-8B
    dtype: bfloat16
  vllmConfig:
    tensorParallelSize: 1
    extraArgs: ["--max-model-len", "8192"]
  deploymentConfig:
    image: {name: vllm/vllm-openai:v0.26.0}
    resources: {gpu: 1}
"""


def test_vllm_runtime_names_its_typed_fields_and_extra_args(tmp_path):
    from rules._pod_rules import how_to_pass

    result = lint_text(tmp_path, VLLM_RUNTIME, "runtime.yaml")
    assert remediation(result, "CFG303") == 'add "--revision", "<commit sha>" to spec.vllmConfig.extraArgs'
    assert how_to_pass(result.models[0], "dtype", "float16") == "set spec.model.dtype: float16"


def test_idle_gpus_name_the_charts_parallel_key(tmp_path):
    """CFG208 on a production-stack entry that requests two GPUs for one rank: the chart's typed key."""
    text = HELMRELEASE.replace("requestGPU: 1", "requestGPU: 2")
    result = lint_text(tmp_path, text, "release.yaml")
    assert remediation(result, "CFG208") == ("set spec.values.servingEngineSpec.modelSpec[0].vllmConfig."
                                             "tensorParallelSize: 2, or request 1 GPU")
