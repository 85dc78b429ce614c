"""pre-commit names only the changed files: the files they refer to (a compose file's .env, a mounted
ConfigMap, an engine --config file) are still read, and a change to only such a file re-lints the
file that uses it. In a real git repository, as the hook runs."""

from __future__ import annotations

from helpers import make_repo

from cfgcheck.config import load as load_config
from cfgcheck.lint import lint

COMPOSE = """\
services:
  chat:
    image: vllm/vllm-openai:v0.26.0
    volumes: ["./engine/vllm.yaml:/etc/vllm.yaml"]
    command: ["${MODEL:-Qwen/Qwen3-8B}", "--config", "/etc/vllm.yaml", "--max-num-seqs", "${SEQS:-64}"]
"""
ENGINE = "max-model-len: 8192\nkv-cache-memory: 4G\n"
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
          args: ["Qwen/Qwen3-8B", "--config", "/cfg/engine.yaml"]
          volumeMounts: [{name: cfg, mountPath: /cfg}]
      volumes:
        - name: cfg
          configMap:
            name: chat-engine
"""
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: chat-engine
data:
  engine.yaml: |
    max-num-seq: 8
"""


def _findings(repo, *names):
    result = lint([repo / name for name in names], load_config(repo))
    return {(f.code, f.location.path, f.location.line) for f in result.findings if f.suppressed is None}


def test_a_changed_env_file_relints_the_compose_file_beside_it(tmp_path):
    repo = make_repo(tmp_path, {"compose.yaml": COMPOSE, "engine/vllm.yaml": ENGINE, ".env": "SEQS=4\n"})
    result = lint([repo / ".env"], load_config(repo))
    found = {(f.code, f.location.path, f.location.line) for f in result.findings if f.suppressed is None}
    # --max-num-seqs 4 from .env, above what the pool holds: shown where the command uses ${SEQS}
    assert ("CFG203", "compose.yaml", 5) in found
    seqs = next(f for f in result.findings if f.code == "CFG203")
    assert (seqs.related[0].path, seqs.related[0].line) == (".env", 1)
    assert ("CFG101", "engine/vllm.yaml", 2) in found  # the --config file is read as well


def test_a_changed_config_file_relints_the_compose_file_that_mounts_it(tmp_path):
    repo = make_repo(tmp_path, {"compose.yaml": COMPOSE, "engine/vllm.yaml": ENGINE})
    assert ("CFG101", "engine/vllm.yaml", 2) in _findings(repo, "engine/vllm.yaml")


def test_configmap_in_another_file_is_read_either_way(tmp_path):
    repo = make_repo(tmp_path, {"k8s/deployment.yaml": DEPLOYMENT, "k8s/configmap.yaml": CONFIGMAP,
                                "other/unrelated.yaml": CONFIGMAP.replace("chat-engine", "other")})
    assert ("CFG101", "k8s/configmap.yaml", 7) in _findings(repo, "k8s/deployment.yaml")
    assert ("CFG101", "k8s/configmap.yaml", 7) in _findings(repo, "k8s/configmap.yaml")


# the same ConfigMap as an object of an OpenShift Template
TEMPLATE_CONFIGMAP = ("apiVersion: template.openshift.io/v1\nkind: Template\nmetadata:\n  name: engine-settings\n"
                      "objects:\n- " + CONFIGMAP.replace("\n", "\n  ").rstrip() + "\n")


def test_configmap_in_an_openshift_template_in_another_file_is_read_either_way(tmp_path):
    repo = make_repo(tmp_path, {"k8s/deployment.yaml": DEPLOYMENT, "k8s/template.yaml": TEMPLATE_CONFIGMAP})
    assert ("CFG101", "k8s/template.yaml", 12) in _findings(repo, "k8s/deployment.yaml")
    assert ("CFG101", "k8s/template.yaml", 12) in _findings(repo, "k8s/template.yaml")
