"""The pool as each engine version computes it: V0 profile, MLA latent vs expanded, speculative decoding,
LoRA, KV connectors, SGLang's --max-total-tokens, and 'unknown' with a reason for every missing input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfgcheck import capacity as cap
from cfgcheck.capacity.architecture import normalize_model_id
from cfgcheck.model import Location, ServedModel, Setting

GiB = 1024**3


def served(model_id, engine="vllm", version="0.26.0", gpu="NVIDIA-H100-80GB-HBM3", **settings) -> ServedModel:
    loc = Location("m.yaml", 1, 1)
    m = ServedModel(name="m", kind="Deployment", path="m.yaml", document=0, location=loc, engine=engine,
                    engine_version=version)
    m.model = Setting("model", model_id, loc, "model")
    for name, value in settings.items():
        m.add(Setting(name, value, loc, name))
    m.gpu_product = gpu
    return m


def write_config(root: Path, name: str, cfg: dict) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    return root


LLAMA_LIKE = {"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "hidden_size": 4096, "vocab_size": 128256, "max_position_embeddings": 8192}


def test_config_without_intermediate_size_is_unknown_with_the_reason(tmp_path):
    root = write_config(tmp_path, "acme/tiny", LLAMA_LIKE)
    est = cap.estimate(served("acme/tiny", max_model_len=8192), {"model_configs": str(root)})
    assert est.kv_pool_source == "unknown" and est.kv_pool_tokens is None and est.max_concurrency is None
    assert any("intermediate_size" in r for r in est.reasons), est.reasons


def test_config_without_intermediate_size_raises_no_cfg202(tmp_path):
    import importlib

    from cfgcheck.context import RuleContext
    from cfgcheck.registry import all_rules

    root = write_config(tmp_path, "acme/tiny", LLAMA_LIKE)
    options = {name: value for r in all_rules() for name, value in r.defaults.items()}
    rule = importlib.import_module("rules.context_exceeds_kv_pool")
    findings = list(rule.check(served("acme/tiny", max_model_len=8192), RuleContext(options, {"model_configs": str(root)})))
    assert findings == []


def test_weights_beyond_the_budget_say_so():
    est = cap.estimate(served("meta-llama/Llama-3.1-70B-Instruct", gpu="Tesla-T4", max_model_len=4096))
    assert est.kv_pool_tokens == 0 and est.max_concurrency == 0
    assert any("no room for the KV cache" in r and "GiB" in r for r in est.reasons)


def test_v0_without_chunked_prefill_profiles_the_whole_context():
    short = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", version="0.6.3", max_model_len=4096))
    long = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", version="0.6.3", max_model_len=32768))
    chunked = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", version="0.6.3", max_model_len=65536))
    # the profile prefills max_model_len tokens: a longer context leaves less for the pool (at 4,096 tokens the
    # sampler's sort over 256 x 128,256 logits, 1.2 GiB, is the larger term; at 32,768 the forward, 3.1 GiB)
    assert long.pool_bytes < short.pool_bytes - GiB
    assert any("whole max_model_len" in r for r in long.reasons)
    # above 32K V0 switches chunked prefill on: a 512-token profile
    assert chunked.pool_bytes > long.pool_bytes and any("chunked prefill" in r for r in chunked.reasons)
    assert cap.default_max_num_batched_tokens("vllm", "0.6.3", None, 20000, None) == 20000
    assert cap.default_max_num_batched_tokens("vllm", "0.6.3", None, 65536, None) == 512
    assert cap.default_max_num_batched_tokens("vllm", "0.6.3", None, 65536, False) == 65536


def test_v1_profile_does_not_grow_with_max_model_len():
    a = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", version="0.10.2", max_model_len=4096))
    b = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", version="0.10.2", max_model_len=32768))
    assert a.pool_bytes == b.pool_bytes


def test_mla_expanded_before_the_latent_cache():
    kw = dict(gpu="NVIDIA-A100-SXM4-80GB", max_model_len=8192)
    old = cap.estimate(served("deepseek-ai/DeepSeek-V2-Lite-Chat", version="0.6.3", **kw))
    new = cap.estimate(served("deepseek-ai/DeepSeek-V2-Lite-Chat", version="0.7.2", **kw))
    arch = new.architecture
    expanded = 2 * arch.num_attention_heads * (arch.qk_nope_head_dim + arch.qk_rope_head_dim) * 2 * arch.num_layers
    assert old.kv_bytes_per_token == expanded
    assert new.kv_bytes_per_token == (arch.kv_lora_rank + arch.qk_rope_head_dim) * 2 * arch.num_layers
    assert old.kv_bytes_per_token / new.kv_bytes_per_token > 10
    assert any("expanded" in r for r in old.reasons)


def test_mtp_speculative_adds_a_layer_to_the_pool_and_unknown_draft_is_an_upper_bound():
    base = served("deepseek-ai/DeepSeek-V3", gpu="NVIDIA-H200", tensor_parallel_size=8, max_model_len=32768)
    mtp = served("deepseek-ai/DeepSeek-V3", gpu="NVIDIA-H200", tensor_parallel_size=8, max_model_len=32768,
                 speculative_config='{"method": "deepseek_mtp", "num_speculative_tokens": 1}')
    a, b = cap.estimate(base), cap.estimate(mtp)
    layers = a.architecture.num_layers
    assert b.kv_bytes_per_token == a.kv_bytes_per_token * (layers + 1) // layers
    assert any("MTP" in r for r in b.reasons)
    draft = served("meta-llama/Llama-3.1-70B-Instruct", tensor_parallel_size=4,
                   speculative_config={"model": "acme/unknown-draft", "num_speculative_tokens": 5})
    est = cap.estimate(draft)
    plain_pool = cap.estimate(served("meta-llama/Llama-3.1-70B-Instruct", tensor_parallel_size=4)).kv_pool_tokens
    # vLLM's draft shares the budget: not deducted, the pool is an upper bound (no low end), not blank
    assert est.kv_pool_source == "estimated" and est.kv_pool_tokens == plain_pool
    assert est.kv_pool_tokens_low is None and est.kv_pool_tokens_high > est.kv_pool_tokens
    assert any("acme/unknown-draft" in r and "at most" in r for r in est.reasons)
    known = served("meta-llama/Llama-3.1-70B-Instruct", tensor_parallel_size=4,
                   speculative_config={"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 5})
    plain = cap.estimate(served("meta-llama/Llama-3.1-70B-Instruct", tensor_parallel_size=4))
    with_draft = cap.estimate(known)
    assert with_draft.kv_bytes_per_token > plain.kv_bytes_per_token
    assert with_draft.kv_pool_tokens < plain.kv_pool_tokens


def test_lora_slots_and_cpu_offload_and_connectors():
    plain = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192))
    lora = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192, enable_lora=True,
                               max_loras=8, max_lora_rank=64))
    assert lora.pool_bytes < plain.pool_bytes and any("LoRA: 8 slot(s) of rank 64" in r for r in lora.reasons)
    offload = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192, cpu_offload_gb=4))
    assert offload.pool_bytes - plain.pool_bytes == 4 * GiB
    nccl = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192,
                               kv_transfer_config='{"kv_connector": "P2pNcclConnector", "kv_role": "kv_producer"}'))
    assert plain.pool_bytes - nccl.pool_bytes == int(1e9)
    lmcache = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192,
                                  kv_transfer_config={"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}))
    assert any("LMCacheConnectorV1" in r for r in lmcache.reasons)


def test_sglang_max_total_tokens_caps_the_pool():
    free = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="sglang", version="0.5.3"))
    capped = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="sglang", version="0.5.3",
                                 max_total_tokens=100000))
    assert free.kv_pool_tokens > 100000 and capped.kv_pool_tokens == 100000
    assert any("--max-total-tokens" in r for r in capped.reasons)


def test_every_estimate_lists_its_assumptions():
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", max_model_len=8192))
    text = " ".join(est.reasons)
    assert "weights" in text and "budget" in text and "profile" in text


@pytest.mark.parametrize("raw, expected", [
    ("/root/.cache/huggingface/hub/models--meta-llama--Meta-Llama-3.1-8B-Instruct/snapshots/abc", "meta-llama/Meta-Llama-3.1-8B-Instruct"),
    ("/workspace/models/models--Qwen--Qwen3-8B", "Qwen/Qwen3-8B"),
])
def test_hf_cache_folder_names_the_model(raw, expected):
    assert normalize_model_id(raw) == expected


def test_tokenspeed_pool_follows_its_memory_profile():
    est = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="tokenspeed", version="0.1.1", max_model_len=8192))
    assert est.kv_pool_source == "estimated" and est.gpu_memory_utilization == 0.95
    assert any("CUDA-graph reserve" in r for r in est.reasons)
    capped = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", engine="tokenspeed", version="0.1.1",
                                 max_model_len=8192, max_total_tokens=50000))
    assert capped.kv_pool_tokens == 50000
    vlm = cap.estimate(served("Qwen/Qwen2.5-VL-3B-Instruct", engine="tokenspeed", version="0.1.1", max_model_len=8192))
    assert vlm.gpu_memory_utilization == 0.9
