"""Capacity arithmetic (KV bytes/token, pools, concurrency), lookups, and rules CFG202/203/205/207/208."""

from __future__ import annotations

import importlib
import json
import re
import statistics
import sys

import pytest
import yaml

from cfgcheck import capacity as cap
from cfgcheck.capacity import measured
from cfgcheck.capacity.report import render_capacity
from cfgcheck.context import RuleContext
from cfgcheck.model import ArgToken, Directive, Location, ServedModel, Setting
from cfgcheck.registry import Option, all_rules
from helpers import FIXTURES, REPO, SHARED, lint_fixture
GiB = 1024**3


# ------------------------------------------------------------------------------------------ helpers


def loc(line: int, path: str = "m.yaml") -> Location:
    return Location(path, line, 5)


def setting(name, value, line, comments=(), source=None) -> Setting:
    return Setting(name=name, value=value, location=loc(line), source=source or name, comments=tuple(comments))


def served(model_id=None, engine="vllm", version="0.26.0", settings=(), gpus=None, gpu_product=None,
           gpu_memory_bytes=None, directives=(), comments=(), argv=(), kind="Deployment") -> ServedModel:
    m = ServedModel(name="m", kind=kind, path="m.yaml", document=0, location=loc(1), engine=engine, engine_version=version)
    if model_id:
        m.model = setting("model", model_id, 2)
    for s in settings:
        m.add(s)
    if gpus is not None:
        m.gpus = setting("gpus", gpus, 40, source="resources.limits.nvidia.com/gpu")
    m.gpu_product = gpu_product
    m.gpu_memory_bytes = gpu_memory_bytes
    m.directives = [Directive(k, v, "", loc(3)) for k, v in directives]
    m.comments = list(comments)
    m.argv = [ArgToken(t, loc(30)) for t in argv]
    return m


def ctx(options=None, config=None):
    """A rule context with every rule's declared defaults (the option names of these rules do not clash)."""
    defaults = {name: value for r in all_rules() for name, value in r.defaults.items()}
    return RuleContext({**defaults, **(options or {})}, config or {})


def rule(name):
    return importlib.import_module(f"rules.{name}")


def tanguille_qwen36(with_pool_comment: bool = True) -> ServedModel:
    """The c835afb74 qwen36-27b-vllm InferenceService, as the adapters describe it."""
    kv_comments = (
        ["vLLM's profiler leaves the pool at 48,000 tokens; explicit sizing gives 121,302", "within the same 0.875 budget."]
        if with_pool_comment else []
    )
    return served(
        "hf://QuantTrio/Qwen3.6-27B-AWQ@9b507bdc9afafb87b7898700cc2a591aa6639461",
        settings=[
            setting("max_num_seqs", 32, 84, ["32 slots doubled aggregate throughput vs 8: 40 -> 79 tok/s at concurrency 16."], "spec.parallelSlots"),
            setting("max_model_len", 64000, 89, ["180000 needs ~6.55 GiB KV against a ~4.6 GiB ceiling at 0.875. 64000 covers 74.1%", "of measured production prompts."], "spec.vllmConfig.maxModelLen"),
            setting("kv_cache_dtype", "fp8_e4m3", 90),
            setting("enable_prefix_caching", True, 91),
            setting("max_num_batched_tokens", 8192, 92),
            setting("gpu_memory_utilization", 0.875, 94, ["HARD CEILING: shared with Jellyfin transcoding, never raise."]),
            setting("quantization", "AWQ", 41),
            setting("kv_cache_memory_bytes", 4294967296, 133, kv_comments, "--kv-cache-memory"),
        ],
        gpus=1, gpu_memory_bytes=32 * GiB, kind="InferenceService",
        argv=["--mamba-ssm-cache-dtype", "bfloat16", "--kv-cache-memory", "4294967296"],
    )


# ------------------------------------------------------------------------------- seed arithmetic


@pytest.mark.parametrize("how", ["directive", "comment"])
def test_seed_000_measured_pool_translates_exactly(how):
    kw = {"directives": [("kv-pool-tokens", "995932")]} if how == "directive" else {
        "comments": [(12, " kv pool: 995,932 tokens (GPU KV cache size from the startup log)")]}
    m = served("Qwen/Qwen3.5-2B", settings=[setting("max_model_len", 262144, 10), setting("max_num_seqs", 4, 11)], **kw)
    est = cap.estimate(m, {})
    assert est.kv_pool_source == "measured"
    assert est.kv_pool_tokens == 995_932
    assert f"{est.max_concurrency:.2f}" == "3.80"
    assert f"{cap.concurrency_at(est, 262_144):.2f}" == "3.80"
    assert f"{cap.concurrency_at(est, 32_768):.2f}" == "30.39"
    assert cap.longest_fitting_len(est) == 995_932
    # 16 requests at the capped window fit; the cap keeps 16 inside the pool
    assert cap.cap_for(est, 16) == 61_440  # 995,932 / 16 = 62,245 -> 61,440 (multiple of 1024)
    assert cap.concurrency_at(est, cap.cap_for(est, 16)) >= 16


def test_seed_002_explicit_pool_reproduces_the_logged_token_count():
    """4 GiB explicit KV, fp8, hybrid GDN Qwen3.6-27B, prefix caching on: vLLM logged 121,302 tokens."""
    est = cap.estimate(tanguille_qwen36(with_pool_comment=False), {})
    assert est.kv_pool_source == "explicit"
    assert est.pool_bytes == 4 * GiB
    assert est.layout.block_size == 800  # attention block raised to cover the GDN state page
    assert est.num_blocks == 163
    assert est.layout.blocks_per_request(64000) == 86  # 80 attention + 3 GDN groups x 2 (align mode)
    assert est.kv_pool_tokens == 121_302
    assert f"{est.max_concurrency:.2f}" == "1.90"
    assert est.kv_bytes_per_token == 16 * 2 * 4 * 256  # 16 full-attention layers, fp8


def test_seed_002_measured_comment_beats_explicit():
    est = cap.estimate(tanguille_qwen36(), {})
    assert est.kv_pool_source == "measured"
    assert est.kv_pool_tokens == 121_302
    assert "--kv-cache-memory" in est.kv_pool_evidence


def test_seed_002_cfg203_flags_parallel_slots():
    findings = list(rule("seqs_exceed_kv_concurrency").check(tanguille_qwen36(), ctx()))
    assert len(findings) == 1
    f = findings[0]
    assert f.message == "max_num_seqs 32 > 1.90 full-length requests (pool 121,302 tokens / max_model_len 64,000)"
    assert f.location.line == 84 and f.setting == "max_num_seqs"
    # the explicit-only variant reaches the same verdict by block arithmetic
    findings = list(rule("seqs_exceed_kv_concurrency").check(tanguille_qwen36(with_pool_comment=False), ctx()))
    assert findings and "explicit pool 121,302 tokens" in findings[0].message


def test_seed_002_file_matches_the_hand_built_model():
    path = SHARED / "corpus/Tanguille__cluster/_history/c835afb74/kubernetes/apps/ai/llmkube/models/qwen36-27b-vllm.yaml"
    if not path.exists():
        pytest.skip(f"shared corpus not present at {path}")
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    isvc = next(d for d in docs if d["kind"] == "InferenceService")
    assert isvc["spec"]["parallelSlots"] == 32
    assert isvc["spec"]["vllmConfig"]["maxModelLen"] == 64000
    assert isvc["spec"]["vllmConfig"]["kvCacheDtype"] == "fp8_e4m3"
    args = isvc["spec"]["extraArgs"]
    assert args[args.index("--kv-cache-memory") + 1] == "4294967296"
    assert "121,302" in path.read_text()


# --------------------------------------------------------------------------- KV bytes per token


def test_gqa_bytes_per_token_engine_facts_examples():
    q8 = cap.lookup_architecture("Qwen/Qwen3-8B")
    assert cap.kv_bytes_per_token(q8) == 147_456
    assert cap.kv_bytes_per_token(q8, kv_cache_dtype="fp8") == 73_728
    l70 = cap.lookup_architecture("meta-llama/Llama-3.1-70B-Instruct")
    assert cap.kv_bytes_per_token(l70, tp=4) == 81_920
    assert cap.kv_bytes_per_token(l70, tp=8) == 40_960
    assert cap.kv_bytes_per_token(l70, tp=16) == 40_960  # replicated, still one head per rank


def test_mla_latent_is_replicated_across_tp():
    ds = cap.lookup_architecture("deepseek-ai/DeepSeek-V3")
    assert ds.is_mla
    assert cap.kv_bytes_per_token(ds, tp=1) == 70_272
    assert cap.kv_bytes_per_token(ds, tp=8) == 70_272
    assert cap.kv_bytes_per_token(ds, tp=8, kv_cache_dtype="fp8") == 35_136


def test_worked_example_a_qwen3_8b_50gib():
    m = served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 40960, 5), setting("kv_cache_memory_bytes", 50 * GiB, 6)])
    est = cap.estimate(m, {})
    assert est.num_blocks == 22_755
    assert est.kv_pool_tokens == 364_080
    assert f"{cap.concurrency_at(est, 40960):.2f}" == "8.89"
    assert f"{cap.concurrency_at(est, 32768):.2f}" == "11.11"
    assert f"{cap.concurrency_at(est, 8192):.2f}" == "44.44"


def test_worked_example_c_qwen3_next_hybrid_tp4():
    m = served("Qwen/Qwen3-Next-80B-A3B-Instruct", settings=[
        setting("max_model_len", 262144, 5), setting("kv_cache_memory_bytes", 60 * GiB, 6), setting("tensor_parallel_size", 4, 7)])
    est = cap.estimate(m, {})
    assert est.layout.block_size == 272
    assert est.layout.block_bytes == 3_342_336
    assert est.num_blocks == 19_275
    assert est.kv_pool_tokens == 5_225_259
    assert f"{cap.concurrency_at(est, 262144):.2f}" == "19.93"
    assert f"{cap.concurrency_at(est, 32768):.1f}" == "155.4"
    assert round(cap.concurrency_at(est, 4096)) == 1014
    # TP1: 2,048 B/token/layer, GDN page 1,097,728 B -> block 544
    lay = cap.kv_layout(cap.lookup_architecture("Qwen/Qwen3-Next-80B-A3B-Instruct"), tp=1)
    assert lay.block_size == 544


def test_cfg202_on_a_hybrid_model_fits_by_the_pools_own_arithmetic(tmp_path):
    """Qwen3-Next (GDN layers and 12 attention layers): the longest length CFG202 gives is the one the
    pool's block arithmetic holds, whether the GPU is stated or the largest one known (the same B300) is tried."""
    fixture = FIXTURES / "rules" / "CFG202" / "fail-hybrid-context-above-pool.yaml"
    unstated = tmp_path / "unstated.yaml"
    unstated.write_text(re.sub(r"      nodeSelector:\n.*\n", "", fixture.read_text()))
    stated = lint_fixture(fixture, tmp_path / "stated")
    est = cap.estimate(stated.models[0], {})
    fit = cap.longest_fitting_len(est)
    assert cap.concurrency_at(est, fit) >= 1 > cap.concurrency_at(est, fit + 2048)
    assert est.kv_pool_tokens > 200_000  # far above the 131,072 a per-layer reading gave
    for result in (stated, lint_fixture(unstated, tmp_path / "unstated")):
        (finding,) = [f for f in result.findings if f.code == "CFG202"]
        assert f"the longest that fits is {fit:,}" in finding.message


def test_sliding_window_cost_is_constant_beyond_window():
    arch = cap.lookup_architecture("openai/gpt-oss-20b")
    lay = cap.kv_layout(arch, max_num_batched_tokens=2048)
    assert lay.sliding_groups == 1 and lay.full_groups == 1
    # the sliding group's blocks stop growing once L exceeds window + batch
    extra_short = lay.blocks_per_request(65536) - 65536 // 16
    extra_long = lay.blocks_per_request(131072) - 131072 // 16
    assert extra_short == extra_long


# ----------------------------------------------------------------------------------- lookups


@pytest.mark.parametrize("model_id,base,bits", [
    ("hf://QuantTrio/Qwen3.6-27B-AWQ@9b507bdc", "Qwen3.6-27B", 4 + 20 / 128),  # group-128 fp16 scales, 4-bit zeros
    ("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "Llama-3.3-70B", 8.0),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen2.5-7B", 4 + 20 / 128),
    ("unsloth/Llama-3.1-8B-Instruct-bnb-4bit", "Llama-3.1-8B", 4.25),
    ("/models/qwen3-30b-a3b-instruct-2507", "Qwen3-30B-A3B-Instruct-2507", 16.0),
    ("nvidia/Llama-3.1-8B-Instruct-NVFP4", "Llama-3.1-8B", 4.5),
    ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B", 16.0),
])
def test_quantized_and_path_ids_map_to_base_architecture(model_id, base, bits):
    arch = cap.lookup_architecture(model_id)
    assert arch is not None, model_id
    assert arch.weight_bits == bits
    assert arch.num_layers > 0


def test_unknown_model_is_none():
    assert cap.lookup_architecture("someone/not-a-model") is None
    assert cap.lookup_architecture(None) is None


def test_local_config_with_text_config_and_safetensors_index(tmp_path):
    d = tmp_path / "acme" / "vlm-9b"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({
        "model_type": "acme_vl", "torch_dtype": "bfloat16",
        "text_config": {"num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
                        "hidden_size": 4096, "max_position_embeddings": 65536, "layer_types": ["sliding_attention", "full_attention"] * 20,
                        "sliding_window": 4096}}))
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 18_000_000_000}}))
    arch = cap.lookup_architecture("hf://acme/vlm-9b@main", tmp_path)
    assert arch.source == "config.json"
    assert (arch.num_layers, arch.num_kv_heads, arch.head_dim) == (40, 8, 128)
    assert arch.sliding_layers == 20 and arch.sliding_window == 4096 and arch.full_layers == 20
    assert arch.weight_bytes_for() == 18_000_000_000
    assert arch.derived_max_len() == 65536
    # the local directory wins over the bundled table
    q = tmp_path / "Qwen" / "Qwen3-8B"
    q.mkdir(parents=True)
    (q / "config.json").write_text(json.dumps({"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 256, "max_position_embeddings": 1024}))
    assert cap.lookup_architecture("Qwen/Qwen3-8B", tmp_path).num_layers == 2


@pytest.mark.parametrize("text,name", [
    ("H100-80GB", "H100-80GB"), ("NVIDIA-H100-80GB-HBM3", "H100-80GB"), ("nvidia-h100-80gb", "H100-80GB"),
    ("NVIDIA-A100-SXM4-80GB", "A100-80GB"), ("nvidia-tesla-a100", "A100-40GB"), ("NVIDIA-A100-PCIE-40GB", "A100-40GB"),
    ("NVIDIA-GeForce-RTX-4090", "RTX-4090"), ("Tesla-T4", "T4"), ("nvidia-l4", "L4"), ("NVIDIA-L40S", "L40S"),
    ("AMD_Instinct_MI300X", "MI300X"), ("R9700", "R9700"), ("g6e.12xlarge", "L40S"),
])
def test_gpu_lookup(text, name):
    gpu = cap.lookup_gpu(text)
    assert gpu is not None and gpu.name == name
    assert 0.9 < gpu.memory_bytes / (gpu.nominal_gb * GiB) <= 1.0  # reported memory sits just below nominal GiB


def test_gpu_lookup_refuses_ambiguous_and_unknown():
    assert cap.lookup_gpu("A100") is None
    assert cap.lookup_gpu("potato") is None
    assert abs(cap.lookup_gpu("H100-80GB").memory_gib - 79.22) < 0.01


def test_gpu_resolution_order():
    m = served("Qwen/Qwen3-8B", gpu_product="NVIDIA-L4", directives=[("gpu", "H100-80GB")])
    assert cap.resolve_gpu(m, {"gpu": "T4"})[0].name == "H100-80GB"
    m = served("Qwen/Qwen3-8B")
    m.gpu_labels = [("cloud.google.com/gke-accelerator", "nvidia-l4")]  # the adapter reads them from the node selector
    assert cap.resolve_gpu(m, {"gpu": "T4"})[0].name == "L4"
    assert cap.resolve_gpu(served("x/y"), {"gpu": "T4"})[0].name == "T4"
    gpu, why = cap.resolve_gpu(served("x/y"), {})
    assert gpu is None and "GPU not stated" in why


def test_gpu_from_node_labels_alone():
    """What adapters ask with the labels and resources they read (no served model needed)."""
    from cfgcheck.capacity.gpus import resolve_gpu_from_labels

    gpu, origin = resolve_gpu_from_labels({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
    assert (gpu.name, origin) == ("H100-80GB", "nvidia.com/gpu.product")
    assert resolve_gpu_from_labels({"node.kubernetes.io/instance-type": "g6e.xlarge"})[0].name == "L40S"
    gpu, origin = resolve_gpu_from_labels({}, {"nvidia.com/mig-1g.10gb": 1, "cpu": "4"})
    assert origin == "resource" and gpu.nominal_gb == 10.0
    gpu, origin = resolve_gpu_from_labels({"nvidia.com/gpu.memory": "81559"})
    assert (gpu.name, origin) == ("81559MiB", "nvidia.com/gpu.memory")
    assert resolve_gpu_from_labels({"nvidia.com/gpu.product": "potato"}) == (None, "unknown GPU 'potato' (nvidia.com/gpu.product)")
    assert resolve_gpu_from_labels({})[0] is None


# -------------------------------------------------------------------------------- defaults


def test_sglang_derived_max_running_requests():
    """ENGINE-FACTS §2: min(clamp(int(pool/context*512), 2048, 4096), pool//2), shared by the estimate
    and unexplained-seq-pin."""
    from cfgcheck.engines.defaults import sglang_default_max_running_requests

    assert sglang_default_max_running_requests(1_000_000, 32_768) == 4096  # 15,625 clamped to 4096
    assert sglang_default_max_running_requests(100_000, 131_072) == 2048  # 390 raised to 2048
    assert sglang_default_max_running_requests(3_000, 1_024) == 1_500  # pool // 2 is smaller


def test_version_defaults():
    assert cap.default_gpu_memory_utilization("vllm", "0.10.2") == 0.9
    assert cap.default_gpu_memory_utilization("vllm", "0.26.0") == 0.92
    h100, a100, l4 = cap.lookup_gpu("H100-80GB"), cap.lookup_gpu("A100-80GB"), cap.lookup_gpu("L4")
    assert cap.default_max_num_seqs("vllm", "0.26.0", h100) == 1024
    assert cap.default_max_num_seqs("vllm", "0.26.0", a100) == 256
    assert cap.default_max_num_seqs("vllm", "0.26.0", l4) == 256
    assert cap.default_max_num_seqs("vllm", "0.26.0", None) is None
    assert cap.default_max_num_batched_tokens("vllm", "0.33.0", cap.lookup_gpu("B200")) == 16384
    est = cap.estimate(served("Qwen/Qwen3-8B", version="0.10.2", gpu_product="NVIDIA-H100-80GB-HBM3"), {})
    assert est.gpu_memory_utilization == 0.9 and est.max_num_seqs == 1024 and est.max_model_len == 40960


def test_estimated_pool_is_plausible_and_unknowns_are_explained():
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", settings=[setting("max_model_len", 8192, 5)], gpu_product="NVIDIA-H100-80GB-HBM3"), {})
    assert est.kv_pool_source == "estimated"
    # 0.92 x 79.22 GiB - 15 GiB weights - overheads: ~55 GiB of KV at 128 KiB/token
    assert 400_000 < est.kv_pool_tokens < 480_000
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct"), {})
    assert est.kv_pool_source == "unknown" and est.kv_pool_tokens is None
    assert any("GPU not stated" in r for r in est.reasons)
    est = cap.estimate(served("someone/mystery-model", gpu_product="L4"), {})
    assert est.kv_pool_source == "unknown" and any("architecture" in r for r in est.reasons)


def test_the_pool_pretest_never_hides_a_pool_keyword():
    # the letters that match others ignoring case: long s, dotted and dotless i, the Kelvin sign
    texts = ["max_total_num_token\u017f=81920", "#token\u017f 4096", "KV CACHE S\u0130ZE 1024", "\u212av-pool 2048",
             "GPU KV cache size: 364,080 tokens", "a pool of 8 GPUs", "no number here", "pooling layers", ""]
    for text in texts:
        assert measured._names_pool(text) == bool(measured._POOL_KEYWORD.search(text)), text


def test_measured_pool_comment_parsing():
    f = measured._pool_numbers_in
    assert f("kv pool: 995,932 tokens") == 995_932
    assert f("vLLM's profiler leaves the pool at 48,000 tokens; explicit sizing gives 121,302") == 121_302
    assert f("Pool 223,172 -> 287,159 tokens, concurrency") == 287_159
    assert f("0.95 grows the pool 183,240 -> 261,019 tokens but OOMs on a") == 183_240
    assert f("Above 16 the 125,041-token pool oversubscribes: TG 48 -> 35") == 125_041
    assert f("GPU KV cache size: 364,080 tokens") == 364_080
    assert f("64000 covers 74.1% of measured production prompts") is None
    assert f("Maximum concurrency for 262,144 tokens per request: 3.80x") is None
    assert f("a request of 32,768 tokens") is None
    assert f("v0.26.0 measured identical to the nightly on KV pool and throughput (2026-07-25).") is None


# ---------------------------------------------------------------------------------- rules


def test_cfg202_context_exceeds_pool():
    m = served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 180000, 7)], directives=[("kv-pool-tokens", "48000")])
    (f,) = rule("context_exceeds_kv_pool").check(m, ctx())
    assert "max_model_len 180,000" in f.message and "48,000" in f.message and "longest that fits is 48,000" in f.message
    assert f.location.line == 7
    m = served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 32768, 7)], directives=[("kv-pool-tokens", "48000")])
    assert list(rule("context_exceeds_kv_pool").check(m, ctx())) == []
    # unknown pool: silent
    assert list(rule("context_exceeds_kv_pool").check(served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 10**6, 7)]), ctx())) == []


def test_cfg202_estimated_pool_respects_margin():
    base = dict(gpu_product="Tesla-T4", settings=[setting("max_model_len", 131072, 7)])
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", **base), {})
    assert est.kv_pool_source == "estimated" and est.max_concurrency < 1  # 16 GB weights on a 15 GiB card
    (f,) = rule("context_exceeds_kv_pool").check(served("meta-llama/Llama-3.1-8B-Instruct", **base), ctx())
    assert "estimated" in f.message


def test_cfg203_passes_within_pool_and_skips_defaults():
    m = served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 32768, 7), setting("max_num_seqs", 16, 8)], directives=[("kv-pool-tokens", "995932")])
    assert list(rule("seqs_exceed_kv_concurrency").check(m, ctx())) == []
    m = served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 262144, 7)], directives=[("kv-pool-tokens", "995932")])
    assert list(rule("seqs_exceed_kv_concurrency").check(m, ctx())) == []
    m.gpu_product = "H100-80GB"
    (f,) = rule("seqs_exceed_kv_concurrency").check(m, ctx({"include-defaults": True}))
    assert f.message.startswith("default max_num_seqs 1024 > 3.80")


def test_cfg203_remediation_names_the_cap():
    m = served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 262144, 7), setting("max_num_seqs", 16, 8)], directives=[("kv-pool-tokens", "995932")])
    (f,) = rule("seqs_exceed_kv_concurrency").check(m, ctx())
    assert "61,440" in f.remediation


def test_cfg205_unexplained_pin():
    r = rule("unexplained_seq_pin")
    bare = served("Qwen/Qwen3-8B", settings=[setting("max_num_seqs", 4, 8, source="--max-num-seqs")])
    (f,) = r.check(bare, ctx())
    assert "--max-num-seqs 4" in f.message and "256" in f.message
    reasoned = served("Qwen/Qwen3-8B", settings=[setting("max_num_seqs", 4, 8, ["Measured knee of the P0 sweep"], "--max-num-seqs")])
    assert list(r.check(reasoned, ctx())) == []
    flag_only = served("Qwen/Qwen3-8B", settings=[setting("max_num_seqs", 4, 8, ["--max-num-seqs"], "--max-num-seqs")])
    assert len(list(r.check(flag_only, ctx()))) == 1
    assert len(list(r.check(reasoned, ctx({"min-reason-words": 10})))) == 1
    # 512 is below the 1024 default only on a big GPU
    mid = served("Qwen/Qwen3-8B", settings=[setting("max_num_seqs", 512, 8)])
    assert list(r.check(mid, ctx())) == []
    mid.gpu_product = "NVIDIA-H100-80GB-HBM3"
    assert len(list(r.check(mid, ctx()))) == 1
    # at or above the default: fine; inert (SGLang ignores parallelSlots): fine
    assert list(r.check(served("Qwen/Qwen3-8B", settings=[setting("max_num_seqs", 256, 8)]), ctx())) == []
    inert = served("Qwen/Qwen3-8B", engine="sglang", settings=[setting("max_num_seqs", 4, 8, source="spec.parallelSlots")])
    inert.inert.append((inert.settings["max_num_seqs"], "parallelSlots is ignored by SGLang"))
    assert list(r.check(inert, ctx())) == []


def test_cfg205_seed_parallel_slots_has_a_reason():
    assert list(rule("unexplained_seq_pin").check(tanguille_qwen36(), ctx())) == []


def test_cfg207_context_exceeds_model_max():
    r = rule("context_exceeds_model_max")
    (f,) = r.check(served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 131072, 7)]), ctx())
    assert "40,960" in f.message and f.location.line == 7
    assert list(r.check(served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 32768, 7)]), ctx())) == []
    overridden = served("Qwen/Qwen3-8B", settings=[setting("max_model_len", 131072, 7)],
                        argv=["--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}'])
    assert list(r.check(overridden, ctx())) == []
    # DeepSeek-V3 declares yarn x40 over 4096: 163,840 is the derived maximum
    assert list(r.check(served("deepseek-ai/DeepSeek-V3", settings=[setting("max_model_len", 163840, 7)]), ctx())) == []
    assert list(r.check(served("unknown/model", settings=[setting("max_model_len", 10**7, 7)]), ctx())) == []


def test_cfg208_parallel_size_vs_gpus():
    r = rule("parallel_size_gpu_mismatch")
    (f,) = r.check(served("m/x", settings=[setting("tensor_parallel_size", 4, 9)], gpus=2), ctx())
    assert "parallel size 4" in f.message and "2 GPUs" in f.message and f.location.line == 9
    (f,) = r.check(served("m/x", settings=[setting("tensor_parallel_size", 2, 9)], gpus=4), ctx())
    assert "2 stay idle" in f.message
    assert list(r.check(served("m/x", settings=[setting("tensor_parallel_size", 2, 9)], gpus=4), ctx({"allow-idle-gpus": True}))) == []
    assert list(r.check(served("m/x", settings=[setting("tensor_parallel_size", 2, 9), setting("pipeline_parallel_size", 2, 10)], gpus=4), ctx())) == []
    assert len(list(r.check(served("m/x", settings=[setting("tensor_parallel_size", 2, 9), setting("data_parallel_size", 2, 10)], gpus=2), ctx()))) == 1
    lws = served("m/x", settings=[setting("tensor_parallel_size", 8, 9)], gpus=4, kind="LeaderWorkerSet")
    lws.gpus_span = "unknown"  # set by the workloads adapter: one pod of a group whose other pods it cannot count
    assert list(r.check(lws, ctx())) == []
    assert list(r.check(served("m/x", settings=[setting("tensor_parallel_size", 2, 9)]), ctx())) == []  # GPUs unknown
    (f,) = r.check(served("m/x", gpus=2), ctx())  # default TP 1 on 2 GPUs
    assert "1 stay idle" in f.message


# ------------------------------------------------------------------------------ rule modules

MY_RULES = ["context_exceeds_kv_pool", "seqs_exceed_kv_concurrency", "unexplained_seq_pin", "context_exceeds_model_max", "parallel_size_gpu_mismatch"]


@pytest.mark.parametrize("name", MY_RULES)
def test_rule_module_contract(name):
    mod = rule(name)
    assert re.fullmatch(r"CFG2\d\d", mod.CODE) and mod.SEVERITY in ("error", "warning", "note")
    assert all(isinstance(o, Option) for o in mod.OPTIONS.values()) and callable(mod.check)
    doc = mod.__doc__
    heads = re.findall(r"^## (.+)$", doc, re.M)
    assert heads == ["What it flags", "Why it matters", "Example", "Use instead", "Options"]
    for section in ("Example", "Use instead"):
        body = doc.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
        block = re.search(r"```yaml\n(.*?)```", body, re.S)
        assert block, section
        parsed = yaml.safe_load(block.group(1))
        assert parsed["kind"] in ("InferenceService", "Deployment") and parsed["metadata"]["name"]


def test_seed_002_end_to_end_through_lint():
    """The c835afb74 manifest through the real pipeline: CFG203 on parallelSlots with the seed's arithmetic."""
    path = SHARED / "corpus/Tanguille__cluster/_history/c835afb74/kubernetes/apps/ai/llmkube/models/qwen36-27b-vllm.yaml"
    if not path.exists():
        pytest.skip(f"shared corpus not present at {path}")
    from cfgcheck.config import Config
    from cfgcheck.lint import lint

    result = lint([path], Config(path.parent, {}))
    mine = [f for f in result.findings if f.code in ("CFG202", "CFG203", "CFG205", "CFG207", "CFG208")]
    assert [(f.code, f.message) for f in mine] == [
        ("CFG203", "max_num_seqs 32 > 1.90 full-length requests (pool 121,302 tokens / max_model_len 64,000)")]
    assert "parallelSlots: 32" in path.read_text().splitlines()[mine[0].location.line - 1]
    # the abbreviated --kv-cache-memory alone (no pool comment) gives the same pool by block arithmetic
    (model,) = [m for m in result.models if m.engine == "vllm"]
    model.settings["kv_cache_memory_bytes"].comments = ()
    model.comments = []
    est = cap.estimate(model, {})
    assert (est.kv_pool_source, est.kv_pool_tokens) == ("explicit", 121_302)


def test_human_readable_kv_bytes():
    assert cap.human_int("4G") == 4 * GiB and cap.human_int("4g") == 4_000_000_000 and cap.human_int("32k") == 32_000
    assert cap.human_int("4294967296") == 4 * GiB and cap.human_int("x") is None


# ---------------------------------------------------------------------------------- render


def test_render_capacity_json_and_text():
    models = [tanguille_qwen36(), served("meta-llama/Llama-3.1-8B-Instruct")]
    doc = json.loads(render_capacity(models, {}, "json"))
    assert doc["version"] == 1 and len(doc["models"]) == 2
    row = doc["models"][0]
    for key in ("path", "line", "name", "engine", "engine_version", "model", "gpu", "gpu_memory_bytes", "gpus",
                "tensor_parallel_size", "max_model_len", "max_num_seqs", "gpu_memory_utilization", "kv_cache_dtype",
                "kv_bytes_per_token", "kv_pool_tokens", "kv_pool_source", "max_concurrency"):
        assert key in row
    assert row["kv_pool_tokens"] == 121_302 and row["kv_pool_source"] == "measured" and row["max_concurrency"] == 1.9
    unknown = doc["models"][1]
    assert unknown["kv_pool_source"] == "unknown" and unknown["kv_pool_tokens"] is None and unknown["reasons"]
    text = render_capacity(models, {}, "text")
    assert "121,302" in text and "1.90x" in text and "GPU not stated" in text


# -------------------------------------------------------------------------------- accuracy


def test_accuracy_regression_guard():
    """The estimate's median absolute error over real startup logs stays within what it achieves today."""
    sys.path.insert(0, str(REPO))
    try:
        accuracy = importlib.import_module("bench.accuracy")
    finally:
        sys.path.pop(0)
    cases = json.loads((REPO / "tests/data/startup_logs.json").read_text())["cases"]
    assert len(cases) >= 50 and sum(c["gpu"].startswith("MI") for c in cases) >= 2  # AMD logs among them
    assert all(c.get("source", "").startswith("http") for c in cases)
    results = accuracy.evaluate(cases)
    errors = [abs(r["error"]) for r in results if r["error"] is not None]
    assert len(errors) >= 12
    assert statistics.median(errors) <= accuracy.MEDIAN_GUARD
