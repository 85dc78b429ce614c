"""vLLM V1's sampler warm-up in the profile run, by version: the PyTorch sort path vs FlashInfer/Triton.

The engine's numbers: llm-d-benchmark's H100 breakdown (config_explorer/empirical-vllm-memory-results.md at
87ab01be, vllm/vllm-openai:latest of January 2026, --block-size 128, prefix caching, 16,000 tokens) logs
Qwen3-0.6B 1.12 GiB weights / 5.56 GiB activation / 64.45 GiB KV, Qwen3-32B at TP 1 and TP 2 5.64 GiB
activation both; a 0.10.1.1 server with FlashInfer installed logs "Using FlashInfer for top-p & top-k
sampling" and 24.83 GiB of KV for Qwen2-7B at utilization 0.5 on an A100 80GB (14.25 GiB weights).
"""

from __future__ import annotations

import pytest

from cfgcheck import capacity as cap
from cfgcheck.capacity.local_configs import lookup_architecture
from cfgcheck.engines import defaults
from cfgcheck.model import Setting
from tests.capacity.test_engine_versions import served

GiB = 1024**3


@pytest.mark.parametrize("version,sort_path", [
    ("0.7.3", False),     # V0: its own sampler profile, not this switch
    ("0.9.2", True),      # vllm#14815: FlashInfer >= 0.2.3 off by default
    ("0.10.0", True),
    ("0.10.1.1", False),  # FlashInfer again where installed
    ("0.11.0", False),
    ("0.11.1", True),     # vllm#26859: FlashInfer sampler off by default
    ("0.14.0", True),
    ("0.16.0", False),    # Triton kernels (vllm#33538)
    ("0.26.0", False),
    (None, False),
])
def test_sort_path_windows(version, sort_path):
    assert defaults.vllm_sort_sampler(version) is sort_path


def test_sort_path_peak_matches_the_logged_activation():
    """Qwen3-0.6B: 1,024 dummy requests x 151,936 logits on the sort path peak at 5.56 GiB."""
    arch = lookup_architecture("Qwen/Qwen3-0.6B", None, [])
    peak = cap.activation_peak_bytes(arch, 8192, 1024, 1, v1=True, sort_sampler=True)
    assert abs(peak / GiB - 5.56) < 0.15
    lean = cap.activation_peak_bytes(arch, 8192, 1024, 1, v1=True, sort_sampler=False)
    assert lean < peak / 3


def test_sampler_peak_does_not_shrink_with_tensor_parallelism():
    """Qwen3-32B logs 5.64 GiB of activation at TP 1 and at TP 2: every rank samples the whole vocabulary."""
    arch = lookup_architecture("Qwen/Qwen3-32B", None, [])
    tp1 = cap.activation_peak_bytes(arch, 8192, 1024, 1, v1=True, sort_sampler=True)
    tp2 = cap.activation_peak_bytes(arch, 8192, 1024, 2, v1=True, sort_sampler=True)
    assert tp1 == tp2
    assert abs(tp1 / GiB - 5.64) < 0.2


@pytest.mark.parametrize("model,tp,logged", [("Qwen/Qwen3-0.6B", 1, 64.45), ("Qwen/Qwen3-32B", 1, 4.45),
                                             ("Qwen/Qwen3-32B", 2, 34.49)])
def test_pool_on_the_sort_path_matches_the_log(model, tp, logged):
    est = cap.estimate(served(model, version="0.14.0", gpu="H100-80GB", gpu_memory_utilization=0.9, max_model_len=16000,
                              tensor_parallel_size=tp, enable_prefix_caching=True, block_size=128))
    assert est.kv_pool_source == "estimated"
    assert abs(est.pool_bytes / GiB - logged) / logged < 0.10
    assert any("PyTorch sort path" in r for r in est.reasons)


def test_flashinfer_window_names_its_assumption():
    """0.10.1.1 with FlashInfer: Qwen2-7B at 0.5 of an A100 80GB leaves 24.83 GiB; the reason says a pip install
    without FlashInfer would leave less."""
    est = cap.estimate(served("Qwen/Qwen2-7B-Instruct", version="0.10.1.1", gpu="A100-80GB", gpu_memory_utilization=0.5,
                              max_model_len=16384))
    assert abs(est.pool_bytes / GiB - 24.83) / 24.83 < 0.05
    assert any("FlashInfer" in r and "pip install" in r for r in est.reasons)
    newest = cap.estimate(served("Qwen/Qwen2-7B-Instruct", version="0.26.0", gpu="A100-80GB", max_model_len=16384))
    assert not any("FlashInfer" in r for r in newest.reasons)


@pytest.mark.parametrize("env,version,sort_path", [("0", "0.11.0", True), ("1", "0.14.0", False), ("0", "0.14.0", True),
                                                   ("0", "0.26.0", False), ("$(SAMPLER)", "0.14.0", True)])
def test_flashinfer_sampler_env_selects_the_path(env, version, sort_path):
    """VLLM_USE_FLASHINFER_SAMPLER in the container: 0 takes the native path (a sort before the Triton kernels),
    1 takes FlashInfer; a variable is not a value and leaves the version's default."""
    m = served("Qwen/Qwen3-0.6B", version=version, gpu="H100-80GB", max_model_len=16000)
    m.env["VLLM_USE_FLASHINFER_SAMPLER"] = Setting("VLLM_USE_FLASHINFER_SAMPLER", env, m.location, "env")
    est = cap.estimate(m)
    assert any("PyTorch sort path" in r for r in est.reasons) is sort_path
    assert not any("pip install" in r for r in est.reasons)


def test_sglang_lowers_a_vision_models_default_fraction():
    """SGLang memory_hook.py adjust_mem_fraction_for_vlm: x0.95 for a ViT-L/14; Qwen2.5-VL's 1280-wide encoder
    (no num_hidden_layers field: SGLang's 24 stands in) gets 0.95 x (1 - 0.1 x 0.5625); text models and a
    written fraction are untouched."""
    assert defaults.sglang_vlm_fraction_factor() == pytest.approx(0.95)
    assert defaults.sglang_vlm_fraction_factor(24, 1280) == pytest.approx(0.95 * 0.94375)
    assert defaults.sglang_vlm_fraction_factor(64, 4096) == pytest.approx(0.95 * 0.8)
    vl = cap.estimate(served("Qwen/Qwen2.5-VL-3B-Instruct", engine="sglang", version="0.5.23", gpu="H100-80GB"))
    text = cap.estimate(served("Qwen/Qwen2.5-3B-Instruct", engine="sglang", version="0.5.23", gpu="H100-80GB"))
    assert vl.gpu_memory_utilization == pytest.approx(text.gpu_memory_utilization * 0.95)
    assert any("vision model" in r for r in vl.reasons)
    written = cap.estimate(served("Qwen/Qwen2.5-VL-3B-Instruct", engine="sglang", version="0.5.23", gpu="H100-80GB",
                                  mem_fraction_static=0.8))
    assert written.gpu_memory_utilization == 0.8 and not any("vision model" in r for r in written.reasons)


def _v2_lite_on_l4(pp: int):
    return cap.estimate(served("deepseek-ai/DeepSeek-V2-Lite", version="0.9.2", gpu="L4", gpu_memory_utilization=0.9,
                               max_model_len=1024, tensor_parallel_size=2, pipeline_parallel_size=pp))


def test_pipeline_stages_keep_the_first_stages_pool():
    """vllm#20665 (DeepSeek-V2-Lite, 4 x L4, TP 2 x PP 2, 0.9.2): the first stage (14 of 27 layers, no sampler
    warm-up) logs 12.13 GiB, the last (13 layers and the warm-up) 11.33 GiB; the engine keeps the smaller pool in
    tokens, the first stage's: 807,792 tokens."""
    est = _v2_lite_on_l4(2)
    assert est.layout.full_bytes_per_token == 14 * 576 * 2  # the latent (512 + 64) of 14 layers, bf16
    assert abs(est.kv_pool_tokens - 807_792) / 807_792 < 0.12
    assert any("pipeline stages" in r for r in est.reasons)
    # the sampler warm-up is counted on the last stage only: with it on the first, the pool was 674,112 tokens
    sampler = cap.activation_peak_bytes(est.architecture, 2048, 256, 2, v1=True, sort_sampler=True)
    forward = cap.activation_peak_bytes(est.architecture, 2048, 0, 2)
    assert sampler > forward
    assert est.kv_pool_tokens > 674_112 + 0.8 * (sampler - forward) / est.kv_bytes_per_token


def test_pipeline_last_stage_binds_when_its_layers_are_as_many():
    """An even split (Llama-3-8B, 32 layers over 2 stages): the last stage has as many layers plus the warm-up,
    so its pool is the smaller one and the estimate is the single-stage arithmetic."""
    kw = dict(version="0.9.2", gpu="L4", gpu_memory_utilization=0.9, max_model_len=1024, tensor_parallel_size=2)
    two = cap.estimate(served("meta-llama/Meta-Llama-3-8B", pipeline_parallel_size=2, **kw))
    assert two.layout.full_bytes_per_token == 16 * 4 * 128 * 2 * 2
    assert any("pipeline stages" in r for r in two.reasons)
    one_stage = cap.activation_peak_bytes(two.architecture, 2048, 256, 2, v1=True, sort_sampler=True)
    assert two.pool_bytes < two.gpu_memory_bytes * 0.9 - two.weight_bytes_per_gpu - one_stage
