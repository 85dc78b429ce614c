"""Served models found in every input format, with engine, key settings and exact locations."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cfgcheck.adapters.core.registry import Workspace, index, served_models
from cfgcheck.adapters.launch.shell import lex
from cfgcheck.config import ConfigError, Config, load as load_config, validate
from cfgcheck.lint import collect, lint
from cfgcheck.yamlio import parse_text
from helpers import FIXTURES

FORMATS = FIXTURES / "formats"


def models_of(name: str, config: dict | None = None):
    path = FORMATS / name
    loaded = parse_text(name, path.read_text())
    assert loaded.error is None
    workspace = Workspace(config={"root": str(FORMATS), **(config or {})})
    index(workspace, loaded)
    return {m.name: m for m in served_models(workspace, loaded)}


def at(setting):
    return setting.location.line, setting.location.column


# ---------------------------------------------------------------- KServe


def test_llm_inference_service_flags_inside_env_string_are_located():
    models = models_of("kserve-llmisvc.yaml")
    assert set(models) == {"r1/decode", "r1/prefill"}
    decode = models["r1/decode"]
    assert decode.engine == "vllm"
    assert decode.value("gpu_memory_utilization") == 0.99
    # value: "--gpu-memory-utilization 0.99 ..." on line 20: the flag at column 21, its value at 46
    assert at(decode.setting("gpu_memory_utilization")) == (20, 46)
    assert decode.setting("gpu_memory_utilization").key_location.column == 21
    assert decode.setting("gpu_memory_utilization").origin == "env:VLLM_ADDITIONAL_ARGS"
    assert decode.value("kv_transfer_config") == '{"kv_role":"kv_consumer"}'
    assert decode.value("data_parallel_size") == 16 and decode.value("enable_expert_parallel") is True
    assert decode.model.value == "hf://deepseek-ai/DeepSeek-R1-0528"
    assert decode.gpus.value == 8
    prefill = models["r1/prefill"]
    assert prefill.value("gpu_memory_utilization") == 0.97
    assert at(prefill.setting("gpu_memory_utilization")) == (33, 47)  # plain (unquoted) env string
    assert prefill.value("tensor_parallel_size") == 4 and prefill.replicas.value == 2
    assert decode.identity != prefill.identity


def test_llm_inference_service_config_eval_script():
    models = models_of("kserve-llmisvc-config.yaml")
    assert list(models) == ["llm-template/template"]  # the routing sidecar is not an engine
    model = models["llm-template/template"]
    # ghcr.io/llm-d/llm-d-cuda tags are llm-d releases, not vLLM versions (data/images.json)
    assert model.engine == "vllm" and model.engine_version is None and model.engine_variant == "llm-d"
    assert model.model.value == "/mnt/models" and at(model.model) == (16, 35)
    assert model.value("max_num_seqs") == 64 and at(model.setting("max_num_seqs")) == (20, 30)
    assert model.value("served_model_name") == "{{ .Spec.Model.Name }}"
    # $(vllm --version) in an assignment is not the engine launch
    assert model.setting("model").origin == "shell"


def test_kserve_inference_service_and_runtime():
    models = models_of("kserve-isvc.yaml")
    isvc = models["llama/model"]
    assert isvc.engine == "vllm"
    assert isvc.value("gpu_memory_utilization") == 0.95 and at(isvc.setting("gpu_memory_utilization")) == (14, 36)
    assert isvc.model.value == "hf://meta-llama/Llama-3.1-8B-Instruct" and isvc.gpus.value == 1
    runtime = models["kserve-huggingfaceserver/kserve-container"]
    assert runtime.engine == "vllm" and runtime.engine_version is None  # the tag is KServe's version
    assert runtime.value("max_num_seqs") == 128


# ---------------------------------------------------------------- OME, operators


def test_ome_runners_leader_worker_not_router():
    models = models_of("ome-runtime.yaml")
    assert set(models) == {"srt-pd/engine-leader", "srt-pd/engine-worker"}
    leader = models["srt-pd/engine-leader"]
    assert leader.engine == "sglang" and leader.value("mem_fraction_static") == 0.85
    assert leader.value("tensor_parallel_size") == 8 and leader.gpus.value == 8
    assert models["srt-pd/engine-worker"].replicas.value == 3


def test_vllm_runtime_operator_resource():
    model = models_of("vllmruntime.yaml")["llama"]
    assert model.engine == "vllm" and model.engine_version == "0.10.0"
    assert model.value("max_model_len") == 4096 and model.setting("max_model_len").source == "spec.model.maxModelLen"
    assert model.value("gpu_memory_utilization") == 0.8
    assert model.value("max_num_seqs") == 64  # extraArgs after the typed maxNumSeqs: 32
    assert [s.value for s in model.occurrences["max_num_seqs"]] == [32, 64]
    assert model.gpus.value == 1 and model.replicas.value == 2 and model.strategy.value == "Recreate"


# ---------------------------------------------------------------- charts, GitOps


def test_app_template_release_named_vllm_running_llama_cpp():
    models = models_of("app-template-helmrelease.yaml")
    chat = models["vllm"]
    assert chat.engine == "llama.cpp"  # the release and controller are "vllm"; the image is llama.cpp
    assert chat.value("max_model_len") == 32768 and chat.value("max_num_seqs") == 4
    assert chat.model.value == "unsloth/Qwen3-8B-GGUF:Q4_K_M"
    assert "gpu_memory_utilization" not in chat.settings
    assert chat.image.value == "ghcr.io/ggml-org/llama.cpp:server-b9592" and at(chat.image) == (18, 20)
    embed = models["vllm/embed"]
    assert embed.engine == "vllm" and embed.replicas.value == 0
    assert embed.image.value == "vllm/vllm-openai:latest" and at(embed.image) == (37, 21)
    assert embed.value("max_model_len") == 8192 and at(embed.setting("max_model_len")) == (42, 33)
    assert embed.value("max_num_seqs") == 8 and at(embed.setting("max_num_seqs")) == (44, 48)
    assert chat.identity != embed.identity


def test_argocd_values_string_and_values_object():
    models = models_of("argocd-application.yaml")
    chat = models["stack/chat"]
    assert chat.engine == "vllm" and chat.model.value == "Qwen/Qwen3-8B"
    assert at(chat.model) == (15, 25)  # inside the `values: |` string, at its line in the file
    assert at(chat.setting("max_model_len")) == (18, 30)
    assert chat.value("max_num_seqs") == 16 and at(chat.setting("max_num_seqs")) == (19, 48)
    assert chat.setting("max_model_len").source.startswith("spec.source.helm.values.")
    sglang = models["tools/sglang"]
    assert sglang.engine == "sglang" and sglang.value("max_model_len") == 8192


def test_docker_compose_command_string_and_interpolation():
    models = models_of("docker-compose.yml")
    assert set(models) == {"vllm", "sglang"}
    vllm = models["vllm"]
    assert vllm.image.value == "vllm/vllm-openai:v0.6.6" and vllm.engine_version == "0.6.6"
    assert vllm.model.value == "Qwen/Qwen2.5-1.5B-Instruct" and at(vllm.model) == (17, 29)
    assert vllm.value("max_model_len") == 8192 and vllm.gpus.value == 2
    sglang = models["sglang"]
    assert sglang.engine == "sglang" and sglang.value("max_num_seqs") == 32 and at(sglang.setting("max_num_seqs")) == (22, 96)


def test_shell_strings_lws_stormservice_tokenspeed():
    models = models_of("shell-workloads.yaml")
    assert set(models) == {"vllm/leader", "pd/prefill", "ts/engine"}  # the ray worker starts no engine
    leader = models["vllm/leader"]
    assert leader.value("max_model_len") == 8192 and at(leader.setting("max_model_len")) == (13, 128)
    prefill = models["pd/prefill"]  # bash -lc -- with a literal block and line continuations
    assert prefill.value("max_num_seqs") == 48 and at(prefill.setting("max_num_seqs")) == (44, 40)
    assert prefill.value("kv_transfer_config") == '{"kv_connector":"NixlConnector"}'
    ts = models["ts/engine"]
    assert ts.engine == "tokenspeed" and ts.value("max_num_seqs") == 32


def test_lexer_keeps_substitutions_templates_and_separators():
    words = [w for w, _, _ in lex("A=$(vllm --version | tail -1); exec vllm serve m --x {{ .A }} # c\nnext")]
    assert words == ["A=$(vllm --version | tail -1)", ";", "exec", "vllm", "serve", "m", "--x", "{{ .A }}", ";", "next"]
    assert [w for w, _, _ in lex('--a "b c" \'d\'', shell=False)] == ["--a", "b c", "d"]


# ---------------------------------------------------------------- mapped values


def test_mapped_values_every_rule_works():
    root = FORMATS / "mapped"
    config = load_config(root)
    result = lint([root], config)
    models = {m.name: m for m in result.models}
    assert set(models) == {"chat", "embed"}
    chat = models["chat"]
    assert chat.engine == "vllm" and chat.kind == "values"
    assert chat.setting("max_num_seqs").source == "models.chat.serving.maxNumSeqs"
    assert chat.value("max_model_len") == 16384  # extra_args come after the typed setting and win
    assert [s.source for s in chat.occurrences["max_model_len"]] == ["models.chat.serving.contextSize", "--max-model-len"]
    assert at(chat.setting("max_num_seqs")) == (8, 19)
    assert models["embed"].image.value == "vllm/vllm-openai:v0.10.0"
    codes = {(f.code, f.location.line) for f in result.findings}
    assert ("CFG302", 3) in codes and ("CFG303", 4) in codes and ("CFG106", 6) in codes
    assert chat.identity.endswith("#values/models.chat")


def test_values_mapping_is_validated():
    with pytest.raises(ConfigError):
        validate({"values": [{"files": ["x.yaml"], "settings": {"max_model_len": "a..b"}}]}, "test")
    with pytest.raises(ConfigError):
        validate({"values": [{"files": [], "settings": {"max_model_len": "a"}}]}, "test")
    validate({"values": [{"files": ["*.yaml"], "models": "models.*", "engine": "llama.cpp",
                          "settings": {"max_model_len": "ctx"}}]}, "test")


# ---------------------------------------------------------------- kustomize


def _fake_kubectl(tmp_path: Path, rendered: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    out = tmp_path / "rendered.yaml"
    out.write_text(rendered)
    script = bin_dir / "kubectl"
    script.write_text(f"#!/bin/sh\n[ \"$1\" = kustomize ] || exit 2\ncat '{out}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


RENDERED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
      - args:
        - --model
        - Qwen/Qwen3-8B
        - --max-model-len
        - "65536"
        image: vllm/vllm-openai:v0.10.0
        name: vllm
"""


@pytest.mark.e2e  # cfgcheck spawns the stand-in kubectl
def test_kustomize_rendered_with_fake_kubectl_maps_back_to_patch(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_kubectl(tmp_path, RENDERED)) + os.pathsep + os.environ.get("PATH", ""))
    root = FORMATS / "kustomize"
    config = Config(root)
    models = collect([root / "overlay"], config)[1]
    rendered = [m for m in models if "#rendered/" in m.identity]
    assert len(rendered) == 1
    model = rendered[0]
    assert model.identity.startswith("overlay/kustomization.yaml#rendered/Deployment/chat")
    setting = model.setting("max_model_len")
    assert setting.value == 65536
    assert (setting.location.path, setting.location.line, setting.location.column) == ("overlay/patch.yaml", 10, 66)
    assert model.image.location.path == "base/deployment.yaml"  # the value came from the base


def test_kustomize_without_kubectl_is_skipped_with_a_note(monkeypatch, capsys):
    monkeypatch.setenv("PATH", "/nonexistent")

    root = FORMATS / "kustomize"
    config = Config(root)
    models = collect([root], config)[1]
    assert [m.identity for m in models] == ["base/deployment.yaml#Deployment/chat/spec/template/spec/vllm"]
    assert "kubectl not found" in capsys.readouterr().err


@pytest.mark.e2e  # cfgcheck spawns the stand-in kubectl
def test_kustomize_base_only_rendering_adds_no_duplicate(tmp_path, monkeypatch):
    base = RENDERED.replace('"65536"', '"8192"')
    monkeypatch.setenv("PATH", str(_fake_kubectl(tmp_path, base)) + os.pathsep + os.environ.get("PATH", ""))
    root = FORMATS / "kustomize"
    config = Config(root)
    models = collect([root / "base"], config)[1]
    assert [m.identity for m in models] == ["base/deployment.yaml#Deployment/chat/spec/template/spec/vllm"]


# ---------------------------------------------------------------- llama-swap


def test_llama_swap_models_in_a_configmap_with_macros_located_at_their_use():
    models = models_of("llama-swap-configmap.yaml")
    assert set(models) == {"qwen3-8b", "coder"}
    qwen, coder = models["qwen3-8b"], models["coder"]
    assert qwen.engine == "llama.cpp" and qwen.model.value == "/models/Qwen3-8B-Q4_K_M.gguf" and at(qwen.model) == (19, 19)
    assert qwen.value("max_model_len") == 32768 and at(qwen.setting("max_model_len")) == (20, 11)  # ${ctx-long}
    assert qwen.value("max_num_seqs") == 2 and qwen.value("gpu_layers") == 99
    assert coder.engine == "vllm" and coder.value("gpu_memory_utilization") == 0.45
    assert at(coder.setting("max_model_len")) == (25, 27)


def test_llama_swap_config_file_of_its_own_and_a_docker_run_command():
    models = models_of("llama-swap.yaml")
    assert set(models) == {"gemma", "nomic"}
    assert models["gemma"].value("max_model_len") == 8192 and at(models["gemma"].model) == (6, 22)
    nomic = models["nomic"]
    assert nomic.image.value == "ghcr.io/ggml-org/llama.cpp:server-cuda-b6123" and nomic.engine == "llama.cpp"


def test_terraform_container_resources_of_an_engine_image_are_served_models(tmp_path: Path) -> None:
    import shutil

    from helpers import FIXTURES, expected_markers

    folder = FIXTURES / "formats" / "terraform-containers"
    shutil.copytree(folder, tmp_path / "repo")
    result = lint([tmp_path / "repo"], Config(tmp_path / "repo"))
    # the template's container and the Kubernetes container; the deployment refers to the template's image
    # and nginx is no engine
    assert sorted((m.name, m.model_id()) for m in result.models) == [("chat", "Qwen/Qwen2.5-7B-Instruct"), ("vllm", None)]
    chat = next(m for m in result.models if m.name == "chat")
    assert chat.value("max_model_len") == 8192 and (chat.model.location.line, chat.model.location.column) == (41, 32)
    found = {(f.code, f.location.line) for f in result.findings if f.code in ("CFG110", "CFG302")}
    assert found == {e for e in expected_markers(folder / "main.tf") if e[0] in ("CFG110", "CFG302")}


def test_a_terraform_file_kept_as_tf_txt_is_read_as_terraform(tmp_path: Path) -> None:
    from helpers import FIXTURES

    (tmp_path / "deploy.tf.txt").write_text((FIXTURES / "formats" / "terraform-containers" / "main.tf").read_text())
    result = lint([tmp_path], Config(tmp_path))
    assert sorted(m.name for m in result.models) == ["chat", "vllm"]
    assert {f.code for f in result.findings if f.location.line == 16} == {"CFG110", "CFG302"}
