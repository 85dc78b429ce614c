"""``--jobs N`` is N processes in all (``pool.ordered``): the run stages its own share of the files while
N - 1 forked workers stage the rest, and with enough served models a forked process checks a share of them
(``lint.run_rules``). The report is the one process gives; Ctrl-C, termination and a worker that dies end
the run (its children with it), never with a partial report."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from cfgcheck import lint as lint_module, lint_command, pool, stages
from cfgcheck.config import Config
from cfgcheck.lint import lint
from cfgcheck.lint_command import render_lint
from tests.lint.test_jobs import _tree
from tests.lint.test_pool_order import _tree as _kinds_tree


def _mixed(folder: Path) -> Path:
    """Served Deployments, Services, a ConfigMap read by Deployments before it, a file that does not parse,
    the examples, and the workloads whose index hooks the run merges in order (pinned hosts, claims, KServe
    runtimes before and after their InferenceServices)."""
    _tree(folder)
    (folder / "kinds").mkdir()
    _kinds_tree(folder / "kinds")
    return folder


def _report(folder: Path, jobs: int) -> str:
    return render_lint(lint([folder], Config(folder), jobs=jobs), "json", None, folder, True, False, False)


def test_one_two_and_four_processes_report_alike(tmp_path: Path, monkeypatch) -> None:
    folder = _mixed(tmp_path)
    one = _report(folder, 1)
    monkeypatch.setattr(lint_module, "RULES_APART", 2)  # the fixtures' served models are enough to check apart
    monkeypatch.setattr(pool, "CHUNK", 3)  # more chunks than processes: each process stages several
    monkeypatch.setattr(pool, "RUN_AHEAD", 1)
    forks: list[int] = []
    forked = pool.forked

    def counted(task):
        forks.append(1)
        return forked(task)

    monkeypatch.setattr(pool, "forked", counted)
    assert _report(folder, 2) == one
    assert _report(folder, 4) == one
    assert forks == [1, 1]  # each run checked a share of the served models in a forked process
    assert '"CFG000"' in one and '"broken.yaml"' in one
    assert len({line for line in one.splitlines() if '"path": "d' in line}) >= 30


def test_the_run_and_its_workers_share_the_chunks_in_turn() -> None:
    # the run first, alone (the workers start meanwhile), then a little more than an equal share, spread evenly
    ahead = [0] * pool.RUN_AHEAD
    assert pool.owners(pool.RUN_AHEAD + 5, 2) == ahead + [0, 0, 1, 0, 1]
    assert pool.owners(pool.RUN_AHEAD + 8, 4) == ahead + [0, 1, 2, 0, 3, 1, 2, 0]
    assert pool.owners(4, 1) == [0, 0, 0, 0]
    for jobs in (2, 3, 4):
        dealt = pool.owners(pool.RUN_AHEAD + 1000, jobs)
        assert dealt.count(0) == pool.RUN_AHEAD + -(-1000 * pool.RUN_SHARE // (100 * jobs))  # the run's share
        theirs = [dealt.count(worker) for worker in range(1, jobs)]
        assert max(theirs) - min(theirs) <= 1  # the workers' shares alike


def _stages_forever(item: int) -> bytes:
    time.sleep(60)
    return b"late"


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_ctrl_c_and_termination_end_the_workers(monkeypatch, stop: type[BaseException]) -> None:
    """Ctrl-C raises KeyboardInterrupt in the run, SIGTERM (``sandbox.session``) SystemExit: either one, while
    the run waits for a worker, ends every worker before it goes on."""
    started: list[int] = []

    class Recorded(pool._Child):
        def __init__(self, task) -> None:
            super().__init__(task)
            started.append(self.pid)

    def interrupt(_number, _frame):
        raise stop()

    def here(item: int) -> bytes:  # the run's first chunk: every worker is forked by now
        if item == 0:
            signal.setitimer(signal.ITIMER_REAL, 0.2)
        return b"here"

    monkeypatch.setattr(pool, "_Child", Recorded)
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with pytest.raises(stop):
            list(pool.ordered(_stages_forever, list(range(200)), 3, (lambda: None, lambda: None), here))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert len(started) == 2
    for pid in started:  # ended and waited for: no such process any more
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _dies(item: int) -> bytes:  # only a worker calls it: the run stages its own share with ``here``
    os.kill(os.getpid(), signal.SIGKILL)
    return b"staged"


def test_a_worker_that_dies_ends_the_run() -> None:
    answers = pool.ordered(_dies, list(range(200)), 2, (lambda: None, lambda: None), lambda item: b"here")
    with pytest.raises(pool.WorkerDied, match="signal 9"):
        list(answers)


@pytest.mark.parametrize("where", ["stage", "rules"])
def test_a_dead_worker_is_one_line_and_exit_code_2(tmp_path: Path, monkeypatch, capsys, where: str) -> None:
    folder = _mixed(tmp_path)
    if where == "stage":
        def killed(file: Path) -> bytes:  # only a worker calls it: the run stages its own share with ``here``
            os.kill(os.getpid(), signal.SIGKILL)
            return b""
        monkeypatch.setattr(stages, "_work", killed)
    else:
        found = lint_module._RulePlan.found

        def killed_apart(plan, start: int, stop: int | None, whole: bool) -> list:
            if not whole:  # the forked process's share
                os.kill(os.getpid(), signal.SIGKILL)
            return found(plan, start, stop, whole)
        monkeypatch.setattr(lint_module, "RULES_APART", 2)
        monkeypatch.setattr(lint_module._RulePlan, "found", killed_apart)
    arguments = {**lint_command.lint_defaults(), "paths": [folder], "jobs": 2, "no_cache": True, "fmt": "json"}
    assert lint_command.run_fast(arguments) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("cfgcheck: internal error: WorkerDied: a worker process ended") and "signal 9" in err
    assert len(err.splitlines()) == 1
