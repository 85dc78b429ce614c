"""The effective-facts layer (``cfgcheck.effective``): each setting's value in its unit and its source, the same
objects the capacity estimate read, worked out once per served model and run; and the parallel layout."""

from __future__ import annotations

import pytest

from cfgcheck import capacity, settings
from cfgcheck.context import RuleContext
from cfgcheck.effective import DEFAULT, DERIVED, MEMORY_FRACTION, UNKNOWN, WRITTEN, Facts, topology
from tests.capacity.test_capacity import loc, served, setting

H100 = capacity.lookup_gpu("H100")


def test_a_written_value_is_typed_in_its_unit_and_located() -> None:
    model = served("Qwen/Qwen3-8B", settings=[setting("gpu_memory_utilization", "0.85", 9),
                                              setting("max_model_len", "32768", 10)])
    facts = Facts(model)
    fraction, length = facts.get("gpu_memory_utilization"), facts.get("max_model_len")
    assert (fraction.value, fraction.unit, fraction.source, fraction.location) == (0.85, settings.FRACTION, WRITTEN, loc(9))
    assert (length.value, length.unit) == (32768, settings.TOKENS)
    assert fraction.describe() == "written"


def test_a_variable_or_a_word_is_unknown_with_the_reason() -> None:
    model = served("m/x", settings=[setting("gpu_memory_utilization", "$(UTIL)", 9), setting("max_num_seqs", "many", 10)])
    facts = Facts(model)
    assert (facts.get(MEMORY_FRACTION).source, facts.get(MEMORY_FRACTION).how) == (UNKNOWN, "set from a variable")
    assert facts.get("max_num_seqs").how == "'many' is no sequences value"
    assert facts.default("max_num_seqs").at_least == 256  # what an unset window would be on any GPU


@pytest.mark.parametrize("engine, version, vision, expected, words", [
    ("vllm", "0.19.1", False, 0.9, "default of vLLM 0.19.1"),
    ("vllm", "0.26.0", False, 0.92, "default of vLLM 0.26.0"),
    ("vllm", None, False, 0.92, "default of the newest vLLM (version not known)"),
    ("tokenspeed", "0.1.1", False, 0.95, "default of TokenSpeed 0.1.1"),
    ("tokenspeed", "0.1.1", True, 0.9, "default of TokenSpeed 0.1.1"),
])
def test_an_unset_fraction_is_the_default_of_that_engine_and_version(engine, version, vision, expected, words) -> None:
    facts = Facts(served("m/x", engine=engine, version=version))
    facts.arch = capacity.lookup_architecture("microsoft/Phi-3.5-vision-instruct" if vision else "Qwen/Qwen3-8B")
    fact = facts.get(MEMORY_FRACTION)
    assert (fact.name, fact.value, fact.source, fact.describe()) == ("gpu_memory_utilization", expected, DEFAULT, words)


def test_sglang_derives_its_fraction_from_the_gpu_and_the_ranks() -> None:
    one, two = served("m/x", engine="sglang", version="0.5.23"), served(
        "m/x", engine="sglang", version="0.5.23", settings=[setting("tensor_parallel_size", 2, 9)])
    assert Facts(one).get(MEMORY_FRACTION).source == UNKNOWN  # no GPU: the derivation waits for one
    fact = Facts(one, H100).get(MEMORY_FRACTION)
    assert (fact.name, fact.value, fact.source, fact.gpu) == ("mem_fraction_static", 0.842, DERIVED, "H100-80GB")
    assert fact.describe() == "derived on H100-80GB from its memory at TP 1"
    assert Facts(two, H100).get(MEMORY_FRACTION).value < fact.value  # each rank reserves its share


def test_the_sequence_window_by_engine() -> None:
    vllm = Facts(served("m/x"), H100).get("max_num_seqs")
    assert (vllm.value, vllm.source, vllm.gpu) == (1024, DEFAULT, "H100-80GB")
    plain = Facts(served("m/x", engine="tokenspeed", version="0.1.1")).get("max_num_seqs")
    speculative = Facts(served("m/x", engine="tokenspeed", version="0.1.1",
                               argv=["--speculative-algorithm", "EAGLE"])).get("max_num_seqs")
    assert (plain.value, speculative.value) == (160, 80)
    sglang = Facts(served("m/x", engine="sglang", version="0.5.23"), H100)
    assert sglang.get("max_num_seqs").source == UNKNOWN  # from the pool, not known yet
    sglang.settle(1_000_000, 32_768)
    assert (sglang.get("max_num_seqs").value, sglang.get("max_num_seqs").source) == (4096, DERIVED)
    assert Facts(served("m/x", engine="llama.cpp", version=None)).get("max_num_seqs").source == UNKNOWN


def test_port_and_host_come_from_the_version_parser() -> None:
    facts = Facts(served("m/x", engine="sglang", version="0.5.23"))
    port, host = facts.get("port"), facts.get("host")
    assert (port.value, port.unit, port.source, host.value, host.unit) == (30000, "port", DEFAULT, "127.0.0.1", "address")
    written = served("m/x", settings=[setting("port", "8080", 9)])
    assert Facts(written).get("port").value == 8080


def test_another_version_of_the_same_served_model() -> None:
    facts = Facts(served("m/x", version="0.26.0"), H100)
    assert (facts.at("0.19.1").default(MEMORY_FRACTION).value, facts.default(MEMORY_FRACTION).value) == (0.9, 0.92)
    assert facts.at("0.7.3").default("max_num_seqs").value == 256  # before the usage-context tiers


def test_the_rules_read_the_facts_the_estimate_read_once() -> None:
    model = served("Qwen/Qwen3-8B", engine="sglang", version="0.5.23", gpu_product="NVIDIA-H100-80GB-HBM3")
    config: dict = {}  # one run: every rule's context holds the same configuration
    ctx = RuleContext({}, config)
    estimate = ctx.capacity(model)
    fact = ctx.effective(model, MEMORY_FRACTION)
    assert fact is ctx.effective(model, "mem_fraction_static") is estimate.facts.get(MEMORY_FRACTION)
    assert estimate.gpu_memory_utilization == fact.value == 0.842
    assert RuleContext({"other": 1}, config).facts(model) is estimate.facts  # another rule, the same run
    seqs = ctx.effective(model, "max_num_seqs")
    assert (seqs.source, seqs.value) == (DERIVED, estimate.max_num_seqs)


def test_topology() -> None:
    model = served("m/x", engine="sglang", settings=[setting("tensor_parallel_size", "4", 9),
                                                     setting("pipeline_parallel_size", 2, 10),
                                                     setting("expert_parallel_size", 8, 11)], gpus=4)
    layout = topology(model)
    assert (layout.tp, layout.pp, layout.ep, layout.world, layout.gpus, layout.ranks_here, layout.nodes) == \
        (4, 2, 8, 8, 4, 4, 1)
    assert topology(model) is layout
    vllm = served("m/x", settings=[setting("tensor_parallel_size", 2, 9), setting("data_parallel_size", 2, 10),
                                   setting("enable_expert_parallel", True, 11)])
    assert topology(vllm).ep == 4  # the experts' group spans TP x DP
    assert topology(served("m/x", settings=[setting("tensor_parallel_size", "$TP", 9)])).tp == 1


def test_numbers_are_read_by_the_vocabulary_parsers() -> None:
    assert settings.as_int(" 8 ") == 8 and settings.as_int("²", 1) == 1 and settings.as_int(2.5) is None
    assert settings.int_value("0.5") == 0 and settings.int_value("inf") is None and settings.int_value(True) is None
    assert settings.float_value("0.9") == 0.9 and settings.truthy("") is True and settings.truthy(None) is None
    assert settings.human_int("4G") == 4 * 2**30 and settings.human_int(7.9) == 7 and settings.human_int("x") is None
    assert settings.typed("kv_cache_memory_bytes", "1g") == 10**9 and settings.typed("gpu_memory_utilization", 1) == 1.0
    assert settings.unit_of("max_num_seqs") == settings.SEQUENCES and settings.unit_of("tensor_parallel_size") == settings.RANKS

