"""Engine --config files: a compose bind mount, a mounted ConfigMap key, a file beside the manifest;
keys located on their own lines, read with each engine's semantics."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import FIXTURES, lint_paths

from cfgcheck.lint import collect
from cfgcheck.config import load as load_config

CONFIGS = FIXTURES / "formats" / "engine-config"


def _models(root: Path, *names: str):
    files, models = collect([root / n for n in names] or [root], load_config(root))
    return {m.name: m for m in models}


def _found(result):
    return {(f.code, f.location.path.rsplit("/", 1)[-1], f.location.line, f.location.column)
            for f in result.findings if f.suppressed is None}


def test_configmap_key_lines_map_back_to_the_configmap_file():
    result = lint_paths(CONFIGS / "deployment.yaml", root=CONFIGS)
    found = _found(result)
    assert ("CFG101", "deployment.yaml", 9, 5) in found  # kv-cache-memory: the seed's abbreviation
    assert ("CFG107", "deployment.yaml", 10, 5) in found  # enable-prefix-caching: false does nothing
    # max-num-seqs: 4 above what the pool holds (CFG203, which answers for "pinned below the default", CFG205)
    assert ("CFG203", "deployment.yaml", 12, 19) in found
    chat = {m.name: m for m in result.models}["chat/vllm"]
    assert chat.model.value == "Qwen/Qwen3-8B" and chat.model.location.line == 8
    assert chat.value("tensor_parallel_size") == 2  # the command line wins over the file
    assert chat.setting("tensor_parallel_size").location.line == 26
    assert chat.value("kv_cache_memory_bytes") == 8 * 1024**3


def test_compose_bind_mount_and_config_equals(tmp_path):
    models = _models(CONFIGS, "compose.yaml")
    chat = models["chat"]
    assert chat.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert chat.model.location.path.endswith("vllm.yaml") and chat.model.location.line == 2
    assert chat.value("max_model_len") == 16384 and chat.value("gpu_memory_utilization") == 0.85
    assert chat.gpus.value == 2  # device_ids: ["0", "1"]
    assert models["ignored"].model.value == "Qwen/Qwen3-0.6B"  # --config= : the file is not read
    assert models["ignored"].setting("max_model_len") is None
    result = lint_paths(CONFIGS / "compose.yaml", root=CONFIGS)
    found = _found(result)
    assert ("CFG109", "compose.yaml", 16, 16) in found
    assert ("CFG103", "sglang.yaml", 2, 1) in found  # SGLang rejects underscore keys
    assert ("CFG101", "sglang.yaml", 3, 1) in found  # abbreviated key
    router = {m.name: m for m in result.models}["router"]
    assert router.model.value == "Qwen/Qwen3-8B" and "enable_metrics" not in router.settings  # false switch skipped


def test_abbreviated_key_fix_edits_the_key(tmp_path):
    shutil.copytree(CONFIGS, tmp_path / "c")
    result = lint_paths(tmp_path / "c" / "deployment.yaml", root=tmp_path / "c")
    fix = next(f.fix for f in result.findings if f.code == "CFG101")
    edit = fix.edits[0]
    assert (edit.old, edit.new) == ("kv-cache-memory", "kv-cache-memory-bytes")


def test_config_beside_a_manifest_and_a_path_outside_is_refused(tmp_path):
    (tmp_path / "engine.yaml").write_text("model: Qwen/Qwen3-8B\nmax-model-len: 8192\n")
    (tmp_path / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.26.0\n"
        "          args: [\"--config\", \"/opt/engine.yaml\"]\n"
        "        - name: out\n          image: vllm/vllm-openai:v0.26.0\n"
        "          args: [\"Qwen/Qwen3-0.6B\", \"--config\", \"../../etc/other.yaml\"]\n")
    models = _models(tmp_path, "app.yaml")
    assert models["a/vllm"].value("max_model_len") == 8192 and models["a/vllm"].model.value == "Qwen/Qwen3-8B"
    assert models["a/out"].setting("max_model_len") is None and models["a/out"].model.value == "Qwen/Qwen3-0.6B"


def test_a_config_file_linked_out_of_the_repository_is_not_read(tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("max-model-len: 1234\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "engine.yaml").symlink_to(outside)
    (repo / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.26.0\n"
        "          args: [\"Qwen/Qwen3-8B\", \"--config\", \"engine.yaml\"]\n")
    assert _models(repo, "app.yaml")["a/vllm"].setting("max_model_len") is None
