"""Kubernetes manifests kept as envsubst templates (``x.yaml.tpl`` / ``x.yml.tpl``): read as YAML when
they parse, their ``${VAR}`` values left unresolved as in other templates; one that does not parse is a
template not linted."""

from __future__ import annotations

from cfgcheck.config import Config
from cfgcheck.discover import listed_file
from cfgcheck.lint import lint

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-chat
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--max-model-len", "8192", "--quantization", "awq",
                 "--trust-remote-code"]
          resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: v1
kind: Service
metadata: {name: vllm-chat}
spec:
  selector: {app: vllm-chat}
  ports: [{port: 8000}]
"""

PLACEHOLDERS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-reasoning}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "${MODEL_REASONING}", "--tensor-parallel-size", "${TP_SIZE_REASONING}"]
"""

BROKEN = PLACEHOLDERS.replace("          args:", "{{ if .Args }}\n          args:") + "{{ end }}\n"


def test_yaml_tpl_manifests_are_read_as_yaml(tmp_path):
    (tmp_path / "chat.yaml.tpl").write_text(DEPLOYMENT, encoding="utf-8")
    (tmp_path / "reasoning.yml.tpl").write_text(PLACEHOLDERS, encoding="utf-8")
    (tmp_path / "broken.yaml.tpl").write_text(BROKEN, encoding="utf-8")
    result = lint([tmp_path], Config(tmp_path, {}))
    models = {model.name: model for model in result.models}
    assert set(models) == {"vllm-chat/vllm", "vllm-reasoning/vllm"}  # the broken template is not guessed at
    chat = models["vllm-chat/vllm"]
    assert chat.model.value == "Qwen/Qwen2.5-7B-Instruct-AWQ" and chat.gpu_product == "nvidia-l4"
    assert models["vllm-reasoning/vllm"].model is None  # ${MODEL_REASONING}: unknown, not a model id
    codes = sorted((f.code, f.location.path) for f in result.findings)
    assert ("CFG302", "chat.yaml.tpl") in codes and ("CFG303", "chat.yaml.tpl") in codes
    assert ("CFG306", "chat.yaml.tpl") in codes and not [path for _, path in codes if path == "broken.yaml.tpl"]


def test_only_yaml_templates_are_listed():
    assert listed_file("deploy/chat.yaml.tpl") and listed_file("chat.yml.tpl")
    assert not listed_file("templates/_helpers.tpl") and not listed_file("notes.txt.tpl")
