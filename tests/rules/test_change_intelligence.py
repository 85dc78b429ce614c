"""Change intelligence in diff mode, on real git repositories with base and head commits: default drift
on an engine upgrade (CFG403), stale explanations anywhere in the repository (CFG402), and the third
seed's pin removal end to end."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.config import load
from cfgcheck.diff import lint_diff
from helpers import FIXTURES, git, make_repo, write

HERE = FIXTURES / "change"
SPEC = (HERE / "tokenspeed-spec.yaml").read_text(encoding="utf-8")  # the third seed's pin, in a Deployment
WORKFLOW = (HERE / "pr-test-workflow.yml").read_text(encoding="utf-8")  # a lane comment explaining the pin
SCRIPT = (HERE / "decode-worker.sh").read_text(encoding="utf-8")
BUMP = (HERE / "vllm-bump.yaml.in").read_text(encoding="utf-8")  # {tag}, {gpu}, {extra}


def commit(repo: Path, files: dict[str, str | None], message: str) -> None:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def diff(repo: Path, base: str = "HEAD~1"):
    return lint_diff([repo], load(repo.resolve()), base)


def test_seed_pin_removal_reports_stale_workflow_comment(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC, ".github/workflows/pr-test.yml": WORKFLOW,
                                "scripts/decode.sh": SCRIPT})
    removed = SPEC.replace('            # raised from 4 after the first PD run deadlocked on bootstrap\n'
                           '            - --max-num-seqs\n            - "32"\n', "")
    commit(repo, {"e2e/spec.yaml": removed}, "stop pinning the window")
    stale = [f for f in diff(repo).findings if f.code == "CFG402"]
    where = sorted((f.location.path, f.location.line) for f in stale)
    # the workflow comment that names the flag with TokenSpeed, and the script's camelCase with the old value
    assert where == [(".github/workflows/pr-test.yml", 9), ("scripts/decode.sh", 2)], where
    first = stale[0]
    assert "max_num_seqs 32" in first.message and "removed at e2e/spec.yaml:22" in first.message
    assert first.related[0].path == "e2e/spec.yaml"
    # the sglang comment names another flag of another engine; the run: line is not a stale claim
    assert not any(f.location.line in (13, 17) for f in stale)


def test_changed_value_is_stale_only_where_the_old_value_is_stated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC, ".github/workflows/pr-test.yml": WORKFLOW})
    commit(repo, {"e2e/spec.yaml": SPEC.replace('"32"', '"64"')}, "raise the window")
    stale = [f for f in diff(repo).findings if f.code == "CFG402"]
    assert [(f.location.path, f.location.line) for f in stale] == [(".github/workflows/pr-test.yml", 9)]
    assert "changed to 64" in stale[0].message


def test_comment_added_by_the_change_is_not_stale(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC})
    removed = SPEC.replace('            - --max-num-seqs\n            - "32"\n', "").replace(
        "# raised from 4 after the first PD run deadlocked on bootstrap",
        "# no --max-num-seqs for TokenSpeed: the engine default window applies")
    commit(repo, {"e2e/spec.yaml": removed}, "drop the pin, say why")
    assert [f for f in diff(repo).findings if f.code == "CFG402"] == []


def test_hostile_spelling_is_a_fixed_string(tmp_path: Path) -> None:
    """A key written by the pull request reaches git grep only as a fixed -e pattern."""
    hostile = SPEC.replace("--max-num-seqs", "--max-num-seqs").replace(
        "containers:", "containers:\n        # --(.*)+$ --output=/tmp/pwned  --max-num-seqs")
    repo = make_repo(tmp_path, {"e2e/spec.yaml": hostile})
    commit(repo, {"e2e/spec.yaml": hostile.replace('            - --max-num-seqs\n            - "32"\n', "")}, "x")
    assert not (tmp_path / "pwned").exists() and not Path("/tmp/pwned").exists()
    assert any(f.code == "CFG402" for f in diff(repo).findings)


# ---------------------------------------------------------------- CFG403 default drift

def bump(tmp_path: Path, old: str, new: str, gpu: str = "NVIDIA-H100-80GB-HBM3", extra: str = "",
         config: str | None = None):
    files = {"chat.yaml": BUMP.format(tag=old, gpu=gpu, extra=extra)}
    if config is not None:
        files[".cfgcheck.yaml"] = config
    repo = make_repo(tmp_path, files)
    commit(repo, {"chat.yaml": BUMP.format(tag=new, gpu=gpu, extra=extra)}, f"Update vllm to {new}")
    return [f for f in diff(repo).findings if f.code == "CFG403"]


def test_gpu_memory_utilization_default_drift_from_the_catalogs(tmp_path: Path) -> None:
    (finding,) = bump(tmp_path, "v0.19.0", "v0.20.0")
    assert finding.severity == "warning" and finding.location.line == 13
    assert finding.message == ("vLLM 0.19.0 → 0.20.0 changes the default of gpu_memory_utilization from 0.9 to "
                               "0.92; this configuration does not set it")
    assert finding.remediation == "pin the old value (--gpu-memory-utilization 0.9), or accept 0.92 and say so " \
                                  "in the change description"


def test_pinned_setting_does_not_drift(tmp_path: Path) -> None:
    assert bump(tmp_path, "v0.19.0", "v0.20.0", extra=', "--gpu-memory-utilization", "0.9"') == []


def test_new_default_above_a_documented_ceiling_is_an_error(tmp_path: Path) -> None:
    config = "ceilings:\n  - setting: gpu_memory_utilization\n    max: 0.9\n    reason: shared with the encoder\n"
    (finding,) = bump(tmp_path, "v0.19.0", "v0.20.0", config=config)
    assert finding.severity == "error" and "above the ceiling 0.9" in finding.message


def test_runtime_defaults_by_gpu_class_and_engine_core(tmp_path: Path) -> None:
    (folded,) = bump(tmp_path, "v0.26.0", "v0.33.0", gpu="NVIDIA-B200")  # one finding per bump and model
    assert folded.severity == "warning" and "changes 2 defaults" in folded.message
    assert "(usage-context default on B200) from 8192 to 16384" in folded.message
    assert "; and to or from a value derived at start-up: disable_cascade_attn (on → unset (derived at start-up))" \
        in folded.message
    # Qwen3-8B has no Mamba layers and runs without context parallelism: those defaults are counted, not listed
    assert "mamba_cache_mode" not in folded.message and "dcp_comm_backend" not in folded.message
    assert folded.message.endswith("; 3 more defaults change for features it does not use")
    (tmp_path / "v0").mkdir()
    core = bump(tmp_path / "v0", "v0.7.3", "v0.8.5.post1")
    assert len([f for f in core if f.severity == "warning"]) == 1
    assert any("engine (engine core when VLLM_USE_V1 is unset) from V0 to V1" in f.message for f in core)
    assert any("enable_chunked_prefill" in f.message and "to on" in f.message for f in core)


def test_env_the_new_version_stops_reading(tmp_path: Path, monkeypatch) -> None:
    from cfgcheck import drift

    catalog = {"versions": {"0.19.0": {"names": ["VLLM_ALLOW_LONG_MAX_MODEL_LEN", "VLLM_USE_V1"]},
                            "0.20.0": {"names": ["VLLM_USE_V1"]}}}
    monkeypatch.setattr(drift, "catalog_data", lambda name: catalog if name == "vllm_env" else None)
    found = bump(tmp_path, "v0.19.0", "v0.20.0")
    env = [f for f in found if f.setting == "env:VLLM_ALLOW_LONG_MAX_MODEL_LEN"]
    assert len(env) == 1 and "no longer read by 0.20.0" in env[0].message and env[0].location.line == 18


def test_removed_flag_is_introduced_by_the_bump(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"chat.yaml": BUMP.format(tag="v0.10.2", gpu="L4", extra=', "--swap-space", "8"')})
    commit(repo, {"chat.yaml": BUMP.format(tag="v0.26.0", gpu="L4", extra=', "--swap-space", "8"')}, "bump")
    removed = [f for f in diff(repo).findings if f.code == "CFG104"]
    assert len(removed) == 1 and removed[0].introduced and "--swap-space" in removed[0].message


def test_commented_out_configuration_is_not_an_explanation(tmp_path: Path) -> None:
    """Seen in real repositories: disabled alternatives (`#   max_num_seqs: 32  # fewer sequences`) beside
    the live ones. They state the old value but explain nothing."""
    disabled = "# tokenspeed alternatives for the Qwen3.5-9B lane:\n#   max_num_seqs: 32  # fewer sequences\n" \
               "#   - \"--max-num-seqs\"\n"
    repo = make_repo(tmp_path, {"e2e/spec.yaml": SPEC, "e2e/alternatives.yaml": disabled + "lanes: []\n"})
    commit(repo, {"e2e/spec.yaml": SPEC.replace('            - --max-num-seqs\n            - "32"\n', "")}, "unpin")
    stale = [f for f in diff(repo).findings if f.code == "CFG402"]
    assert stale == []


def test_third_seed_end_to_end_with_a_python_spec_file(tmp_path: Path) -> None:
    """The seed's form: the pin in a Python spec file (read with ast), the explanation in a CI workflow.
    Removing the pin reports the workflow comment, and the summary shows the default that now applies."""
    from cfgcheck.changes import model_changes
    from cfgcheck.github.summary import render_summary

    specs = (HERE / "model_specs.py").read_text(encoding="utf-8")
    repo = make_repo(tmp_path, {"e2e_test/infra/model_specs.py": specs, ".github/workflows/pr-test.yml": WORKFLOW})
    pin = '            # raised after the first PD run deadlocked\n            "--max-num-seqs",\n            "32",\n'
    assert pin in specs
    commit(repo, {"e2e_test/infra/model_specs.py": specs.replace(pin, "")}, "stop pinning the window")
    result = diff(repo)
    stale = [f for f in result.findings if f.code == "CFG402"]
    assert [(f.location.path, f.location.line) for f in stale] == [(".github/workflows/pr-test.yml", 9)]
    assert "removed at e2e_test/infra/model_specs.py:13" in stale[0].message
    body = render_summary(result, model_changes(result.models, result.base_models, {}), None)
    assert "| max\\_num\\_seqs | 32 | **160** (engine default: TokenSpeed" in body


VALUES = """\
servingEngineSpec:
  modelSpec:
    - name: qwen
      repository: vllm/vllm-openai
      tag: v0.10.0
      modelURL: Qwen/Qwen3-8B
      vllmConfig:
        # 8 seqs: measured on the A100 at p95 TTFT under 1 s
        maxNumSeqs: 8
        maxModelLen: 8192  # 8192 fits two sessions of 4096
"""


def test_a_comment_stating_the_old_value_beside_a_changed_one_is_stale(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"values.yaml": VALUES})
    commit(repo, {"values.yaml": VALUES.replace("maxNumSeqs: 8", "maxNumSeqs: 16")
                  .replace("maxModelLen: 8192", "maxModelLen: 16384")}, "double both")
    stale = sorted((f.location.line, f.message) for f in diff(repo).findings if f.code == "CFG402")
    assert [line for line, _ in stale] == [8, 10], stale
    assert "max_num_seqs 8, which this change changed to 16 at values.yaml:9" in stale[0][1]


def test_the_changes_own_explanation_is_not_stale(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"values.yaml": VALUES})
    commit(repo, {"values.yaml": VALUES.replace("# 8 seqs: measured", "# 16 seqs, raised from 8: measured")
                  .replace("maxNumSeqs: 8", "maxNumSeqs: 16")
                  .replace("maxModelLen: 8192  # 8192 fits", "maxModelLen: 16384  # was 8192; 16384 fits")}, "say so")
    assert [f for f in diff(repo).findings if f.code == "CFG402"] == []


def test_added_lines_of_many_files_in_one_diff(tmp_path: Path) -> None:
    """One ``git diff`` for every file a stale search reads: each file's added lines, whatever its name (a
    space, a byte git quotes, a pathspec character) and whatever its content looks like (a removed
    ``-- a/x`` line and an added ``++ b/y`` line read as ``--- a/x`` and ``+++ b/y`` in the patch)."""
    from cfgcheck.stale import _added_lines

    names = ["plain.yaml", "with space.yaml", "café.yaml", "glob[1].yaml", "gone.yaml", "same.yaml"]
    repo = make_repo(tmp_path, {name: "a: 1\n-- a/plain.yaml\nb: 2\n" for name in names})
    commit(repo, {"plain.yaml": "a: 1\n++ b/same.yaml\nb: 2\nc: 3\n",
                  "with space.yaml": "top: 0\na: 1\n-- a/plain.yaml\nb: 2\n",
                  "café.yaml": "a: 1\n-- a/plain.yaml\nb: 3",  # its last line loses its newline
                  "glob[1].yaml": "a: 1\n-- a/plain.yaml\nb: 2\nz: 9\n", "gone.yaml": None}, "change")
    added = _added_lines(repo, "HEAD~1", names)
    # a deleted file and an unchanged one have no entry
    assert added == {"plain.yaml": {2, 4}, "with space.yaml": {1}, "café.yaml": {3}, "glob[1].yaml": {4}}
    assert _added_lines(repo, "HEAD~1", []) == {}
