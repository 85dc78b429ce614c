"""llama-server configured through its ``LLAMA_ARG_*`` environment (the table generated from llama.cpp's
common/arg.cpp), a compose file that only adds the GPU to a service of the base file, and the Dockerfile
and entrypoint script of the image a compose service runs."""

from __future__ import annotations

from helpers import write

import importlib.util
from pathlib import Path

from cfgcheck.adapters.launch import llama_env
from cfgcheck.config import Config
from cfgcheck.lint import collect

COMPOSE = """\
services:
  llama:
    image: llama-cpp-docker
    ports: ["8080:8080"]
    volumes: ["./models:/models"]
    environment:
      - LLAMA_ARG_CTX_SIZE=2048
      - LLAMA_ARG_MODEL=/models/Mistral-7B-Instruct-v0.3-Q5_K_M.gguf
      - LLAMA_ARG_N_GPU_LAYERS=99
      - LLAMA_ARG_N_PARALLEL=4
      - LLAMA_ARG_CONT_BATCHING=off
      - LLAMA_ARG_EMBEDDINGS=false
      - GGML_CUDA_NO_PINNED=1
"""

GPU_OVERRIDE = """\
services:
  llama:
    image: llama-cpp-docker
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""

DOCKERFILE = """\
FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build
RUN git clone --depth 1 --branch b4500 https://github.com/ggml-org/llama.cpp /src && \\
    cmake -S /src -B /src/build -DGGML_CUDA=ON && cmake --build /src/build --target llama-server
FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
COPY --from=build /src/build/bin/llama-server /usr/local/bin/llama-server
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
"""

ENTRYPOINT = """\
#!/bin/bash
export LLAMA_ARG_HOST="${LLAMA_ARG_HOST:-0.0.0.0}"
if [ "$1" = "download" ]; then
  curl -L -o /models/model.gguf "$2"
  exec llama-server
fi
exec llama-server
"""

README = "# llama.cpp\n\n```bash\ndocker build -t llama-cpp-docker .\ndocker compose up\n```\n"


def _models(tmp_path, files: dict[str, str]) -> list:
    write(tmp_path, files)
    return collect([tmp_path], Config(tmp_path, {}))[1]


def test_the_environment_is_read_as_the_flags_llama_server_reads(tmp_path):
    (model,) = _models(tmp_path, {"docker-compose.yml": COMPOSE})
    assert model.engine == "llama.cpp" and model.model.value == "/models/Mistral-7B-Instruct-v0.3-Q5_K_M.gguf"
    assert (model.model.location.path, model.model.location.line) == ("docker-compose.yml", 8)
    assert model.value("max_model_len") == 2048 and model.value("gpu_layers") == 99
    assert model.value("max_num_seqs") == 4  # LLAMA_ARG_N_PARALLEL is --parallel, not --n-parallel
    texts = [token.text for token in model.argv]
    assert "--no-cont-batching" in texts and "--embeddings" not in texts  # off negates; false sets no switch
    assert not any("GGML" in text for text in texts)


def test_the_command_line_wins_over_the_environment(tmp_path):
    compose = COMPOSE.replace("    environment:\n", "    command: [\"-m\", \"/models/other.gguf\", \"-c\", \"4096\"]\n"
                                                  "    environment:\n")
    (model,) = _models(tmp_path, {"docker-compose.yml": compose})
    assert model.model.value == "/models/other.gguf" and model.value("max_model_len") == 4096
    assert model.value("gpu_layers") == 99


def test_a_compose_file_that_only_adds_the_gpu_is_the_same_service(tmp_path):
    (model,) = _models(tmp_path, {"docker-compose.yml": COMPOSE, "docker-compose.gpu.yml": GPU_OVERRIDE})
    assert model.path == "docker-compose.yml" and model.gpus.value == 1
    assert model.gpus.location.path == "docker-compose.gpu.yml" and model.pod.gpu_access is not None
    own = GPU_OVERRIDE.replace("    deploy:", "    command: [\"-m\", \"/models/b.gguf\"]\n    deploy:")
    models = _models(tmp_path, {"docker-compose.gpu.yml": own})  # a launch of its own: a served model of its own
    assert sorted(m.path for m in models) == ["docker-compose.gpu.yml", "docker-compose.yml"]


def test_the_image_a_service_runs_holds_its_dockerfile_and_entrypoint_script(tmp_path):
    files = {"docker-compose.yml": COMPOSE, "Dockerfile": DOCKERFILE, "docker-entrypoint.sh": ENTRYPOINT}
    alone = _models(tmp_path / "unlinked", files)  # nothing says the compose image is this Dockerfile's
    assert sorted(m.path for m in alone) == ["docker-compose.yml", "docker-entrypoint.sh", "docker-entrypoint.sh"]
    (model,) = _models(tmp_path / "linked", {**files, "README.md": README})
    assert model.path == "docker-compose.yml" and model.model.value.endswith("Q5_K_M.gguf")


def test_the_generator_reads_options_their_env_names_and_what_they_take():
    spec = importlib.util.spec_from_file_location("build_llama_env", Path(__file__).parents[2] / "scripts" / "build_llama_env.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    written = """
    add_opt(common_arg(
        {"-c", "--ctx-size"}, "N", "size of the prompt context",
        [](common_params & params, int value) { params.n_ctx = value; }
    ).set_env("LLAMA_ARG_CTX_SIZE"));
    add_opt(common_arg(
        {"-cb", "--cont-batching"}, {"-nocb", "--no-cont-batching"}, "continuous batching",
        [](common_params & params, bool value) { params.cont_batching = value; }
    ).set_env("LLAMA_ARG_CONT_BATCHING"));
    add_opt(common_arg(
        {"--show-timings"}, "show timings",
        [](common_params & params) { params.show_timings = true; }
    ).set_examples({LLAMA_EXAMPLE_CLI}).set_env("LLAMA_ARG_SHOW_TIMINGS"));
    add_opt(common_arg(
        {"--embedding"}, "embeddings only",
        [](common_params & params) { params.embedding = true; }
    ).set_examples({LLAMA_EXAMPLE_SERVER}).set_env("LLAMA_ARG_EMBEDDINGS"));
    """
    table = generator.options(written)
    assert table == {
        "LLAMA_ARG_CONT_BATCHING": {"options": ["-cb", "--cont-batching"], "negative": ["-nocb", "--no-cont-batching"],
                                    "takes": "bool"},
        "LLAMA_ARG_CTX_SIZE": {"options": ["-c", "--ctx-size"], "negative": [], "takes": "value"},
        "LLAMA_ARG_EMBEDDINGS": {"options": ["--embedding"], "negative": [], "takes": "switch"},
    }  # the CLI-only option is not llama-server's
    assert llama_env.option("LLAMA_ARG_N_GPU_LAYERS") == "--n-gpu-layers" and llama_env.option("LLAMA_ARG_X") is None


def test_an_engine_asked_only_for_its_help_or_version_serves_nothing(tmp_path):
    script = ('#!/bin/bash\nif [ "$1" = "--help" ]; then\n  llama-server --help\n  exit 0\nfi\n'
              'vllm serve --version\nexec llama-server -m /models/a.gguf --port 8080\n')
    (model,) = _models(tmp_path, {"entrypoint.sh": script})
    assert model.engine == "llama.cpp" and model.model.value == "/models/a.gguf" and model.location.line == 7
