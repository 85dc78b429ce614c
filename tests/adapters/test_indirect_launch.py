"""Engines reached indirectly: argv in env variables and ConfigMaps, wrapper images
that read env, umbrella charts, placeholders, and templates that are not YAML until rendered."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES

from cfgcheck.config import Config
from cfgcheck.lint import collect, lint

INDIRECT = FIXTURES / "formats" / "indirect"


def models_in(tmp_path: Path, *names: str) -> dict:
    """Served models of fixture files copied into a fresh repository root, by name."""
    for name in names:
        source = INDIRECT / name
        target = tmp_path / name
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    _, models = collect([tmp_path], Config(tmp_path))
    return {model.name: model for model in models}


def at(setting) -> tuple[int, int]:
    return setting.location.line, setting.location.column


def codes(result, model: str | None = None) -> set[str]:
    return {f.code for f in result.findings if model is None or f.model == model}


# ---------------------------------------------------------------- argv in env variables


def test_shell_variables_are_split_and_located_in_the_env_value(tmp_path: Path) -> None:
    model = models_in(tmp_path, "env-launched.yaml")["shell-vars/vllm"]
    assert model.engine == "vllm" and model.model.value == "Qwen/Qwen3-8B"
    assert at(model.model) == (15, 22)  # the MODEL value, not the $MODEL in the script
    assert model.value("max_model_len") == 4096 and model.value("tensor_parallel_size") == 2
    # value: "--max-model-len 4096 --gpu-memory-utilization 0.85 --tensor-parallel-size 2" on line 17
    assert at(model.setting("max_model_len")) == (17, 39)
    assert model.setting("gpu_memory_utilization").key_location.column == 44
    assert model.setting("tensor_parallel_size").origin == "env:VLLM_ARGS"


def test_configmap_env_and_kubelet_references_in_a_script(tmp_path: Path) -> None:
    model = models_in(tmp_path, "env-launched.yaml")["configmap-args/vllm"]
    assert model.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert at(model.model) == (27, 10)  # configMapKeyRef: the ConfigMap's data line
    # envFrom: a folded block, its words located on their own lines
    assert model.value("max_model_len") == 8192 and at(model.setting("max_model_len")) == (29, 21)
    assert model.value("max_num_seqs") == 64 and at(model.setting("max_num_seqs")) == (30, 20)
    assert model.value("port") == "8000"


def test_a_configmap_in_a_later_file_is_found(tmp_path: Path) -> None:
    text = (INDIRECT / "env-launched.yaml").read_text().split("---\n")
    (tmp_path / "a-deploy.yaml").write_text(text[2])
    (tmp_path / "z-config.yaml").write_text(text[1])
    _, (model,) = collect([tmp_path], Config(tmp_path))
    assert model.value("max_num_seqs") == 64 and model.setting("max_num_seqs").location.path == "z-config.yaml"


def test_whole_command_in_an_env_variable(tmp_path: Path) -> None:
    model = models_in(tmp_path, "env-launched.yaml")["whole-command/engine"]
    assert model.engine == "vllm" and model.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert model.value("tensor_parallel_size") == 4 and at(model.setting("tensor_parallel_size")) == (70, 42)
    assert model.image.value == "${VLLM_IMAGE}"  # the engine comes from the command, not the placeholder


def test_secret_args_stay_unknown_and_defaults_apply(tmp_path: Path) -> None:
    model = models_in(tmp_path, "env-launched.yaml")["secret-args/vllm"]
    assert "$EXTRA_ARGS" in [token.text for token in model.argv]  # not literal: nothing claimed about it
    assert model.value("max_num_seqs") == 128 and at(model.setting("max_num_seqs")) == (85, 90)


def test_findings_land_on_the_env_value(tmp_path: Path) -> None:
    text = (INDIRECT / "env-launched.yaml").read_text().split("---\n")[0]
    (tmp_path / "d.yaml").write_text(text.replace("--gpu-memory-utilization", "--gpu-memory-utilisation"))
    result = lint([tmp_path / "d.yaml"], Config(tmp_path))
    (unknown,) = [f for f in result.findings if f.code == "CFG103"]
    assert (unknown.location.line, unknown.location.column) == (17, 44)


# ---------------------------------------------------------------- wrapper images


def test_runpod_worker_reads_the_engine_from_env(tmp_path: Path) -> None:
    model = models_in(tmp_path, "wrappers.yaml")["runpod/worker"]
    assert model.engine == "vllm" and model.engine_variant == "runpod-worker-vllm"
    assert model.model.value == "Qwen/Qwen3-8B" and at(model.model) == (14, 22)
    assert model.value("max_model_len") == 16384 and model.value("gpu_memory_utilization") == 0.95
    assert model.value("enable_prefix_caching") is True
    assert model.setting("max_model_len").source == "env.MAX_MODEL_LEN"


def test_djl_lmi_with_the_vllm_backend(tmp_path: Path) -> None:
    models = models_in(tmp_path, "wrappers.yaml")
    model = models["lmi/lmi"]
    assert model.engine == "vllm" and model.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert model.value("max_num_seqs") == 32 and model.value("max_model_len") == 8192
    assert model.value("dtype") == "bfloat16"  # DJL's DTYPE_MAPPER
    assert "tensor_parallel_size" not in model.settings  # "max": every GPU, decided at start
    assert "lmi-other-backend/lmi" not in models  # lmi-dist is not an engine cfgcheck reads


def test_a_wrapper_reads_only_the_env_its_entrypoint_reads(tmp_path: Path) -> None:
    model = models_in(tmp_path, "wrappers.yaml")["substratus/vllm"]
    assert model.engine_variant == "substratus" and model.model.value == "mistralai/Mistral-7B-Instruct-v0.3"
    assert model.value("gpu_memory_utilization") == 0.8
    assert "max_model_len" not in model.settings  # its entrypoint.sh passes no --max-model-len


WRAPPER_TAGS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: w}
spec:
  template:
    spec:
      containers:
        - name: engine
          image: IMAGE
          env:
            - {name: MODEL, value: Qwen/Qwen3-8B}
            - {name: MAX_MODEL_LEN, value: "8192"}
"""


@pytest.mark.parametrize("image, model, length", [
    ("runpod/worker-v1-vllm:v2.23.0stable-cuda12.1.0", "Qwen/Qwen3-8B", 8192),  # every field upper-cased
    ("runpod/worker-v1-vllm:v2.25.1", None, 8192),  # args_builder: MODEL is reserved, MODEL_NAME is the model
    ("ghcr.io/substratusai/vllm:v0.6.2", "Qwen/Qwen3-8B", None),  # entrypoint.sh passes MODEL, not the length
    ("ghcr.io/substratusai/vllm:v0.6.4.post1", None, None),  # vLLM's own server: env is not read
])
def test_a_wrapper_is_read_as_its_image_tag_s_release_reads_env(tmp_path: Path, image: str, model, length) -> None:
    (tmp_path / "w.yaml").write_text(WRAPPER_TAGS.replace("IMAGE", image))
    (found,) = collect([tmp_path], Config(tmp_path))[1]
    assert (found.model.value if found.model else None, found.value("max_model_len")) == (model, length)


def test_a_tag_naming_no_release_assumes_the_newest_wrapper_and_says_so(tmp_path: Path, capsys) -> None:
    (tmp_path / "w.yaml").write_text(WRAPPER_TAGS.replace("IMAGE", "ghcr.io/substratusai/vllm:latest"))
    (found,) = collect([tmp_path], Config(tmp_path))[1]
    assert found.model is None and found.engine_variant == "substratus"
    assert "ghcr.io/substratusai/vllm:latest: the tag names no Substratus vLLM image (KubeAI's predecessor) " \
           "release; read as the newest (0.6.3 and later)" in capsys.readouterr().err


def test_unknown_image_naming_the_engine_reads_the_usual_model_env(tmp_path: Path) -> None:
    models = models_in(tmp_path, "wrappers.yaml")
    assert models["inhouse/server"].model.value == "mistralai/Mistral-7B-Instruct-v0.3"
    # the upstream image's entrypoint is vllm serve: an env MODEL_NAME means nothing to it
    assert models["upstream/vllm"].model.value == "Qwen/Qwen3-8B"


# ---------------------------------------------------------------- placeholders


def test_placeholders_are_unknowns(tmp_path: Path) -> None:
    models = models_in(tmp_path, "placeholders.yaml")
    assert {name: (m.engine, m.model) for name, m in models.items()} == {
        "sample/engine": ("vllm", None), "sample/second": ("sglang", None), "sample/third": ("vllm", None)}
    assert models["sample/engine"].value("max_model_len") == 8192
    result = lint([tmp_path / "placeholders.yaml"], Config(tmp_path))
    assert not codes(result) & {"CFG301", "CFG302", "CFG303", "CFG505"}, result.findings


@pytest.mark.parametrize("image", ["${VLLM_IMAGE}", "<your-image>", "YOUR_IMAGE_HERE", "registry/REPLACE_ME:tag",
                                   "{{ .Values.image }}", "your-registry.example.com/vllm"])
def test_placeholder_images_get_no_pin_findings(tmp_path: Path, image: str) -> None:
    text = (INDIRECT / "placeholders.yaml").read_text().replace("<your-image>", f'"{image}"')
    (tmp_path / "p.yaml").write_text(text)
    assert not codes(lint([tmp_path / "p.yaml"], Config(tmp_path))) & {"CFG301", "CFG302"}


def test_a_real_image_next_to_them_is_still_checked(tmp_path: Path) -> None:
    text = (INDIRECT / "placeholders.yaml").read_text().replace("<your-image>", "vllm/vllm-openai:latest")
    (tmp_path / "p.yaml").write_text(text)
    found = codes(lint([tmp_path / "p.yaml"], Config(tmp_path)), "sample/engine")
    assert "CFG302" in found and "CFG301" not in found  # a rolling tag is one finding: rolling-tag's


# ---------------------------------------------------------------- umbrella charts


@pytest.mark.e2e  # cfgcheck spawns helm
def test_umbrella_chart_values_are_read_under_each_dependency(tmp_path: Path) -> None:
    models = models_in(tmp_path, "umbrella")
    assert set(models) == {"chat/vllm", "vllm-stack/llama", "default"}
    chat = models["chat/vllm"]
    assert chat.kind == "app-template" and chat.value("tensor_parallel_size") == 2
    assert chat.setting("tensor_parallel_size").location.path == "umbrella/values.yaml"
    assert at(chat.setting("tensor_parallel_size")) == (10, 100)
    llama = models["vllm-stack/llama"]
    assert llama.kind == "production-stack" and llama.value("max_model_len") == 4096
    assert llama.setting("max_model_len").source.startswith("vllm-stack.servingEngineSpec.modelSpec[0]")
    # the vendored subchart's own values file
    assert models["default"].path == "umbrella/charts/stack/values.yaml"


@pytest.mark.e2e  # cfgcheck spawns helm
def test_values_without_a_chart_are_not_read_under_other_keys(tmp_path: Path) -> None:
    models_in(tmp_path, "umbrella")
    (tmp_path / "umbrella" / "Chart.yaml").unlink()
    _, models = collect([tmp_path], Config(tmp_path))
    assert {m.name for m in models} == {"default"}


# ---------------------------------------------------------------- templates


def test_templates_get_one_note_per_folder_and_broken_yaml_stays_an_error(tmp_path: Path, capsys) -> None:
    models_in(tmp_path, "templated")
    result = lint([tmp_path], Config(tmp_path))
    errors = [f for f in result.findings if f.code == "CFG000"]
    assert [(f.location.path, f.location.line) for f in errors] == [("templated/broken/vllm.yaml", 5)]
    assert "helm" not in errors[0].message.lower()  # not in a Helm chart: no helm advice
    err = capsys.readouterr().err
    assert err.count("templated/ansible: 2 template files") == 1
    assert "templated/helmfile: 1 template file (such as values.template.yaml)" in err
    assert "ansible/vllm.yaml" not in {f.location.path for f in result.findings}


@pytest.mark.e2e  # cfgcheck spawns helm
def test_a_rendered_chart_resolves_env_from_its_own_configmap(tmp_path: Path, monkeypatch) -> None:
    """helm's output holds the ConfigMap and the Deployment that takes its env (a stand-in helm)."""
    repo = tmp_path / "repo"
    chart = repo / "charts" / "chat"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chat\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text('engineArgs: "--max-model-len 8192 --max-num-seqs 48"\n')
    (chart / "templates" / "all.yaml").write_text("data:\n  VLLM_ARGS: {{ .Values.engineArgs | quote }}\n")
    rendered = (INDIRECT / "env-launched.yaml").read_text().split("---\n")
    configmap = rendered[1].replace(rendered[1][rendered[1].index("  VLLM_ARGS"):],
                                    '  VLLM_ARGS: "--max-model-len 8192 --max-num-seqs 48"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text("#!/bin/sh\ncat <<'EOF'\n---\n# Source: chat/templates/all.yaml\n" + configmap
                    + "---\n# Source: chat/templates/all.yaml\n" + rendered[2] + "EOF\n")
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    _, models = collect([repo], Config(repo))
    (model,) = [m for m in models if m.kind == "Deployment"]
    assert model.value("max_num_seqs") == 48 and model.value("max_model_len") == 8192
    assert model.setting("max_num_seqs").location.path == "charts/chat/values.yaml"


def test_a_long_value_named_many_times_is_bounded(tmp_path: Path) -> None:
    """Hostile input: a 6,000-word value named 3,000 times would be 18 million words."""
    from cfgcheck.adapters.launch.env_argv import MAX_SPLICED_WORDS

    value = " ".join(["--max-num-seqs 8"] * 3000)
    script = "vllm serve m --served-model-name=$A " + " ".join(["$A"] * 3000)
    text = (INDIRECT / "env-launched.yaml").read_text().split("---\n")[0]
    text = text.replace('"vllm serve $MODEL $VLLM_ARGS"', f'"{script}"').replace(
        '"--max-model-len 4096 --gpu-memory-utilization 0.85 --tensor-parallel-size 2"', f'"{value}"')
    text = text.replace("name: VLLM_ARGS", "name: A")
    (tmp_path / "h.yaml").write_text(text)
    _, (model,) = collect([tmp_path], Config(tmp_path))
    assert len(model.argv) <= MAX_SPLICED_WORDS + 3000 + 10
    assert max(len(token.text) for token in model.argv) < 5000  # too long to inline: left as written


@pytest.mark.parametrize("text, expected", [
    ("${VLLM_IMAGE}", True), ("$(MODEL)", True), ("{{ .Values.image }}", True), ("{% raw %}x", True),
    ("<your-image>", True), ("<MODEL_NAME>", True), ("YOUR_IMAGE_HERE", True), ("registry/REPLACE_ME:tag", True),
    ("changeme", True), ("vllm/vllm-openai:v0.26.0", False), ("org/replacement-model", False),
    ("my-registry.io/vllm:1", False), ("meta-llama/Llama-3.1-8B-Instruct", False), ("price$5", False),
])
def test_placeholder_recognition(text: str, expected: bool) -> None:
    from cfgcheck.engines.images import placeholder

    assert placeholder(text) is expected


# ---------------------------------------------------------------- engine images run with another entrypoint

def test_engine_image_containers_with_another_entrypoint_are_checked_for_their_tag(tmp_path: Path) -> None:
    from helpers import expected_markers

    folder = FIXTURES / "formats" / "engine-image-containers"
    shutil.copytree(folder, tmp_path / "repo")
    result = lint([tmp_path / "repo"], Config(tmp_path / "repo"))
    expected = {(path.relative_to(folder).as_posix(), code, line) for path in folder.rglob("*.sh")
                for code, line in expected_markers(path)}
    found = {(f.location.path, f.code, f.location.line) for f in result.findings if f.code == "CFG302"}
    assert found == {e for e in expected if e[1] == "CFG302"}
    # the containers serve nothing of their own: the one served model is the engine docker exec starts in "node"
    served = [m for m in result.models if not m.template]
    assert [(m.name, m.image.value, m.value("tensor_parallel_size")) for m in served] == [("start-node#2", "vllm/vllm-openai", 2)]
