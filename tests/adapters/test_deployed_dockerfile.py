"""A Dockerfile whose image a Kubernetes workload of the same repository deploys, the link stated by
the repository (a build command, skaffold, Tilt, a build-push-action step): its launch is the image's
default command, merged into the workload's (``command`` replaces ENTRYPOINT, ``args`` CMD), not a
second served model."""

from __future__ import annotations

from cfgcheck.config import Config
from cfgcheck.lint import collect, lint

DOCKERFILE = """\
FROM vllm/vllm-openai:v0.9.2
RUN pip install hf_transfer
ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "Qwen/Qwen3-8B"]
CMD ["--max-model-len", "8192"]
"""


def _deployment(image: str, launch: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm-chat}}  # the serving marker cfgcheck reads files for
spec:
  template:
    spec:
      containers:
      - name: server
        image: {image}
{launch}        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _write(tmp_path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")


def _models(tmp_path, files: dict[str, str]) -> list:
    _write(tmp_path, files)
    _, models = collect([tmp_path], Config(tmp_path, {}))
    return models


def _at(setting) -> tuple:
    return setting.location.path, setting.location.line


README = """\
# Build
```bash
export REGION=us-central1
export IMAGE_NAME=chat-server
docker build -t ${IMAGE_NAME}:v0.1 .
docker tag ${IMAGE_NAME}:v0.1 ${REGION}-docker.pkg.dev/acme/images/${IMAGE_NAME}:v0.1
```
"""


def test_a_readme_build_and_tag_link_the_dockerfile_to_the_deployment_by_digest(tmp_path):
    image = "us-central1-docker.pkg.dev/acme/images/chat-server@sha256:" + "a" * 64
    models = _models(tmp_path, {"serve/Dockerfile": DOCKERFILE, "serve/README.md": README,
                                "serve/deploy.yaml": _deployment(image, '        args: ["--max-model-len", "4096"]\n')})
    (model,) = models  # the Dockerfile's launch is the Deployment's, not a model of its own
    assert model.path == "serve/deploy.yaml" and model.engine == "vllm"
    assert model.model.value == "Qwen/Qwen3-8B" and _at(model.model) == ("serve/Dockerfile", 3)
    assert model.value("max_model_len") == 4096 and _at(model.setting("max_model_len")) == ("serve/deploy.yaml", 10)


def test_without_args_the_dockerfile_cmd_runs_and_a_makefile_states_the_build(tmp_path):
    makefile = "IMAGE ?= ghcr.io/acme/chat\n\nbuild:\n\tdocker build -t $(IMAGE):latest -f docker/serve.Dockerfile .\n"
    models = _models(tmp_path, {"docker/serve.Dockerfile": DOCKERFILE, "Makefile": makefile,
                                "k8s/deploy.yaml": _deployment("ghcr.io/acme/chat:1.4")})
    (model,) = models
    assert model.path == "k8s/deploy.yaml" and model.value("max_model_len") == 8192 and _at(model.setting("max_model_len")) == ("docker/serve.Dockerfile", 4)


def test_a_container_command_replaces_the_entrypoint_and_the_dockerfile_is_still_not_counted(tmp_path):
    skaffold = ("apiVersion: skaffold/v4beta6\nkind: Config\nbuild:\n  artifacts:\n  - image: acme/chat\n"
                "    context: image\n")
    launch = '        command: ["vllm", "serve", "Qwen/Qwen3-0.6B"]\n'
    models = _models(tmp_path, {"image/Dockerfile": DOCKERFILE, "skaffold.yaml": skaffold,
                                "deploy/chat.yaml": _deployment("acme/chat", launch)})
    assert [(m.path, m.model.value, m.setting("max_model_len")) for m in models] == \
        [("deploy/chat.yaml", "Qwen/Qwen3-0.6B", None)]


def test_a_tiltfile_and_a_build_push_action_state_the_build(tmp_path):
    tilt = "docker_build('acme/tilted', 'app', dockerfile='app/Dockerfile')\n"
    workflow = """\
on: push
jobs:
  image:
    runs-on: ubuntu-latest
    steps:
    - uses: docker/build-push-action@v6
      with:
        context: ci
        tags: |
          ghcr.io/acme/pushed:latest
          ghcr.io/acme/pushed:${{ github.sha }}
"""
    models = _models(tmp_path, {"app/Dockerfile": DOCKERFILE, "Tiltfile": tilt, "ci/Dockerfile": DOCKERFILE,
                                ".github/workflows/image.yml": workflow,
                                "k8s/tilted.yaml": _deployment("acme/tilted:dev"),
                                "k8s/pushed.yaml": _deployment("ghcr.io/acme/pushed:latest")})
    assert sorted((m.path, _at(m.model)) for m in models) == [
        ("k8s/pushed.yaml", ("ci/Dockerfile", 3)), ("k8s/tilted.yaml", ("app/Dockerfile", 3))]


def test_no_stated_link_or_another_repository_of_the_same_name_keeps_both(tmp_path):
    readme = "docker build -t acme/chat .\n"
    models = _models(tmp_path, {"Dockerfile": DOCKERFILE, "README.md": readme,
                                "k8s/deploy.yaml": _deployment("other/chat:1", '        command: [vllm, serve, Qwen/Qwen3-8B]\n')})
    assert sorted(m.path for m in models) == ["Dockerfile", "k8s/deploy.yaml"]  # other/chat is not acme/chat


def test_a_public_engine_image_is_pulled_not_the_one_built_here(tmp_path):
    models = _models(tmp_path, {"Dockerfile": DOCKERFILE, "README.md": "docker build -t vllm/vllm-openai .\n",
                                "k8s/deploy.yaml": _deployment("vllm/vllm-openai:v0.9.2",
                                                               '        args: ["Qwen/Qwen3-0.6B"]\n')})
    assert sorted((m.path, m.model.value) for m in models) == [
        ("Dockerfile", "Qwen/Qwen3-8B"), ("k8s/deploy.yaml", "Qwen/Qwen3-0.6B")]


def test_the_images_env_is_the_containers_unless_the_container_sets_it(tmp_path):
    dockerfile = DOCKERFILE.replace("RUN pip install hf_transfer\n",
                                    "ENV HF_HOME=/models/hf \\\n    VLLM_LOGGING_LEVEL=INFO\nENV HF_HUB_ENABLE_HF_TRANSFER 1\n")
    makefile = "build:\n\tdocker build -t ghcr.io/acme/chat:latest -f docker/serve.Dockerfile .\n"
    launch = "        env: [{name: VLLM_LOGGING_LEVEL, value: DEBUG}]\n"
    (model,) = _models(tmp_path, {"docker/serve.Dockerfile": dockerfile, "Makefile": makefile,
                                  "k8s/deploy.yaml": _deployment("ghcr.io/acme/chat:1.4", launch)})
    assert model.env["HF_HOME"].value == "/models/hf" and _at(model.env["HF_HOME"]) == ("docker/serve.Dockerfile", 2)
    assert model.env["HF_HUB_ENABLE_HF_TRANSFER"].value == "1"  # the legacy ENV NAME VALUE form
    assert model.env["VLLM_LOGGING_LEVEL"].value == "DEBUG"  # the container's own wins


def test_a_cache_the_images_dockerfile_puts_on_a_claim_is_persistent(tmp_path):
    """HF_HOME set by the deployed image's ENV points at the claim the pod mounts: no CFG505; the same
    image with the claim at another path downloads into the container's filesystem: CFG505."""
    dockerfile = DOCKERFILE.replace("RUN pip install hf_transfer\n", "ENV HF_HOME=/models/hf\n")
    makefile = "build:\n\tdocker build -t ghcr.io/acme/chat:latest -f docker/serve.Dockerfile .\n"
    for where, flagged in (("/models", False), ("/data", True)):
        deploy = _deployment("ghcr.io/acme/chat:1.4", f"        volumeMounts: [{{name: models, mountPath: {where}}}]\n")
        deploy += "      volumes: [{name: models, persistentVolumeClaim: {claimName: weights}}]\n"
        _write(tmp_path, {"docker/serve.Dockerfile": dockerfile, "Makefile": makefile, "k8s/deploy.yaml": deploy})
        found = [f for f in lint([tmp_path], Config(tmp_path, {})).findings if f.code == "CFG505"]
        assert bool(found) == flagged, [f.message for f in found]
