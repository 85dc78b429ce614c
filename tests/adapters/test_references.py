"""References that lead nowhere (CFG003): what a kustomization, a KServe service and a script name that the
repository does not hold is reported once the whole repository was read, and only what the repository
should hold: not what kustomize fetches, KServe installs, an image holds, a script makes, Git ignores."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cfgcheck.config import load
from cfgcheck.lint import lint

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _dangling(root: Path, paths: list[Path] | None = None) -> list[tuple[str, int, int, str]]:
    result = lint(paths or [root], load(root))
    return [(f.location.path, f.location.line, f.location.column, f.message)
            for f in result.findings if f.code == "CFG003"]


def test_what_a_kustomization_names_and_the_repository_lacks(tmp_path: Path):
    _write(tmp_path, {
        "app/deployment.yaml": DEPLOYMENT, "app/env/model.env": "MODEL=qwen\n", "base/kustomization.yaml": "resources: []\n",
        "app/components/notes.md": "a folder named as a component holds no kustomization\n",
        "app/kustomization.yaml": (
            "resources:\n  - deployment.yaml\n  - service.yaml\n  - ../base\n  - overlays/gpu\n"
            "  - github.com/org/repo//deploy?ref=v1\n  - https://example.com/crd.yaml\n"
            "components:\n  - components\n"
            "patches:\n  - path: patches/gpu.yaml\n"
            "configMapGenerator:\n  - name: model\n    envs: [env/model.env]\n    files: [serve=config/serve.yaml]\n"
            "secretGenerator:\n  - name: token\n    envs: [secret.env]\n")})
    found = _dangling(tmp_path)
    assert [(path, line, column) for path, line, column, _ in found] == [
        ("app/kustomization.yaml", 3, 5), ("app/kustomization.yaml", 5, 5), ("app/kustomization.yaml", 9, 5),
        ("app/kustomization.yaml", 11, 11), ("app/kustomization.yaml", 15, 19)]  # the value after KEY= is the file
    assert found[0][3] == "resource 'service.yaml' does not exist: looked for app/service.yaml"
    assert found[1][3].endswith("looked for app/overlays/gpu")
    assert found[2][3] == ("component 'components' does not exist: looked for app/components "
                           "(a folder with a kustomization)")
    assert "configMapGenerator file 'config/serve.yaml'" in found[4][3]
    # a lint of one folder leaves the rest of the repository unread: what is named may be elsewhere
    assert _dangling(tmp_path, [tmp_path / "app"]) == []


def test_a_kserve_runtime_in_a_repository_that_keeps_no_runtime_is_the_cluster_s(tmp_path: Path):
    _write(tmp_path, {"isvc.yaml": (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: llama\nspec:\n"
        "  predictor:\n    model:\n      modelFormat:\n        name: vLLM\n      runtime: platform-vllm\n"
        "      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct\n")})
    assert _dangling(tmp_path) == []


def test_a_script_s_config_file_beside_it(tmp_path: Path):
    _write(tmp_path, {"serve/run.sh": "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --config conf/serve.yaml\n"})
    assert _dangling(tmp_path) == [("serve/run.sh", 2, 46, "engine config file 'conf/serve.yaml' does not exist: "
                                    "looked for serve/conf/serve.yaml in the repository")]
    (tmp_path / "serve/conf").mkdir()
    (tmp_path / "serve/conf/serve.yaml").write_text("max-model-len: 8192\n")
    assert _dangling(tmp_path) == []



def test_a_script_s_chat_template_missing_from_the_repository(tmp_path: Path):
    """The plugin and another template are there, the template the script names is not; a template given
    inline or by a built-in name (SGLang's ``chatml``) names no file."""
    _write(tmp_path, {
        "serve.sh": ("vllm serve Qwen/Qwen2.5-7B-Instruct --chat-template template_a.jinja "
                     "--tool-parser-plugin my_parser.py --tool-call-parser mine --enable-auto-tool-choice\n"),
        "other.sh": "vllm serve Qwen/Qwen2.5-7B-Instruct --chat-template=template_b.jinja\n",
        "builtin.sh": "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --chat-template chatml\n",
        "my_parser.py": "# a tool parser plugin\n", "template_b.jinja": "{{ messages }}\n"})
    assert _dangling(tmp_path) == [("serve.sh", 1, 53, "chat template 'template_a.jinja' does not exist: "
                                    "looked for template_a.jinja in the repository")]

def test_a_config_file_the_script_does_not_take_from_beside_it(tmp_path: Path):
    """A docker run's relative path is in its image; a script that changes folder, or fetches or writes
    the file before the engine starts, holds nothing beside it."""
    _write(tmp_path, {
        "docker.sh": "docker run --gpus all vllm/vllm-openai:v0.26.0 --model Qwen/Qwen2.5-7B-Instruct --config serve.yaml\n",
        "cd.sh": "cd /opt/serving\nvllm serve Qwen/Qwen2.5-7B-Instruct --config serve.yaml\n",
        "fetch.sh": "curl -sLo fetched.yaml https://example.com/c.yaml\nvllm serve Qwen/Qwen2.5-7B-Instruct --config fetched.yaml\n",
        "Dockerfile": "FROM vllm/vllm-openai:v0.26.0\nCMD [\"vllm\", \"serve\", \"Qwen/Qwen2.5-7B-Instruct\", \"--config\", \"baked.yaml\"]\n",
        # a script a compose service runs in its container: its relative path is the container's
        "stack/start.sh": "#!/bin/sh\nexec vllm serve Qwen/Qwen2.5-7B-Instruct --config in-container.yaml\n",
        "stack/compose.yaml": ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n"
                               "    entrypoint: [/bin/sh, /scripts/start.sh]\n    volumes:\n      - ./start.sh:/scripts/start.sh\n")})
    assert _dangling(tmp_path) == []


def test_a_file_git_ignores_is_there_for_whoever_runs_it(tmp_path: Path):
    """An operator's own config, ignored by Git, exists where the lint runs: cfgcheck does not read it (it
    is not the repository's) and does not say it is missing either."""
    _write(tmp_path, {".gitignore": "local.yaml\n", "local.yaml": "max-model-len: 8192\n",
                      "run.sh": "vllm serve Qwen/Qwen2.5-7B-Instruct --config local.yaml\n"})
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", ".gitignore", "run.sh"], check=True)
    assert _dangling(tmp_path) == []
