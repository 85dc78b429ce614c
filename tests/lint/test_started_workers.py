"""A first run with the whole-run cache and several processes starts its workers before it reads and hashes
its own files (``whole_run.starter``, ``stages.start_workers``), a worker its own, and works out the key after the
run: the report is the one process's, the key is the one a run that reads every file first works out, and
what a worker read beyond its files (a compose file's ``.env``) is noted in the run's entry."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cfgcheck import lint as lint_module, pool, whole_run as whole_run_module
from cfgcheck.config import Config
from cfgcheck.lint import lint
from cfgcheck.lint_command import render_lint
from tests.lint.test_cache import COMPOSE, _report

pytestmark = pytest.mark.e2e  # forks worker processes


def _composes(folder: Path, count: int = 40) -> Path:
    for number in range(count):
        service = folder / f"svc{number:02}"
        service.mkdir(parents=True)
        (service / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
        (service / ".env").write_text("TAG=v0.8.5\n", encoding="utf-8")
    return folder


@pytest.fixture
def started(monkeypatch) -> list[pool.Workers]:
    """The workers each run started before its key, from now on; chunks of one file, dealt from the first."""
    found: list[pool.Workers] = []
    start = whole_run_module.start_workers

    def recorded(*args, **kwargs):
        found.append(start(*args, **kwargs))
        return found[-1]

    monkeypatch.setattr(whole_run_module, "start_workers", recorded)
    monkeypatch.setattr(pool, "CHUNK", 1)
    return found


def test_workers_started_before_the_key_report_what_one_process_reports(tmp_path: Path, cache_home: Path,
                                                                          started) -> None:
    folder = _composes(tmp_path / "repo")
    alone = _report(folder, cache=False)
    assert _report(folder, cache=True, jobs=2) == alone and len(started) == 1
    theirs = [at for at in range(40) if not started[0].runs(at)]
    assert len(theirs) >= 15  # the worker staged a share of the files
    # a .env only the worker read: the run's entry noted it, and a change to it is not answered from the entry
    (folder / f"svc{theirs[-1]:02}" / ".env").write_text("TAG=latest\n", encoding="utf-8")
    changed = _report(folder, cache=True, jobs=2)
    assert changed == _report(folder, cache=False) != alone and '"CFG302"' in changed
    assert len(started) == 2  # files written within the racy window are not in the index: a first run again


def _linted(monkeypatch) -> list[int]:
    """How many runs have linted their files from now on (not answered from a kept result)."""
    runs: list[int] = []
    gather = lint_module.gather

    def counted(*args, **kwargs):
        runs.append(1)
        return gather(*args, **kwargs)

    monkeypatch.setattr(lint_module, "gather", counted)
    return runs


def test_a_first_run_works_out_the_key_the_next_run_reads(tmp_path: Path, cache_home: Path, started,
                                                          monkeypatch) -> None:
    """The worker hashes the files it stages (the run, its own share): the key worked out after the first run
    is the one a run that reads every file first works out (``--jobs 1``, and the next run by the stat index),
    a link and a file too large to read included."""
    folder = _composes(tmp_path / "repo")
    (folder / "svc39" / "large.yaml").write_text("a: " + "x" * 300 + "\n", encoding="utf-8")
    (folder / "svc00" / "target.txt").write_text("a: [\n", encoding="utf-8")  # a syntax error, through a link
    os.symlink("../svc00/target.txt", folder / "svc38" / "linked.yaml")
    monkeypatch.setattr("cfgcheck.cache.RACY_NS", -60 * 10**9)  # files written now are trusted by the index
    linted = _linted(monkeypatch)

    def report(cache: bool, jobs: int) -> str:
        result = lint([folder], Config(folder, {"limits": {"max-file-bytes": 200}}), cache=cache, jobs=jobs)
        return render_lint(result, "json", None, folder, True, False, False)

    first = report(cache=True, jobs=2)
    assert len(started) == 1 and len(linted) == 1 and "max-file-bytes" in first and "svc00/target.txt" in first
    assert report(cache=True, jobs=1) == first and len(linted) == 1  # every file read first: the same key
    shutil.rmtree(cache_home / "cfgcheck" / "stat")
    assert report(cache=True, jobs=1) == first and len(linted) == 1
    (folder / "svc39" / "compose.yaml").write_text(COMPOSE.replace("Qwen3-8B", "Qwen3-4B"), encoding="utf-8")
    assert report(cache=True, jobs=2) == report(cache=False, jobs=1) != first and len(linted) == 3


def test_a_first_run_without_the_index_lints_and_ends_its_workers(tmp_path: Path, cache_home: Path, started,
                                                                  monkeypatch) -> None:
    """A run whose stat index is gone is a first run: its workers stage while it reads its own files, and it
    lints them (a kept result is not looked for: its key is worked out after the run) with the same report."""
    folder = _composes(tmp_path / "repo")
    monkeypatch.setattr("cfgcheck.cache.RACY_NS", -60 * 10**9)  # files written now are trusted by the index
    first = _report(folder, cache=True, jobs=2)
    assert _report(folder, cache=True, jobs=2) == first and len(started) == 1  # the index: no workers ahead
    shutil.rmtree(cache_home / "cfgcheck" / "stat")  # the kept result, without the index: a first run
    assert _report(folder, cache=True, jobs=2) == first and len(started) == 2
    for child in started[1].children:  # ended and waited for
        assert child.status is not None
        with pytest.raises(ProcessLookupError):
            os.kill(child.pid, 0)
