"""vLLM's profile run: the torch peak of the forward pass over ``max_num_batched_tokens``, of the sampler
warm-up over ``max_num_seqs`` dummy requests and (V1, a checkpoint with a vision tower) of the encoder pass over
one largest image, which vLLM deducts from the KV budget (capacity/estimate.py)."""

from __future__ import annotations

from . import served
from .architecture import Architecture
from .tables import GiB

# Calibration of the vLLM profile estimate (see bench/accuracy.py; tests/data/startup_logs.json).
# Activation peak of the profile run, per batched token: the MLP's gate/up/down intermediates and a
# few copies of the residual stream, at the activation dtype; plus the sampler warm-up's logits.
ACT_INTERMEDIATE_FACTOR = 3.0
ACT_HIDDEN_FACTOR = 2.0
ACT_CONSTANT = int(0.10 * GiB)
SAMPLER_LOGIT_COPIES_V1 = 2.0  # V1's sampler warm-up keeps logits and probabilities (FlashInfer path; served.py: by version)
# The PyTorch sort path (V1 where it is the default or FlashInfer is absent; every V0 profile): ~38.5 bytes per
# (dummy request x vocabulary entry). vllm#32558 measured 1.25 GB for 256 x 131,072 logits; llm-d-benchmark's
# H100 breakdown (config_explorer/empirical-vllm-memory-results.md) logs 5.56 / 4.76 / 7.38 GiB peaks for 1024 requests over 151,936 / 128,256 / 201,088 tokens.
SORT_SAMPLER_BYTES_PER_LOGIT = 38.5


# vLLM's Qwen2.5-VL/Qwen3-VL vision block (vllm/model_executor/models/qwen2_5_vl.py Qwen2_5_VisionAttention and
# Qwen2_5_VisionMLP, which qwen3_vl.py and Qwen3.5 reuse): per patch, the residual and the normed input stay live
# (2 x hidden), and on top of them the attention holds the column-parallel QKV (3 x hidden / TP), q and k
# concatenated and rotated (2 + 2), the varlen flash-attention output and its rearranged copy (2); the MLP holds
# linear_fc1's output and its activation (2 x intermediate / TP). The larger of the two, with the patch inputs
# (channels x temporal x patch^2 values each) that stay referenced through the forward. Checked against
# malaiwah/qwen38-27b-exl3's TP 1 logs (receipts/native-mtp-cap*-server.log, production-image-k4-server.log):
# 1.35 / 1.78 / 2.63 GiB peaks for 16,384 / 32,768 / 65,536 patches, ~28 KB more per patch; this count gives 28.4.
VISION_ATTN_HIDDEN_COPIES_PER_TP = 9
VISION_MLP_INTERMEDIATE_COPIES_PER_TP = 2
VISION_RESIDUAL_HIDDEN_COPIES = 2


def vision_profile_bytes(arch: Architecture, tp: int, act_bytes: int = 2) -> tuple[int, int] | None:
    """(the encoder forward's peak, its cached output) for vLLM V1's encoder profile: one dummy image of the
    largest size the checkpoint's preprocessor allows (vllm/v1/worker/gpu_model_runner.py profile_run, "Encoder
    cache will be initialized with a budget of ... profiled with 1 image items of the maximum feature size").
    The outputs stay in ``encoder_cache["tmp"]`` through the text forward and the sampler warm-up. None without
    the tower's widths and the preprocessor's limits."""
    tower = arch.vision_tower or {}
    needed = ("hidden_size", "intermediate_size", "max_pixels", "patch_size", "temporal_patch_size", "spatial_merge_size", "in_channels")
    if any(not tower.get(k) for k in needed):
        return None
    hidden, patch = tower["hidden_size"], tower["patch_size"]
    patches = tower["max_pixels"] // (patch * patch)
    block = max(VISION_ATTN_HIDDEN_COPIES_PER_TP * hidden, VISION_MLP_INTERMEDIATE_COPIES_PER_TP * tower["intermediate_size"]) / tp
    per_patch = VISION_RESIDUAL_HIDDEN_COPIES * hidden + block + tower["in_channels"] * tower["temporal_patch_size"] * patch * patch
    tokens = patches // (tower["spatial_merge_size"] ** 2)
    output = tokens * (arch.hidden_size or 0) * act_bytes  # the merger projects each token to the text model's width
    return int(per_patch * patches * act_bytes), output


def activation_peak_bytes(arch: Architecture, max_num_batched_tokens: int, max_num_seqs: int, tp: int, v1: bool = True,
                          sort_sampler: bool = False, act_bytes: int = 2, logit_copies: float = SAMPLER_LOGIT_COPIES_V1) -> int | None:
    """Torch peak of vLLM's profile run: a forward pass of ``max_num_batched_tokens`` tokens and the
    sampler warm-up over ``max_num_seqs`` requests; None when the layer shapes are unknown.

    Every rank samples from the whole vocabulary (V1 all-gathers the logits; V0 gathers them on the driver,
    whose free memory is the minimum), so the sampler term does not shrink with TP. The forward's intermediates
    are freed before the sampler runs: the peak is the larger of the two (vllm/v1/worker/gpu_model_runner.py
    profile_run, 0.10-0.26; V0's torch peak the same way). V0's profile samples with ``top_k = vocab_size - 1``
    (vllm/worker/model_runner.py profile_run, 0.6-0.9: "Enable top-k sampling to reflect the accurate memory
    usage"), which sorts the logits: the sort path's bytes per logit."""
    hidden = arch.hidden_size or (arch.num_attention_heads * arch.head_dim)
    if not (hidden and arch.intermediate_size and arch.vocab_size):
        return None
    per_token = (served.mlp_activation_elements(arch, hidden, tp, ACT_INTERMEDIATE_FACTOR) + ACT_HIDDEN_FACTOR * hidden) * act_bytes
    forward = per_token * max_num_batched_tokens
    per_logit = SORT_SAMPLER_BYTES_PER_LOGIT if sort_sampler or not v1 else 4 * logit_copies
    peak = max(forward, arch.vocab_size * max_num_seqs * per_logit)
    vision = vision_profile_bytes(arch, tp, act_bytes) if v1 else None
    if vision:
        peak = max(vision[0], vision[1] + peak)
    return int(peak + ACT_CONSTANT)


def vision_profile_note(arch: Architecture, tp: int, act_bytes: int, v1: bool) -> str:
    """The clause the estimate's reason adds when the profile encodes an image (empty otherwise)."""
    vision = vision_profile_bytes(arch, tp, act_bytes) if v1 else None
    if not vision:
        return ""
    tokens = vision[1] // max(1, (arch.hidden_size or 0) * act_bytes)
    return f", an encoder pass over one {arch.vision_tower['max_pixels']:,}-pixel image ({tokens:,} tokens, ~{vision[0] / GiB:.2f} GiB)"
