"""Compose, completed: .env interpolation as docker compose does it, env_file, build: with the
Dockerfile's FROM and ENTRYPOINT, entrypoint forms, GPU device_ids and count."""

from __future__ import annotations

from helpers import FIXTURES

from cfgcheck.adapters.launch.dotenv import Variable, substitute
from cfgcheck.capacity import estimate
from cfgcheck.config import load as load_config
from cfgcheck.lint import collect, lint
from cfgcheck.model import ArgToken, Location

STACK = FIXTURES / "formats" / "compose-stack"


def _models():
    _, models = collect([STACK], load_config(STACK))
    return {m.name: m for m in models}


def _at(setting):
    return setting.location.path, setting.location.line, setting.location.column


def test_values_come_from_the_env_file_beside_and_are_located_there():
    chat = _models()["chat"]
    assert chat.engine_version == "0.26.0"  # ${VLLM_TAG:-v0.10.2} with VLLM_TAG in .env
    assert chat.model.value == "Qwen/Qwen3-8B" and _at(chat.model) == (".env", 3, 15)
    assert chat.value("max_model_len") == 32768 and _at(chat.setting("max_model_len")) == (".env", 4, 9)
    assert chat.setting("max_model_len").comments == ("keeps 8 sequences in the pool",)  # the reason beside it
    assert chat.value("tensor_parallel_size") == 2  # GPUS= is empty: ${GPUS:-2} gives the default
    assert _at(chat.setting("tensor_parallel_size")) == ("compose.yaml", 12, 17)
    assert chat.value("served_model_name") == "${NAME}"  # $$ is a literal dollar
    assert chat.gpus.value == 2  # device_ids: ["0,1"]
    assert chat.env["HF_HUB_OFFLINE"].value == "0"  # environment wins over env_file
    assert chat.env["VLLM_LOGGING_LEVEL"].value == "DEBUG" and chat.env["VLLM_LOGGING_LEVEL"].location.path == "engine.env"


def test_build_entrypoint_shell_and_non_engine_services():
    models = _models()
    assert set(models) == {"chat", "built", "shell"}  # `pip install vllm` serves nothing
    built = models["built"]
    assert built.engine == "vllm" and built.engine_version == "0.26.0"  # FROM ${BASE}: ARG BASE=vllm/vllm-openai:v0.26.0
    assert built.model.value == "meta-llama/Llama-3.2-1B-Instruct" and built.gpus.value == 1  # ${GPU_COUNT-1}
    assert built.value("max_num_seqs") == "${SEQS:?set SEQS}"  # unset and required: unknown, not guessed
    shell = models["shell"]
    assert shell.engine == "sglang" and shell.model.value == "Qwen/Qwen3-0.6B" and shell.model.location.line == 34


def test_interpolation_forms():
    at = Location("c.yaml", 1, 1, 1, 10)
    env = {"SET": Variable("x", Location(".env", 2, 5)), "EMPTY": Variable("", Location(".env", 3, 7))}

    def value(text):
        return substitute(ArgToken(text, at), env).text

    assert value("${SET:-d}") == "x" and value("${EMPTY:-d}") == "d" and value("${EMPTY-d}") == ""
    assert value("${UNSET-d}") == "d" and value("${UNSET:?no}") == "${UNSET:?no}" and value("$UNSET") == "$UNSET"
    assert value("${SET:+alt}") == "alt" and value("${UNSET:+alt}") == "" and value("a$$b") == "a$b"
    assert value("${UNSET:-${SET}}") == "x" and value("pre-${SET}-$SET") == "pre-x-x"
    assert substitute(ArgToken("${UNSET:-abc}", at), env).location.column == 10


BUILT_DOCKERFILE = """\
ARG BASE=vllm/vllm-openai
FROM python:3.12-slim AS tools
ARG BASE=python
FROM --platform=linux/amd64 ${BASE}:v0.9.2
# the pool holds 16 sequences of 8k
ENTRYPOINT ["vllm", "serve", \\
            "Qwen/Qwen3-8B"]
CMD ["--max-model-len", "8192"]
"""


def _built_models(tmp_path, compose: str) -> dict:
    (tmp_path / "compose.yaml").write_text(compose, encoding="utf-8")
    (tmp_path / "Dockerfile").write_text(BUILT_DOCKERFILE, encoding="utf-8")
    _, models = collect([tmp_path / "compose.yaml"], load_config(tmp_path))
    return {m.name: m for m in models}


def test_a_built_dockerfile_is_read_through_the_instruction_lexer(tmp_path):
    """Continuation lines, FROM --platform, global ARGs only in FROM, and CMD when the service sets
    no command: each word located in the Dockerfile."""
    models = _built_models(tmp_path, "services:\n  chat:\n    build: .\n    container_name: vllm-chat\n")
    chat = models["chat"]
    assert chat.engine == "vllm" and chat.model.value == "Qwen/Qwen3-8B"
    assert _at(chat.model) == ("Dockerfile", 7, 14)  # on the continuation line
    assert chat.value("max_model_len") == 8192 and _at(chat.setting("max_model_len")) == ("Dockerfile", 8, 26)


def test_the_service_command_replaces_the_dockerfile_cmd_and_an_entrypoint_resets_it(tmp_path):
    models = _built_models(tmp_path, """\
services:  # vllm
  command:
    build: .
    command: ["--max-model-len", "4096"]
  entrypoint:
    build: .
    entrypoint: ["vllm", "serve", "Qwen/Qwen3-0.6B"]
""")
    assert models["command"].value("max_model_len") == 4096
    assert models["command"].model.value == "Qwen/Qwen3-8B"
    assert models["entrypoint"].model.value == "Qwen/Qwen3-0.6B"
    assert models["entrypoint"].setting("max_model_len") is None  # the Dockerfile's CMD is reset


def test_a_dockerfile_shell_entrypoint_without_a_service_command_is_read_not_a_cfg000(tmp_path):
    (tmp_path / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.9.2\nENTRYPOINT ["/bin/sh", "-c", '
                                         '"vllm serve Qwen/Qwen3-8B"]\n', encoding="utf-8")
    (tmp_path / "compose.yaml").write_text("services:\n  vllm:\n    build: .\n", encoding="utf-8")
    result = lint([tmp_path / "compose.yaml"], load_config(tmp_path))
    assert not [f.message for f in result.findings if f.code == "CFG000"]


COMPOSE_WITH_VARIABLES = """services:
  llm:
    image: vllm/vllm-openai:v0.26.0
    command: --model ${MODEL} --max-model-len ${MAX_LEN} --api-key ${VLLM_API_KEY}
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]
"""


def test_without_a_dot_env_the_committed_template_gives_the_values_but_not_its_secrets(tmp_path):
    (tmp_path / "compose.yaml").write_text(COMPOSE_WITH_VARIABLES)
    (tmp_path / ".env.example").write_text("# copy to .env\nMODEL=Qwen/Qwen3-8B\nMAX_LEN=16384\nVLLM_API_KEY=change-me\n")
    _, models = collect([tmp_path], load_config(tmp_path))
    llm = models[0]
    assert llm.model.value == "Qwen/Qwen3-8B" and _at(llm.model) == (".env.example", 2, 7)
    assert llm.value("max_model_len") == 16384
    assert "${VLLM_API_KEY}" in [t.text for t in llm.argv]  # a template's secret is a placeholder: unknown
    (tmp_path / ".env").write_text("MODEL=Qwen/Qwen3-14B\n")
    _, models = collect([tmp_path], load_config(tmp_path))
    assert models[0].model.value == "Qwen/Qwen3-14B" and models[0].value("max_model_len") == "${MAX_LEN}"  # .env wins


MOUNTED = FIXTURES / "formats" / "compose-mounted-script"


def test_a_script_mounted_into_a_service_is_the_services_engine_start():
    _, models = collect([MOUNTED], load_config(MOUNTED))
    by_name = {m.name: m for m in models}
    assert set(by_name) == {"assistant", "embedder", "bench"}  # start.sh and embed.sh are no models of their own
    assistant = by_name["assistant"]
    assert assistant.engine_version == "0.26.0" and assistant.gpus.value == 1  # the service's image and GPUs
    assert assistant.model.value == "Qwen/Qwen3-8B" and _at(assistant.model) == ("docker-compose.yml", 8, 17)
    assert assistant.value("max_model_len") == 16384 and _at(assistant.setting("max_model_len")) == (
        "docker-compose.yml", 9, 17)  # inside the quotes
    assert _at(assistant.setting("gpu_memory_utilization")) == ("scripts/start.sh", 8, 28)
    assert assistant.value("max_num_seqs") == 64  # "$@": the service's command
    assert assistant.env["VLLM_USE_V1"].location.path == "scripts/start.sh"  # exported by the script
    embedder = by_name["embedder"]  # a folder mount; the list form of environment
    assert embedder.model.value == "BAAI/bge-m3" and embedder.value("gpu_memory_utilization") == 0.1
    assert embedder.pod.gpu_access is not None
    result = lint([MOUNTED], load_config(MOUNTED))
    removed = {(f.location.path, f.location.line) for f in result.findings if f.code == "CFG108"}
    assert removed == {("scripts/start.sh", 5)}  # the image's vLLM 0.26.0 no longer reads VLLM_USE_V1


def test_a_finding_at_a_value_of_the_env_template_is_shown_where_the_command_uses_it(tmp_path):
    # no .env (kept out of Git): the template's values are what `cp .env.example .env` runs with, but a
    # reader fixes the command, and nothing reads the template itself
    (tmp_path / "compose.yaml").write_text(
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.26.0\n"
        "    command: --model Qwen/Qwen3-8B --max-model-len ${MAX_LEN} --max-num-seqs ${SEQS:-64}\n"
        "    environment:\n      - VLLM_USE_V1=${USE_V1}\n    gpus: all\n    ipc: host\n")
    (tmp_path / ".env.template").write_text("# copy to .env\nMAX_LEN=131072\nUSE_V1=0\n")
    result = lint([tmp_path], load_config(tmp_path))
    placed = {f.code: (f.location.path, f.location.line, f.location.column) for f in result.findings}
    assert placed["CFG207"] == ("compose.yaml", 4, 52)  # ${MAX_LEN}
    assert placed["CFG108"] == ("compose.yaml", 6, 9)  # VLLM_USE_V1=${USE_V1}
    too_long = next(f for f in result.findings if f.code == "CFG207")
    assert (too_long.related[0].path, too_long.related[0].line) == (".env.template", 2)
    assert not [f for f in result.findings if f.location.path == ".env.template"]


def test_a_dist_env_template_gives_the_values_as_the_example_does():
    """``.env-dist`` / ``.env.dist`` are the same committed template as ``.env.example``: an image variable
    whose only value is there is read (CFG302 on its rolling tag)."""
    folder = FIXTURES / "formats" / "env-dist-template"
    _, models = collect([folder], load_config(folder))
    assert [m.image.value for m in models] == ["vllm/vllm-openai:latest"]
    result = lint([folder], load_config(folder))
    assert [(f.code, f.location.line) for f in result.findings if f.code == "CFG302"] == [("CFG302", 4)]


def test_a_built_service_is_checked_at_its_dockerfiles_from(tmp_path):
    """A compose service with ``build:`` and no ``image:`` runs what its Dockerfile's final FROM gives:
    a rolling base tag is CFG302 at that FROM line; a FROM naming an earlier stage is no image."""
    (tmp_path / "compose.yaml").write_text(
        "services:  # vllm\n  chat:\n    build:\n      context: .\n      dockerfile: engine.Dockerfile\n"
        "    command: [\"--model\", \"Qwen/Qwen3-8B\"]\n    gpus: all\n", encoding="utf-8")
    (tmp_path / "engine.Dockerfile").write_text("FROM vllm/vllm-openai:latest\nRUN pip install flashinfer-python\n",
                                                encoding="utf-8")
    (rolling,) = lint([tmp_path / "compose.yaml"], load_config(tmp_path), select=["CFG302"]).findings
    assert _at(rolling) == ("engine.Dockerfile", 1, 6) and "base image of the Dockerfile" in rolling.message
    (tmp_path / "engine.Dockerfile").write_text("FROM vllm/vllm-openai:v0.26.0 AS base\nFROM base\n", encoding="utf-8")
    assert not lint([tmp_path / "compose.yaml"], load_config(tmp_path), select=["CFG302"]).findings


BUILD_ARGS = FIXTURES / "formats" / "compose-build-arg-version"


def test_a_build_argument_from_the_env_template_gives_the_engine_version():
    """``FROM vllm/vllm-openai:${VLLM_VERSION}`` built with ``args: [VLLM_VERSION=${VLLM_VERSION}]`` (list
    form) and ``SGLANG_VERSION: ${SGLANG_VERSION}`` (map form, over the ARG's default), the values in
    .env.example: the engine versions are those, so 0.8.2's flags are checked (``--task generate``
    exists there: no CFG104), and each FROM is a tag without digest (CFG301 at its line)."""
    _, models = collect([BUILD_ARGS], load_config(BUILD_ARGS))
    versions = {m.name: (m.engine, m.engine_version, m.engine_version_confidence) for m in models}
    assert versions == {"vllm": ("vllm", "0.8.2", "exact"), "sglang": ("sglang", "0.4.4", "exact")}
    result = lint([BUILD_ARGS], load_config(BUILD_ARGS))
    assert not [f for f in result.findings if f.code in ("CFG103", "CFG104", "CFG302")]
    pins = sorted((f.location.path, f.location.line, f.severity) for f in result.findings if f.code == "CFG301")
    assert pins == [("Dockerfile", 3, "note"), ("sglang/Dockerfile", 3, "note")]


def test_an_arg_default_gives_the_version_without_a_build_argument(tmp_path):
    (tmp_path / "compose.yaml").write_text(
        "services:  # vllm\n  chat:\n    build: .\n    command: [\"--model\", \"Qwen/Qwen3-8B\", \"--task\", \"generate\"]\n"
        "    gpus: all\n", encoding="utf-8")
    (tmp_path / "Dockerfile").write_text("ARG VERSION=v0.8.2\nFROM vllm/vllm-openai:${VERSION}\n", encoding="utf-8")
    _, (model,) = collect([tmp_path], load_config(tmp_path))
    assert model.engine_version == "0.8.2" and model.base_image.location.line == 2
    (tmp_path / "Dockerfile").write_text("ARG VERSION\nFROM vllm/vllm-openai:${VERSION}\n", encoding="utf-8")
    _, (model,) = collect([tmp_path], load_config(tmp_path))
    assert model.engine_version is None  # no value anywhere: not guessed


def test_a_version_1_layout_file_is_compose_and_a_helm_values_file_is_not():
    """docker-compose 1.x: each service is a top-level key, no ``services:``. Its engine is read and
    checked. A Helm values file is not compose: its ``image`` is a map, or it is not named as compose files are."""
    folder = FIXTURES / "formats" / "compose-v1-layout"
    _, models = collect([folder], load_config(folder))
    (vllm,) = models  # webui runs no engine
    assert vllm.name == "vllm" and vllm.model.value == "Qwen/Qwen2.5-7B-Instruct" and vllm.gpus.value == 1
    assert vllm.image.source == "vllm.image"  # the key path has no `services.`
    result = lint([folder], load_config(folder))
    placed = {(f.code, f.location.line) for f in result.findings}
    assert {("CFG302", 3), ("CFG303", 5)} <= placed
    values = FIXTURES / "formats" / "helm-values-not-compose"
    assert collect([values], load_config(values))[1] == []


def test_a_model_variable_the_env_template_leaves_empty_vanishes_and_vllm_serves_its_default():
    """``command: vllm serve ${MODEL_DIR_PATH}`` with ``MODEL_DIR_PATH=`` in the committed template:
    compose splits the string after interpolating it, so the word is gone and vLLM serves its default
    model (CFG110, at the word); the argument list is otherwise complete. The served model's record names
    the model as written."""
    folder = FIXTURES / "formats" / "model-as-written"
    chat = {m.name: m for m in collect([folder], load_config(folder))[1]}["chat"]
    assert chat.model is None and "model" not in chat.settings
    assert [t.text for t in chat.argv] == ["--port", "8000", "--max-model-len", "8192"]
    assert chat.model_unset.text == "${MODEL_DIR_PATH}" and _at(chat.model_unset) == ("docker-compose.yml", 6, 25)
    assert estimate(chat, {}).model == "${MODEL_DIR_PATH}"
    result = lint([folder], load_config(folder), select=["CFG110"])
    (finding,) = result.findings
    assert (_at(finding), finding.severity) == (("docker-compose.yml", 6, 25), "warning")
    assert "${MODEL_DIR_PATH} is set to nothing at .env.example:2" in finding.message
    assert "facebook/opt-125m" in finding.message  # vLLM 0.9's default


def test_an_engine_image_with_no_command_beside_another_compose_file_may_get_its_command_there(tmp_path) -> None:
    """The vLLM image run with no command serves vLLM's default model (CFG110), unless the folder holds
    another compose file: compose merges ``docker-compose.override.yml`` by itself, and a project passes a
    per-instance file (or a template that generates it) with ``-f``, either of which may give the command."""
    from cfgcheck.config import Config
    from helpers import make_repo

    base = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.26.0\n    ipc: host\n"
    override = "services:\n  vllm:\n    command: [\"--model\", \"Qwen/Qwen3-8B\"]\n"

    def codes(files: dict[str, str]) -> list[str]:
        repo = make_repo(tmp_path / str(len(list(tmp_path.iterdir()))), files)
        return [f.code for f in lint([repo], Config(repo)).findings if f.code == "CFG110"]

    assert codes({"docker-compose.yml": base}) == ["CFG110"]
    assert codes({"docker-compose.yml": base, "docker-compose.override.yml": override}) == []
    assert codes({"docker-compose.yml": base, "docker-compose.instance.yaml": "#@ load(\"@ytt:data\", \"data\")\n"}) == []
    assert codes({"docker-compose.yml": base, "README.md": "compose me\n"}) == ["CFG110"]


def test_an_env_template_without_the_leading_dot_gives_the_build_argument(tmp_path) -> None:
    """``env-example`` (or ``env.example``) beside the compose file is the committed template as ``.env.example``
    is: its ``VLLM_VERSION`` is the build argument the Dockerfile's ``FROM`` takes, so the engine version is
    that release's and a script the service mounts is checked against it (``--task`` exists in 0.8.2)."""
    from cfgcheck.config import Config
    from helpers import make_repo

    for template in ("env-example", "env.example"):
        repo = make_repo(tmp_path / template, {
            "docker-compose.yml": "services:\n  llm:\n    build:\n      context: ./vllm\n      args:\n"
                                  "        - VLLM_VERSION=${VLLM_VERSION}\n"
                                  "    entrypoint: [\"/bin/bash\", \"/scripts/start_vllm.sh\"]\n"
                                  "    volumes:\n      - ./scripts:/scripts\n",
            template: "VLLM_VERSION=v0.8.2\n",
            "vllm/Dockerfile": "ARG VLLM_VERSION\nFROM vllm/vllm-openai:${VLLM_VERSION}\n",
            "scripts/start_vllm.sh": "#!/bin/bash\nvllm serve Qwen/Qwen2.5-7B-Instruct --task generate\n"})
        result = lint([repo], Config(repo))
        assert [(m.engine_version, m.engine_version_confidence) for m in result.models] == [("0.8.2", "exact")]
        assert "CFG104" not in {f.code for f in result.findings}
        assert ("CFG301", "vllm/Dockerfile", 2) in {(f.code, f.location.path, f.location.line) for f in result.findings}
