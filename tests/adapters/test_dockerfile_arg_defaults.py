"""ARG defaults that reference other ARGs (``ARG BASE=nvidia/cuda:${CUDA_VERSION}-devel-ubuntu${UBUNTU}``)
resolved in ``FROM ${BASE}``: the image the Dockerfile runs is known, so CFG301 notes its tag without a
digest; an ARG whose references are unknown or empty stays unknown, and an ENV value is never filled in."""

from __future__ import annotations

from cfgcheck.adapters.launch.dockerfile import final_stage, from_image, parse
from cfgcheck.config import Config
from cfgcheck.lint import lint

DOCKERFILE = """\
ARG CUDA_VERSION=12.8.0
ARG UBUNTU_VERSION=22.04
ARG BASE_CUDA_DEV_CONTAINER=nvidia/cuda:${CUDA_VERSION}-devel-ubuntu${UBUNTU_VERSION}
ARG BASE_CUDA_RUN_CONTAINER=nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu${UBUNTU_VERSION}
FROM ${BASE_CUDA_DEV_CONTAINER} AS build
RUN echo build
FROM ${BASE_CUDA_RUN_CONTAINER} AS runtime
RUN pip install vllm==0.10.1
CMD ["vllm", "serve", "Qwen/Qwen3-8B"]
"""


def test_arg_defaults_referencing_args_resolve_in_from(tmp_path):
    (tmp_path / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    result = lint([tmp_path], Config(tmp_path, {}))
    (model,) = result.models
    assert model.image.value == "nvidia/cuda:12.8.0-runtime-ubuntu22.04" and model.image.location.line == 7
    (note,) = [f for f in result.findings if f.code == "CFG301"]
    assert (note.location.line, note.location.column) == (7, 6) and "12.8.0-runtime-ubuntu22.04" in note.message


def test_unknown_or_empty_references_stay_unknown():
    unknown = "ARG CUDA_VERSION\nARG BASE=nvidia/cuda:${CUDA_VERSION}-runtime\nFROM ${BASE}\n"
    empty = "ARG CUDA_VERSION=\nARG BASE=nvidia/cuda:${CUDA_VERSION}-runtime\nFROM ${BASE}\n"
    assert from_image(final_stage(unknown)) == "${BASE}" and from_image(final_stage(empty)) == "${BASE}"
    built = parse("Dockerfile", DOCKERFILE, {"CUDA_VERSION": "12.4.1"})  # a build argument given replaces the default
    assert built.image == "nvidia/cuda:12.4.1-runtime-ubuntu22.04"  # BASE takes the given value, as docker build does
    env = final_stage("FROM python:3.12\nARG MODEL_NAME=\nENV MODEL=$MODEL_NAME\nARG SEQS=8\nARG ARGS=--max-num-seqs=${SEQS}\n")
    assert env["variables"]["MODEL"] is None and env["variables"]["ARGS"] == "--max-num-seqs=8"
