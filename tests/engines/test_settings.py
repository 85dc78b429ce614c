"""The settings vocabulary: one declaration per setting, one parser per type, checked against the
engines' own catalogs; and the human-size bug it fixed (``1.5g`` and ``1500m`` are the same bytes)."""

from __future__ import annotations

import json

import pytest

from cfgcheck import settings, stale
from cfgcheck.adapters.core import registry
from cfgcheck.adapters.formats import kserve, llmkube, production_stack, vllm_runtime
from cfgcheck.engines import catalog, value_types
from cfgcheck.engines.argv import apply_argv
from cfgcheck.model import ArgToken, Location, ServedModel
from helpers import lint_text

GiB = 2**30
HUMAN_TYPES = {"human-readable-int", "human-readable-int-or-auto", "si-iec-int"}



def _deployment(kv_cache_bytes: str) -> str:
    """A one-GPU vLLM Deployment (as JSON, which YAML reads) with ``--kv-cache-memory-bytes``."""
    container = {"name": "vllm", "image": "vllm/vllm-openai:v0.10.2",
                 "args": ["--model", "Qwen/Qwen2.5-7B-Instruct", "--kv-cache-memory-bytes", kv_cache_bytes],
                 "resources": {"limits": {"nvidia.com/gpu": 1}}}
    return json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "m"},
                       "spec": {"template": {"spec": {"containers": [container]}}}}, indent=1)


def test_decimal_and_integer_spellings_of_one_size_give_the_same_finding(tmp_path):
    # the bug this guards: 1500m gave CFG202 (a 1.40 GiB pool is too small) and 1.5g gave nothing
    found = {}
    for size in ("1500m", "1.5g", "1500000000"):
        result = lint_text(tmp_path / size, _deployment(size))
        found[size] = [(f.code, f.message) for f in result.findings if f.code == "CFG202"]
    assert found["1500m"] and "26,144 tokens" in found["1500m"][0][1]
    assert found["1500m"] == found["1.5g"] == found["1500000000"]


@pytest.mark.parametrize("text, value", [
    ("32k", 32_000), ("32K", 32_768), ("1.5g", 1_500_000_000), ("1500m", 1_500_000_000), ("4G", 4 * GiB),
    ("25.6k", 25_600), ("2t", 2 * 10**12), ("1T", 2**40), (" 7 ", 7), ("-1", -1), ("1_000", 1_000),
])
def test_vllm_size_follows_human_readable_int(text, value):
    assert settings.vllm_size(text) == value


@pytest.mark.parametrize("text, reason", [
    ("1.5G", "decimals are not allowed with binary suffix G (use 1.5g)"),
    ("4GiB", "expects an integer"), ("32 k", "expects an integer"), ("x", "expects an integer"),
    ("9" * 400 + "k", "is too large"), ("9" * 5000, "expects an integer"),
])
def test_vllm_size_refuses_what_vllm_refuses(text, reason):
    with pytest.raises(ValueError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        settings.vllm_size(text)


@pytest.mark.parametrize("text, value", [
    ("1k", 1_000), ("1M", 1_000_000), ("2.5G", 2_500_000_000), ("1Ki", 1_024), ("4Gi", 4 * GiB), ("128", 128),
])
def test_sglang_size_follows_its_si_and_iec_suffixes(text, value):
    assert settings.sglang_size(text) == value


@pytest.mark.parametrize("text", ["1K", "1m", "1.5Ki", "4GiB", "32g"])
def test_sglang_size_is_case_sensitive_and_refuses_iec_decimals(text):
    with pytest.raises(ValueError):
        settings.sglang_size(text)


@pytest.mark.parametrize("kind, parser", [("human-readable-int", settings.vllm_size),
                                          ("si-iec-int", settings.sglang_size)])
@pytest.mark.parametrize("text", ["32k", "32K", "1.5g", "1.5G", "1Ki", "4GiB", "17", "x"])
def test_catalog_validators_use_the_same_parsers(kind, parser, text):
    checked = value_types.convert(kind, text)
    try:
        assert checked == parser(text)
    except ValueError as refused:
        assert isinstance(checked, value_types.Invalid) and checked.reason == str(refused)


def _catalog_types(engine: str) -> dict[str, set]:
    types: dict[str, set] = {}
    for spec in catalog.every_spec(engine):
        types.setdefault(spec.dest, set()).add(spec.type)
    return types


@pytest.mark.parametrize("engine", ["vllm", "sglang", "tokenspeed"])
def test_declared_dests_and_types_match_the_engine_catalogs(engine):
    types = _catalog_types(engine)
    for setting in settings.SETTINGS:
        for dest in setting.dests.get(engine, ()):
            assert dest in types, f"{engine} has no option with dest {dest} ({setting.name})"
            human = bool(types[dest] & HUMAN_TYPES)
            if setting.type == settings.SIZE:
                assert human == (engine in ("vllm", "sglang")), (engine, dest, types[dest])
            elif setting.type == settings.INT:
                assert types[dest] == {"int"}, (engine, dest, types[dest])
            elif setting.type == settings.FLOAT:
                assert types[dest] == {"float"}, (engine, dest, types[dest])


# each operator format's typed-field tables (declared with its adapter) and the engine they start
FORMAT_ENGINES = {(llmkube, "spec.vllmConfig"): "vllm", (llmkube, "spec.sglangConfig"): "sglang",
                  (production_stack, "servingEngineSpec.modelSpec[].vllmConfig"): "vllm",
                  (vllm_runtime, "spec.model"): "vllm", (vllm_runtime, "spec.vllmConfig"): "vllm",
                  (kserve, "spec.parallelism"): "vllm"}


@pytest.mark.parametrize("operator_format, engine", FORMAT_ENGINES.items(),
                         ids=[f"{module.__name__.rsplit('.', 1)[-1]}:{place}" for module, place in FORMAT_ENGINES])
def test_operator_fields_emit_a_flag_that_means_their_setting(operator_format, engine):
    module, place = operator_format
    fields = module.OPERATOR_FIELDS[place]
    assert fields
    engine_catalog = catalog.catalog_for(engine, None)
    for field_name, (flag, name) in fields.items():
        option = engine_catalog.resolve(flag).spec  # as argparse resolves it (LLMKube's --tp abbreviates --tp-size)
        assert option is not None, (operator_format, field_name, flag)
        assert settings.canonical_name(engine, option.dest) == name, (operator_format, field_name, option.dest)


def test_operator_fields_are_declared_with_their_adapter_and_found_through_the_registry():
    """The vocabulary keeps the canonical settings; each operator format declares its typed fields
    (``OPERATOR_FIELDS``), each naming one of them, and the registry hands every table to who asks
    (stale comments, which look for every name of a changed setting)."""
    assert not hasattr(settings.SettingDef("x", settings.INT, "x"), "fields")
    tables = registry.operator_fields()
    assert len(tables) == sum(len(module.OPERATOR_FIELDS) for module in (llmkube, production_stack, vllm_runtime, kserve))
    assert all(name in settings.BY_NAME for table in tables for _, name in table.values())
    assert llmkube.TYPED_FIELDS["sglang"] == ("sglangConfig", llmkube.OPERATOR_FIELDS["spec.sglangConfig"])
    assert llmkube.TYPED_FIELDS["sglang"][1]["tensorParallelSize"] == ("--tp", "tensor_parallel_size")
    assert production_stack.VLLM_CONFIG_FIELDS["maxNumSeqs"] == ("--max-num-seqs", "max_num_seqs")
    assert vllm_runtime.MODEL_FIELDS["enableLoRA"] == ("--enable-lora", "enable_lora")
    assert kserve.PARALLELISM["dataLocal"] == ("--data-parallel-size-local", "data_parallel_size_local")
    assert {"maxNumSeqs", "maxRunningRequests"} <= set(stale.spellings("max_num_seqs", "vllm", []))


def test_the_vocabulary_tables():
    assert settings.flag("llama.cpp", "max_model_len") == "--ctx-size" and settings.flag("sglang", "gpu_layers") is None
    assert settings.KEY_SETTINGS[:2] == ("max_model_len", "max_num_seqs")
    assert "max_num_batched_tokens" in settings.COMMON_SETTINGS
    assert "max_num_batched_tokens" not in settings.KEY_SETTINGS


def _flags(engine: str, version: str | None, *texts: str) -> ServedModel:
    model = ServedModel("m", "Deployment", "c.yaml", 0, Location("c.yaml", 1, 1))
    model.engine, model.engine_version = engine, version
    apply_argv(model, [ArgToken(text, Location("c.yaml", 1, 1 + index), ()) for index, text in enumerate(texts)])
    return model


@pytest.mark.parametrize("engine, version, argv, name, value", [
    ("vllm", "0.10.2", ("--kv-cache-memory-bytes", "1.5g"), "kv_cache_memory_bytes", 1_500_000_000),
    ("vllm", "0.10.2", ("--max-model-len", "32K"), "max_model_len", 32_768),
    ("vllm", "0.10.2", ("--max-num-seqs", "1k"), "max_num_seqs", "1k"),  # int(): vLLM refuses it
    ("sglang", None, ("--context-length", "32k"), "max_model_len", 32_000),
    ("sglang", None, ("--max-running-requests", "1k"), "max_num_seqs", "1k"),
    ("tokenspeed", None, ("--max-total-tokens", "1k"), "max_total_tokens", "1k"),  # a plain int there
    ("tokenspeed", None, ("--max-model-len", "4096"), "max_model_len", 4096),
    ("llama.cpp", None, ("-c", "8192", "-np", "4"), "max_num_seqs", 4),
    ("vllm", "0.26.0", ("-O3",), "optimization_level", "3"),  # a short option's attached value, not True
])
def test_flags_are_parsed_by_the_engines_own_converter(engine, version, argv, name, value):
    assert _flags(engine, version, *argv).value(name) == value


def test_production_stack_typed_fields_are_parsed_as_vllm_parses_the_rendered_flag(tmp_path):
    values = """\
servingEngineSpec:
  modelSpec:
    - name: llama
      repository: vllm/vllm-openai
      tag: v0.10.2
      modelURL: Qwen/Qwen2.5-7B-Instruct
      vllmConfig: {maxModelLen: "32k", maxNumSeqs: "64", gpuMemoryUtilization: "0.9", dtype: "bfloat16"}
"""
    (model,) = lint_text(tmp_path, values, "values.yaml").models
    assert model.value("max_model_len") == 32_000 and model.value("max_num_seqs") == 64
    assert model.value("gpu_memory_utilization") == 0.9 and model.value("dtype") == "bfloat16"
