"""Dockerfile shell-form ``ENTRYPOINT`` tails of ``${VAR:+--flag "$VAR"}`` words: the flags are checked (a
typo, a removed flag) at a lower severity that says they apply only when the variable is set, and never
read as settings; a compose file of the folder above that builds another Dockerfile does not hide it."""

from __future__ import annotations

from helpers import write

from cfgcheck.config import Config
from cfgcheck.lint import lint

TAIL = """\
FROM vllm/vllm-openai:latest
ENV PORT=8000
ENTRYPOINT python3 -m vllm.entrypoints.openai.api_server \\
    --port $PORT \\
    --model ${MODEL_NAME:-google/gemma-2b-it} \\
    ${REVISION:+--revision "$REVISION"} \\
    ${MAX_MODEL_LEN:+--max-model-len "$MAX_MODEL_LEN"} \\
    ${DISABLE_LOG_REQUESTS:+--disable-log-requrests} \\
    ${USE_V2_BLOCK_MANAGER:+--use-v2-block-manager} \\
    ${ENFORCE_EAGER:+--enforce-eager} \\

"""

CALLER_MODEL = """\
FROM vllm/vllm-openai:latest
ARG MODEL_NAME=
ENV MODEL_NAME=$MODEL_NAME
RUN python3 -c "from huggingface_hub import snapshot_download; snapshot_download('$MODEL_NAME')"
ENTRYPOINT python3 -m vllm.entrypoints.openai.api_server \\
    --model $MODEL_NAME \\
    --gpu-memory-utilization ${GPU_MEMORY_LIMIT:-0.95} \\
    ${MAX_MODEL_LEN:+--max-model-len "$MAX_MODEL_LEN"}
"""

COMPOSE = """\
services:
  api:
    build: ./server
    command: ["vllm", "serve", "Qwen/Qwen3-8B"]
"""


def _lint(tmp_path, files: dict[str, str]):
    write(tmp_path, files)
    return lint([tmp_path], Config(tmp_path, {}))


def test_flags_inside_if_set_expansions_are_checked_as_conditional(tmp_path):
    result = _lint(tmp_path, {"Dockerfile": TAIL})
    (model,) = result.models
    assert model.model.value == "google/gemma-2b-it"
    assert model.value("max_model_len") is None and model.value("enforce_eager") is None  # not read as set
    by_code = {f.code: f for f in result.findings if f.code in ("CFG103", "CFG104")}
    typo, removed = by_code["CFG103"], by_code["CFG104"]
    assert "--disable-log-requrests" in typo.message and typo.location.line == 8 and typo.severity == "warning"
    assert "only when DISABLE_LOG_REQUESTS is set" in typo.message
    assert "--use-v2-block-manager" in removed.message and "only when USE_V2_BLOCK_MANAGER is set" in removed.message
    assert removed.location.line == 9 and removed.severity == "warning"
    assert [f.code for f in result.findings if f.location.line == 1] == ["CFG302"]


def test_a_compose_file_that_builds_another_dockerfile_does_not_hide_these(tmp_path):
    files = {"compose.yaml": COMPOSE, "server/Dockerfile": "FROM vllm/vllm-openai:v0.10.1\n",
             "variants/Dockerfile": TAIL, "variants/model/Dockerfile": CALLER_MODEL}
    result = _lint(tmp_path, files)
    paths = sorted(m.path for m in result.models)
    assert paths == ["compose.yaml", "variants/Dockerfile", "variants/model/Dockerfile"]
    caller = next(m for m in result.models if m.path == "variants/model/Dockerfile")
    assert caller.model is None and caller.engine == "vllm"  # the model comes from the build argument
    assert ("CFG302", 1) in [(f.code, f.location.line) for f in result.findings if f.location.path == caller.path]
