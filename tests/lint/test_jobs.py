"""``lint --jobs N``: files parsed and adapted in worker processes give the report one process gives,
byte for byte and in the same order (``stages.py``, ``pool.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cfgcheck import pool, stages
from cfgcheck.config import Config
from cfgcheck.lint import lint
from cfgcheck.lint_command import render_lint
from helpers import REPO, shared
from runcli import spawn

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: m{n}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:{tag}
          args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "{length}", "--gpu-memory-utilization", "0.9{n}"]
          {env}
          resources:
            limits:
              nvidia.com/gpu: 1
"""
SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: m{n}
spec:
  selector:
    app: m{n}
  ports:
    - port: 8000
"""
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: engine-env
data:
  VLLM_MAX_MODEL_LEN: "65536"
"""


def _tree(folder: Path) -> Path:
    """Forty-odd files: served Deployments, their Services in files of their own, a ConfigMap of env read
    by a Deployment listed before it, the examples (an LLMKube Model and its InferenceService, a chart)."""
    shutil.copytree(REPO / "examples", folder / "examples")
    for n in range(36):
        env = "envFrom: [{configMapRef: {name: engine-env}}]" if n % 9 == 0 else ""
        tag = "latest" if n % 4 == 0 else "v0.8.5"
        (folder / f"d{n:02}.yaml").write_text(DEPLOYMENT.format(n=n, tag=tag, length=4096 * (1 + n % 5), env=env),
                                              encoding="utf-8")
        if n % 3 == 0:
            (folder / f"s{n:02}.yaml").write_text(SERVICE.format(n=n), encoding="utf-8")
    (folder / "zz-configmap.yaml").write_text(CONFIGMAP, encoding="utf-8")
    (folder / "broken.yaml").write_text("vllm: [unclosed\n", encoding="utf-8")
    return folder


def _json(folder: Path, jobs: int) -> str:
    result = lint([folder], Config(folder), jobs=jobs)
    return render_lint(result, "json", None, folder, True, False, False)


@pytest.mark.e2e  # forks worker processes
def test_two_workers_report_what_one_process_reports(tmp_path: Path, monkeypatch) -> None:
    folder = _tree(tmp_path)
    used: list[int] = []
    ordered = pool.ordered

    def counted(work, items, jobs, bounds, here, started=None):
        used.append(len(items))
        return ordered(work, items, jobs, bounds, here, started)

    monkeypatch.setattr(stages.pool, "ordered", counted)
    one = _json(folder, 1)
    assert not used
    two = _json(folder, 2)
    assert used and used[0] >= pool.MIN_FILES  # the files went through the workers
    assert two == one
    assert '"CFG000"' in one and '"broken.yaml"' in one  # one unreadable file among them
    assert len({line for line in one.splitlines() if '"path": "d' in line}) >= 30  # findings of most Deployments


@pytest.mark.parametrize("where", ["corpus", "examples"])
def test_the_cli_output_is_the_same_with_one_and_two_jobs(where: str) -> None:
    folder = shared("corpus") if where == "corpus" else REPO / "examples"
    one = spawn("lint", "--offline", "--format", "json", "--jobs", "1", ".", cwd=folder, timeout=600)
    two = spawn("lint", "--offline", "--format", "json", "--jobs", "2", ".", cwd=folder, timeout=600)
    assert one.returncode in (0, 1), one.stderr
    assert (two.returncode, two.stdout) == (one.returncode, one.stdout)
    assert one.stdout.count('"code"') >= 10


@pytest.mark.parametrize("cores, v2, v1, expected", [
    (2, None, None, 2),  # no quota read: the cores
    (64, None, None, 4),  # a large node: no more than MAX_DEFAULT_JOBS processes (each holds its own heap)
    (64, "200000 100000\n", None, 2),  # a pod limited to 2 CPUs on that node (cgroup v2)
    (64, "150000 100000\n", None, 2),  # 1.5 CPUs: rounded up
    (8, "max 100000\n", None, 4),  # no quota
    (64, None, ("100000", "100000"), 1),  # cgroup v1: one CPU
    (64, None, ("-1", "100000"), 4),  # v1 without a quota
    (1, "400000 100000\n", None, 1),  # the CPU set is smaller than the quota
])
def test_the_default_is_the_cores_within_the_cpu_quota(monkeypatch, tmp_path: Path, cores, v2, v1, expected) -> None:
    monkeypatch.setattr(pool.os, "sched_getaffinity", lambda _pid: set(range(cores)))
    monkeypatch.setattr(pool, "CGROUP_V2", str(tmp_path / "v2"))
    monkeypatch.setattr(pool, "CGROUP_V1", (str(tmp_path / "quota"), str(tmp_path / "period")))
    if v2 is not None:
        (tmp_path / "v2").write_text(v2)
    if v1 is not None:
        (tmp_path / "quota").write_text(v1[0])
        (tmp_path / "period").write_text(v1[1])
    assert pool.default_jobs() == expected


def test_the_cores_unless_asked(monkeypatch, tmp_path: Path) -> None:
    """Without ``--jobs`` (or with ``--jobs 0``) a run may use every core this process may run on (a run of
    fewer than ``pool.MIN_FILES`` files stays in one process all the same); a negative count is a usage error."""
    from cfgcheck import lint_command

    asked: list[int] = []
    monkeypatch.setattr("cfgcheck.lint.lint", lambda *args, jobs, **kwargs: asked.append(jobs) or lint(*args, **kwargs))
    monkeypatch.setattr(pool, "default_jobs", lambda: 7)
    (tmp_path / "app.yaml").write_text("kind: ConfigMap\n")
    for jobs in (None, 0, 3):
        lint_command.run_lint_command([tmp_path], None, "json", tmp_path / "out.json", None, None, None, None, None,
                                      None, False, None, None, jobs, True, True, False, False)
    assert asked == [7, 7, 3]
    refused = spawn("lint", "--jobs", "-1", ".", cwd=tmp_path)
    assert refused.returncode == 2 and "--jobs -1: give 1 or more processes, or 0" in refused.stderr
