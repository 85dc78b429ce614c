"""The engine version a build pins (``RUN pip install vllm==X`` in the Dockerfile a compose service, a
workload or the Dockerfile itself runs) or a host environment's directory names
(``envs/vllm-0.10.1/bin/vllm``): flags are checked against that version, not the newest catalogued."""

from __future__ import annotations

from helpers import write

from cfgcheck.adapters.launch.dockerfile import parse
from cfgcheck.config import Config
from cfgcheck.lint import collect, lint

CUDA_BUILD = """\
FROM nvidia/cuda:12.8.0-runtime-ubuntu22.04
RUN apt-get update && apt-get install -y python3-pip
RUN python3 -m pip install --upgrade pip && \\
    python3 -m pip install --index-url https://download.pytorch.org/whl/cu128 torch==2.9.0+cu128 && \\
    python3 -m pip install vllm==0.11.2
"""

COMPOSE = """\
services:
  llm:
    build:
      context: ./docker/vllm
    command:
      - vllm
      - serve
      - Qwen/Qwen3-8B
      - --swap-space
      - "12"
"""


def _lint(tmp_path, files: dict[str, str]):
    write(tmp_path, files)
    _, models = collect([tmp_path], Config(tmp_path, {}))
    return models, lint([tmp_path], Config(tmp_path, {})).findings


def test_a_compose_build_takes_the_version_its_dockerfile_installs(tmp_path):
    """--swap-space was removed after vLLM 0.11: against 0.11.2 it is accepted, so no CFG104 (the
    newest catalogue would say it was removed)."""
    models, findings = _lint(tmp_path, {"compose.yaml": COMPOSE, "docker/vllm/Dockerfile": CUDA_BUILD})
    (model,) = models
    assert model.engine == "vllm" and model.engine_version == "0.11.2"
    assert model.engine_version_confidence == "exact" and "line 5" in model.engine_version_why, model.engine_version_why
    assert not [f for f in findings if f.code in ("CFG103", "CFG104")], [f.message for f in findings]


def test_without_the_pin_the_same_service_is_checked_against_the_newest_catalogue(tmp_path):
    unpinned = CUDA_BUILD.replace("vllm==0.11.2", "vllm")
    _, findings = _lint(tmp_path, {"compose.yaml": COMPOSE, "docker/vllm/Dockerfile": unpinned})
    (removed,) = [f for f in findings if f.code == "CFG104"]
    assert "--swap-space" in removed.message and removed.severity != "error"


def test_install_forms_stages_and_arg_defaults():
    multi = """\
FROM nvidia/cuda:12.8.0-devel-ubuntu22.04 AS base
ARG SGLANG_VERSION=0.5.2
RUN uv pip install --system "sglang[all]==${SGLANG_VERSION}"
FROM base AS app
RUN pip3 install hf_transfer
FROM python:3.12 AS unrelated
RUN pip install vllm==0.9.2
FROM app
CMD ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]
"""
    built = parse("Dockerfile", multi)
    assert built.engine == "sglang" and built.pin.version == "0.5.2"  # the unrelated stage is not the image's
    assert parse("Dockerfile", "FROM python:3.12\nRUN echo vllm==0.9.2 && pip install -r req.txt\n").pin is None
    later = parse("Dockerfile", "FROM vllm/vllm-openai:v0.9.2\nRUN pip install -U vllm==0.10.1\n")
    assert later.pin.version == "0.10.1"  # the install replaces what the base image shipped


def test_a_dockerfile_that_is_deployed_as_built_takes_its_install(tmp_path):
    dockerfile = CUDA_BUILD + 'ENTRYPOINT ["vllm", "serve", "Qwen/Qwen3-8B", "--swap-space", "4"]\n'
    models, findings = _lint(tmp_path, {"Dockerfile": dockerfile})
    (model,) = models
    assert model.engine_version == "0.11.2" and model.engine_version_confidence == "exact"
    assert not [f for f in findings if f.code == "CFG104"]


def test_a_version_in_the_environment_directory_is_assumed(tmp_path):
    script = """\
#!/bin/bash
/home/u/miniconda3/envs/vllm-0.10.1/bin/vllm serve Qwen/Qwen3-8B --swap-space 4 --port 8000
"""
    venv = "#!/bin/bash\n/opt/venvs/vllm_0.8.5/bin/python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B\n"
    models, findings = _lint(tmp_path, {"serve.sh": script, "old.sh": venv, "plain.sh": script.replace("vllm-0.10.1", "llm")})
    by_name = {m.name: m for m in models}
    assert by_name["serve"].engine_version == "0.10.1" and by_name["serve"].engine_version_confidence == "assumed"
    assert "envs/vllm-0.10.1" not in by_name["serve"].engine_version_why and "vllm-0.10.1" in by_name["serve"].engine_version_why
    assert by_name["old"].engine_version == "0.8.5"
    assert by_name["plain"].engine_version is None
    assert [f.location.path for f in findings if f.code == "CFG104"] == ["plain.sh"]  # --swap-space: only the newest lacks it
