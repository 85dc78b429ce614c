"""Which image tags roll: rolling words, variant aliases of numbered builds, and per-commit builds."""

from __future__ import annotations

import pytest

from cfgcheck.engines.images import ASSUMED, image_engine, parse_image


@pytest.mark.parametrize(("text", "rolling"), [
    ("vllm/vllm-openai:nightly", True),
    ("vllm/vllm-openai:nightly-20250101", True),  # a date stamp is no commit: the tag may be pushed again
    ("vllm/vllm-openai:nightly-4f1e2d3c5b6a79808a9b0c1d2e3f405162738495", False),
    ("vllm/vllm-openai:nightly-4f1e2d3", False),
    ("ghcr.io/ggml-org/llama.cpp:server-cuda", True),
    ("ghcr.io/ggml-org/llama.cpp:full-cuda", True),
    ("ghcr.io/ggml-org/llama.cpp:server", True),
    ("ghcr.io/ggml-org/llama.cpp:server-cuda-b6123", False),
    ("ghcr.io/ggerganov/llama.cpp:server-b4719", False),
])
def test_rolling(text: str, rolling: bool) -> None:
    assert parse_image(text).rolling is rolling


def test_commit_build_assumes_a_version_and_says_so() -> None:
    ref = parse_image("vllm/vllm-openai:nightly-4f1e2d3c5b6a79808a9b0c1d2e3f405162738495")
    assert ref.commit_build
    engine = image_engine(ref)
    assert (engine.engine, engine.version, engine.confidence) == ("vllm", None, ASSUMED)


def test_llamacpp_build_number_is_read() -> None:
    engine = image_engine(parse_image("ghcr.io/ggml-org/llama.cpp:server-cuda-b6123"))
    assert (engine.engine, engine.version) == ("llama.cpp", "6123")


def test_an_application_beside_an_engine_is_no_engine() -> None:
    """A client, UI, proxy, router or benchmark image names the engine it talks to: no engine is read
    from its name; an image whose name only holds those letters inside a word still is."""
    from cfgcheck.engines.images import image_engine, parse_image

    for text in ("quay.io/example/vllm-client:latest", "example/vllm-router:1.0", "example/sglang_bench:2",
                 "example/vllm-ui:latest", "example/llamacpp-proxy:3"):
        assert image_engine(parse_image(text)).engine is None, text
    assert image_engine(parse_image("example/vllm-server:latest")).engine == "vllm"
    assert image_engine(parse_image("example/clientele-vllm:1")).engine == "vllm"
