"""CFG403 names only the drifted defaults a served model reads (cfgcheck.applicability); the version change
keeps the others (relevant / undecided / irrelevant) for the review summary, which groups CFG403 by
(engine, from, to)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.config import load
from cfgcheck.diff import lint_diff
from cfgcheck.engines.versions import known_versions
from helpers import git, make_repo, shared, write

pytestmark = pytest.mark.skipif(not {"0.5.5.post3", "0.5.23"} <= set(known_versions("sglang")),
                                reason="needs the SGLang 0.5.5.post3 and 0.5.23 catalogs")

SGLANG = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: coder
spec:
  template:
    spec:
      containers:
        - name: sglang
          image: lmsysorg/sglang:{tag}
          command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"{extra}]
          resources:
            limits:
              nvidia.com/gpu: 2
"""


def bump(tmp_path: Path, extra: str = ""):
    repo = make_repo(tmp_path, {"coder.yaml": SGLANG.format(tag="v0.5.5.post3-cu129-amd64", extra=extra)})
    write(repo, {"coder.yaml": SGLANG.format(tag="v0.5.23-cu129-amd64", extra=extra)})
    git(repo, "commit", "-qam", "Update lmsysorg/sglang to v0.5.23")
    return lint_diff([repo], load(repo.resolve()), "HEAD~1")


def drift(result):
    return [f for f in result.findings if f.code == "CFG403"]


def test_defaults_of_features_the_model_does_not_use_are_no_finding(tmp_path: Path) -> None:
    # Qwen3-8B (no Mamba or sliding-window layers), one replica, no hierarchical cache: nothing it reads drifts
    assert drift(bump(tmp_path, ', "--tp", "2"')) == []


def test_hierarchical_cache_on_makes_its_defaults_matter(tmp_path: Path) -> None:
    (finding,) = drift(bump(tmp_path, ', "--tp", "2", "--enable-hierarchical-cache"'))
    assert finding.severity == "warning"
    assert "hicache_mem_layout from layer_first to page_first" in finding.message
    assert "hicache_storage_prefetch_policy from best_effort to timeout" in finding.message
    assert "load_balance_method" not in finding.message and "mamba_" not in finding.message


def test_data_parallel_makes_the_load_balancing_default_matter(tmp_path: Path) -> None:
    (finding,) = drift(bump(tmp_path, ', "--dp-size", "2"'))
    assert finding.message.startswith("SGLang 0.5.5.post3 → 0.5.23 changes the default of load_balance_method from "
                                      "round_robin to auto; this configuration does not set it; ")
    assert finding.remediation.startswith("pin the old value (--load-balance-method round_robin)")


def test_the_version_change_keeps_what_applies_and_what_does_not(tmp_path: Path) -> None:
    from cfgcheck.changes import model_changes

    result = bump(tmp_path, ', "--dp-size", "2"')
    (change,) = [c for c in model_changes(result.models, result.base_models, {}) if c.upgrade is not None]
    upgrade = change.upgrade
    assert (upgrade.engine, upgrade.old, upgrade.new) == ("sglang", "0.5.5.post3", "0.5.23")
    assert [d.dest for d in upgrade.relevant] == ["load_balance_method"]
    assert upgrade.undecided == []
    features = {d.dest: d.feature for d in upgrade.irrelevant}
    assert features["hicache_ratio"] == "hierarchical cache"
    assert features["mamba_ssm_dtype"] == "a hybrid (Mamba / linear attention) model"
    assert features["swa_full_tokens_ratio"] == "a sliding-window attention model"


def test_a_renovate_bump_of_every_ome_runtime(tmp_path: Path) -> None:
    """The pull request of the issue: 29 OME runtime files moved to SGLang 0.5.23. Only the two data-parallel
    decode servers read a drifted default (load_balance_method); no file enables hierarchical cache."""
    source = shared("corpus", "sgl-project__ome", "config")
    files = {str(path.relative_to(source.parent)): path.read_text(encoding="utf-8")
             for path in source.rglob("*.yaml")}
    repo = make_repo(tmp_path, files)
    write(repo, {name: text.replace("v0.5.5.post3-cu129-amd64", "v0.5.23-cu129-amd64") for name, text in files.items()
                 if "v0.5.5.post3-cu129-amd64" in text})
    git(repo, "commit", "-qam", "Update lmsysorg/sglang to v0.5.23")
    result = lint_diff([repo], load(repo.resolve()), "HEAD~1")
    found = drift(result)
    assert sorted(f.model for f in found) == ["srt-deepseek-rdma-pd/decoder-leader", "srt-deepseek-rdma-pd/decoder-worker"]
    assert all("load_balance_method from round_robin to auto" in f.message and "hicache" not in f.message for f in found)
    ambiguous = [f for f in result.findings if f.code == "CFG102"]
    assert ambiguous and all(f.fix is not None and f.fix.edits[0].new == "--cuda-graph-bs-decode" for f in ambiguous)
