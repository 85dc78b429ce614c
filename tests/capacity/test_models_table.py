"""The bundled model table is generated (scripts/build_models.py) and every entry says where it came from."""

from __future__ import annotations

import importlib.util
import json

import pytest
from pathlib import Path

from cfgcheck.capacity import lookup_architecture
from tests.capacity.test_capacity import served

ROOT = Path(__file__).resolve().parents[2]


def load_module(relpath: str):
    """A script of the repository (scripts/, bench/) imported from its path."""
    path = ROOT / relpath
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _builder():
    return load_module("scripts/build_models.py")


def test_committed_table_is_what_the_generator_builds():
    built = json.dumps(_builder().build(), indent=1) + "\n"
    assert (ROOT / "src/cfgcheck/data/models.json").read_text(encoding="utf-8") == built, \
        "run python scripts/build_models.py"


def test_every_entry_names_its_source_and_weight_origin():
    table = json.loads((ROOT / "src/cfgcheck/data/models.json").read_text(encoding="utf-8"))
    for entry in table["models"]:
        assert entry.get("source") and entry.get("weights_source"), entry["ids"][0]
    sources = json.loads((ROOT / "scripts/model_sources.json").read_text(encoding="utf-8"))["sources"]
    for source in (s for s in sources if "catalog_entry" not in s):  # those are read from the vendored catalog
        vendored = json.loads((ROOT / "scripts/model_configs" / f"{_builder()._slug(source['ids'][0])}.json").read_text())
        assert vendored["source"].startswith(f"{source['repo']}@{source['commit']}:{source['path']}")


def test_models_served_in_real_repositories_are_known():
    for model_id in ("google/gemma-7b-it", "google/gemma-1.1-2b-it", "Qwen/Qwen2-0.5B", "google/gemma-7b-AWQ",
                     "deepseek-ai/DeepSeek-R1", "microsoft/Phi-3.5-vision-instruct"):
        arch = lookup_architecture(model_id)
        assert arch is not None and arch.weight_bytes_for() > 0, model_id
    assert lookup_architecture("deepseek-ai/DeepSeek-V3").qk_nope_head_dim == 128
    assert lookup_architecture("deepseek-ai/DeepSeek-V3").mtp_layers == 1
    assert lookup_architecture("microsoft/Phi-3.5-vision-instruct").vision


def _vendor_from(tmp_path, files: dict, source: dict, monkeypatch):
    """Run scripts/vendor_model_configs.py on ``source`` against a local git repository holding ``files``."""
    from helpers import git, make_repo

    repo = make_repo(tmp_path, files)
    vendor = load_module("scripts/vendor_model_configs.py")
    monkeypatch.setattr(vendor, "OUT", tmp_path / "out")
    (tmp_path / "out").mkdir()
    source = {"repo": "acme/fixtures", "commit": git(repo, "rev-parse", "HEAD").strip(), **source}
    out = vendor.vendor(source, {"acme/fixtures": str(repo / ".git")})
    return json.loads(out.read_text(encoding="utf-8"))


def test_vendor_reads_a_config_json_quoted_in_a_go_test(tmp_path, monkeypatch):
    go = 'func TestA(t *testing.T) {\n\tdata := []byte(`{\n\t\t"num_hidden_layers": 60,\n\t\t"text_config": {"head_dim": 256}\n\t}`)\n}\n'
    got = _vendor_from(tmp_path, {"x_test.go": go}, {"path": "x_test.go", "json_after": "func TestA", "ids": ["acme/m"]},
                       monkeypatch)
    assert got["config"] == {"num_hidden_layers": 60, "text_config": {"head_dim": 256}}
    assert got["source"].endswith(":x_test.go#json after 'func TestA'")


def test_vendor_cites_a_fine_tune_only_when_the_recipe_names_its_base(tmp_path, monkeypatch):
    recipe = "# Model arguments\nmodel_name_or_path: mistralai/Mistral-7B-v0.1\n"
    source = {"path": "recipe.yaml", "base": "mistralai/Mistral-7B-v0.1",
              "evidence": "model_name_or_path: mistralai/Mistral-7B-v0.1", "ids": ["acme/tuned-7b"]}
    got = _vendor_from(tmp_path, {"recipe.yaml": recipe}, source, monkeypatch)
    assert got["base"] == "mistralai/Mistral-7B-v0.1" and "recipe.yaml#evidence=" in got["source"]
    with pytest.raises(SystemExit, match="nothing found for acme/other"):
        (tmp_path / "b").mkdir()
        _vendor_from(tmp_path / "b", {"recipe.yaml": "model_name_or_path: other/base\n"},
                     {**source, "ids": ["acme/other"]}, monkeypatch)


def test_a_fine_tune_entry_carries_its_base_architecture_and_its_citation():
    arch = lookup_architecture("HuggingFaceH4/zephyr-7b-beta")
    base = lookup_architecture("mistralai/Mistral-7B-v0.1")
    assert (arch.num_layers, arch.num_kv_heads, arch.head_dim) == (base.num_layers, base.num_kv_heads, base.head_dim)
    assert arch.note == "full fine-tune of mistralai/Mistral-7B-v0.1: its architecture" and arch.resolution is None
    table = json.loads((ROOT / "src/cfgcheck/data/models.json").read_text(encoding="utf-8"))
    (entry,) = [e for e in table["models"] if "HuggingFaceH4/zephyr-7b-beta" in e["ids"]]
    assert entry["source"].startswith("huggingface/alignment-handbook@")


def test_gpt_style_configs_and_ungated_mlps_size_phi_2():
    arch = lookup_architecture("microsoft/phi-2")
    assert (arch.num_layers, arch.hidden_size, arch.intermediate_size, arch.mlp_matrices) == (32, 2560, 10240, 2)
    assert abs(arch.estimated_params() - 2.78e9) < 0.02e9  # microsoft/phi-2's model card: 2.7B parameters


def test_gemma4_kv_layout_is_modelled_as_vllm_allocates_it(tmp_path):
    """vllm/model_executor/models/gemma4.py: full-attention layers use global_head_dim (and
    num_global_key_value_heads with attention_k_eq_v); the last num_kv_shared_layers layers cache nothing;
    vllm/v1/core/kv_cache_utils.py unify_kv_cache_spec_page_size scales the smaller page's block size."""
    from cfgcheck import capacity as cap
    from cfgcheck.capacity.layout import kv_layout

    big = lookup_architecture("google/gemma-4-31B-it")
    assert (big.global_head_dim, big.global_kv_heads, big.sliding_layers, big.full_layers) == (512, 4, 50, 10)
    assert big.max_position_embeddings == 262144 and "the vendored test config quotes 131,072" in big.note
    lay = kv_layout(big)
    # full layer: 4 KV heads x (512 + 512) x 2 bytes = 8 KiB a token; sliding: 16 x (256 + 256) x 2 = 16 KiB
    assert (lay.full_bytes_per_token, lay.sliding_bytes_per_token) == (10 * 8192, 50 * 16384)
    assert (lay.page_bytes, lay.block_size, lay.sliding_block_size) == (16 * 16384, 32, 16)
    assert (lay.group_size, lay.full_groups, lay.sliding_groups) == (10, 1, 5)
    assert lay.blocks_per_request(32768) == 32768 // 32 + 5 * (-(-(1024 - 1 + 2048) // 16) + 1)
    small = lookup_architecture("google/gemma-4-E2B-it")
    assert (small.shared_sliding_layers, small.shared_full_layers, small.global_kv_heads) == (16, 4, None)
    lay = kv_layout(small)
    # 35 layers, 20 of them shared: 12 sliding (1 x 512 bytes) and 3 full (1 x 1024 bytes) cache
    assert (lay.full_bytes_per_token, lay.sliding_bytes_per_token, lay.sliding_block_size) == (3 * 2048, 12 * 1024, 32)
    est = cap.estimate(served("nvidia/Gemma-4-31B-IT-NVFP4", gpu_product="NVIDIA-H100-80GB-HBM3"), {})
    assert est.kv_pool_tokens and est.kv_bytes_per_token == 81920
    twelve = cap.estimate(served("google/gemma-4-12B-it", gpu_product="NVIDIA-H100-80GB-HBM3"), {})
    assert twelve.kv_pool_tokens is None and any("Gemma 4 12B (Gemma4UnifiedForConditionalGeneration) is not "
                                                 "bundled: no public file quotes its config.json" in r for r in twelve.reasons)


def test_kv_pages_vllm_cannot_unify_leave_the_pool_unknown(tmp_path):
    from cfgcheck import capacity as cap

    cfg = {"model_type": "gemma4", "text_config": {
        "num_hidden_layers": 6, "num_attention_heads": 8, "num_key_value_heads": 3, "head_dim": 256,
        "global_head_dim": 512, "num_global_key_value_heads": 1, "attention_k_eq_v": True, "hidden_size": 2048,
        "intermediate_size": 8192, "vocab_size": 262144, "sliding_window": 512, "max_position_embeddings": 131072,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"]}}
    folder = tmp_path / "acme" / "g4"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    est = cap.estimate(served("acme/g4", gpu_product="NVIDIA-H100-80GB-HBM3"), {"model_configs": str(tmp_path)})
    assert est.kv_pool_tokens is None
    assert "KV layout of acme/g4 not modelled (KV pages of 32768 and 49152 bytes do not divide)" in " ".join(est.reasons)
    assert not any("lacks layer facts" in r for r in est.reasons)


def test_checkpoint_sizes_come_from_kaito_catalog_when_its_shapes_agree():
    table = json.loads((ROOT / "src/cfgcheck/data/models.json").read_text(encoding="utf-8"))
    by_id = {e["ids"][0]: e for e in table["models"]}
    llama = by_id["meta-llama/Llama-3.1-8B-Instruct"]
    assert llama["weights_source"].startswith("KAITO model catalog modelFileSize of meta-llama/Llama-3.1-8B-Instruct")
    assert llama["weight_bytes"] == round(14.96 * 2**30)
    # gpt-oss's catalog size counts its original/ copy twice: the size the table had is kept
    assert by_id["openai/gpt-oss-120b"]["weights_source"].startswith("checkpoint size carried")
    builder = _builder()
    entry = {"ids": ["acme/m"], "hidden_size": 4096, "num_layers": 32}
    builder.apply_catalog([entry], {"acme/m": {"name": "acme/m", "modelFileSize": "1.00Gi", "hiddenSize": 5120}}, "c")
    assert "weight_bytes" not in entry  # the catalog describes another shape: not this model's size


def test_a_catalog_variant_takes_its_base_shapes_and_the_catalog_context_and_size():
    arch = lookup_architecture("microsoft/Phi-3-medium-128k-instruct")
    base = lookup_architecture("microsoft/Phi-3-medium-4k-instruct")
    assert (arch.num_layers, arch.num_kv_heads, arch.intermediate_size) == (base.num_layers, base.num_kv_heads, base.intermediate_size)
    assert arch.max_position_embeddings == 131072 and base.max_position_embeddings == 4096
    assert arch.weight_bytes == 26 * 2**30 and "MLP and vocabulary sizes of microsoft/Phi-3-medium-4k-instruct" in arch.note


def test_online_quantization_of_a_checkpoint_with_a_known_size():
    from cfgcheck import capacity as cap
    from tests.capacity.test_capacity import served, setting

    plain = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", gpu_product="Tesla-V100-SXM2-32GB"), {})
    fp8 = cap.estimate(served("meta-llama/Llama-3.1-8B-Instruct", gpu_product="Tesla-V100-SXM2-32GB",
                              settings=[setting("quantization", "fp8", 9)]), {})
    assert fp8.weight_bytes_per_gpu < 0.6 * plain.weight_bytes_per_gpu  # 8-bit weights, not the bf16 checkpoint


def test_gemma4_before_vllm_0_21_caches_every_layer_at_full_length():
    """vllm#43308: gemma-4-31B AWQ on an A100 80GB logs ~55k tokens with 0.20.0 and ~525k with 0.21.0 in
    the same ~50 GB of KV cache: the estimate keeps that ratio (default context 262,144)."""
    from cfgcheck import capacity as cap

    tokens, per_token = {}, {}
    for version in ("0.20.0", "0.21.0"):
        est = cap.estimate(served("cyankiwi/gemma-4-31B-it-AWQ-4bit", version=version, gpu_product="A100-SXM4-80GB"), {})
        tokens[version] = est.kv_pool_tokens / est.pool_bytes  # tokens a byte of pool holds
        per_token[version] = est.kv_bytes_per_token
        assert any("caches every layer at full length" in r for r in est.reasons) == (version == "0.20.0")
    assert per_token["0.20.0"] == 50 * 16384 + 10 * 8192  # every layer at full length, each at its own size
    assert abs(tokens["0.21.0"] / tokens["0.20.0"] - 525 / 55) / (525 / 55) < 0.1


def test_a_vision_encoder_comes_from_the_catalog_tag_of_the_entrys_own_model():
    """Gemma 3 4B/27B take images by KAITO's catalog (image-text-to-text), which SGLang's fraction cut for a
    multimodal model depends on; a tag of an alias only (Qwen3.8-27B on the Qwen3.5-27B entry) is not applied."""
    by_id = {e["ids"][0]: e for e in _builder().build()["models"]}
    for model in ("google/gemma-3-4b-it", "google/gemma-3-27b-it"):
        assert by_id[model]["vision"] is True
        assert by_id[model]["vision_source"].startswith(f"KAITO model catalog pipelineTag image-text-to-text of {model}")
    assert not by_id["google/gemma-3-12b-it"].get("vision")  # not in the catalog: no source says so
    assert "Qwen/Qwen3.8-27B" in by_id["Qwen/Qwen3.5-27B"]["ids"] and not by_id["Qwen/Qwen3.5-27B"].get("vision_source")


def test_vendor_reads_a_python_dict_literal_and_a_conversion_scripts_evidence(tmp_path, monkeypatch):
    code = 'cfg = Gemma3Config(\n    **{"text_config": {"rope_scaling": {"factor": 8.0}, "use_cache": True}, "x": None}\n)\n'
    a, b, c = (tmp_path / n for n in "abc")
    for d in (a, b, c):
        d.mkdir()
    got = _vendor_from(a, {"m.py": code}, {"path": "m.py", "literal_after": "Gemma3Config(", "ids": ["acme/m"]},
                       monkeypatch)
    assert got["config"] == {"text_config": {"rope_scaling": {"factor": 8.0}, "use_cache": True}, "x": None}
    script = "scales = unflatten(w, 1, (-1, 32))\nkeep = k.startswith('vision_tower')\n"
    source = {"path": "c.py", "quantized_from": "acme/base", "evidence": ["keep = k.startswith('vision_tower')"],
              "checkpoint": {"quantization": "awq", "group_size": 32}, "ids": ["acme/base-awq"]}
    assert _vendor_from(b, {"c.py": script}, source, monkeypatch)["checkpoint"]["group_size"] == 32
    with pytest.raises(SystemExit, match="nothing found"):
        _vendor_from(c, {"c.py": "other = 1\n"}, {**source, "ids": ["acme/other"]}, monkeypatch)
    # a vision tower stated by lines of a document: carried as the source states it, only when every line is there
    doc = "ships `preprocessor_config.json`\n(`size.longest_edge: 16777216`,\n"
    vision = {"path": "d.md", "vision": {"max_pixels": 16777216}, "evidence": ["(`size.longest_edge: 16777216`,"],
              "ids": ["acme/vlm"]}
    assert _vendor_from(c / "v", {"d.md": doc}, vision, monkeypatch)["vision"] == {"max_pixels": 16777216}
