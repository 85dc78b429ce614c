"""What the engine version loads and reserves beyond the architecture: the weights at the served dtype, the
memory fraction SGLang really applies, and the stated uncertainty of an estimated pool.

Each fact is an engine-version behaviour measured on a published start-up log (tests/data/startup_logs.json,
bench/accuracy.py):

* ``--dtype``: vLLM and SGLang cast an unquantized checkpoint to the served dtype when they load it
  (``vllm/model_executor/model_loader``, ``ModelConfig.dtype``), so ``--dtype float32`` doubles a bf16
  checkpoint's weights and the profile run's activations, not only the KV bytes; ``auto`` serves a float32
  checkpoint at 16 bits (vLLM ``_get_and_verify_dtype``).
* SGLang's model runner cut every memory fraction of a multimodal model up to 0.4.8, and its default fraction
  reserves memory for a speculative draft (``engines.defaults``).
* Where the communicators' memory lands: vLLM counted NCCL's buffers as non-torch memory until 0.11 (large on
  NVSwitch systems), SGLang loses them at its memory fraction.
* The pool's range: the class's measured error (bench/RESULTS.md, the accuracy section) around the estimate.
"""

from __future__ import annotations

from ..engines import defaults
from .architecture import DTYPE_BYTES, Architecture, quant_bits_from_text
from .tables import GiB

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

# Relative error of the estimate by class, from bench/accuracy.py over the cited start-up logs (the median
# absolute error of the class, rounded up to a whole percent, the wider class winning). bench/RESULTS.md
# records the table these come from; tests/capacity/test_accuracy.py keeps them at least the measured medians.
CLASS_ERROR = {"dense": 0.02, "MoE": 0.02, "MLA": 0.02, "hybrid": 0.03, "quantized": 0.03, "multimodal": 0.02,
               "multi-GPU": 0.02}
# V1's sampler warm-up holds 2 fp32 copies of the logits of every dummy request on the FlashInfer path (0.10.x);
# with the Triton top-k/top-p kernels, the default from VLLM_SORT_SAMPLER_WINDOWS' end (0.16, vllm#33538), the
# 0.19 logs of gpt-oss-20b (201,088 tokens) and Gemma 4 26B-A4B (262,144) on an A100 80GB (myoceane.fr,
# tests/data/startup_logs.json) measure nearer 4. From 0.21, whose profile run also estimates the CUDA graphs,
# the 0.27.1 log of a 248,320-token Qwen3.8 on two RTX 3090s measures 2 again: 4 is kept to the measured window.
SAMPLER_TRITON_4_COPIES = ((0, 16, 0), (0, 21, 0))
SAMPLER_COPIES_FLASHINFER = 2.0
SAMPLER_COPIES_TRITON = 4.0
# Non-torch memory vLLM deducts from the budget on one GPU. V1 measures the non-torch growth during the profile
# run from the snapshot its worker takes once the CUDA context exists (vllm/v1/worker/gpu_worker.py init_device
# ``init_snapshot``, determine_available_memory ``memory_profiling``), so the context is not counted; the start-up
# logs that print the term measure 0.02-0.07 GiB at 0.10.2 (kolyangg/mlops-assignment, ShanghaoLi0913/memory-aware_RLHF,
# mrpid12org/imageworks), 0.06 at 0.12.0 (2215860382/VedioSifter) and 0.13-0.14 at 0.14.0 (llm-d-benchmark's five
# H100 rows; tests/data/startup_logs.json cites them): 0.13, most rows' figure, is kept. V0 counted the context
# and cuBLAS workspaces (0.35 GiB logged by vllm#10517 at 0.6.4).
# With tensor or pipeline parallelism NCCL's buffers decide the term, and where they are counted depends on the version:
# until 0.11 the worker took its snapshot before init_worker_distributed_environment, so the buffers NCCL allocates at
# the communicators' warm-up collective were non-torch growth; vllm#25359 (0.11.0) initialises the distributed
# environment first ("BEFORE taking memory snapshot. This ensures NCCL buffers are allocated before we measure",
# vllm/v1/worker/gpu_worker.py init_device), leaving the custom all-reduce buffers: 0.54 and 0.55 GiB in llm-d's two
# TP 2 H100 rows at 0.14.0. Before 0.11 the buffers' size follows the interconnect: NVLink SHARP (NVLS), which NCCL
# uses on the NVSwitch systems of Hopper and later data-center GPUs (NCCL_NVLS_ENABLE, NCCL's environment docs), takes
# ~2.3 GiB a rank (DaisukeTakai's two TP 8 H100 logs at 0.10.0: 71.33 - 7.69 - 55.62 and 71.33 - 27.67 - 35.65 GiB
# less a 5.68 GiB activation peak); PCIe cards and A100s print 0.25-0.30 GiB (vllm#15815 L40S and the RTX 4090 log at
# 0.7.x; dennislee22's A100 TP 2 logs at 0.10.1.1 leave 0.67 GiB for activations and non-torch memory together).
VLLM_NON_TORCH_V1_SINCE = (0, 10, 0)
VLLM_NON_TORCH_V1 = int(0.13 * GiB)
VLLM_NON_TORCH_V0 = int(0.45 * GiB)
VLLM_NCCL_BEFORE_SNAPSHOT_SINCE = (0, 11, 0)
VLLM_NON_TORCH_TP = int(0.55 * GiB)
VLLM_NON_TORCH_TP_NVLS = int(2.3 * GiB)
VLLM_NON_TORCH_TP_PCIE = int(0.30 * GiB)
NVLS_CAPABILITY = (9, 10)  # major compute capabilities of the NVSwitch parts: Hopper and data-center Blackwell
# The 0.55 GiB from 0.11 is what the fast all-reduce paths of an NVLink system hold. vLLM turns its custom
# all-reduce off for more than two GPUs that are not fully NVLink-connected ("Custom allreduce is disabled because
# it's not supported on more than two PCIe-only GPUs", vllm/distributed/device_communicators/custom_all_reduce.py,
# ``world_size > 2 and not fully_connected``) and its symmetric-memory all-reduce needs Hopper or later, so a TP group
# of three or more cards with no NVLink (Turing, GA10x, Ada and consumer Blackwell parts: two-card bridges at most)
# keeps a single GPU's non-torch term. Data-center parts (V100, A100, H100, B200) may sit on NVLink: kept.
PCIE_ONLY_CAPABILITY = ("7.5", "8.6", "8.9", "12.0", "12.1")
# SGLang sizes its pool from the memory free once the distributed environment is up: init_torch_distributed returns
# the free memory after it as total_gpu_memory, and profile_max_num_token keeps ``available - total_gpu_memory x
# (1 - mem_fraction_static)`` (sglang/srt/model_executor/model_runner.py, 0.4.x-0.5.x), so what the communicators take
# is lost at the fraction. On an NVSwitch box that is ~2 GiB a rank: sglang#11716 logs "Init torch distributed ends.
# mem usage=1.77-2.01 GB" on eight H200s (SGLang's "GB" are GiB); on four L4s (the 0.4.3.post4 log in
# tests/data/startup_logs.json) weights begin loading with 21.63 of 22.03 GiB free, context included.
SGLANG_DIST_INIT_NVSWITCH = int(2.0 * GiB)
# SGLang's default fraction keeps this much back when a speculative algorithm other than NGRAM runs (0.4.8-0.5.x
# server_args.py: "draft model and larger cuda graph buffers", 2 GiB; STANDALONE drafts 6 GiB from 0.5.3).
SGLANG_SPEC_RESERVE = 2 * GiB
SGLANG_STANDALONE_RESERVE = 6 * GiB


def served_dtype_bytes(model: Any, arch: Architecture) -> int:
    """Bytes per weight and activation element the engine serves at: ``--dtype`` as written, else the
    checkpoint's dtype, with a float32 checkpoint served at 16 bits."""
    written = str(model.value("dtype") or "auto").lower()
    if written not in ("auto", "", "none") and written in DTYPE_BYTES:
        return DTYPE_BYTES[written]
    return min(arch.dtype_bytes, 2)


def loaded_weight_bytes(model: Any, arch: Architecture) -> int | None:
    """The weights one copy of the model takes once loaded: the checkpoint at the served dtype (an unquantized
    checkpoint is cast), a ``--quantization`` of an unquantized checkpoint at its bits."""
    weights = arch.weight_bytes_for(quantized_bits(model, arch))
    if weights is None or arch.weight_bits < 16 or arch.quantization or quantized_bits(model, arch):
        return weights
    return weights * served_dtype_bytes(model, arch) // max(1, arch.dtype_bytes)


def vllm_rope_cache_bytes(arch: Architecture, dtype_bytes: int) -> int:
    """The cos/sin cache of a linearly scaled RoPE, which vLLM builds for ``max_position_embeddings x factor``
    positions of ``head_dim`` values at the model dtype and keeps on every GPU (vllm/model_executor/layers/
    rotary_embedding.py LinearScalingRotaryEmbedding._compute_cos_sin_cache, shared by the layers through
    get_rope's cache). Gemma 3's global layers ask for factor 8 over 131,072 positions: 0.5 GiB at head_dim 256."""
    rs = arch.rope_scaling or {}
    if str(rs.get("rope_type") or rs.get("type") or "") != "linear" or not (rs.get("factor") and arch.max_position_embeddings):
        return 0
    return int(arch.max_position_embeddings * float(rs["factor"])) * arch.head_dim * dtype_bytes


def quantized_bits(model: Any, arch: Architecture) -> float | None:
    """Bits per weight a ``--quantization`` setting implies for an unquantized checkpoint, else None."""
    qsetting = model.value("quantization")
    if not (qsetting and arch.weight_bits >= 16):
        return None
    qb, _ = quant_bits_from_text(str(qsetting))
    if str(qsetting).lower() in ("bitsandbytes",):
        qb = 4.25
    if qb and arch.weight_bytes and (arch.weight_bytes_for(qb) or 0) >= arch.weight_bytes:
        return None  # the checkpoint's known size is already that small (a pre-quantized checkpoint)
    return qb


def weights_origin(model: Any, arch: Architecture) -> str:
    """How the weights' size was found, for the reasons ``cfgcheck capacity`` shows."""
    served = served_dtype_bytes(model, arch)
    cast = f", served as {served * 8}-bit" if served != arch.dtype_bytes and arch.weight_bits >= 16 \
        and not arch.quantization and not quantized_bits(model, arch) else ""
    if arch.weight_bytes:
        return "checkpoint size" + cast
    bits = f"{arch.weight_bits:g}-bit" + (f" {arch.quantization}" if arch.quantization else "")
    return f"{arch.estimated_params() / 1e9:.1f}B parameters at {bits}{cast}"


def vllm_sampler_logit_copies(version: str | None) -> float:
    """fp32 logits copies per (dummy request x vocabulary entry) the V1 sampler warm-up peaks at, off the sort path."""
    v = defaults.parse_version(version)
    lo, hi = SAMPLER_TRITON_4_COPIES
    return SAMPLER_COPIES_TRITON if v is not None and lo <= v < hi else SAMPLER_COPIES_FLASHINFER


def mlp_activation_elements(arch: Architecture, hidden: int, tp: int, dense_factor: float) -> float:
    """Activation elements per batched token the MLP holds at its peak in the profile's forward pass. A dense MLP:
    ``dense_factor`` copies of its intermediate width. An MoE layer runs vLLM's fused_experts
    (vllm/model_executor/layers/fused_moe/fused_moe.py), which holds three caches per token: (topk, N) for the
    gate/up projection, (topk, N / 2) after the activation and (topk, hidden) for the experts' outputs before
    their weighted sum, where N is twice the expert's intermediate size over the tensor-parallel ranks; the last
    is not sharded by TP."""
    if arch.num_experts and arch.experts_per_token:
        n = 2 * arch.intermediate_size / max(1, tp)
        return arch.experts_per_token * (1.5 * n + hidden)
    return dense_factor * arch.intermediate_size / max(1, tp)


def vllm_non_torch_bytes(version: str | None, ranks: int, gpu: Any = None, reasons: list[str] | None = None,
                         tensor_parallel: int | None = None) -> int:
    """The non-torch memory vLLM ``version`` deducts on each of ``ranks`` GPUs (tensor x pipeline parallel) of ``gpu``,
    ``tensor_parallel`` of them in the all-reduce group (all by default); ``reasons`` hears what is assumed about the
    interconnect."""
    v = defaults.parse_version(version)
    if ranks > 1:
        if v is None or v >= VLLM_NCCL_BEFORE_SNAPSHOT_SINCE:
            if (tensor_parallel or ranks) > 2 and pcie_only(gpu):
                if reasons is not None:
                    reasons.append(f"custom all-reduce off: vLLM does not run it on more than two {gpu.name} "
                                   "(no NVLink); non-torch memory as on one GPU")
                return VLLM_NON_TORCH_V1
            return VLLM_NON_TORCH_TP
        if not nvls_capable(gpu):
            return VLLM_NON_TORCH_TP_PCIE
        if reasons is not None:
            reasons.append(f"vLLM {version} counts NCCL's buffers as non-torch memory: NVLink SHARP's on an NVSwitch "
                           "system assumed (a PCIe pair holds less)")
        return VLLM_NON_TORCH_TP_NVLS
    return VLLM_NON_TORCH_V1 if v is None or v >= VLLM_NON_TORCH_V1_SINCE else VLLM_NON_TORCH_V0


def pcie_only(gpu: Any) -> bool:
    """An NVIDIA GPU no system joins to more than one other over NVLink (``PCIE_ONLY_CAPABILITY``)."""
    return getattr(gpu, "vendor", None) == "nvidia" and str(getattr(gpu, "compute_capability", "")) in PCIE_ONLY_CAPABILITY


def nvls_capable(gpu: Any) -> bool:
    """A GPU whose multi-GPU systems run NCCL's NVLink SHARP buffers: Hopper and data-center Blackwell (an H100
    PCIe pair is read as the SXM part the table's entry covers)."""
    capability = str(getattr(gpu, "compute_capability", None) or "")
    major = capability.split(".")[0]
    return getattr(gpu, "vendor", "nvidia") == "nvidia" and major.isdigit() and int(major) in NVLS_CAPABILITY


def sglang_distributed_bytes(gpu: Any, ranks: int, fraction: float, reasons: list[str]) -> int:
    """What SGLang's distributed init takes out of its budget on each of ``ranks`` GPUs, at the memory fraction."""
    if ranks <= 1 or not nvls_capable(gpu):
        return 0
    reasons.append(f"SGLang's communicators take ~{SGLANG_DIST_INIT_NVSWITCH / GiB:.1f} GiB a GPU on an NVSwitch system "
                   "before the memory its fraction applies to is measured")
    return int(SGLANG_DIST_INIT_NVSWITCH * fraction)


def sglang_fraction(model: Any, run: Any, fraction: float, reasons: list[str]) -> float:
    """The fraction SGLang ``run.version`` sizes its pool with: a multimodal model's cut in the model runner of
    0.4.x (every fraction), and the speculative reserve of a defaulted fraction."""
    cut = defaults.sglang_runner_vlm_factor(run.version) if run.arch is not None and run.arch.vision else None
    if cut:
        fraction *= cut
        reasons.append(f"SGLang {run.version}'s model runner cuts a multimodal model's mem_fraction_static "
                       f"by x{cut:.2f}")
    algorithm = str(model.value("speculative_algorithm") or "").upper()
    v = defaults.parse_version(run.version)
    written = model.value("mem_fraction_static") is not None
    if algorithm and algorithm != "NGRAM" and not written and (v is None or v >= defaults.SGLANG_FRACTION_TABLE_UNTIL):
        reserve = SGLANG_STANDALONE_RESERVE if algorithm == "STANDALONE" else SGLANG_SPEC_RESERVE
        fraction -= reserve / run.gpu.memory_bytes
        reasons.append(f"SGLang's default mem_fraction_static keeps {reserve / GiB:g} GiB back for the "
                       f"{algorithm} draft")
    return fraction


def pool_range(tokens: int | None, classes: list[str]) -> tuple[int | None, int | None, float | None]:
    """The pool's low and high ends from the widest measured error of the classes the model is in."""
    if tokens is None or not classes:
        return None, None, None
    error = max(CLASS_ERROR.get(c, CLASS_ERROR["dense"]) for c in classes)
    return int(tokens * (1 - error)), int(tokens * (1 + error)), error


def estimate_classes(arch: Architecture | None, tp: int, kv_cache_dtype: str | None) -> list[str]:
    """The accuracy classes an estimate belongs to (bench/accuracy.py reports the error per class)."""
    if arch is None:
        return []
    out = []
    if arch.num_experts:
        out.append("MoE")
    if arch.is_mla:
        out.append("MLA")
    if arch.linear_layers or arch.sliding_layers:
        out.append("hybrid")
    if arch.weight_bits < 16 or arch.quantization or str(kv_cache_dtype or "").startswith("fp8"):
        out.append("quantized")
    if arch.vision:
        out.append("multimodal")
    if not (arch.num_experts or arch.is_mla or arch.linear_layers or arch.sliding_layers):
        out.append("dense")
    if tp > 1:
        out.append("multi-GPU")
    return out
