"""OpenShift ``Template`` objects are read as the resources ``oc process`` creates from them."""

from __future__ import annotations

from helpers import lint_text

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
