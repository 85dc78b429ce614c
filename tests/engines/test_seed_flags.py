"""The seed incident's abbreviated flag, on the real files (../shared/corpus; skipped where absent)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import shared

SEED = "kubernetes/apps/ai/llmkube/models/qwen36-27b-vllm.yaml"


def _cfg101(path: Path) -> list:
    result = lint([path], Config(path.parent))
    return [f for f in result.findings if f.code == "CFG101"]


def test_c835afb74_reports_the_abbreviation_and_2c8e9ee92_does_not() -> None:
    before = shared("corpus", "Tanguille__cluster", "_history", "c835afb74", SEED)
    (finding,) = _cfg101(before)
    assert "--kv-cache-memory-bytes" in finding.message and "0.26.0" in finding.message
    assert before.read_text().splitlines()[finding.location.line - 1].strip() == "- --kv-cache-memory"
    assert not _cfg101(shared("corpus", "Tanguille__cluster", "_history", "2c8e9ee92", SEED))


def test_production_qwen38_file_reports_it_too() -> None:
    path = shared("corpus", "Tanguille__cluster", "kubernetes/apps/ai/llmkube/models/qwen38-27b-vllm.yaml")
    assert [f.location.line for f in _cfg101(path)]


def test_fix_produces_exactly_the_2c8e9ee92_rename(tmp_path: Path) -> None:
    source = shared("corpus", "Tanguille__cluster", "_history", "c835afb74", SEED)
    fixed_upstream = shared("corpus", "Tanguille__cluster", "_history", "2c8e9ee92", SEED).read_text()
    target = tmp_path / "qwen36-27b-vllm.yaml"
    shutil.copy(source, target)
    run = subprocess.run([sys.executable, "-m", "cfgcheck", "fix", str(target), "--select", "CFG101"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    before, after = source.read_text().splitlines(keepends=True), target.read_text().splitlines(keepends=True)
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and len(changed) == 1
    old, new = changed[0]
    assert old.strip() == "- --kv-cache-memory" and new.strip() == "- --kv-cache-memory-bytes"
    assert new in fixed_upstream  # the same line the upstream fix wrote
