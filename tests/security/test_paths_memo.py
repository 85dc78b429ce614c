"""The string paths of a run's many reference checks (``paths.escapes`` with a memo) answer as the pathlib
ones do, and the whole-run cache's notes of reads beyond the linted files (``paths.noting``) never read
outside the repository or in its ``.git``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cfgcheck.cache import fingerprint
from cfgcheck.paths import UnsafePath, escapes, escapes_by_strings, inside_by_strings, inside_repo, noting, read_beyond


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "base").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[remote]\n", encoding="utf-8")
    (root / "base" / "app.yaml").write_text("kind: Deployment\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("token: x\n", encoding="utf-8")
    links = {"inside.yaml": root / "base" / "app.yaml", "out.yaml": outside / "secret.yaml",
             "git.yaml": root / ".git" / "config", "dangling.yaml": root / "gone.yaml", "outdir": outside}
    for name, target in links.items():
        (root / name).symlink_to(target)
    return root


def test_escapes_by_strings_answers_as_pathlib(repo: Path) -> None:
    memo: dict[str, str | None] = {}
    for name in ("base/app.yaml", "base", "inside.yaml", "out.yaml", "git.yaml", "dangling.yaml", "outdir",
                 "outdir/secret.yaml", ".git/config"):
        assert escapes(repo / name, repo, memo=memo) == escapes(repo / name, repo), name
    assert escapes(repo / "out.yaml", repo, memo=memo) and not escapes(repo / "inside.yaml", repo, memo=memo)


def test_inside_by_strings_answers_as_inside_repo(repo: Path) -> None:
    memo: dict[str, str | None] = {}
    for name in ("base/app.yaml", "base", "inside.yaml", "out.yaml", "git.yaml", "dangling.yaml", "outdir",
                 "outdir/secret.yaml", ".git/config", "../outside/secret.yaml", "."):
        target = os.path.normpath(os.path.join(repo, name))
        try:
            expected: str | None = str(inside_repo(repo, target))
        except UnsafePath:
            expected = None
        try:
            found: str | None = inside_by_strings(str(repo), target, what="path", memo=memo)
        except UnsafePath:
            found = None
        assert found == expected, name
    assert inside_by_strings(str(repo), str(repo / "inside.yaml"), what="path", memo=memo) == \
        os.path.realpath(repo / "base" / "app.yaml")


def test_the_looks_memo_answers_alike_and_looks_once(repo: Path, monkeypatch) -> None:
    """With the run's ``looks``, the lstat that tells a link is the one the caller's ``looked`` reads after."""
    plain = ("base/app.yaml", "base", ".git/config", "gone.yaml")  # no link on the way: nothing to follow
    names = (*plain, "inside.yaml", "out.yaml", "git.yaml", "dangling.yaml", "outdir", "outdir/secret.yaml")
    expected = {name: escapes(repo / name, repo) for name in names}
    calls: list[str] = []
    lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda path, *a, **k: calls.append(os.fspath(path)) or lstat(path, *a, **k))
    memo: dict[str, str | None] = {}
    looks: dict[str, tuple[int, int]] = {}
    found = {name: escapes_by_strings(os.path.join(repo, name), str(repo), memo, looks) for name in plain}
    assert all(calls.count(os.path.join(repo, name)) == 1 for name in plain), calls
    found.update({name: escapes_by_strings(os.path.join(repo, name), str(repo), memo, looks) for name in names})
    assert found == expected
    assert inside_by_strings(str(repo), str(repo / "inside.yaml"), what="path", memo={}, looks={}) == \
        os.path.realpath(repo / "base" / "app.yaml")


def test_reads_beyond_are_noted_inside_the_repository_only(repo: Path) -> None:
    read: list[str] = []

    def counted(path: str, status: os.stat_result | None = None) -> str:
        read.append(path)
        return fingerprint(path)

    with noting(str(repo), {str(repo / "base" / "app.yaml")}, counted) as noted:
        read_beyond(repo / "base" / "app.yaml")  # a linted file: its bytes are in the key already
        read_beyond(repo / "base")
        read_beyond(repo / "missing.env")
    assert read == [str(repo / "base"), str(repo / "missing.env")] and not noted.unknown
    assert noted.found[str(repo / "missing.env")] == "absent"
    with noting(str(repo), set(), counted, "absent") as noted:  # as the whole-run cache notes
        read_beyond(repo / "also-missing.env")
    assert noted.found == {str(repo / "also-missing.env"): fingerprint(str(repo / "also-missing.env"))}
    assert str(repo / "also-missing.env") not in read
    for name in ("out.yaml", "outdir/secret.yaml", "git.yaml", "../outside/secret.yaml"):
        with noting(str(repo), set(), counted) as noted:
            read_beyond(os.path.join(repo, name))
        assert noted.unknown and not noted.found, name
    with noting(str(repo), set(), counted) as noted:
        read_beyond()  # a read that names no path: nothing the next run could check
    assert noted.unknown
    assert all(path.startswith(str(repo)) and "/.git" not in path for path in read)


def test_a_folder_noted_is_looked_at_once_and_its_lstat_handed_on(repo: Path, monkeypatch) -> None:
    """The whole-run cache's fingerprint of a folder a kustomization looks in is told what ``lstat`` found (a
    GitOps tree's run looks at 1,013 folders: one system call each, not four); a link is still followed."""
    looked_at: list[str] = []
    real_lstat = os.lstat

    def lstat(path, *args, **kwargs):
        looked_at.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)
    told: dict[str, os.stat_result | None] = {}

    def fingerprinted(path: str, status: os.stat_result | None = None) -> str:
        told[path] = status
        return "folder" if status is not None and os.path.isdir(path) else fingerprint(path)
    monkeypatch.setattr(os, "lstat", lstat)
    with noting(str(repo), set(), fingerprinted) as noted:
        read_beyond(repo / "base")
        once = looked_at.count(str(repo / "base"))
        read_beyond(repo / "inside.yaml")  # a link within the repository: noted, resolved through it
    monkeypatch.undo()
    assert once == 1 and told[str(repo / "base")].st_mode == os.lstat(repo / "base").st_mode
    assert str(repo / "inside.yaml") in noted.found and not noted.unknown
