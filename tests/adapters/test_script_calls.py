"""A launcher that runs a repository script with positional arguments: one served model per call, at the
launcher, with the launcher's values, GPUs (#SBATCH) and header comments; the script alone is not reported
without a model when its callers give it one."""

from __future__ import annotations

import shutil

from helpers import FIXTURES, lint_paths

from cfgcheck.config import load as load_config
from cfgcheck.lint import collect

CALLS = FIXTURES / "formats" / "wrapper-calls"


def _models(root):
    _, models = collect([root], load_config(root))
    return {m.name: m for m in models}


def _at(setting):
    return setting.location.path, setting.location.line, setting.location.column


def test_each_launcher_is_a_served_model_with_its_own_values(tmp_path):
    shutil.copytree(CALLS, tmp_path, dirs_exist_ok=True)
    models = _models(tmp_path)
    assert set(models) == {"qwen_h200", "start_gemma", "launch_mistral"}  # not sglang_server on its own
    slurm = models["qwen_h200"]  # an absolute path of the checkout: its tail is serving/sglang_server.sh
    assert slurm.engine == "sglang" and (slurm.path, slurm.location.line) == ("jobs/qwen_h200.sh", 12)
    assert slurm.model.value == "/scratch/llm_models/Qwen-Qwen2.5-72B-Instruct"
    assert _at(slurm.model) == ("jobs/qwen_h200.sh", 7, 12)  # where the launcher writes it
    assert slurm.value("tensor_parallel_size") == 4 and _at(slurm.setting("tensor_parallel_size")) == ("jobs/qwen_h200.sh", 9, 9)
    assert slurm.gpus.value == 4 and slurm.gpu_product == "nvidia_h200"  # its #SBATCH --gres
    gemma = models["start_gemma"]  # "${SCRIPT_DIR}/sglang_server.sh": beside the launcher
    assert gemma.model.value == "/data/models/google-gemma-3-12b-it" and gemma.value("tensor_parallel_size") == 1
    assert gemma.value("trust_remote_code") is True  # the sixth argument, the wrapper's $EXTRA_ARGS
    assert _at(gemma.setting("port")) == ("serving/start_gemma.sh", 6, 53)
    mistral = models["launch_mistral"]  # serving/sglang_server.sh, relative to the launcher's folder
    assert mistral.model.value == "/scratch/llm_models/mistralai-Mistral-Small-24B-Instruct-2501"
    assert mistral.value("tensor_parallel_size") == 4


def test_a_script_nothing_calls_is_still_reported_alone(tmp_path):
    shutil.copytree(CALLS / "serving", tmp_path / "serving")
    (tmp_path / "serving" / "start_gemma.sh").unlink()
    (served,) = _models(tmp_path).values()
    assert served.name == "sglang_server" and served.model is None


def test_a_script_that_parses_options_is_not_read_by_position(tmp_path):
    (tmp_path / "serve.sh").write_text(
        'MODEL=Qwen/Qwen3-8B\nTP=1\nwhile [ $# -gt 0 ]; do\n  case "$1" in\n    --tp) TP=$2; shift 2 ;;\n  esac\ndone\n'
        'vllm serve "$MODEL" --tensor-parallel-size "$TP"\n')
    (tmp_path / "run.sh").write_text("bash serve.sh --tp 2\n")
    (served,) = _models(tmp_path).values()
    assert served.name == "serve" and served.value("tensor_parallel_size") == 1



def test_a_launcher_s_slurm_gpu_count_is_compared_with_the_parallel_size(tmp_path):
    shutil.copytree(CALLS, tmp_path, dirs_exist_ok=True)
    found = {(f.code, f.location.path, f.location.line) for f in lint_paths(tmp_path, root=tmp_path).findings}
    assert ("CFG208", "launch_mistral.sh", 5) in found  # #SBATCH --gres=gpu: one GPU for tensor parallel 4
    assert not any(code == "CFG208" and path != "launch_mistral.sh" for code, path, _ in found)


def test_slurm_batch_scripts_and_their_gpu_requests(tmp_path):
    (tmp_path / "serve.slurm").write_text(  # a batch script named .slurm that starts the engine itself
        "#!/bin/bash\n#SBATCH --gres=gpu:a100\nvllm serve Qwen/Qwen3-8B --tensor-parallel-size 2\n")
    (tmp_path / "pernode.sbatch").write_text("#!/bin/bash\n#SBATCH --gpus-per-node=2\nvllm serve Qwen/Qwen3-8B -tp 2\n")
    models = _models(tmp_path)
    served = models["serve"]
    assert served.gpus.value == 1 and served.gpu_product == "a100" and _at(served.gpus) == ("serve.slurm", 2, 9)
    assert models["pernode"].gpus.value == 2
    found = {(f.code, f.location.path) for f in lint_paths(tmp_path, root=tmp_path).findings}
    assert ("CFG208", "serve.slurm") in found and ("CFG208", "pernode.sbatch") not in found
