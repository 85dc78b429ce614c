"""The review summary of a change: a removed setting shows the default that now applies, and an engine
upgrade (an image-only pull request, as Renovate opens them) shows one table of removed flags,
drifting defaults and env variables the new version stops reading. Real git repositories."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from cfgcheck.changes import model_changes
from cfgcheck.config import load
from cfgcheck.diff import lint_diff
from cfgcheck.github.summary import render_summary
from helpers import FIXTURES, git, make_repo, write

SPEC = (FIXTURES / "change" / "tokenspeed-spec.yaml").read_text(encoding="utf-8")
BUMP = (FIXTURES / "change" / "vllm-bump.yaml.in").read_text(encoding="utf-8")


def summary(repo: Path) -> str:
    config = load(repo.resolve())
    result = lint_diff([repo], config, "HEAD~1")
    return render_summary(result, model_changes(result.models, result.base_models, config.as_dict()), None)


def commit(repo: Path, files: dict, message: str) -> None:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def test_removed_pin_shows_the_engine_default_that_applies(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC})
    commit(repo, {"e2e/spec.yaml": SPEC.replace('            - --max-num-seqs\n            - "32"\n', "")}, "unpin")
    body = summary(repo)
    # TokenSpeed 0.1.1 resolves an unset max_num_seqs to 160 (tokenspeed/runtime/utils/server_args.py)
    assert "| max\\_num\\_seqs | 32 | **160** (engine default: TokenSpeed 0.1.1's default) |" in body


def test_image_only_bump_shows_one_upgrade_table(tmp_path: Path) -> None:
    old = BUMP.format(tag="v0.10.2", gpu="NVIDIA-H100-80GB-HBM3", extra=', "--swap-space", "8"')
    old = old.replace("          env:\n", '          env:\n            - name: VLLM_USE_V1\n              value: "1"\n')
    repo = make_repo(tmp_path, {"chat.yaml": old})
    commit(repo, {"chat.yaml": old.replace("v0.10.2", "v0.26.0")}, "chore(deps): update vllm/vllm-openai to v0.26.0")
    body = summary(repo)
    assert body.count("#### Engine upgrade") == 1
    assert "#### Engine upgrade: vLLM 0.10.2 → 0.26.0 (1 served model in 1 file)" in body
    assert "| change | flag, setting or env | 0.10.2 | 0.26.0 | matters for |" in body
    assert "| flag removed | --swap-space | accepted | **removed** | chat/vllm<br>chat.yaml:15 |" in body
    assert "| default | gpu\\_memory\\_utilization | 0.9 | **0.92** | chat/vllm |" in body
    assert "no env catalog for vllm" not in body  # the env catalogs are generated from the wheels
    row = next(line for line in body.splitlines() if "VLLM" in line and "USE" in line and "V1" in line
               and line.startswith("| env"))
    assert "| read | **ignored** |" in row, row
    # the CFG403 findings the section summarises are not repeated as rows
    assert "CFG403 default-drift: 2 warnings, summarised in this section" in body
    assert "[CFG403]" not in body


def test_one_table_for_several_manifests_bumped_alike(tmp_path: Path) -> None:
    chat = BUMP.format(tag="v0.19.0", gpu="NVIDIA-H100-80GB-HBM3", extra="")
    other = chat.replace("name: chat", "name: other")
    repo = make_repo(tmp_path, {"a/chat.yaml": chat, "b/other.yaml": other})
    commit(repo, {"a/chat.yaml": chat.replace("v0.19.0", "v0.20.0"),
                  "b/other.yaml": other.replace("v0.19.0", "v0.20.0")}, "chore(deps): update vllm to v0.20.0")
    body = summary(repo)
    assert body.count("| change | flag, setting or env | 0.19.0 | 0.20.0 | matters for |") == 1
    assert "#### Engine upgrade: vLLM 0.19.0 → 0.20.0 (2 served models in 2 files)" in body
    assert "| default | gpu\\_memory\\_utilization | 0.9 | **0.92** | chat/vllm, other/vllm |" in body


def test_drift_sections_group_models_by_their_drifted_defaults() -> None:
    """The grouping ``upgrade``/``propose`` bodies reuse: one group per (engine, from, to, drifted defaults),
    every row once with the models it matters for, and the version pair's other defaults as unaffected."""
    from cfgcheck.drift import DefaultDrift, VersionChange
    from cfgcheck.github.bodies import drift_sections

    def change(name: str, dests: list[str]):
        upgrade = VersionChange("sglang", "0.5.5.post3", "0.5.23", "0.5.5.post3", "0.5.23",
                                drifts=[DefaultDrift(d, None, "old", "new") for d in dests])
        return SimpleNamespace(name=name, path=f"{name}.yaml", upgrade=upgrade)

    changes = [change("a", ["load_balance_method"]), change("b", []), change("c", []),
               change("d", ["load_balance_method"])]
    (section,) = drift_sections(changes)
    assert section["label"] == "SGLang 0.5.5.post3 → 0.5.23" and section["models"] == ["a", "b", "c", "d"]
    assert [g["models"] for g in section["groups"]] == [["a", "d"], ["b", "c"]]  # largest first, then first seen
    assert [(r["what"], r["models"]) for r in section["rows"]] == [("load_balance_method", ["a", "d"])]
    assert section["files"] == 4 and "load_balance_method" not in {u["what"] for u in section["unaffected"]}
    assert {"hicache_mem_layout", "hicache_storage_prefetch_policy"} <= {u["what"] for u in section["unaffected"]}


SGLANG = (FIXTURES / "change" / "sglang-deployment.yaml.in").read_text(encoding="utf-8").format(
    image="lmsysorg/sglang:v0.5.23", args='            - --context-length\n            - "32768"\n'
    '            - --max-running-requests\n            - "8"')


def test_removed_memory_derived_window_shows_the_value_for_this_gpu_and_model(tmp_path: Path) -> None:
    """SGLang derives max_running_requests from the KV pool: the capacity estimate gives the number."""
    from cfgcheck.capacity import estimate
    from cfgcheck.config import load as load_config
    from cfgcheck.lint import lint

    repo = make_repo(tmp_path, {"coder.yaml": SGLANG})
    commit(repo, {"coder.yaml": SGLANG.replace('            - --max-running-requests\n            - "8"\n', "")},
           "unpin")
    (model,) = lint([repo], load_config(repo.resolve())).models
    derived = estimate(model, {}).max_num_seqs
    assert derived and derived >= 2048  # min(clamp(pool / context * 512, 2048, 4096), pool // 2)
    body = summary(repo)
    assert f"| max\\_num\\_seqs | 8 | **{derived:,}** (engine default: derived from the KV pool of H100" in body


NO_GPU = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct"]
          args: ["--max-model-len", "{length}", "--tensor-parallel-size", "2"]
          resources:
            limits:
              nvidia.com/gpu: 2
"""


def test_a_change_without_a_stated_gpu_shows_the_memory_one_gpu_needs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"llama.yaml": NO_GPU.format(length=131072)})
    commit(repo, {"llama.yaml": NO_GPU.format(length=16384)}, "cap the window")
    body = summary(repo)
    row = next(line for line in body.splitlines() if line.startswith("| GPU memory needed"))
    # TP 2: 65.7 GiB of weights per GPU; 114,688 fewer tokens of KV cache at 160 KiB per token and GPU,
    # at vLLM 0.26's default gpu_memory_utilization 0.92
    before, after = [float(cell.split(" GiB")[0].strip(" *")) for cell in row.split("|")[2:4]]
    assert abs((before - after) - 114688 * 163840 / 0.92 / 1024**3) < 0.2 and after > 65.7 / 0.92
    assert "smallest fit: H100-NVL 94 GB" in row or "smallest fit: A100-80GB 80 GB" in row
