"""SkyPilot task/service YAML, Makefile recipes, Dockerfiles and compose ``bash -c`` strings: each engine
start is a served model with its settings located where they are written, and the accelerator SkyPilot
is told to provision."""

from __future__ import annotations

from helpers import lint_paths

from cfgcheck.adapters.core.protocol import file_format
from tests.adapters.test_scripts_workflows_pyspec import FORMATS, _at, _models


def _errors(root):
    result = lint_paths(root, root=root)
    return {(f.code, f.location.path, f.location.line, f.location.column) for f in result.findings
            if f.severity == "error" and f.suppressed is None}


def test_skypilot_run_with_envs_skypilot_variables_and_accelerators():
    models = _models(FORMATS / "skypilot")
    assert set(models) == {"team-chat", "sglang-task"}  # not-a-task.yaml: run: without a task's keys
    chat = models["team-chat"]
    assert chat.kind == "skypilot task" and chat.engine == "vllm" and _at(chat.model) == (20, 16)
    assert chat.model.value == "Qwen/Qwen3-235B-A22B"  # $MODEL_ID, from envs
    assert chat.engine_version == "0.10.1"  # resources.image_id: docker:vllm/vllm-openai:v0.10.1
    # $SKYPILOT_NUM_GPUS_PER_NODE is the accelerator count, $SKYPILOT_NUM_NODES num_nodes
    assert chat.value("tensor_parallel_size") == 8 and _at(chat.setting("tensor_parallel_size")) == (21, 30)
    assert chat.value("pipeline_parallel_size") == 2 and chat.value("max_model_len") == 65536
    assert chat.gpu_product == "H100" and chat.gpus.value == 16 and chat.gpus_span == "group"
    assert _at(chat.gpus) == (13, 17)
    assert chat.replicas.value == 1 and chat.replicas.location.line == 32  # replica_policy.min_replicas


def test_skypilot_accelerator_set_states_the_count_not_the_name():
    task = _models(FORMATS / "skypilot")["sglang-task"]
    assert task.engine == "sglang" and task.model.value == "meta-llama/Llama-3.1-8B-Instruct"  # python3 -u -m
    assert task.gpu_product is None  # {L40S:2, A100-80GB:2}: SkyPilot chooses
    assert task.gpus.value == 2 and task.gpus_span == "pod" and task.replicas.value == 3


def test_skypilot_errors_are_located_in_the_run_block():
    assert ("CFG207", "chat.sky.yaml", 23, 23) in _errors(FORMATS / "skypilot")  # max_model_len over the model's


def test_makefile_recipes_with_make_variables_and_prefixes():
    models = _models(FORMATS / "makefile")
    assert set(models) == {"serve", "embed", "fast"}  # install: pip / --version; bench: vllm bench serve
    serve = models["serve"]
    assert serve.kind == "make target" and serve.model.value == "mistralai/Mistral-7B-Instruct-v0.3"
    assert _at(serve.model) == (10, 38)  # $(MODEL), quoted in the ?= assignment
    assert serve.value("tensor_parallel_size") == 2 and _at(serve.setting("tensor_parallel_size")) == (11, 26)
    assert serve.value("max_model_len") == 32768 and serve.setting("port").value == "8001"
    assert serve.gpus.value == 2  # CUDA_VISIBLE_DEVICES=0,1 before the command
    embed = models["embed"]  # "-" prefix; $${SEQS:-64} is the shell's ${SEQS:-64}
    assert embed.model.value == "BAAI/bge-m3" and embed.value("max_num_seqs") == 64


def test_makefile_errors_are_located_and_mk_files_are_read():
    assert ("CFG207", "serving.mk", 3, 74) in _errors(FORMATS / "makefile")


def test_file_format_matches_whole_names_and_suffixes():
    assert file_format("deploy/Makefile") is file_format("GNUmakefile") is file_format("x/serving.mk")
    assert file_format("run.sh") is not None and file_format("README") is None
    assert file_format("Makefile.bak") is None and file_format("gpu.Dockerfile") is file_format("Dockerfile")
    assert file_format("app/Dockerfile") is file_format("Containerfile") is file_format("gpu.dockerfile") is not None
    # one Dockerfile per variant, as ``docker build -f`` names them; not BuildKit's ignore file beside one
    assert file_format("app/Dockerfile.gpu") is file_format("Containerfile.rocm") is file_format("Dockerfile")
    assert file_format("Dockerfile.dockerignore") is None and file_format("my.Dockerfile.txt") is None


def test_a_dockerfile_named_for_its_variant_is_discovered_and_read(tmp_path):
    from cfgcheck.adapters.core.protocol import file_suffixes
    from cfgcheck.discover import discover

    text = ("FROM vllm/vllm-openai:v0.9.2\nENTRYPOINT python3 -m vllm.entrypoints.openai.api_server \\\n"
            "    --model ${MODEL_NAME:-Qwen/Qwen3-8B}\n")
    for name in ("Dockerfile.extended_parameters", "Dockerfile.dockerignore"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    listed = discover([tmp_path], tmp_path, [], file_suffixes()).files
    assert [path.name for path in listed] == ["Dockerfile.extended_parameters"]
    (model,) = _models(tmp_path).values()
    assert model.path == "Dockerfile.extended_parameters" and model.model.value == "Qwen/Qwen3-8B"


def test_python_interpreter_options_before_dash_m_still_start_the_engine():
    from cfgcheck.engines.argv import find_launch
    from cfgcheck.model import ArgToken, Location

    def launch(command):
        return find_launch([ArgToken(w, Location("x.sh", 1, 1, 1, 2), (), "shell") for w in command.split()], None)

    for command in ("python -u -m vllm.entrypoints.openai.api_server --model m",
                    "python3 -X dev -W ignore -OO -m vllm.entrypoints.openai.api_server --model m",
                    "python -Wignore -m vllm.entrypoints.openai.api_server --model m"):
        found = launch(command)
        assert found is not None and found.engine == "vllm" and [t.text for t in found.args] == ["--model", "m"]
    assert launch("python -u serve.py -m vllm.entrypoints.openai.api_server") is None  # a script's own -m


def test_compose_entrypoint_as_one_shell_string():
    models = _models(FORMATS / "compose-shell-string")
    vllm, sglang = models["vllm"], models["sglang"]
    assert vllm.model.value == "google/gemma-3-12b-it" and _at(vllm.model) == (8, 61)  # folded block, after pip
    assert vllm.value("max_model_len") == 262144 and _at(vllm.setting("max_model_len")) == (8, 99)
    assert sglang.engine == "sglang" and sglang.model.value == "Qwen/Qwen3-8B" and _at(sglang.model) == (19, 68)
    assert ("CFG207", "docker-compose.yml", 8, 99) in _errors(FORMATS / "compose-shell-string")


def test_dockerfile_entrypoint_and_cmd_as_the_container_runs_them():
    models = {m.path: m for m in _models(FORMATS / "dockerfiles").values()}
    assert set(models) == {"exec/Dockerfile", "shell/Containerfile", "composed/compose.yaml"}  # base-only: no CMD
    exec_form = models["exec/Dockerfile"]  # final stage only; CMD continued over three lines
    assert exec_form.kind == "Dockerfile" and exec_form.engine_version == "0.9.2"
    assert exec_form.model.value == "Qwen/Qwen3-8B" and _at(exec_form.model) == (8, 7)
    assert _at(exec_form.setting("max_model_len")) == (9, 26) and exec_form.value("max_num_seqs") == 128
    shell = models["shell/Containerfile"]  # /bin/sh -c: ENV and ARG defaults, ${MODEL_ID:-default}; CMD ignored
    assert shell.engine == "sglang" and shell.engine_version == "0.5.2"
    assert shell.model.value == "Qwen/Qwen3-1.7B" and _at(shell.model) == (6, 30)
    assert shell.value("mem_fraction_static") == 0.85 and shell.setting("port").value == "30000"
    assert ("CFG207", "exec/Dockerfile", 9, 26) in _errors(FORMATS / "dockerfiles")


def test_a_dockerfile_from_with_a_platform_flag_names_the_image_after_it(tmp_path):
    (tmp_path / "Dockerfile").write_text("FROM --platform=linux/amd64 vllm/vllm-openai:v0.9.2 AS serve\n"
                                         'CMD ["Qwen/Qwen3-8B"]\n', encoding="utf-8")
    (model,) = _models(tmp_path).values()
    assert model.image.value == "vllm/vllm-openai:v0.9.2" and model.image.location.column == 29
    assert model.engine_version == "0.9.2"


def test_a_dockerfile_a_compose_file_builds_is_the_compose_service():
    composed = [m for m in _models(FORMATS / "dockerfiles").values() if m.path.startswith("composed/")]
    assert [m.kind for m in composed] == ["docker-compose"]
    assert composed[0].model.value == "meta-llama/Llama-3.1-8B-Instruct"


def test_slurm_gpu_requests_of_a_script():
    models = _models(FORMATS / "slurm")
    batch, step = models["sbatch_serve"], models["srun_serve"]
    assert batch.gpus.value == 4 and _at(batch.gpus) == (4, 26) and batch.gpu_product == "a6000"  # #SBATCH --gres
    assert step.gpus.value == 2 and _at(step.gpus) == (1, 13) and step.gpu_product is None  # srun's own option
