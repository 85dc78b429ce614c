"""The bundled model table is generated (scripts/build_models.py) and every entry says where it came from."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from cfgcheck.capacity import lookup_architecture

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
    for source in sources:
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
