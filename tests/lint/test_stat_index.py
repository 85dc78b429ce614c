"""The whole-run cache's index of what files were (cache.py ``StatIndex``): a file that ``stat`` still
describes as it did is not read again for the key, a file changed in any way ``stat`` can tell (its change
time moves even when its size and modification time are put back) is read again, a file looked at within
the racy window is never trusted, and an index someone else wrote is no index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cfgcheck import cache as cache_module
from cfgcheck.cache import ContentCache, StatIndex
from tests.lint.test_cache import COMPOSE, DEPLOYMENT, _report


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "app.yaml").write_text(DEPLOYMENT.format(tag="latest"), encoding="utf-8")
    (folder / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    (folder / ".env").write_text("TAG=latest\n", encoding="utf-8")
    return folder


@pytest.fixture
def aged(monkeypatch) -> None:
    """Files written by the test count as older than the racy window (as a checkout is, minutes later)."""
    monkeypatch.setattr(cache_module, "RACY_NS", -60 * 10**9)


def _reads(monkeypatch) -> list[str]:
    """The paths the cache reads from now on (``cache._contents``)."""
    read: list[str] = []
    contents = cache_module._contents

    def counted(path: str):
        read.append(os.path.basename(path))
        return contents(path)

    monkeypatch.setattr(cache_module, "_contents", counted)
    return read


def _rewrite_keeping_size_and_mtime(path: Path, text: str) -> None:
    """``text`` (as long as what ``path`` held) written, the modification time put back: only the change
    time, which no user can set, tells the file changed."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_mtime_ns == before.st_mtime_ns


def test_an_unchanged_tree_is_not_read_again(repo: Path, cache_home: Path, aged, monkeypatch) -> None:
    first = _report(repo, True)
    read = _reads(monkeypatch)
    assert _report(repo, True) == first == _report(repo, False)
    # the second run read no linted file and not the .env beside the compose file: stat said they are unchanged
    assert read.count("app.yaml") == read.count("compose.yaml") == read.count(".env") == 0


def test_a_changed_file_with_its_size_and_mtime_kept_is_read_again(repo: Path, cache_home: Path, aged) -> None:
    first = _report(repo, True)
    _rewrite_keeping_size_and_mtime(repo / "app.yaml", DEPLOYMENT.format(tag="v0.9.0"))
    second = _report(repo, True)
    assert second == _report(repo, False) != first
    assert '"CFG302"' in first and "vllm/vllm-openai:latest" not in second


def test_a_changed_env_file_with_its_size_and_mtime_kept_is_read_again(repo: Path, cache_home: Path, aged) -> None:
    first = _report(repo, True)
    _rewrite_keeping_size_and_mtime(repo / ".env", "TAG=v0.9.0\n")
    assert _report(repo, True) == _report(repo, False) != first


def test_a_file_within_the_racy_window_is_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "app.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    store = ContentCache({}, False, tmp_path / "cache", "stat")
    fresh = StatIndex(store, "scope")
    assert fresh.contents(str(path))[2] == b"a: 1\n"  # read
    fresh.save()
    assert fresh.looked == {} and not (tmp_path / "cache").exists()  # changed this very second: not trusted
    os.utime(path, ns=(0, 0))  # an old modification time does not help: the change time is now
    assert StatIndex(store, "scope").contents(str(path))[2] is not None


def test_an_entry_looked_at_is_kept_and_used(tmp_path: Path, aged) -> None:
    path = tmp_path / "app.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    store = ContentCache({}, False, tmp_path / "cache", "stat")
    first = StatIndex(store, "scope")
    kind, digest, data = first.contents(str(path))
    first.save()
    assert (kind, digest, data) == ("file", cache_module.digest(b"a: 1\n"), b"a: 1\n")
    assert StatIndex(store, "scope").contents(str(path)) == ("file", digest, None)  # not read
    assert StatIndex(store, "another scope").contents(str(path))[2] is not None  # another run's index


@pytest.mark.parametrize("written", [b"not json", b"[1, 2]", b'{"PATH": "x"}', b'{"PATH": [1, 2, 3, 4, 5, 6]}',
                                     b'{"PATH": [1, 2, 3, 4, 5, "x", 7]}', b'{"PATH": {"a": 1}}', b"\xff\xfe"])
def test_an_index_someone_else_wrote_is_no_index(repo: Path, cache_home: Path, aged, written: bytes) -> None:
    expected = _report(repo, False)
    assert _report(repo, True) == expected
    [index] = [path for path in (cache_home / "cfgcheck" / "stat").rglob("*") if path.is_file()]
    assert str(repo / "app.yaml") in json.loads(index.read_bytes())
    index.write_bytes(written.replace(b"PATH", json.dumps(str(repo / "app.yaml"))[1:-1].encode()))
    (repo / "app.yaml").write_text(DEPLOYMENT.format(tag="v0.9.1"), encoding="utf-8")
    assert _report(repo, True) == _report(repo, False) != expected


def test_a_folder_is_told_by_its_times_and_a_changed_one_is_not_the_same(tmp_path: Path, aged, monkeypatch) -> None:
    folder = tmp_path / "base"
    folder.mkdir()
    (folder / "a.yaml").write_text("a: 1\n", encoding="utf-8")
    index = StatIndex(ContentCache({}, False, tmp_path / "cache", "stat"), "scope")
    listed: list[str] = []
    listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path=".": listed.append(str(path)) or listdir(path))
    was = index.fingerprint(str(folder))
    assert was.startswith("folder at ") and was == index.fingerprint(str(folder)) and listed == []  # not listed
    before = folder.stat()
    (folder / "b.yaml").write_text("b: 1\n", encoding="utf-8")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # its change time still moved
    assert index.fingerprint(str(folder)) != was


def test_a_folder_within_the_racy_window_is_told_by_its_names(tmp_path: Path) -> None:
    folder = tmp_path / "base"
    folder.mkdir()
    index = StatIndex(ContentCache({}, False, tmp_path / "cache", "stat"), "scope")
    assert index.fingerprint(str(folder)) == cache_module.fingerprint(str(folder))  # "folder <names' digest>"


def test_a_name_a_noted_folder_lacked_is_looked_for_only_when_the_folder_changed(tmp_path: Path, aged,
                                                                                     monkeypatch) -> None:
    from cfgcheck.cache import ABSENT, RunCache

    folder, other = tmp_path / "app", tmp_path / "other" / "deep"
    folder.mkdir()
    other.mkdir(parents=True)
    (folder / "app.yaml").write_text("a: 1\n", encoding="utf-8")
    run = RunCache(ContentCache({}, False, tmp_path / "cache", "run"), str(tmp_path), ["x", "y"], (1, [folder / "app.yaml"].__getitem__))
    found = {str(folder): run.stats.fingerprint(str(folder)), str(folder / "README.md"): ABSENT,
             str(other / "README.md"): ABSENT}
    looked: list[str] = []
    lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: looked.append(os.path.basename(os.path.dirname(path)))
                        or lstat(path, *a, **k))
    assert run._unchanged(found)
    assert looked.count("app") == 0 and looked.count("deep") == 1  # only the name whose folder was not noted
    (other / "README.md").write_text("x\n", encoding="utf-8")
    assert not run._unchanged(found)
    (other / "README.md").unlink()
    (folder / "README.md").write_text("Tested on 1x L40S\n", encoding="utf-8")
    assert not run._unchanged(found)  # the folder's times moved: the name is looked for again


def test_the_index_compares_what_discovery_said_of_a_listed_file(repo: Path, cache_home: Path, aged,
                                                                   monkeypatch) -> None:
    """A second run asks the system nothing more of a file its discovery listed (its ``lstat`` is the index's
    ``stat``); a file it did not list (the compose file's .env) is asked as before."""
    first = _report(repo, True)
    asked: list[str] = []
    real = os.stat

    def counted(path, *args, **kwargs):
        asked.append(os.path.basename(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(cache_module.os, "stat", counted)
    assert _report(repo, True) == first
    assert "app.yaml" not in asked and "compose.yaml" not in asked and ".env" in asked
