"""bench/run.py reads each measured run's files before it (``page_in``): its inputs and the tool's install."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

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
