"""vLLM's loaded size of gpt-oss's MXFP4 experts by MoE backend (capacity/mxfp4.py), against the sizes published
start-up logs print as ``Model loading took X GiB``."""

from __future__ import annotations

import pytest

from cfgcheck.capacity import GiB, lookup_architecture
from cfgcheck.capacity.gpus import gpu_by_name
from cfgcheck.capacity.mxfp4 import vllm_backend, vllm_weight_bytes
from cfgcheck.model import Location, Setting


class _Served:
    def __init__(self, env: dict | None = None) -> None:
        loc = Location("x.yaml", 1, 1)
        self.env = {k: Setting(k, v, loc, k) for k, v in (env or {}).items()}


@pytest.mark.parametrize("model_id, gpu, version, tp, logged, backend, source", [
    # vllm#23278: H100 PCIe, 0.10.1 (torch 2.7.1): "Weight-only FP4 compression ... leveraging the Marlin kernel"
    ("openai/gpt-oss-120b", "H100-80GB", "0.10.1", 1, 65.9651, "marlin", "vllm#23278"),
    # vllm#33155 (0.14.1, "Using Triton backend") and llm-d-benchmark's H100 row
    ("openai/gpt-oss-120b", "H100-80GB", "0.14.1", 1, 64.38, "triton", "vllm#33155"),
    ("openai/gpt-oss-20b", "H100-80GB", "0.14.0", 1, 13.47, "triton", "llm-d-benchmark"),
    # myoceane.fr (A100 80GB, 0.19.0) and the GB10 log (0.13.0, "Using Marlin backend")
    ("openai/gpt-oss-20b", "A100-80GB", "0.19.0", 1, 13.72, "marlin", "myoceane.fr"),
    ("openai/gpt-oss-20b", "GB10", "0.13.0", 1, 13.7193, "marlin", "TW-10519/VLLM-ROUTER logs/vllm.log"),
    # dennislee22/vLLM-benchmarking: four A100 80GB at TP 4, 0.10.1.1, per rank
    ("openai/gpt-oss-120b", "A100-80GB", "0.10.1.1", 4, 17.2217, "marlin", "dennislee22/vLLM-benchmarking"),
])
def test_loaded_size_matches_the_logged_size(model_id, gpu, version, tp, logged, backend, source) -> None:
    arch = lookup_architecture(model_id)
    per_rank, chosen = vllm_weight_bytes(_Served(), arch, gpu_by_name(gpu), version, tp, 1)
    assert chosen == backend, source
    assert per_rank / GiB == pytest.approx(logged, rel=0.01), source


def test_triton_holds_the_scales_twice_and_marlin_pads_the_shapes() -> None:
    # the two backends differ on one GPU by what mxfp4.py's process_weights_after_loading and create_weights do
    arch = lookup_architecture("openai/gpt-oss-120b")
    h100 = gpu_by_name("H100-80GB")
    triton, _ = vllm_weight_bytes(_Served(), arch, h100, "0.14.0", 1, 1)
    marlin, chosen = vllm_weight_bytes(_Served({"VLLM_MXFP4_USE_MARLIN": "1"}), arch, h100, "0.14.0", 1, 1)
    assert chosen == "marlin" and 1.5 * GiB < marlin - triton < 2 * GiB


def test_backend_by_capability_and_version() -> None:
    none = {}
    assert vllm_backend(gpu_by_name("B200"), "0.14.0", none) == "flashinfer"
    assert vllm_backend(gpu_by_name("RTX-5090"), "0.11.0", none) == "triton"  # before vllm#29317's limit
    assert vllm_backend(gpu_by_name("RTX-5090"), "0.14.0", none) == "marlin"
    assert vllm_backend(gpu_by_name("L4"), "0.14.0", none) == "marlin"
