"""Second blind precision pass over real repositories: each class of false finding, with a fixture of
its own (shapes seen in public repositories, written for the test, none copied)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cfgcheck.cli import app
from helpers import lint_text


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: {image}
          args: {args}
{ports}          resources: {{limits: {{nvidia.com/gpu: 1}}}}
{probe}"""


def found(result, code: str | None = None) -> list:
    return [f for f in result.findings if f.suppressed is None and (code is None or f.code == code)]


# -- runtime templates are not served models -------------------------------------------------------

RUNTIME = """apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: team-vllm-runtime
spec:
  supportedModelFormats:
    - name: huggingface
      autoSelect: true
  containers:
    - name: kserve-container
      image: registry.example.com/team/vllm-openai:v0.26.0
      command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
      args:
        - --model={{.Name}}
        - --port=8080
        - --tensor-parallel-size=4
        - --max-num-seqs=8
        - --swap-space=16
      resources:
        limits:
          nvidia.com/gpu: "1"
"""


def test_a_runtime_template_gets_only_findings_true_of_its_own_text(tmp_path) -> None:
    """A ClusterServingRuntime is what an InferenceService runs, with its own model and GPUs: the TP 4 on
    the template's placeholder GPU count, the missing /dev/shm, the seq pin and the image pin are not
    the template's problems. A flag the engine refuses (--swap-space, removed in vLLM 0.18) is, wherever it is used."""
    result = lint_text(tmp_path, RUNTIME)
    codes = {f.code for f in found(result)}
    assert "CFG104" in codes
    # the image is pinned (or not) by the services that use the template: reported on them
    assert not codes & {"CFG208", "CFG501", "CFG205", "CFG303", "CFG504", "CFG301"}, codes


def test_a_runtime_template_is_not_listed_by_capacity(tmp_path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME, encoding="utf-8")
    isvc = ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: chat}\nspec:\n"
            "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      runtime: team-vllm-runtime\n"
            "      storageUri: hf://Qwen/Qwen3-8B\n")
    (tmp_path / "isvc.yaml").write_text(isvc, encoding="utf-8")
    out = CliRunner().invoke(app, ["capacity", "--format", "json", str(tmp_path)])
    names = [m["name"] for m in json.loads(out.stdout)["models"]]
    assert names == ["chat/model"], names


def test_the_lint_summary_counts_the_service_not_its_runtime_template(tmp_path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME, encoding="utf-8")
    out = CliRunner().invoke(app, ["lint", "--format", "json", str(tmp_path)])
    assert json.loads(out.stdout)["summary"]["served_models"] == 0
    isvc = ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: chat}\nspec:\n"
            "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      runtime: team-vllm-runtime\n"
            "      storageUri: hf://Qwen/Qwen3-8B\n")
    (tmp_path / "isvc.yaml").write_text(isvc, encoding="utf-8")
    out = CliRunner().invoke(app, ["lint", str(tmp_path)])
    assert "2 files, 1 served models" in out.stdout, out.stdout


# -- a rolling tag is one finding ------------------------------------------------------------------

def test_a_rolling_tag_is_reported_once_by_rolling_tag(tmp_path) -> None:
    text = DEPLOYMENT.format(image="vllm/vllm-openai:latest", args='["--model", "Qwen/Qwen3-8B"]', ports="", probe="")
    result = lint_text(tmp_path, text)
    assert [f.code for f in found(result) if f.location.line == 9] == ["CFG302"]
    fixed = lint_text(tmp_path, text.replace(":latest", ":v0.26.0"), name="fixed.yaml")
    assert [f.code for f in found(fixed) if f.location.line == 9] == ["CFG301"]


# -- a Ray Serve application of its own passes settings on from env -------------------------------

def test_ray_serve_app_settings_from_env_names(tmp_path) -> None:
    text = """apiVersion: ray.io/v1
kind: RayService
metadata: {name: chat}
spec:
  serveConfigV2: |
    applications:
    - name: llm
      import_path: app.serve:model
      runtime_env:
        pip: ["vllm==0.8.5"]
        env_vars:
          MODEL_ID: "Qwen/Qwen2.5-7B-Instruct"
          TENSOR_PARALLELISM: "2"
          MAX_MODEL_LEN: "8192"
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.40.0
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        template:
          spec:
            containers:
              - name: worker
                image: rayproject/ray:2.40.0
                resources: {limits: {nvidia.com/gpu: 2}}
"""
    (model,) = lint_text(tmp_path, text).models
    assert model.setting("tensor_parallel_size").value == 2
    assert model.setting("max_model_len").value == 8192
    assert model.setting("max_model_len").source == "runtime_env.env_vars.MAX_MODEL_LEN"


# -- ports: containerPort is informational, an unknown image may choose its port -------------------

PORTS = "          ports:\n            - containerPort: 8200\n"
PROBE = "          readinessProbe:\n            httpGet: {path: /health, port: 8200}\n"


def test_container_port_alone_is_a_warning(tmp_path) -> None:
    args = '["--model", "Qwen/Qwen3-8B", "--port", "8000"]'
    alone = found(lint_text(tmp_path, DEPLOYMENT.format(image="vllm/vllm-openai:v0.26.0", args=args, ports=PORTS, probe="")), "CFG503")
    assert [f.severity for f in alone] == ["warning"] and "informational" in alone[0].message
    probed = found(lint_text(tmp_path, DEPLOYMENT.format(image="vllm/vllm-openai:v0.26.0", args=args, ports=PORTS, probe=PROBE),
                             name="probed.yaml"), "CFG503")
    assert "error" in {f.severity for f in probed}


def test_default_port_of_an_unknown_image_is_assumed(tmp_path) -> None:
    """A team's own vLLM build run without --port: its entrypoint may pass one."""
    text = DEPLOYMENT.format(image="ghcr.io/team/vllm:latest", args='["--model", "Qwen/Qwen3-8B"]', ports=PORTS,
                             probe=PROBE)
    probe = [f for f in found(lint_text(tmp_path, text), "CFG503") if "probe" in f.message]
    assert probe and probe[0].severity == "warning" and "assumed" in probe[0].message


# -- a placeholder API key is no secret ------------------------------------------------------------

def test_placeholder_api_keys_are_open_doors_not_leaked_secrets(tmp_path) -> None:
    def base(key: str) -> str:
        return DEPLOYMENT.format(image="vllm/vllm-openai:v0.26.0", args=f'["--model", "Qwen/Qwen3-8B", "--api-key", "{key}"]',
                                 ports="", probe="")

    for i, key in enumerate(("EMPTY", "token-abc123", "test_api_key", "sk-fake-0123456789abcdefghij")):
        (placeholder,) = found(lint_text(tmp_path, base(key), name=f"p{i}.yaml"), "CFG305")
        assert placeholder.severity == "warning" and "placeholder" in placeholder.message, key
    (real,) = found(lint_text(tmp_path, base("sk-Zq81LmP0x7Yt5Wv3Ks2Nd9Rf4Hb6Jc1G"), name="real.yaml"), "CFG305")
    assert real.severity == "error"


# -- Dynamo's own flags ----------------------------------------------------------------------------

def test_dynamo_launcher_flags_are_named_dynamo_flags(tmp_path) -> None:
    text = """apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: disagg}
spec:
  services:
    PrefillWorker:
      componentType: worker
      resources: {limits: {gpu: "1"}}
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0
          command: ["python3", "-m", "dynamo.vllm"]
          args: ["--model", "Qwen/Qwen3-0.6B", "--is-prefill-worker"]
"""
    notes = found(lint_text(tmp_path, text), "CFG103")
    assert [f.severity for f in notes] == ["note"] and "Dynamo flag" in notes[0].message, notes


def test_an_inference_service_runs_its_runtime_merged(tmp_path) -> None:
    """The served model is the InferenceService, read with the runtime's container: the runtime's
    args then the service's, the model from storageUri, GPUs from the service's resources. A finding on
    the runtime's text is reported once, where it is written."""
    (tmp_path / "runtime.yaml").write_text(RUNTIME, encoding="utf-8")
    (tmp_path / "isvc.yaml").write_text(
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: chat}\nspec:\n"
        "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      storageUri: hf://Qwen/Qwen3-8B\n"
        "      args: [--max-model-len=8192]\n      resources: {limits: {nvidia.com/gpu: 4}}\n", encoding="utf-8")
    from helpers import lint_paths

    result = lint_paths(tmp_path, root=tmp_path)
    (chat,) = [m for m in result.models if not m.template]
    assert chat.model.value == "hf://Qwen/Qwen3-8B" and chat.gpus.value == 4
    assert chat.setting("tensor_parallel_size").value == 4 and chat.setting("max_model_len").value == 8192
    assert chat.setting("tensor_parallel_size").location.path == "runtime.yaml"
    removed = found(result, "CFG104")
    assert [(f.location.path, f.location.line) for f in removed] == [("runtime.yaml", 18)]


def test_the_image_of_a_used_runtime_is_checked_on_the_service(tmp_path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME, encoding="utf-8")
    (tmp_path / "isvc.yaml").write_text(
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: chat}\nspec:\n"
        "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      runtime: team-vllm-runtime\n"
        "      storageUri: hf://Qwen/Qwen3-8B\n      resources: {limits: {nvidia.com/gpu: 4}}\n", encoding="utf-8")
    from helpers import lint_paths

    pins = found(lint_paths(tmp_path, root=tmp_path), "CFG301")
    assert [(f.location.path, f.location.line, f.model) for f in pins] == [("runtime.yaml", 11, "chat/model")]


# -- KAITO: the VM size names the GPU --------------------------------------------------------------

def test_kaito_h100_nvl_vm_size_is_not_the_80gb_h100(tmp_path) -> None:
    text = """apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {name: ws}
resource:
  instanceType: Standard_NC40ads_H100_v5
  labelSelector: {matchLabels: {apps: ws}}
inference:
  preset: {name: llama-3.1-8b-instruct}
"""
    (tmp_path / "ws.yaml").write_text(text, encoding="utf-8")
    out = CliRunner().invoke(app, ["capacity", "--format", "json", str(tmp_path)])
    (row,) = json.loads(out.stdout)["models"]
    assert row["gpu"] == "H100-NVL", row


def test_the_nearest_runtime_of_a_name_is_merged(tmp_path) -> None:
    """Examples repeat one runtime name per folder (one namespace each): the service runs the one beside
    it, not the first indexed."""
    isvc = ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: chat}\nspec:\n"
            "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      runtime: team-vllm-runtime\n")
    other = RUNTIME.replace("--tensor-parallel-size=4", "--tensor-parallel-size=2")
    for folder, runtime in (("a", other), ("b", RUNTIME)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "runtime.yaml").write_text(runtime, encoding="utf-8")
    (tmp_path / "b" / "service.yaml").write_text(isvc, encoding="utf-8")
    from helpers import lint_paths

    (chat,) = [m for m in lint_paths(tmp_path, root=tmp_path).models if not m.template]
    assert chat.setting("tensor_parallel_size").value == 4
    assert chat.setting("tensor_parallel_size").location.path == "b/runtime.yaml"
