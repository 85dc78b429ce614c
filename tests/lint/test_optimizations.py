"""Every speed optimisation changes the cost, never the findings (issue: speed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import REPO


def _findings(result) -> list[tuple]:
    return sorted((f.code, f.location.path, f.location.line, f.location.column, f.message, f.suppressed)
                  for f in result.findings)


@pytest.fixture(scope="module")
def dense(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "dense"
    subprocess.run([sys.executable, str(REPO / "bench" / "gen_dense.py"), "--out", str(out), "--files", "120"],
                   check=True, capture_output=True)
    return out


def test_findings_identical_with_and_without_optimisations(dense: Path) -> None:
    config = Config(dense.resolve())
    optimised = lint([dense], config)
    assert optimised.findings and optimised.models
    for fast, prefilter in [(True, False), (False, True), (False, False)]:
        other = lint([dense], config, fast=fast, prefilter=prefilter)
        assert _findings(other) == _findings(optimised), f"fast={fast} prefilter={prefilter}"
        assert len(other.models) == len(optimised.models)


def test_prefilter_keeps_unreadable_ordinary_files(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n data: x\n")
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    result = lint([tmp_path], Config(tmp_path))
    assert [(f.code, f.location.path) for f in result.findings] == [("CFG000", "broken.yaml")]
    assert not any(f.serving for f in result.files)
