"""What one GPU needs when the configuration names none (capacity/needs.py), its rows in ``cfgcheck capacity``
and CFG202's finding when no bundled GPU of the vendor holds one full-length request."""

from __future__ import annotations

import json

from cfgcheck.capacity import concurrency_at, estimate
from cfgcheck.capacity.gpus import bundled_gpus, gpu_by_name
from cfgcheck.capacity.needs import NEEDS_FIELDS, memory_needs
from cfgcheck.capacity.report import capacity_rows, render_capacity
from helpers import lint_text

GiB = 1024**3
DESIGN_FIELDS = ("gpu", "gpu_memory_bytes", "gpus", "tensor_parallel_size", "max_model_len", "max_num_seqs",
                 "gpu_memory_utilization", "kv_cache_dtype", "kv_bytes_per_token", "kv_pool_tokens", "kv_pool_source",
                 "max_concurrency")


def deployment(model: str, args: str = "", resource: str = "nvidia.com/gpu", count: int = 1,
               image: str = "vllm/vllm-openai:v0.26.0", selector: str = "", length: int = 32768) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:{selector}
      containers:
        - name: vllm
          image: {image}
          command: ["vllm", "serve", "{model}"]
          args: ["--max-model-len", "{length}"{args}]
          resources:
            limits:
              {resource}: {count}
"""


def served(tmp_path, text: str):
    result = lint_text(tmp_path, text)
    assert len(result.models) == 1
    return result, result.models[0]


def test_needs_of_a_70b_on_one_unnamed_gpu_match_the_pool_on_each_bundled_gpu(tmp_path) -> None:
    _, model = served(tmp_path, deployment("meta-llama/Llama-3.1-70B-Instruct"))
    needs = memory_needs(model, {})
    assert needs is not None and needs.vendor == "nvidia" and needs.utilization == 0.92  # vLLM 0.26's default
    weights = 70.55e9 * 2  # bf16, the table's parameter count
    assert weights / 0.92 < needs.one_request_bytes < 180 * GiB
    assert [g.name for g in needs.fits_on] == ["B200", "GB200", "B300"]
    assert {"H200", "H100-80GB", "L4", "A10G", "L40S"} <= {g.name for g in needs.too_small}
    for gpu in needs.fits_on + needs.too_small:  # the same estimate steps decide, GPU by GPU
        trial = estimate(model, {}, gpu)
        assert (concurrency_at(trial, 32768) >= 1) == (gpu in needs.fits_on), gpu.name
    assert max(g.memory_bytes for g in needs.too_small) < needs.one_request_bytes <= min(g.memory_bytes for g in needs.fits_on)
    # the default max_num_seqs on a big GPU is 1,024 full-length requests: 10 TiB of KV cache
    assert needs.all_seqs_bytes is None
    assert "fits on NVIDIA GPUs of 192 GB and larger; not on GH200-144GB 144 GB, H200 141 GB" in needs.summary()


def test_max_num_seqs_need_and_a_gpu_that_fits_everything(tmp_path) -> None:
    text = deployment("meta-llama/Llama-3.1-8B-Instruct", ', "--max-num-seqs", "8"')
    _, model = served(tmp_path, text)
    needs = memory_needs(model, {})
    kv_one = 32768 * 131072  # 128 KiB per token (32 layers x 8 KV heads x 128 x 2 x bf16)
    assert needs.one_request_bytes < needs.all_seqs_bytes
    assert needs.all_seqs_bytes - needs.one_request_bytes >= 7 * kv_one / needs.utilization - 64 * 1024**2
    assert "max_num_seqs 8 full-length requests at once need" in needs.summary()
    assert "L4" not in [g.name for g in needs.fits_on] or needs.one_request_bytes <= gpu_by_name("L4").memory_bytes


def test_capacity_json_keeps_the_design_fields_and_adds_the_needs(tmp_path) -> None:
    _, model = served(tmp_path, deployment("meta-llama/Llama-3.1-70B-Instruct", ', "--gpu-memory-utilization", "0.95"'))
    row = capacity_rows([model], {})[0]
    assert set(DESIGN_FIELDS) <= set(row) and row["kv_pool_source"] == "unknown" and row["gpu"] is None
    assert row["min_gpu_memory_bytes"] > 0 and row["fits_on"][0] == "B200"
    assert row["max_num_seqs_gpu_memory_bytes"] is None and "L4" in row["too_small"]
    assert any(r.startswith("needs ") and "gpu_memory_utilization 0.95" in r for r in row["reasons"])
    text = render_capacity([model], {})
    assert "NEEDS/GPU" in text.splitlines()[0]
    assert f"{row['min_gpu_memory_bytes'] / GiB:.1f} GiB" in text.splitlines()[1]
    json.dumps(row)


def test_no_needs_when_the_gpu_is_known_or_not_a_gpu(tmp_path) -> None:
    selector = "\n      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3"
    _, model = served(tmp_path, deployment("meta-llama/Llama-3.1-8B-Instruct", selector=selector))
    row = capacity_rows([model], {})[0]
    assert row["gpu"] == "H100-80GB" and row["kv_pool_source"] == "estimated"
    assert {name: row[name] for name in NEEDS_FIELDS} == dict.fromkeys(NEEDS_FIELDS)
    assert render_capacity([model], {}).splitlines()[1].rstrip().endswith("-")
    _, tpu = served(tmp_path, deployment("meta-llama/Llama-3.1-8B-Instruct", resource="google.com/tpu", count=4,
                                         image="vllm/vllm-tpu:v0.11.1"))
    assert memory_needs(tpu, {}) is None
    _, unknown = served(tmp_path, deployment("example/unknown-model-9b"))
    assert memory_needs(unknown, {}) is None


def test_the_vendor_of_the_resource_chooses_the_gpus(tmp_path) -> None:
    _, model = served(tmp_path, deployment("meta-llama/Llama-3.1-70B-Instruct", resource="amd.com/gpu",
                                           image="rocm/vllm:latest"))
    needs = memory_needs(model, {})
    amd = {g.name for g in bundled_gpus("amd")}
    assert needs.vendor == "amd" and {g.name for g in needs.fits_on + needs.too_small} == amd
    assert {g.name for g in needs.fits_on} == {"MI300X", "MI325X"}


def test_cfg202_when_no_bundled_gpu_holds_the_weights(tmp_path) -> None:
    result, _ = served(tmp_path, deployment("meta-llama/Llama-3.1-405B-Instruct"))
    found = [f for f in result.findings if f.code == "CFG202"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "does not fit one request on any NVIDIA GPU cfgcheck knows (none is stated): on the largest, B300" in found[0].message
    assert "not even a short request fits" in found[0].message and "shard the model" in found[0].remediation
    amd, _ = served(tmp_path, deployment("meta-llama/Llama-3.1-405B-Instruct", resource="amd.com/gpu"))
    assert "on any AMD GPU" in next(f.message for f in amd.findings if f.code == "CFG202")


def test_cfg202_without_a_gpu_is_a_warning_when_the_weights_are_assumed(tmp_path) -> None:
    # a local path matched by its name, and a checkpoint quantized at load: the size is not a fact
    local, _ = served(tmp_path, deployment("/models/Llama-3.1-405B-Instruct"))
    finding = next(f for f in local.findings if f.code == "CFG202")
    assert finding.severity == "warning" and "assumed:" in finding.message
    quantized, _ = served(tmp_path, deployment("meta-llama/Llama-3.1-405B-Instruct", ', "--quantization", "fp8"'))
    finding = next(f for f in quantized.findings if f.code == "CFG202")
    assert finding.severity == "warning" and "quantized at load (fp8)" in finding.message


def test_cfg202_without_a_gpu_is_silent_when_a_large_gpu_holds_it(tmp_path) -> None:
    # 70B bf16 on one GPU needs ~160 GiB: a B200 holds it. No GPU is guessed, so nothing is flagged.
    result, _ = served(tmp_path, deployment("meta-llama/Llama-3.1-70B-Instruct"))
    assert not [f for f in result.findings if f.code == "CFG202"]


def test_moe_experts_over_data_parallel_ranks_are_not_sized(tmp_path) -> None:
    # vLLM splits an MoE model's experts over DP x TP ranks: one GPU holds far less than weights / TP
    text = deployment("deepseek-ai/DeepSeek-R1", ', "--data-parallel-size", "16"', count=8)
    result, model = served(tmp_path, text)
    assert memory_needs(model, {}) is None
    assert not [f for f in result.findings if f.code == "CFG202"]
    alone, model = served(tmp_path, deployment("deepseek-ai/DeepSeek-R1"))
    assert memory_needs(model, {}).fits_on == []
    assert next(f for f in alone.findings if f.code == "CFG202").severity == "error"


def test_a_gpu_within_the_estimates_error_band_is_borderline(tmp_path) -> None:
    # Qwen3-32B at its full 40,960 tokens on one 80 GB GPU is at the edge: the estimate puts an H100
    # (1,024 default sequences, an 8,192-token profile) just short and an A100-80GB (256) just over.
    _, model = served(tmp_path, deployment("Qwen/Qwen3-32B", length=40960))
    needs = memory_needs(model, {})
    assert [g.name for g in needs.borderline] == ["H100-80GB"]
    assert "A100-80GB" in [g.name for g in needs.fits_on] and "L40S" in [g.name for g in needs.too_small]
    assert capacity_rows([model], {})[0]["borderline"] == ["H100-80GB"]
    assert "borderline (within the estimate's 10%): H100-80GB 80 GB" in needs.summary()
    # the A100-80GB's 79.2 GiB is enough under its defaults: the smallest memory that holds one request
    assert needs.summary().startswith("needs 79.2 GiB per GPU (weights 61.1 GiB) for one 40,960-token request")


def test_the_size_it_fits_from_is_exact_when_cards_of_one_nominal_size_differ(tmp_path) -> None:
    # 131,072 tokens of a 3B model: a 23.6 GiB RTX 3090 holds it, the 22 GiB L4 and A10G (also "24 GB") only
    # within the estimate's margin
    _, model = served(tmp_path, deployment("meta-llama/Llama-3.2-3B-Instruct", length=131072,
                                           args=', "--gpu-memory-utilization", "0.9"'))
    text = memory_needs(model, {}).summary()
    assert "fits on NVIDIA GPUs of 23.6 GiB (RTX-3090) and larger; not on RTX-4000-Ada 20 GB, V100-16GB 16 GB" in text
    assert "borderline (within the estimate's 10%): L4 24 GB, A10 24 GB, A10G 24 GB" in text
