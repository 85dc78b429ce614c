"""Facts of quantized checkpoints the weights arithmetic reads from the script that made them, each checked
against the published start-up log it explains (tests/data/startup_logs.json)."""

from __future__ import annotations

import json
from pathlib import Path

from cfgcheck.capacity import GiB, lookup_architecture

LOGS = {c["id"]: c for c in json.loads((Path(__file__).parents[1] / "data" / "startup_logs.json").read_text())["cases"]}


def test_awq_conversion_keeps_its_vision_tower_and_embeddings_16_bit_in_groups_of_32():
    # gau-nernst/gemma3-int4 convert_flax.py (the table's source) packs groups of 32 with a 16-bit scale and a 4-bit zero
    case = LOGS["gemma3-12b-awq-rtx4090-tp2"]
    arch = lookup_architecture(case["model"])
    assert arch.quantization == "awq" and arch.weight_bits == 4 + 20 / 32 and arch.unquantized_vision and arch.vision
    text = arch._shape_params()
    embed = arch.embedding_params()
    vision = arch.params - text
    assert 0.3e9 < vision < 0.5e9  # SigLIP's ~0.42B: what the published 12.2B holds beyond the text layers
    assert arch.weight_bytes_for() == int((embed + vision) * 2 + (text - embed) * arch.weight_bits / 8)
    # the log: "Model loading took 4.8120 GiB" on each of two ranks; groups of 128 and a quantized tower gave 3.65
    assert "Model loading took 4.8120 GiB" in case["log"]
    per_rank = arch.weight_bytes_for() / case["tp"] / GiB
    grouped_128 = arch.weight_bytes_for(4 + 20 / 128) / case["tp"] / GiB
    assert abs(per_rank - 4.812) < abs(grouped_128 - 4.812) and abs(per_rank - 4.812) / 4.812 < 0.13


def test_vllm_keeps_a_linearly_scaled_rope_cache_for_every_position_times_the_factor():
    from cfgcheck.capacity.served import vllm_rope_cache_bytes

    gemma4b = lookup_architecture("google/gemma-3-4b-it")  # rope_scaling factor 8 linear (Megatron-Bridge fixture)
    assert vllm_rope_cache_bytes(gemma4b, 2) == 131072 * 8 * 256 * 2
    assert gemma4b.derived_max_len() == 131072  # vLLM does not scale Gemma 3's 128K again
    assert vllm_rope_cache_bytes(lookup_architecture("Qwen/Qwen2-7B-Instruct"), 2) == 0
    # the 12B AWQ log ("Model loading took 4.8120 GiB" a rank): its weights and the 0.5 GiB cache of the 12B's own
    # factor-8 RoPE (its config as ostris/ai-toolkit quotes it) are within 2% of the load
    case = LOGS["gemma3-12b-awq-rtx4090-tp2"]
    arch = lookup_architecture(case["model"])
    loaded = (arch.weight_bytes_for() / case["tp"] + vllm_rope_cache_bytes(arch, 2)) / GiB
    assert vllm_rope_cache_bytes(arch, 2) == vllm_rope_cache_bytes(gemma4b, 2)
    assert abs(loaded - 4.812) / 4.812 < 0.02


def test_vllm_profiles_the_vision_encoder_on_one_image_of_the_preprocessors_largest_size():
    from cfgcheck.capacity.profile_run import ACT_CONSTANT, activation_peak_bytes, vision_profile_bytes

    case = LOGS["qwen38-27b-fp8-rtx3090-tp2"]
    arch = lookup_architecture(case["model"])
    tower = arch.vision_tower  # malaiwah/qwen38-27b-exl3: K=1152 N=4304; longest_edge 16,777,216, patch 16, merge 2
    patches = tower["max_pixels"] // tower["patch_size"] ** 2
    # club-3090#1087 (the same checkpoint, 2 x RTX 5090): "a budget of 16384 tokens ... 1 image items"
    assert patches // tower["spatial_merge_size"] ** 2 == 16384
    peak, output = vision_profile_bytes(arch, case["tp"])
    assert output == 16384 * 5120 * 2
    # that log's whole profile peaks 1.59 GiB at TP 2, the encoder pass below it
    assert 1.0 * GiB < peak < 1.59 * GiB
    # malaiwah/qwen38-27b-exl3's TP 1 logs: 1.78 -> 2.63 GiB from 32,768 to 65,536 patches
    per_patch = vision_profile_bytes(arch, 1)[0] / patches
    assert abs(per_patch - (2.63 - 1.78) * GiB / 32768) / per_patch < 0.05
    # the profile's peak is the encoder pass, or the text forward and sampler with the encoder's output kept
    text_only = activation_peak_bytes(arch.replaced(vision_tower=None), case["max_num_batched_tokens"], 256, case["tp"])
    both = activation_peak_bytes(arch, case["max_num_batched_tokens"], 256, case["tp"])
    assert both - ACT_CONSTANT == max(peak, output + text_only - ACT_CONSTANT)
    assert vision_profile_bytes(lookup_architecture("Qwen/Qwen2-7B-Instruct"), 1) is None  # no tower data: as before


def test_a_multimodal_model_served_text_only_profiles_no_encoder_pass():
    from cfgcheck.capacity import overheads
    from tests.capacity.test_capacity import served, setting

    arch = lookup_architecture("Qwen/Qwen3.8-27B")
    text_only = served("Qwen/Qwen3.8-27B", settings=[setting("limit_mm_per_prompt", '{"image":0,"video":0}', 5)])
    assert overheads.profiled_arch(text_only, arch).vision_tower is None
    assert overheads.profiled_arch(served("Qwen/Qwen3.8-27B"), arch) is arch
    capped = served("Qwen/Qwen3.8-27B", settings=[setting("mm_processor_kwargs", '{"max_pixels": 8388608}', 5)])
    assert overheads.profiled_arch(capped, arch).vision_tower["max_pixels"] == 8388608
