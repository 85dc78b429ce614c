"""Shell scripts, GitHub Actions workflows and Python spec files: each engine start is a served model,
each flag located on its line and column, comments kept for the rules that want a reason."""

from __future__ import annotations

import shutil

from helpers import FIXTURES, git, lint_paths

from cfgcheck.adapters.formats.pyspec import scan_comments as python_comments
from cfgcheck.capacity import estimate
from cfgcheck.adapters.launch.scripts import scan_comments as shell_comments
from cfgcheck.config import Config, load as load_config
from cfgcheck.lint import collect, lint

FORMATS = FIXTURES / "formats"


def _models(root):
    _, models = collect([root], load_config(root))
    return {m.name: m for m in models}


def _at(setting):
    return setting.location.line, setting.location.column


def _found(result):
    return {(f.code, f.location.line, f.location.column) for f in result.findings if f.suppressed is None}


def test_shell_scripts_launchers_and_docker_run():
    models = _models(FORMATS / "scripts")
    assert set(models) == {"serve", "serve#2", "docker", "docker#2", "bench"}  # pip install / --version / echo: none
    serve = models["serve"]
    assert serve.engine == "vllm" and serve.model.value == "Qwen/Qwen3-8B" and _at(serve.model) == (6, 7)
    assert serve.value("max_model_len") == 16384 and _at(serve.setting("max_model_len")) == (7, 9)
    assert serve.value("tensor_parallel_size") == 2 and _at(serve.setting("tensor_parallel_size")) == (10, 28)
    assert serve.gpus.value == 2 and _at(serve.gpus) == (9, 22)  # CUDA_VISIBLE_DEVICES=0,1 before the command
    assert models["serve#2"].engine == "sglang" and models["serve#2"].value("max_num_seqs") == 16
    docker = models["docker"]
    assert docker.engine_version == "0.26.0" and docker.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert docker.gpus.value == 2 and docker.env["VLLM_LOGGING_LEVEL"].value == "DEBUG"
    assert docker.env["HF_TOKEN"].value is None  # passed through from the caller: not literal
    sglang = models["docker#2"]
    assert sglang.engine == "sglang" and sglang.engine_version == "0.5.5"  # the directive was docker's own
    result = lint_paths(FORMATS / "scripts", root=FORMATS / "scripts")
    found = _found(result)
    assert ("CFG101", 13, 5) in found and ("CFG205", 12, 20) in found  # serve.sh
    assert not any(f.code == "CFG205" and f.model == "serve#2" for f in result.findings)  # "Measured:" above


def test_a_config_file_the_script_writes_is_read_where_it_is_written():
    bench = _models(FORMATS / "scripts")["bench"]
    assert bench.value("max_model_len") == 8192 and _at(bench.setting("max_model_len")) == (3, 16)
    assert bench.value("max_num_seqs") == 64 and bench.setting("max_num_seqs").location.line == 6
    found = _found(lint_paths(FORMATS / "scripts" / "bench.sh", root=FORMATS / "scripts"))
    assert ("CFG101", 4, 1) in found  # kv-cache-memory: in the heredoc


def test_workflow_run_steps_and_services():
    models = _models(FORMATS / "workflows")
    assert set(models) == {"serve/engine", "serve/start vllm", "serve/sglang in docker"}
    step = models["serve/start vllm"]
    assert step.model.value == "Qwen/Qwen3-0.6B" and _at(step.model) == (23, 22)  # $MODEL, from the step env
    assert step.value("max_model_len") == 8192 and step.setting("max_model_len").location.line == 24  # $MAX_LEN: the workflow env
    assert _at(step.setting("max_num_seqs")) == (25, 28)
    service = models["serve/engine"]
    assert service.engine_version == "0.26.0" and service.gpus.value == 1 and service.env["HF_HUB_OFFLINE"].value == "1"
    sglang = models["serve/sglang in docker"]  # the model is an expression: unknown, kept as written
    assert sglang.model is None and sglang.value("model") == "${{ matrix.model }}"


def test_workflows_are_listed_but_other_dot_github_files_are_not(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FORMATS / "workflows", repo)
    (repo / ".github" / "dependabot.yml").write_text("vllm: not a workflow\n")
    git(repo, "init", "-q")
    files, _ = collect([repo], load_config(repo))
    assert [f.path for f in files] == [".github/workflows/e2e.yml"]


def test_python_spec_tables():
    models = _models(FORMATS / "pyspec")
    assert set(models) == {"Qwen/Qwen3-8B/vllm", "Qwen/Qwen3-8B/sglang", "meta-llama/Llama-3.2-1B-Instruct/vllm",
                           "embedder"}  # trtllm_args is not an engine cfgcheck reads
    vllm = models["Qwen/Qwen3-8B/vllm"]
    assert vllm.model.value == "Qwen/Qwen3-8B" and _at(vllm.model) == (15, 25)  # local("..."): its literal
    assert vllm.gpus.value == 2 and vllm.value("tensor_parallel_size") == 2
    assert _at(vllm.setting("max_num_seqs")) == (17, 42)
    sglang = models["Qwen/Qwen3-8B/sglang"]
    assert sglang.value("max_num_seqs") == 8 and sglang.value("max_model_len") == 32768
    assert models["meta-llama/Llama-3.2-1B-Instruct/vllm"].value("enforce_eager") is True  # the branch with args
    assert models["embedder"].engine == "unknown" and models["embedder"].model.value == "Qwen/Qwen3-Embedding-0.6B"
    found = _found(lint_paths(FORMATS / "pyspec", root=FORMATS / "pyspec"))
    # the sequence limit above the pool (CFG203, which answers for CFG205's "pinned below the default")
    assert ("CFG203", 17, 42) in found and ("CFG101", 17, 47) in found
    assert not any(code == "CFG205" and line == 20 for code, line, _ in found)  # a stated reason


def test_comment_scanners_ignore_quoted_hashes():
    shell = shell_comments('echo "# not" x#y $# # real\n  # alone\n')
    assert [(c.line, c.column, c.text, c.full_line) for c in shell.values()] == [(1, 21, "real", False),
                                                                                 (2, 3, "alone", True)]
    python = python_comments('x = "# not"  # real\n')
    assert [(c.line, c.column, c.text) for c in python.values()] == [(1, 14, "real")]


def test_a_python_file_is_never_executed(tmp_path):
    (tmp_path / "specs.py").write_text('import os\nos.system("touch pwned")\nS = {"m": {"model": "a/b", '
                                       '"vllm_args": ["--max-num-seqs", "8"]}}\n')
    (tmp_path / "broken.py").write_text('S = {"vllm_args": [\n')
    models = _models(tmp_path)
    assert not (tmp_path / "pwned").exists() and set(models) == {"m/vllm"}


def test_other_spec_shapes_are_mapped_in_the_configuration(tmp_path):
    (tmp_path / "deploy.py").write_text('RUNS = [\n    {"model_id": "Qwen/Qwen3-8B", "num_gpus": 4,\n'
                                        '     "serve_args": ["--max-model-len", "8192"]},  # ctx\n]\n'
                                        'BENCH = [{"name": "knobs", "sglang_args": ["--mem-fraction-static", "0.9"]}]\n')
    (tmp_path / ".cfgcheck.yaml").write_text("python-specs:\n  args:\n    vllm: serve_args\n")
    models = _models(tmp_path)
    assert set(models) == {"spec@2/vllm"}  # BENCH names no model: knobs of a benchmark, not a served model
    spec = models["spec@2/vllm"]
    assert spec.model.value == "Qwen/Qwen3-8B" and spec.gpus.value == 4 and spec.value("max_model_len") == 8192
    assert _at(spec.setting("max_model_len")) == (3, 41) and spec.setting("max_model_len").comments == ("ctx",)


def test_hostile_heredocs_stay_linear(tmp_path):
    import time

    (tmp_path / "x.sh").write_text("cat > c.yaml << E\n" * 100_000 + "vllm serve a/b --config c.yaml\n")
    started = time.monotonic()
    models = _models(tmp_path)
    assert time.monotonic() - started < 20 and models == {}  # an unterminated heredoc runs to the end


def test_an_unreadable_script_or_python_file_is_skipped_not_an_error(tmp_path):
    (tmp_path / "latin.sh").write_bytes(b"# caf\xe9\nvllm serve a/b\n")
    (tmp_path / "big.py").write_text("x = 1\n" * 10)
    result = lint([tmp_path], Config(tmp_path, {"limits": {"max-file-bytes": 30}}))
    assert [f.code for f in result.findings] == []


def test_a_bash_array_holds_the_command_and_its_closing_parenthesis_is_no_part_of_a_value(tmp_path):
    (tmp_path / "start.sh").write_text(
        'UTIL="0.85"\n'
        "launch() {\n"
        '  local tp="4"\n'
        '  cmd=(vllm serve "Qwen/Qwen3-8B" --tensor-parallel-size "$tp"\n'
        '       --gpu-memory-utilization "$UTIL")\n'
        '  "${cmd[@]}"\n'
        "}\n"
        "(cd /srv && echo started)\n")
    served = _models(tmp_path)["start"]
    assert served.model.value == "Qwen/Qwen3-8B" and served.value("tensor_parallel_size") == 4
    assert served.value("gpu_memory_utilization") == 0.85  # not "0.85)": the array ends at the parenthesis
    assert not [f for f in lint_paths(tmp_path, root=tmp_path).findings if f.code == "CFG105"]


def test_an_unclosed_array_still_gives_one_command(tmp_path):
    (tmp_path / "odd.sh").write_text('cmd=(vllm serve "Qwen/Qwen3-8B" --max-num-seqs 8\n--max-model-len 4096\n')
    served = _models(tmp_path)["odd"]  # the array never closes: its words still make one command
    assert served.value("max_num_seqs") == 8 and served.value("max_model_len") == 4096


def test_a_manifest_the_script_applies_from_a_heredoc_is_read_where_it_is_written(tmp_path):
    (tmp_path / "deploy.sh").write_text(
        "SHIFT=$((1 << 2))\n"
        "cat <<EOF > chat.yaml\n"
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata: {name: chat}\n"
        "spec:\n"
        "  template:\n"
        "    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        "      containers:\n"
        "        - name: engine\n"
        "          image: vllm/vllm-openai:v0.26.0\n"
        '          args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "8192"]\n'
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
        "EOF\n"
        "kubectl apply -f chat.yaml\n"
        "ssh gpu-node bash <<'REMOTE'\n"
        "vllm serve Qwen/Qwen3-4B --max-num-seqs 8\n"
        "REMOTE\n")
    models = _models(tmp_path)
    chat = next(m for m in models.values() if m.kind == "Deployment")
    assert chat.path == "deploy.sh" and chat.model.value == "Qwen/Qwen3-8B" and _at(chat.model) == (13, 30)
    assert chat.value("max_model_len") == 8192 and chat.gpus.value == 1 and chat.gpu_product == "NVIDIA-L4"
    remote = [m for m in models.values() if m.kind == "shell script"]  # a heredoc of commands stays commands
    assert [m.model.value for m in remote] == ["Qwen/Qwen3-4B"] and remote[0].value("max_num_seqs") == 8


RAY_LLM_APP = '''from ray import serve
from ray.serve.llm import LLMConfig, build_openai_app

chat = LLMConfig(
    model_loading_config=dict(model_id="chat", model_source="Qwen/Qwen3-8B"),
    accelerator_type="L4",
    deployment_config=dict(autoscaling_config=dict(min_replicas=2, max_replicas=4)),
    engine_kwargs=dict(
        tensor_parallel_size=2,
        max_model_len=8192,
        enable_prefix_caching=False,
        max_num_seq=64,  # not an EngineArgs field: the engine refuses it
        tokenizer_pool_size=POOL,
    ),
)
coder = LLMConfig(model_loading_config={"model_id": "Qwen/Qwen2.5-Coder-7B-Instruct"},
                  engine_kwargs={"max_num_seqs": 32})
serve.run(build_openai_app({"llm_configs": [chat, coder]}))
'''


def test_ray_serve_llm_configs_written_in_python(tmp_path):
    (tmp_path / "app.py").write_text(RAY_LLM_APP)
    (tmp_path / "other.py").write_text('from lmdeploy import LLMConfig\nLLMConfig(model_path="Qwen/Qwen3-8B")\n')
    models = _models(tmp_path)
    assert set(models) == {"chat", "Qwen/Qwen2.5-Coder-7B-Instruct"}  # not another library's LLMConfig
    chat, coder = models["chat"], models["Qwen/Qwen2.5-Coder-7B-Instruct"]
    assert chat.engine == "vllm" and chat.model.value == "Qwen/Qwen3-8B" and _at(chat.model) == (5, 62)
    assert chat.value("tensor_parallel_size") == 2 and chat.value("max_model_len") == 8192
    assert chat.value("enable_prefix_caching") is False and chat.gpu_product == "L4" and chat.replicas.value == 2
    assert coder.model.value == "Qwen/Qwen2.5-Coder-7B-Instruct" and coder.value("max_num_seqs") == 32
    found = _found(lint_paths(tmp_path, root=tmp_path))
    assert ("CFG103", 12, 9) in found  # keyword arguments must name a field exactly


def test_an_option_parsing_loop_keeps_the_defaults_set_before_it(tmp_path):
    (tmp_path / "serve.sh").write_text(
        'MODEL="Qwen/Qwen3-8B"\n'
        "TP=1\n"
        "LEN=8192\n"
        'while [[ $# -gt 0 ]]; do\n'
        '  case "$1" in\n'
        "    -m|--model)\n"
        '      MODEL="$2"; shift 2 ;;\n'
        "    --tp) TP=$2; shift 2 ;;\n"
        "    --long) LEN=32768; shift ;;\n"
        "  esac\n"
        "done\n"
        'vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$LEN"\n'
        "MODEL=$(cat model.txt)\n"
        'vllm serve "$MODEL"\n')
    first, second = _models(tmp_path)["serve"], _models(tmp_path)["serve#2"]
    assert first.model.value == "Qwen/Qwen3-8B" and _at(first.model)[0] == 1  # the default, where written
    assert first.value("tensor_parallel_size") == 1
    assert first.value("max_model_len") == 8192  # --long changes it only when the caller passes it
    assert second.model is None  # outside the loop, a value read at run time replaces it: unknown


def test_a_command_that_only_names_an_engine_starts_none():
    # pgrep / pkill / echo / grep / pip / docker logs name an engine; only the last line of the script starts one
    models = _models(FORMATS / "mentions")
    assert list(models) == ["restart"]
    served = models["restart"]
    assert served.engine == "llama.cpp" and served.model.value == "/models/qwen3-8b-q4_k_m.gguf"
    assert served.location.line == 15


def test_what_a_script_exports_is_the_engines_environment():
    models = _models(FORMATS / "exports")
    serve = models["serve"]
    # export NAME=value, export NAME of a variable set before, set -a; a plain assignment is the shell's own
    assert {name: serve.env[name].value for name in serve.env} == {
        "HF_HOME": "/srv/cache/huggingface", "VLLM_USE_V1": "0", "VLLM_LOGGING_LEVEL": "DEBUG",
        "VLLM_WORKER_MULTIPROC_METHOD": "spawn"}
    assert serve.env["VLLM_USE_V1"].source == "export VLLM_USE_V1" and _at(serve.env["VLLM_USE_V1"]) == (8, 20)
    container = models["container"]  # docker passes what -e names, with the value the script exported
    assert container.env["VLLM_USE_V1"].value == "0" and "VLLM_ATTENTION_BACKEND" not in container.env
    assert container.env["HF_TOKEN"].value is None
    result = lint_paths(FORMATS / "exports", root=FORMATS / "exports")
    removed = {(f.location.path, f.location.line) for f in result.findings if f.code == "CFG108"}
    assert removed == {("serve.sh", 8), ("container.sh", 3)}  # VLLM_USE_V1, gone from vLLM 0.26.0


def test_what_a_containers_shell_script_exports_is_the_engines_environment(tmp_path):
    (tmp_path / "chat.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: chat}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.26.0\n"
        '          command: ["/bin/bash", "-c"]\n          args:\n            - |\n'
        "              export VLLM_USE_V1=0 HF_HOME=/data/hf\n"
        "              exec env VLLM_LOGGING_LEVEL=DEBUG vllm serve Qwen/Qwen3-8B\n"
        "          env: [{name: HF_HOME, value: /root/.cache/hf}]\n")
    served = _models(tmp_path)["chat/vllm"]
    assert served.env["HF_HOME"].value == "/data/hf" and _at(served.env["HF_HOME"]) == (13, 44)  # the script's wins
    assert served.env["VLLM_USE_V1"].source == "export VLLM_USE_V1"
    assert served.env["VLLM_LOGGING_LEVEL"].value == "DEBUG"  # env NAME=value before the command


def test_a_model_folder_under_a_variable_is_the_path_as_written():
    """``--model $HOME/models/NAME`` names the folder as ``/root/models/NAME`` does; a folder whose own
    name is a variable names none."""
    models = _models(FORMATS / "model-as-written")
    served = models["serve"]
    assert served.model.value == "$HOME/models/Qwen2.5-7B-Instruct" and _at(served.model) == (4, 13)
    assert served.model_id() == "$HOME/models/Qwen2.5-7B-Instruct"
    reasons = estimate(served, {}).reasons  # the architecture is looked up by the folder's written name
    assert any("read as Qwen/Qwen2.5-7B-Instruct (its last segment names it)" in reason for reason in reasons)
    assert models["serve-unknown"].model is None


def test_a_command_captured_from_a_heredoc_and_evaluated_is_the_engine_start():
    """``cmd=$(cat <<- EOF`` / ``vllm serve ${MODEL_PATH} ...`` / ``EOF`` / ``)`` then ``eval $cmd``: the
    body is the command, its variables the script's; a captured command nothing evaluates starts none."""
    folder = FORMATS / "eval-heredoc"
    models = _models(folder)
    assert set(models) == {"start_vllm", "start_sglang"}
    served = models["start_vllm"]
    assert served.engine == "vllm" and served.location.line == 8
    assert served.model.value == "${PROJECT_ROOT}/models/Qwen2.5-7B-Instruct"  # the folder under a variable
    assert served.value("max_model_len") == 8192 and _at(served.setting("max_model_len")) == (11, 22)
    sglang = models["start_sglang"]
    assert sglang.engine == "sglang" and sglang.model.value == "/data/models/Qwen2.5-14B-Instruct"
    assert sglang.value("tensor_parallel_size") == 2
    found = _found(lint_paths(folder, root=folder))
    assert ("CFG305", 4, 9) in found  # the literal key, where it is assigned


def test_an_engine_start_is_located_at_its_command_not_at_a_value_assigned_above():
    """A ``docker run`` whose image is a variable assigned 27 lines above is reported at the ``docker run``;
    a Dockerfile whose shell-form CMD starts the engine (in the background) at the CMD, not at FROM."""
    models = _models(FORMATS / "launch-location")
    docker = models["run_docker"]
    assert docker.model.value == "Qwen/Qwen2.5-7B-Instruct" and docker.image.location.line == 3
    assert (docker.location.line, docker.location.column) == (30, 1)
    built = models["Dockerfile"]
    assert built.engine == "sglang" and built.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert (built.location.line, built.location.column) == (10, 5)
