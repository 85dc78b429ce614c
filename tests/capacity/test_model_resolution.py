"""How a served model id is matched to the bundled table, and that every non-exact match is stated."""

from __future__ import annotations

import json

import pytest

from cfgcheck import capacity as cap
from cfgcheck.capacity.report import render_capacity
from cfgcheck.capacity.architecture import unknown_model_reason
from cfgcheck.capacity.local_configs import lookup_architecture
from tests.capacity.test_capacity import ctx, rule, served, setting


@pytest.mark.parametrize("model_id", ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct",
                                      "hf://meta-llama/Llama-3.1-8B-Instruct@main",
                                      "/data/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/abc"])
def test_ids_of_the_table_resolve_exactly(model_id):
    arch = lookup_architecture(model_id)
    assert arch is not None and arch.resolution is None and not arch.assumed


def test_case_difference_is_stated_but_not_an_assumption():
    arch = lookup_architecture("meta-llama/llama-3.1-8b-instruct")
    assert not arch.assumed
    assert "matched meta-llama/Llama-3.1-8B-Instruct without regard to case" in arch.resolution


@pytest.mark.parametrize("model_id,says", [
    ("/models/Qwen2.5-14B-Instruct", "the local path /models/Qwen2.5-14B-Instruct is read as Qwen/Qwen2.5-14B-Instruct"),
    ("/root/.cache/neuron/meta-llama/Llama-3.1-8B-Instruct", "read as meta-llama/Llama-3.1-8B-Instruct (its last segments"),
    ("pvc://models/Qwen2.5-14B-Instruct", "is read as Qwen/Qwen2.5-14B-Instruct"),
    ("Llama-3.1-8B-Instruct", "names no organisation: read as meta-llama/Llama-3.1-8B-Instruct"),
    ("someone/Llama-3.1-8B-Instruct", "no entry for that organisation, meta-llama/Llama-3.1-8B-Instruct has the same name"),
    ("Qwen/Qwen3-8B-Instruct", "read as Qwen/Qwen3-8B (the same name without its suffix)"),
])
def test_name_matches_are_stated_assumptions(model_id, says):
    arch = lookup_architecture(model_id)
    assert arch is not None and arch.assumed
    assert says in arch.resolution


def test_a_quantized_build_is_stated_with_its_base_but_not_assumed():
    arch = lookup_architecture("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic")
    assert not arch.assumed and arch.weight_bits == 8.0
    assert "a quantized build of meta-llama/Llama-3.3-70B-Instruct" in arch.resolution
    assert lookup_architecture("/models/qwen2.5-14b-instruct-awq").assumed  # a local path still is


def test_gguf_file_names_resolve_to_their_model_with_the_gguf_bits():
    arch = lookup_architecture("/models/Qwen2.5-14B-Instruct-Q4_K_M.gguf")
    assert arch.assumed and "read as Qwen/Qwen2.5-14B-Instruct" in arch.resolution
    assert arch.weight_bits == 4.5  # ggml block_q4_0: 18 bytes per 32 weights
    assert lookup_architecture("/m/Qwen2.5-14B-Instruct-Q8_0.gguf").weight_bits == 8.5


def test_a_local_path_is_never_read_from_its_first_segments():
    # the last two segments are tried as org/name: "hub/models" must not match anything by accident
    assert lookup_architecture("/mnt/models") is None
    assert lookup_architecture("/model-cache/path/to/model") is None


def test_resolution_reaches_the_capacity_reasons():
    est = cap.estimate(served("/models/Qwen2.5-14B-Instruct", gpu_product="NVIDIA-H100-80GB-HBM3"), {})
    assert est.kv_pool_tokens and any("is read as Qwen/Qwen2.5-14B-Instruct" in r for r in est.reasons)
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", gpu_product="NVIDIA-H100-80GB-HBM3"), {})
    assert not any("read as" in r for r in est.reasons)


def test_served_model_name_is_not_read_as_the_model():
    m = served("/mnt/models", gpu_product="NVIDIA-H100-80GB-HBM3",
               settings=[setting("served_model_name", "meta-llama/Llama-3.1-8B-Instruct", 9)])
    est = cap.estimate(m, {})
    assert est.kv_pool_tokens is None and est.architecture is None
    (why,) = [r for r in est.reasons if "/mnt/models" in r]
    assert "a local path whose last segments name no model in the bundled table" in why
    assert "its --served-model-name is a name for clients, which cfgcheck does not read as the model" in why
    assert "meta-llama/Llama-3.1-8B-Instruct" not in why  # never echoed: a file may put a secret there


def test_every_gpu_identified_model_without_a_pool_says_why():
    rows = [served(m, gpu_product="NVIDIA-H100-80GB-HBM3") for m in
            ("/mnt/models", "acme/unknown-7b", "${MODEL}", None)]
    doc = json.loads(render_capacity(rows, {}, "json"))
    for row in doc["models"]:
        assert row["gpu"] and row["kv_pool_tokens"] is None
        assert row["reasons"], row
    by_model = {row["model"]: " ".join(row["reasons"]) for row in doc["models"]}
    assert "not in the bundled table; put its config.json under model_configs/acme/unknown-7b/" in by_model["acme/unknown-7b"]
    assert "model set from a variable" in by_model["${MODEL}"]
    assert "model not stated" in by_model[None]
    text = render_capacity(rows, {}, "text")
    assert "name no model in the bundled table" in text


def test_unknown_reason_for_a_hub_id_and_a_path():
    assert "--online" in unknown_model_reason("acme/foo")
    assert "model_configs/foo/" in unknown_model_reason("/data/foo")


def test_an_assumed_model_lowers_the_severity_of_the_pool_and_length_rules():
    length = setting("max_model_len", 131072, 7)
    exact = served("meta-llama/Llama-3.1-8B-Instruct", gpu_product="Tesla-T4", settings=[length])
    (f,) = rule("context_exceeds_kv_pool").check(exact, ctx())
    assert f.severity == ""
    local = served("/models/Llama-3.1-8B-Instruct", gpu_product="Tesla-T4", settings=[length])
    (f,) = rule("context_exceeds_kv_pool").check(local, ctx())
    assert f.severity == "warning" and "assumed: the local path /models/Llama-3.1-8B-Instruct" in f.message
    too_long = [setting("max_model_len", 10**6, 7)]
    (f,) = rule("context_exceeds_model_max").check(served("/models/Qwen2.5-14B-Instruct", settings=too_long), ctx())
    assert f.severity == "warning" and "assumed:" in f.message
    (f,) = rule("context_exceeds_model_max").check(served("Qwen/Qwen2.5-14B-Instruct", settings=too_long), ctx())
    assert f.severity == ""
