"""Engine-version facts of the pool, each checked against a published start-up log or the engine's own
release (tests/data/startup_logs.json, bench/accuracy.py): SGLang's default memory fraction by release and its
multimodal and speculative cuts, the served dtype, the sampler warm-up by vLLM version, an unknown draft that no
longer blanks the pool, and the estimate stated as a range that decides CFG202's severity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import lint_text

from cfgcheck import capacity as cap
from cfgcheck.capacity import served as facts
from cfgcheck.capacity.gpus import gpu_by_name
from cfgcheck.engines import defaults
from tests.capacity.test_engine_versions import served
from tests.capacity.test_models_table import load_module

LOGS = {c["id"]: c for c in json.loads((Path(__file__).parents[1] / "data" / "startup_logs.json").read_text())["cases"]}


def test_sglang_default_fraction_follows_the_release():
    h100, l4 = gpu_by_name("H100-80GB"), gpu_by_name("L4")
    # the 0.4.1 docs notebook logs mem_fraction_static=0.88 at TP 1; the 0.4.3.post4 L4 log 0.85 at TP 4
    assert "mem_fraction_static=0.88, max_total_tokens=None" in LOGS["llama31-8b-h100-sglang-docs"]["log"]
    assert defaults.sglang_default_mem_fraction(h100, 1, version="0.4.1") == 0.88
    assert "mem_fraction_static=0.85, tp_size=4" in LOGS["qwq-32b-l4-tp4-sglang"]["log"]
    assert defaults.sglang_default_mem_fraction(l4, 4, version="0.4.3.post4") == 0.85
    # 0.4.8-0.5.2: a reserve by memory tier, (9.5 + ranks / 2) GiB on an 80 GB card (nvidia-smi MiB)
    mib = h100.memory_bytes / 2**20
    assert defaults.sglang_default_mem_fraction(h100, 4, version="0.4.9") == round((mib - 11.5 * 1024) / mib, 3)
    # from 0.5.3 the chunk-size formula, the newest when the version is unknown
    assert defaults.sglang_default_mem_fraction(h100, 4, version="0.5.3") == defaults.sglang_default_mem_fraction(h100, 4)
    assert defaults.sglang_default_mem_fraction(h100, 1, version="0.4.1") != defaults.sglang_default_mem_fraction(h100, 1)


def test_sglang_runner_cut_every_multimodal_fraction_until_0_4_9():
    assert defaults.sglang_runner_vlm_factor("0.4.3") == 0.95
    assert defaults.sglang_runner_vlm_factor("0.4.5") == 0.90
    assert defaults.sglang_runner_vlm_factor("0.4.9") is None and defaults.sglang_runner_vlm_factor(None) is None
    written = dict(engine="sglang", mem_fraction_static=0.8, max_model_len=8192)
    old = cap.estimate(served("Qwen/Qwen2.5-VL-3B-Instruct", version="0.4.3", **written))
    new = cap.estimate(served("Qwen/Qwen2.5-VL-3B-Instruct", version="0.5.3", **written))
    assert old.kv_pool_tokens < new.kv_pool_tokens
    assert any("cuts a multimodal model's mem_fraction_static by x0.95" in r for r in old.reasons)


def test_sglang_sizes_the_target_pool_before_an_unknown_draft():
    """sglang#36452 / sglang#38364 quote the scheduler: init_target_memory_pool sizes the pool before the draft
    worker loads; the draft gets its own pool. An unknown draft no longer blanks the estimate."""
    plain = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="sglang", version="0.4.9",
                                mem_fraction_static=0.85))
    spec = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="sglang", version="0.4.9",
                               mem_fraction_static=0.85, speculative_algorithm="EAGLE",
                               speculative_draft_model_path="acme/unknown-eagle"))
    assert spec.kv_pool_source == "estimated" and spec.kv_pool_tokens == plain.kv_pool_tokens
    assert any("SGLang sizes the target's pool before it loads the draft" in r for r in spec.reasons)
    defaulted = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="sglang", version="0.4.9",
                                    speculative_algorithm="EAGLE", speculative_draft_model_path="acme/unknown-eagle"))
    bare = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="sglang", version="0.4.9"))
    # a defaulted fraction keeps 2 GiB back for the draft (server_args.py 0.4.8-0.5.x)
    assert bare.pool_bytes - defaulted.pool_bytes == pytest.approx(2 * cap.GiB, rel=0.01)


def test_served_dtype_scales_weights_and_activations():
    """vllm#14827 logs 'Upcasting torch.bfloat16 to torch.float32' (0.7.3): the engine casts the checkpoint."""
    bf16 = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192))
    fp32 = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192, dtype="float32"))
    half = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192, dtype="float16"))
    assert fp32.weight_bytes_per_gpu == 2 * bf16.weight_bytes_per_gpu
    assert half.weight_bytes_per_gpu == bf16.weight_bytes_per_gpu
    assert fp32.kv_bytes_per_token == 2 * bf16.kv_bytes_per_token
    assert any("served as 32-bit" in r for r in fp32.reasons)
    arch = bf16.architecture
    assert cap.activation_peak_bytes(arch, 8192, 0, 1, act_bytes=4) > cap.activation_peak_bytes(arch, 8192, 0, 1)


def test_sampler_warm_up_copies_by_version():
    assert facts.vllm_sampler_logit_copies("0.10.1.1") == 2
    assert facts.vllm_sampler_logit_copies("0.19.0") == 4
    assert facts.vllm_sampler_logit_copies("0.27.1") == 2
    for case in ("gpt-oss-20b-a100-80gb", "gemma4-26b-a4b-a100-80gb"):  # the 0.19 logs the window rests on
        assert LOGS[case]["version"] == "0.19.0"


def test_estimated_pool_is_a_range_from_its_class_error():
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192))
    assert est.kv_pool_error == facts.CLASS_ERROR["dense"]
    assert est.kv_pool_tokens_low < est.kv_pool_tokens < est.kv_pool_tokens_high
    out = est.to_dict()
    assert out["kv_pool_tokens_high"] == est.kv_pool_tokens_high and set(cap.CapacityEstimate.JSON_FIELDS) <= set(out)
    moe = cap.estimate(served("Qwen/Qwen3-30B-A3B", max_model_len=8192))
    assert moe.kv_pool_error == facts.CLASS_ERROR["MoE"]
    explicit = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192, kv_cache_memory_bytes="10G"))
    assert explicit.kv_pool_source == "explicit" and explicit.kv_pool_error is None


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
          args: ["--max-model-len", "{length}"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _cfg202(tmp_path, length: int):
    result = lint_text(tmp_path, DEPLOYMENT.format(length=length))
    return [f for f in result.findings if f.code == "CFG202"]


def test_cfg202_is_an_error_only_beyond_the_range_top(tmp_path):
    model = served("meta-llama/Llama-3.1-8B-Instruct", gpu="L4", max_model_len=131072)
    fit = cap.longest_fitting_len(cap.estimate(model))
    width = max(facts.CLASS_ERROR["dense"], 0.10)
    inside = _cfg202(tmp_path / "a", int(fit * (1 + width / 2)))
    assert [f.severity for f in inside] == ["warning"] and "it may fit" in inside[0].message
    beyond = _cfg202(tmp_path / "b", int(fit * (1 + width) * 1.5))
    assert [f.severity for f in beyond] == ["error"]
    assert not _cfg202(tmp_path / "c", fit)


def test_v1_single_gpu_non_torch_is_what_its_logs_print():
    # kolyangg/mlops-assignment's 0.10.2 log: "0.07 GiB for non-torch memory" on one H100; V0 counted the context
    assert "0.07 GiB for non-torch memory" in LOGS["qwen3-30b-a3b-h100-pip"]["log"]
    assert facts.vllm_non_torch_bytes("0.10.2", 1) == facts.VLLM_NON_TORCH_V1 < facts.vllm_non_torch_bytes("0.6.4", 1)
    est = cap.estimate(served("Qwen/Qwen3-30B-A3B-Instruct-2507", version="0.10.2", max_model_len=6144))
    assert "non-torch ~0.13 GiB" in " ".join(est.reasons)


def test_moe_forward_holds_the_fused_experts_caches():
    """fused_experts keeps (topk, 2I/tp), (topk, I/tp) and (topk, hidden) per token; a dense MLP 3 x its width."""
    from cfgcheck.capacity.local_configs import lookup_architecture

    moe, dense = lookup_architecture("Qwen/Qwen3-30B-A3B-Instruct-2507"), lookup_architecture("Qwen/Qwen3-32B")
    assert facts.mlp_activation_elements(moe, 2048, 1, 3.0) == 8 * (1536 + 768 + 2048)
    assert facts.mlp_activation_elements(moe, 2048, 2, 3.0) == 8 * (768 + 384 + 2048)  # the hidden cache is whole
    assert facts.mlp_activation_elements(dense, 5120, 2, 3.0) == 3 * dense.intermediate_size / 2


def _case_estimate(case_id):
    """The estimate of one start-up log's case, read as bench/accuracy.py reads it."""
    return cap.estimate(load_module("bench/accuracy.py").served_model(LOGS[case_id]))


def test_tp_non_torch_follows_where_nccl_buffers_are_counted():
    h100, l40s, a100 = gpu_by_name("H100-80GB"), gpu_by_name("L40S"), gpu_by_name("A100-80GB")
    # from 0.11 the communicators exist before the snapshot: llm-d's TP 2 H100 rows print 0.54 / 0.55 GiB at 0.14.0
    assert "non-torch 0.54" in LOGS["qwen3-32b-h100-tp2-llmd"]["log"]
    assert facts.vllm_non_torch_bytes("0.14.0", 2, h100) == facts.VLLM_NON_TORCH_TP == int(0.55 * cap.GiB)
    # before, their buffers were counted: NVLink SHARP on Hopper, ~0.3 GiB on PCIe (vllm#15815 prints 0.30 on L40S)
    assert "non_torch_memory takes 0.30GiB" in LOGS["qwen25-32b-l40s-tp2-v0"]["log"]
    assert facts.vllm_non_torch_bytes("0.7.1", 2, l40s) == facts.VLLM_NON_TORCH_TP_PCIE == facts.vllm_non_torch_bytes("0.10.1", 2, a100)
    said: list[str] = []
    assert facts.vllm_non_torch_bytes("0.10.0", 8, h100, said) == facts.VLLM_NON_TORCH_TP_NVLS
    assert "NVSwitch system assumed" in said[0]  # an H100 PCIe pair is not told apart from the SXM part
    assert not facts.nvls_capable(gpu_by_name("RTX-4090")) and not facts.nvls_capable(gpu_by_name("MI300X"))
    # the TP 8 H100 logs at 0.10.0 and the A100 TP 2 logs at 0.10.1.1 land within 1% of their budgets
    for case, within in (("qwen3-32b-h100-tp8-fp8kv", 0.01), ("qwen2-7b-a100-80gb-tp2-u025", 0.01)):
        est, logged = _case_estimate(case), LOGS[case]["target"]["available_kv_gib"] * cap.GiB
        assert abs(est.pool_bytes - logged) / logged < within


def test_v0_profile_peaks_at_the_sampler_sort_or_the_forward():
    # vllm#10511 (0.6.5, V0) prints a 1.26 GiB activation peak for Llama 3 8B on an H100: its top-k warm-up sorts
    # 256 x 128,256 logits (1.18 GiB), above the 8,192-token forward
    assert "PyTorch activation peak memory 1.26GiB" in LOGS["llama3-8b-h100-tp1"]["log"]
    arch = _case_estimate("llama3-8b-h100-tp1").architecture
    peak = cap.activation_peak_bytes(arch, 8192, 256, 1, v1=False)
    assert abs(peak / cap.GiB - 1.26) < 0.05
    assert peak == cap.activation_peak_bytes(arch, 8192, 256, 1, v1=True, sort_sampler=True)


def test_sglang_budget_is_measured_after_the_communicators():
    # sglang#11716: "Init torch distributed ends. mem usage=1.77-2.01 GB" on eight H200s, lost at the fraction
    h100 = gpu_by_name("H100-80GB")
    assert facts.sglang_distributed_bytes(h100, 4, 0.9, []) == int(facts.SGLANG_DIST_INIT_NVSWITCH * 0.9)
    assert facts.sglang_distributed_bytes(gpu_by_name("L4"), 4, 0.85, []) == 0 == facts.sglang_distributed_bytes(h100, 1, 0.9, [])
    # vllm#21348's SGLang run of Qwen3-235B-A22B-FP8 on four H100s: 367,404 tokens logged
    est = _case_estimate("qwen3-235b-fp8-h100-tp4-sglang")
    assert abs(est.kv_pool_tokens / 367404 - 1) < 0.03


def test_rocm_samples_on_the_native_path():
    # FlashInfer's sampler runs only on CUDA: the ROCm log of Gemma 3 27B on an MI300X (0.11.0rc2) sorts 1,024 x
    # 262,208 logits in its warm-up, and its 109.86 GiB pool is what that leaves
    assert "Automatically detected platform rocm" in LOGS["gemma-3-27b-mi300x-rocm"]["log"]
    est = _case_estimate("gemma-3-27b-mi300x-rocm")
    assert "(PyTorch sort path)" in " ".join(est.reasons)
    assert abs(est.pool_bytes / (109.86 * cap.GiB) - 1) < 0.03
    on_h100 = cap.estimate(served("google/gemma-3-27b-it", version="0.11.0", gpu="H100-80GB", max_model_len=4096))
    assert "(PyTorch sort path)" not in " ".join(on_h100.reasons)


def test_more_than_two_cards_without_nvlink_run_no_custom_all_reduce():
    rtx3060, l40s, a100, h100 = (gpu_by_name(n) for n in ("RTX-3060", "L40S", "A100-80GB", "H100-80GB"))
    said: list[str] = []
    assert facts.vllm_non_torch_bytes("0.14.0", 8, rtx3060, said) == facts.VLLM_NON_TORCH_V1
    assert "custom all-reduce off" in said[0]
    assert facts.vllm_non_torch_bytes("0.14.0", 4, l40s) == facts.VLLM_NON_TORCH_V1
    assert facts.vllm_non_torch_bytes("0.14.0", 2, l40s) == facts.VLLM_NON_TORCH_TP  # two cards may run it
    assert facts.vllm_non_torch_bytes("0.14.0", 4, l40s, tensor_parallel=2) == facts.VLLM_NON_TORCH_TP  # TP 2 x PP 2
    for nvlinked in (a100, h100):  # data-center parts may sit on NVLink
        assert facts.vllm_non_torch_bytes("0.14.0", 8, nvlinked) == facts.VLLM_NON_TORCH_TP


def test_gptq_int8_72b_at_tp8_on_12gb_cards_fits_4096_tokens(tmp_path):
    # the command ran at 4096 tokens on eight RTX 3060 12 GB cards; its 32 sequences of 4096 tokens do not fit
    script = ("#!/bin/bash\n# GPU: 8x RTX 3060 12GB\nexport NCCL_P2P_DISABLE=1\n"
              "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8 "
              "--tensor-parallel-size 8 --gpu-memory-utilization 0.85 --max-model-len 4096 --max-num-seqs 32\n")
    est = cap.estimate(served("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8", gpu="RTX-3060", tensor_parallel_size=8,
                              gpu_memory_utilization=0.85, max_model_len=4096, max_num_seqs=32))
    assert 4096 < est.kv_pool_tokens < 32 * 4096
    # 8-bit GPTQ keeps an fp16 scale and an 8-bit zero per group of 128, embeddings and LM head 16-bit: ~9.7 GB a GPU
    assert 8.9 * cap.GiB < est.weight_bytes_per_gpu < 9.1 * cap.GiB
    found = {f.code: f for f in lint_text(tmp_path, script, "serve.sh").findings}
    assert "CFG202" not in found and "CFG203" in found
