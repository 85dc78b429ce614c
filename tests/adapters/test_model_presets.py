"""llama-server in router mode: one served model per section of its --models-preset INI file, wherever the
file is (a ConfigMap a kustomization generates, a chart's own ConfigMap, a compose bind mount, beside a
script), each setting located on its INI line; the router itself is no served model."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES

from cfgcheck.adapters.launch.model_presets import parse
from cfgcheck.config import load
from cfgcheck.lint import collect, lint

ROUTER = FIXTURES / "formats" / "llama-router"


def _models(folder: str):
    root = ROUTER / folder
    return {m.name: m for m in collect([root], load(root))[1]}


def _at(setting) -> tuple[str, int, int]:
    return setting.location.path, setting.location.line, setting.location.column


@pytest.mark.e2e  # the kustomization is rendered with kubectl
def test_a_configmap_generated_from_the_preset_file():
    models = _models("kustomize")
    assert set(models) == {"llm-router/llama/coder", "llm-router/llama/chat"}  # [*] and a section without a model: none
    coder, chat = models["llm-router/llama/coder"], models["llm-router/llama/chat"]
    assert coder.engine == "llama.cpp" and coder.engine_version == "6120" and coder.gpus.value == 1
    assert _at(coder.model) == ("config/presets.ini", 10, 9) and coder.location.line == 9
    assert coder.value("max_model_len") == 32768 and _at(coder.setting("max_model_len")) == ("config/presets.ini", 11, 12)
    assert "measured: fits beside the weights" in coder.setting("max_model_len").comments
    assert coder.value("gpu_layers") == 99 and coder.setting("gpu_layers").location.line == 6  # from [*]
    # the router's own --parallel 2 is merged over the section's parallel = 4 (llama.cpp's load_models)
    assert coder.value("max_num_seqs") == 2 and coder.setting("max_num_seqs").location.path == "deployment.yaml"
    assert len(coder.occurrences["max_num_seqs"]) == 2 and len(coder.occurrences["max_model_len"]) == 1
    assert chat.model.value == "bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M" and chat.value("max_model_len") == 8192
    assert "--models-preset" not in [t.text for t in coder.argv]  # what the router keeps for itself


def test_a_chart_configmap_mounted_through_app_template_persistence():
    (mistral,) = _models("helmrelease").values()
    assert mistral.name == "llama-cpp/mistral" and mistral.engine == "llama.cpp"
    assert _at(mistral.model) == ("helmrelease.yaml", 27, 17) and mistral.value("max_model_len") == 4096
    assert mistral.setting("max_model_len").source == "-c"


def test_a_compose_bind_mount_and_environment_names_as_keys():
    (phi,) = _models("compose").values()
    assert phi.model.value == "/models/Phi-3.5-mini-instruct-Q4_K_M.gguf" and _at(phi.model) == ("router.ini", 2, 19)
    assert phi.value("max_model_len") == 16384 and phi.gpus.value == 1


def test_a_script_names_the_file_beside_it():
    (gemma,) = _models("script").values()
    assert gemma.name.endswith("/gemma") and gemma.model.value == "ggml-org/gemma-3-12b-it-GGUF"


def test_a_router_whose_preset_file_is_missing_serves_nothing_and_says_so(tmp_path: Path):
    (tmp_path / "run.sh").write_text((ROUTER / "missing" / "run.sh").read_text())
    result = lint([tmp_path], load(tmp_path))
    assert not result.models
    assert [(f.code, f.location.line, f.location.column) for f in result.findings] == [("CFG003", 2, 30)]
    assert "presets/router.ini" in result.findings[0].message


def test_the_ini_grammar_of_llama_cpp():
    text = "version = 1\nkey=a#b\n  [ s1 ]  ; c\nflag = true\n\n[s2]\nx =  y z ;trailing\n"
    sections = parse("p.ini", text, None)
    assert [s.name for s in sections] == ["default", "s1", "s2"]
    assert [(o.key, o.value) for o in sections[0].options] == [("key", "a")]  # a comment character ends a value
    assert [(o.key, o.value, o.value_at.column) for o in sections[2].options] == [("x", "y z", 6)]
    assert sections[2].options[0].comments == ("trailing",)
    assert parse("p.ini", "[s]\nnot a line\n", None) is None  # llama-server refuses the file


@pytest.mark.e2e  # the kustomization is rendered with kubectl
def test_a_helmrelease_read_before_the_kustomization_that_generates_its_preset_configmap(tmp_path: Path):
    """The HelmRelease (h) is read before its kustomization (k): its router waits for the ConfigMap the
    kustomization's configMapGenerator builds from the preset file, mounted by name through a subPath."""
    release = (ROUTER / "helmrelease" / "helmrelease.yaml").read_text()
    release = release[:release.index("    configMaps:")] + (
        "    persistence:\n      presets:\n        type: configMap\n        name: llama-presets\n"
        "        globalMounts:\n          - path: /presets/models.ini\n            subPath: models.ini\n")
    (tmp_path / "helmrelease.yaml").write_text(release)
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [helmrelease.yaml]\nconfigMapGenerator:\n  - name: llama-presets\n    files: [presets/models.ini]\n"
        "generatorOptions:\n  disableNameSuffixHash: true\n")
    (tmp_path / "presets").mkdir()
    (tmp_path / "presets/models.ini").write_text("[qwen]\nhf = Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M\nctx-size = 8192\n")
    (qwen,) = collect([tmp_path], load(tmp_path))[1]
    assert qwen.name == "llama-cpp/qwen" and _at(qwen.model) == ("presets/models.ini", 2, 6)
    assert qwen.value("max_model_len") == 8192
