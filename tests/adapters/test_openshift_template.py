"""OpenShift ``Template`` objects are read as the resources ``oc process`` creates from them."""

from __future__ import annotations

from helpers import lint_text

from cfgcheck.config import Config
from cfgcheck.lint import lint

RUNTIME_TEMPLATE = """apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: team-vllm-serving-template
objects:
- apiVersion: serving.kserve.io/v1alpha1
  kind: ServingRuntime
  metadata:
    name: team-vllm
  spec:
    containers:
    - name: kserve-container
      image: quay.io/example/vllm-openai:0.9.2
      args: ["--model", "/mnt/models/", "--port", "8080"]
    supportedModelFormats:
    - {name: pytorch, autoSelect: true}
"""

DEPLOYMENT_TEMPLATE = """apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: chat
parameters:
- name: MODEL
  value: Qwen/Qwen3-8B
objects:
- apiVersion: v1
  kind: Service
  metadata: {name: chat}
  spec: {ports: [{port: 8000}]}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: chat}
  spec:
    template:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.2
          args: ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_runtime_in_a_template_is_a_runtime_template_not_a_gpu_less_pod(tmp_path) -> None:
    result = lint_text(tmp_path, RUNTIME_TEMPLATE)
    assert [m.template for m in result.models] == [True]
    assert "CFG504" not in {f.code for f in result.findings}


def test_a_deployment_in_a_template_is_a_served_model_located_in_its_object(tmp_path) -> None:
    result = lint_text(tmp_path, DEPLOYMENT_TEMPLATE)
    assert [(m.model.value, m.template) for m in result.models] == [("Qwen/Qwen3-8B", False)]
    mismatch = [f for f in result.findings if f.code == "CFG208"]
    assert mismatch and mismatch[0].location.line == 22, [(f.code, f.location.line) for f in result.findings]


CONFIGMAP_TEMPLATE = """apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: chat
objects:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: chat-settings
  data:
    MODEL: Qwen/Qwen3-8B
    MAX_LEN: "16384"
    engine.yaml: |
      max-num-seqs: 48
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: chat}
  spec:
    template:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.2
          envFrom: [{configMapRef: {name: chat-settings}}]
          args: ["--model", "$(MODEL)", "--max-model-len", "$(MAX_LEN)", "--config", "/cfg/engine.yaml"]
          volumeMounts: [{name: cfg, mountPath: /cfg}]
          resources: {limits: {nvidia.com/gpu: 1}}
        volumes:
        - name: cfg
          configMap: {name: chat-settings}
"""

# kubectl get -o yaml: the same objects as items of a v1 List
LIST_OF_RESOURCES = "apiVersion: v1\nkind: List\nitems:\n" + CONFIGMAP_TEMPLATE.split("objects:\n", 1)[1]


def test_a_configmap_in_a_template_is_read_by_the_served_model_beside_it(tmp_path) -> None:
    result = lint_text(tmp_path, CONFIGMAP_TEMPLATE)
    (model,) = result.models
    assert model.model.value == "Qwen/Qwen3-8B" and model.model.location.line == 11
    assert model.settings["max_model_len"].value == 16384 and model.settings["max_model_len"].location.line == 12
    assert model.settings["max_num_seqs"].value == 48 and model.settings["max_num_seqs"].location.line == 14  # from engine.yaml


def test_a_template_configmap_in_another_file_is_found_whatever_the_order(tmp_path) -> None:
    objects = CONFIGMAP_TEMPLATE.split("- apiVersion: apps/v1")
    (tmp_path / "a-deploy.yaml").write_text(objects[0].split("objects:")[0] + "objects:\n- apiVersion: apps/v1"
                                            + objects[1], encoding="utf-8")
    (tmp_path / "b-settings.yaml").write_text(objects[0], encoding="utf-8")
    result = lint([tmp_path], Config(tmp_path, {}))
    (model,) = result.models
    assert (model.model.value, model.model.location.path) == ("Qwen/Qwen3-8B", "b-settings.yaml")


def test_the_items_of_a_list_are_resources_and_related_objects(tmp_path) -> None:
    result = lint_text(tmp_path, LIST_OF_RESOURCES)
    assert [(m.model.value, m.model.location.line) for m in result.models] == [("Qwen/Qwen3-8B", 9)]
    assert result.models[0].settings["max_num_seqs"].location.line == 12
