"""vLLM's profile run: the torch peak of the forward pass over ``max_num_batched_tokens`` and of the sampler
warm-up over ``max_num_seqs`` dummy requests, which vLLM deducts from the KV budget (capacity/estimate.py)."""

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
    return int(max(forward, arch.vocab_size * max_num_seqs * per_logit) + ACT_CONSTANT)
