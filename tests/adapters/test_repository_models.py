"""A local model path that is a model folder the repository holds (a compose bind mount of it, a host
script's relative path): named by the folder, its architecture from the config.json Git holds."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import FIXTURES, expected_markers, git

from cfgcheck.capacity import estimate
from cfgcheck.config import Config
from cfgcheck.config import load as load_config
from cfgcheck.lint import collect, lint

FOLDER = FIXTURES / "formats" / "repository-model-folder"
NEAR_MISS = FIXTURES / "formats" / "repository-model-folder-near-miss"
CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
          "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4,
          "max_position_embeddings": 8192, "vocab_size": 32000, "torch_dtype": "bfloat16"}
COMPOSE = """\
services:
  chat:
    image: vllm/vllm-openai:v0.26.0
    command: ["vllm", "serve", "/models/chat", "--max-model-len", "16384"]
    volumes:
      - ./weights:/models
"""


def _models(path: Path) -> dict:
    return {m.name: m for m in collect([path], load_config(path))[1]}


def test_a_compose_bind_mount_of_a_repository_folder_names_the_model_by_its_config() -> None:
    model = _models(FOLDER)["house-llama"]
    assert model.model_named.value == "house-llama-8k" and model.model_named.origin == "repository"
    assert model.model_named.source.startswith("the compose bind mount of the repository's folder ")
    assert model.model_named.location.line == 9  # the mount that links the folder
    assert model.model_folder.folder.endswith("models/house-llama-8k")
    assert estimate(model).architecture.max_position_embeddings == 8192


def test_a_host_scripts_relative_path_to_a_repository_folder_names_the_model() -> None:
    model = _models(FOLDER)["serve"]
    assert model.model_named.value == "house-llama-8k"
    assert model.model_named.source.startswith("the host script's relative path to the repository's folder ")
    assert estimate(model).architecture.num_layers == 22


def test_cfg207_reads_the_repository_folders_config() -> None:
    result = lint([FOLDER], load_config(FOLDER))
    found = {(f.location.path.rsplit("/", 1)[-1], f.location.line) for f in result.findings if f.code == "CFG207"}
    expected = {(name, line) for name in ("docker-compose.yml", "serve.sh")
                for code, line in expected_markers(FOLDER / name) if code == "CFG207"}
    assert found == expected and len(found) == 2
    assert all("house-llama-8k's maximum of 8,192" in f.message for f in result.findings if f.code == "CFG207")


def test_a_host_folder_a_cd_or_a_folder_the_repository_lacks_names_nothing() -> None:
    models = _models(NEAR_MISS)
    assert set(models) == {"house-llama-host", "serve", "serve-missing"}
    assert all(m.model_named is None and m.model_folder is None for m in models.values())
    assert "CFG207" not in {f.code for f in lint([NEAR_MISS], load_config(NEAR_MISS)).findings}


def _repo(tmp_path: Path, config_text: str, tracked: list[str]) -> Path:
    repo = tmp_path / "repo"
    (repo / "weights" / "chat").mkdir(parents=True)
    (repo / "compose.yaml").write_text(COMPOSE)
    (repo / "weights" / "chat" / "config.json").write_text(config_text)
    git(repo, "init", "-q")
    git(repo, "add", *tracked)
    return repo


def test_a_config_json_git_does_not_track_is_never_read(tmp_path: Path) -> None:
    repo = _repo(tmp_path, json.dumps(CONFIG), ["compose.yaml"])
    model = collect([repo], Config(repo.resolve(), {}))[1][0]
    assert model.model_named is None and model.model_folder is None


def test_a_folder_below_the_mount_and_a_malformed_config_make_the_architecture_unknown(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "{not json", ["compose.yaml", "weights/chat/config.json"])
    model = collect([repo], Config(repo.resolve(), {}))[1][0]
    assert model.model_folder.folder == "weights/chat"  # ./weights at /models: /models/chat is weights/chat
    found = estimate(model)
    assert found.architecture is None
    assert any("weights/chat/config.json in the repository cannot be read as JSON" in r for r in found.reasons)


def test_a_relative_path_in_a_folder_of_the_repository_is_no_hub_id() -> None:
    """checkpoints/Qwen3-8B where the repository holds checkpoints/ (its weights not committed) is that
    folder's model; meta-llama/Llama-3.1-8B, the same shape with no such folder, is the hub's, and so is
    Qwen/Qwen3-8B served from a script inside the repository's own Qwen/Qwen3-8B/ folder."""
    folder = FIXTURES / "formats" / "relative-model-folder"
    models = {m.model.value: m for m in collect([folder], load_config(folder))[1]}
    local = models["checkpoints/Qwen3-8B"]
    assert local.model_named.value == "Qwen3-8B" and local.model_named.source == "the repository's folder checkpoints/"
    # the hub's: no such folder, or a folder laid out by hub id that holds the script itself
    assert models["meta-llama/Llama-3.1-8B"].model_named is None and models["Qwen/Qwen3-8B"].model_named is None
    result = lint([folder], load_config(folder))
    found = {(f.location.path.rsplit("/", 1)[-1], f.location.line) for f in result.findings if f.code == "CFG303"}
    scripts = (folder / "serve-relative-checkpoint.sh", folder / "Qwen" / "Qwen3-8B" / "serve-by-hub-layout.sh")
    assert found == {(s.name, line) for s in scripts for code, line in expected_markers(s) if code == "CFG303"}
