"""A first run with the whole-run cache and several processes starts its workers before it reads and hashes
its files for the key (``lint.starter``, ``stages.start_workers``): the report is the one process's, what a
worker read beyond its files (a compose file's ``.env``) is noted in the run's entry, and a run whose key
finds a kept result ends the workers it started."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cfgcheck import lint as lint_module, pool
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
    start = lint_module.start_workers

    def recorded(*args, **kwargs):
        found.append(start(*args, **kwargs))
        return found[-1]

    monkeypatch.setattr(lint_module, "start_workers", recorded)
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


def test_a_run_that_finds_its_result_ends_the_workers_it_started(tmp_path: Path, cache_home: Path, started,
                                                                  monkeypatch) -> None:
    folder = _composes(tmp_path / "repo")
    monkeypatch.setattr("cfgcheck.cache.RACY_NS", -60 * 10**9)  # files written now are trusted by the index
    first = _report(folder, cache=True, jobs=2)
    assert _report(folder, cache=True, jobs=2) == first and len(started) == 1  # the index: no workers ahead
    shutil.rmtree(cache_home / "cfgcheck" / "stat")  # the kept result, without the index: a first run's key
    assert _report(folder, cache=True, jobs=2) == first and len(started) == 2
    for child in started[1].children:  # ended and waited for
        assert child.status is not None
        with pytest.raises(ProcessLookupError):
            os.kill(child.pid, 0)
