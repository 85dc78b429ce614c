"""scripts/build_wrappers.py: the committed wrapper table is what the pinned upstream excerpts give,
the excerpts cite their pins, and the snapshot command cuts them from a real local git repository."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

from cfgcheck.config import Config
from cfgcheck.lint import collect

_spec = importlib.util.spec_from_file_location("build_wrappers", REPO / "scripts" / "build_wrappers.py")
script = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = script  # dataclasses resolve the module by name
_spec.loader.exec_module(script)


def _entry(variant: str) -> dict:
    return next(w for w in script.build()["wrappers"] if w["variant"] == variant)


def test_the_committed_table_is_current() -> None:
    committed = (REPO / "src" / "cfgcheck" / "data" / "wrappers.json").read_text(encoding="utf-8")
    assert committed == script.render(script.build()), "run: python scripts/build_wrappers.py"


def test_every_excerpt_is_headed_by_its_pin_and_license() -> None:
    for source in script.PINS + script.EARLIER:
        header = source.excerpt.read_text(encoding="utf-8").splitlines()[0]
        assert source.cite in header and source.license in header
        assert len(source.commit) == 40
    table = script.build()
    assert table["generated_by"] == "scripts/build_wrappers.py"
    assert len(table["sources"]) == len(script.PINS) + len(script.EARLIER)


def test_runpod_reads_the_flags_it_scans_its_aliases_and_not_its_reserved_names() -> None:
    runpod = _entry("runpod-worker-vllm")
    assert runpod["prefix"] is None  # only the listed names are read
    rename = runpod["rename"]
    assert rename["MAX_MODEL_LEN"] == "max_model_len" and rename["ENABLE_PREFIX_CACHING"] == "enable_prefix_caching"
    assert rename["MODEL_NAME"] == "model" and rename["OPENAI_SERVED_MODEL_NAME_OVERRIDE"] == "served_model_name"
    assert "MODEL" not in rename and "API_KEY" not in rename  # RESERVED_ENV_VARS
    assert "ROPE_SCALING" not in rename  # REMOVED_FLAGS: warned about, not passed
    assert runpod["values"] == {"max_num_batched_tokens": {"0": None}}  # ZERO_MEANS_UNSET


def test_djl_chains_env_to_option_to_vllm_destination() -> None:
    djl = _entry("djl-lmi")
    assert djl["prefix"] == "OPTION_"
    rename = djl["rename"]
    assert rename["HF_MODEL_ID"] == "model" and rename["model_id"] == "model"
    assert rename["tensor_parallel_degree"] == rename["TENSOR_PARALLEL_DEGREE"] == "tensor_parallel_size"
    assert rename["SM_NUM_GPUS"] == "tensor_parallel_size"  # translateTGIToLMI -> TENSOR_PARALLEL_DEGREE
    assert rename["MAX_BATCH_SIZE"] == rename["max_rolling_batch_size"] == "max_num_seqs"
    assert rename["CUDA_MEMORY_FRACTION"] == "gpu_memory_utilization"  # not the TensorRT-LLM branch
    assert "cpu_offload_gb_per_gpu" not in rename  # its destination is not in the settings vocabulary
    assert djl["values"]["dtype"] == {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
    assert djl["values"]["tensor_parallel_size"] == {"max": None}


def test_substratus_reads_only_the_variables_its_command_passes() -> None:
    substratus = _entry("substratus")
    # from the v0.6.3 image on the entrypoint is vLLM's server (Dockerfile.gpu at ffabc27): no env read
    assert substratus["rename"] == {} and substratus["prefix"] is None and "ffabc27" in substratus["source"]
    (entrypoint,) = substratus["versions"]
    assert entrypoint["before"] == "0.6.3" and "entrypoint.sh" in entrypoint["source"]
    assert entrypoint["rename"] == {"GPU_MEMORY_UTILIZATION": "gpu_memory_utilization", "MODEL": "model"}
    assert "NUM_GPU" in entrypoint["notes"]  # computed by the script, no user setting


def test_runpod_before_its_args_builder_read_every_engine_argument_upper_cased() -> None:
    (before,) = _entry("runpod-worker-vllm")["versions"]
    assert before["before"] == "2.24.0" and "76f345be" in before["source"]
    assert before["prefix"] == ""  # MODEL -> model, MAX_MODEL_LEN -> max_model_len
    assert before["rename"] == {"MODEL_NAME": "model", "MODEL_REVISION": "revision"}  # ENV_ALIASES in the vocabulary


LMI_TGI_STYLE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: lmi}
spec:
  template:
    spec:
      containers:
        - name: lmi
          image: 763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128
          env:
            - {name: OPTION_ROLLING_BATCH, value: vllm}
            - {name: HF_MODEL_ID, value: Qwen/Qwen3-8B}
            - {name: SM_NUM_GPUS, value: "2"}
            - {name: MAX_BATCH_SIZE, value: "64"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: runpod}
spec:
  template:
    spec:
      containers:
        - name: worker
          image: runpod/worker-v1-vllm:v2.25.2
          env:
            - {name: MODEL, value: not/read-reserved}
            - {name: MODEL_NAME, value: Qwen/Qwen3-8B}
            - {name: MAX_NUM_BATCHED_TOKENS, value: "0"}
"""


def test_the_generated_aliases_reach_the_served_models(tmp_path: Path) -> None:
    (tmp_path / "deploy.yaml").write_text(LMI_TGI_STYLE)
    _, models = collect([tmp_path], Config(tmp_path))
    by_name = {model.name: model for model in models}
    lmi, runpod = by_name["lmi/lmi"], by_name["runpod/worker"]
    assert lmi.value("tensor_parallel_size") == 2 and lmi.value("max_num_seqs") == 64
    assert lmi.setting("tensor_parallel_size").source == "env.SM_NUM_GPUS"
    assert runpod.model.value == "Qwen/Qwen3-8B"
    assert "max_num_batched_tokens" not in runpod.settings  # 0: the worker leaves it to vLLM


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args], cwd=cwd,
                          check=True, capture_output=True, text=True)
    return done.stdout.strip()


def test_snapshot_cuts_the_excerpts_from_a_local_clone(tmp_path: Path, monkeypatch) -> None:
    upstream = tmp_path / "upstream"
    (upstream / "src").mkdir(parents=True)
    (upstream / "src" / "args.py").write_text(
        'import os\nA = {"X": "--x"}\nB = frozenset({"--y"})\n\n\nclass C:\n    other = 1\n\n'
        '    @staticmethod\n    def keep(self):\n        return 1\n\n\ndef dropped():\n    pass\n')
    (upstream / "Main.java").write_text(
        "class Main {\n    void run() {\n        pick(p);\n    }\n\n"
        "    private static void pick(Properties p) {\n        if (x) {\n            y();\n        }\n    }\n}\n")
    (upstream / "run.sh").write_text('#!/bin/sh\nexport N=$(nproc)\nexec serve \\\n    --model "${M}"\n')
    _git(upstream, "init", "-q")
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-qm", "pin")
    commit = _git(upstream, "rev-parse", "HEAD")
    pins = (script.Source("t", "o/r", commit, "src/args.py", "MIT", keep=("A", "B", "C.keep")),
            script.Source("t", "o/r", commit, "Main.java", "MIT", keep=("pick",)),
            script.Source("t", "o/r", commit, "run.sh", "MIT", lines=r"^export|--\w"))
    monkeypatch.setattr(script, "PINS", pins)
    monkeypatch.setattr(script, "SOURCES", tmp_path / "sources")
    assert script.snapshot({"t": upstream}) == 0
    python = (tmp_path / "sources" / "t" / "args.py").read_text()
    assert f"o/r@{commit}:src/args.py (MIT)" in python.splitlines()[0]
    assert "A = {" in python and "B = frozenset" in python and "def keep" in python and "@staticmethod" in python
    assert "dropped" not in python and "other = 1" not in python
    assert script._literals(python) == {"A": {"X": "--x"}, "B": {"--y"}}
    java = (tmp_path / "sources" / "t" / "Main.java").read_text()
    assert "private static void pick" in java and java.rstrip().endswith("}") and "void run" not in java
    shell = (tmp_path / "sources" / "t" / "run.sh").read_text().splitlines()
    assert shell[1:] == ["export N=$(nproc)", '    --model "${M}"']


@pytest.mark.e2e  # the script runs git
def test_snapshot_needs_a_clone_per_key(tmp_path: Path, capsys) -> None:
    assert script.main(["snapshot"]) == 2
    assert "--git-dir KEY=PATH" in capsys.readouterr().err
    assert script.main(["snapshot", "--git-dir", f"runpod={tmp_path}"]) == 2  # not a clone with the pin
    assert "error:" in capsys.readouterr().err
