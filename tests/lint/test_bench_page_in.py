"""bench/run.py reads each measured run's files before it (``page_in``): its inputs and the tool's install; its
reference run times the tree at each ``--jobs`` for the reference too when the reference has a pool; each command
is forked from bench/launch.py, so its peak RSS is its own."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _bench_run():
    spec = importlib.util.spec_from_file_location("bench_run", REPO / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


def test_page_in_reads_the_inputs_the_venv_and_the_standard_library(tmp_path):
    bench = _bench_run()
    tree = tmp_path / "tree"
    (tree / "apps" / ".git").mkdir(parents=True)
    (tree / "apps" / "app.yaml").write_text("kind: Deployment\n")
    (tree / "apps" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib" / "site").mkdir(parents=True)
    (venv / "lib" / "site" / "tool.py").write_text("x = 1\n")
    case = bench.Case("tree_head", "tree", [str(venv / "bin" / "tool"), "lint", "--jobs", "1", "tree", "absent"], 1,
                      cwd=tmp_path)
    files = bench._paged(tuple(case.argv), case.cwd)
    assert str(tree / "apps" / "app.yaml") in files
    assert str(tree / "apps" / ".git" / "HEAD") in files  # git reads its own files too
    assert str(venv / "lib" / "site" / "tool.py") in files
    assert not any(name.endswith("absent") or name.endswith("--jobs") for name in files)
    assert any(name.endswith(".pyc") and "site-packages" not in name for name in files)  # the standard library
    (tree / "apps" / "app.yaml").unlink()  # a file gone since it was listed is passed over
    bench.page_in(case)


def test_a_program_outside_a_venv_pages_in_only_its_inputs_and_the_standard_library(tmp_path):
    bench = _bench_run()
    (tmp_path / "app.yaml").write_text("a: 1\n")
    files = bench._paged(("/usr/bin/yamllint", "-f", "parsable", "app.yaml"), tmp_path)
    assert str(tmp_path / "app.yaml") in files
    assert not any(name.startswith("/usr/bin") for name in files)


# what a report's heading reads of the run
META = dict.fromkeys(("reference", "when", "cpu", "nproc", "python", "commit", "yamllint", "reps", "warmup",
                      "load_before", "load_after"), "x")


def _reference_cases(bench, tmp_path, monkeypatch, ref_has: set[str]):
    (tmp_path / "dense" / "vllm-serve").mkdir(parents=True)
    (tmp_path / "dense" / "vllm-serve" / "a.yaml").write_text("kind: Deployment\n")
    (tmp_path / "plain.yaml").write_text("kind: Deployment\n")
    monkeypatch.setattr(bench, "DENSE", tmp_path / "dense")
    monkeypatch.setattr(bench, "plain_file", lambda: tmp_path / "plain.yaml")
    exes = {"yamllint": "yamllint", "ref": "ref/cfgcheck", "head": "head/cfgcheck"}
    has = {"ref": ref_has, "head": {"--jobs", "--no-cache"}}
    (tmp_path / "scratch").mkdir()
    return bench.reference_cases(exes, has, [1, 2], dict.fromkeys(("tree", "dense", "one_served", "one_plain", "base"),
                                                                1), set(), tmp_path / "scratch")


def _timed(case, wall: float) -> None:
    case.runs = [{"wall": wall, "cpu": wall, "rss_mib": 50.0}]


def test_a_reference_with_a_pool_is_timed_at_each_jobs_and_compared_like_with_like(tmp_path, monkeypatch):
    bench = _bench_run()
    cases = _reference_cases(bench, tmp_path, monkeypatch, {"--jobs", "--no-cache"})
    assert cases["tree_j1_ref"].argv == ["ref/cfgcheck", "lint", "--jobs", "1", "gitops"]
    assert cases["tree_j2_head"].argv == ["head/cfgcheck", "lint", "--jobs", "2", "gitops"]
    for key, wall in {"tree_yamllint": 40.0, "tree_ref": 1.0, "tree_head": 1.0, "tree_j1_ref": 2.0,
                      "tree_j1_head": 1.0}.items():
        _timed(cases[key], wall)
    report = bench.reference_report(cases, META)
    assert "- GitOps tree with --jobs 1: 40.00x yamllint (wall), 0.50 of the reference's wall time with --jobs 1" \
        in report
    assert "| GitOps tree with --jobs 1 | n/a | 2.000 / 2.000 | 1.000 / 1.000 | n/a | 0.50 / 0.50 |" in report


def test_a_reference_without_a_pool_is_timed_once_and_compared_with_that_run(tmp_path, monkeypatch):
    bench = _bench_run()
    cases = _reference_cases(bench, tmp_path, monkeypatch, set())
    assert "tree_j1_ref" not in cases and "tree_j1_head" in cases
    for key, wall in {"tree_yamllint": 40.0, "tree_ref": 4.0, "tree_head": 1.0, "tree_j1_head": 2.0}.items():
        _timed(cases[key], wall)
    report = bench.reference_report(cases, META)
    assert "- GitOps tree with --jobs 1: 20.00x yamllint (wall), 0.50 of the reference's wall time\n" in report


@pytest.mark.e2e
def test_a_measured_command_reports_its_own_peak_rss_not_the_bench_process(tmp_path, monkeypatch):
    """Linux carries a process's peak RSS across fork and exec: forked from the bench, a small command reported the
    bench's own peak. bench/launch.py forks it from a small process instead."""
    bench = _bench_run()
    monkeypatch.setattr(bench, "LOGS", tmp_path)
    monkeypatch.setattr(bench, "PAGE_IN", False)
    held = bytearray(160 * 1024 * 1024)
    held[::4096] = b"\1" * len(held[::4096])  # the pages resident in the bench process
    result = bench.measure(bench.Case("small", "small", [sys.executable, "-S", "-c", "x = bytes(1 << 20)"], 1,
                                      cwd=tmp_path), log=False)
    assert result["rc"] == 0 and result["wall"] > 0 and result["cpu"] > 0
    assert result["rss_mib"] < 60, result  # the bench process holds more than 160 MiB
    del held
    missing = bench.measure(bench.Case("missing", "missing", [str(tmp_path / "absent")], 1, cwd=tmp_path), log=False)
    assert missing == {"error": f"{tmp_path / 'absent'}: No such file or directory"}
    failing = bench.measure(bench.Case("failing", "failing", [sys.executable, "-c", "raise SystemExit(3)"], 1,
                                       cwd=tmp_path), log=False)
    assert failing["rc"] == 3 and failing["error"].startswith("exit 3")
