"""The one check for every path cfgcheck reads because a user (or a pull request) named it.

``.cfgcheck.yaml``, ``--config``, ``model_configs``, the globs of mapped ``values:`` entries, template
overrides and the ADR folder are all named by text a pull request can change. A name that climbs out
with ``..``, an absolute path elsewhere, or a symlink whose target lies outside the repository would let
that text read any file the runner can (``/proc/self/environ``, ``~/.ssh/id_ed25519``, ``.git/config``
with the checkout's token) and post it back, so each such path goes through :func:`inside_repo` first.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path

from .git import GitError, run

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable, Iterator

# With these set, git finds a repository no ``.git`` above the folder shows (git-scm.com/docs/git,
# "ENVIRONMENT VARIABLES": GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR).
_GIT_LOCATION_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")
# Reads of repository files, or folder listings, beyond the file being adapted (a compose ``.env``, the
# ``Chart.yaml`` beside a values file, a folder's build scripts, ``model_configs``): the content cache
# (cache.py) keeps only files whose adapting made none, whose served models follow from their own text.
_BEYOND = [0]
# What the reads beyond found, while a run that the whole-run cache may keep is under way (``noting``):
# path -> its fingerprint (cache.fingerprint), or None under "" for a read that named no path.
_NOTED: list["Noted"] = []
# The adapter workspace's space (``contexts.Workspace.space``) of the folders resolved so far in a run
# (``_resolved``'s memo): the kustomize renderer and the kustomization index ask about the same folders.
RESOLVED = f"{__name__}.resolved"
# The space of the files a run read and found no serving marker in (absolute paths, ``lint.gather``): the
# kustomize renderer asks whether the files a kustomization draws from may serve, and does not read these.
UNMARKED = f"{__name__}.unmarked"
# The space of what a run found at the paths it looked at (``looked``): a kustomization's references are
# looked at by its index hook, then by its renderer (the tree does not change under a run).
LOOKED = f"{__name__}.looked"


def read_beyond(path: str | os.PathLike[str] | None = None) -> None:
    """A read (or a look) beyond the file being adapted, at ``path`` when one file or folder is read."""
    _BEYOND[0] += 1
    if _NOTED:
        _NOTED[-1].look(path)


class Noted:
    """The files and folders a run read or looked for beyond the files it lints (``known``, absolute paths
    whose text the whole-run cache's key holds), with what was found there (``fingerprint(path, status)``,
    ``status``: what ``lstat`` said of it, or None); ``unknown``: a read named no path, so what the run read
    cannot be checked again."""

    def __init__(self, root: str, known: set[str], fingerprint: Callable[[str, os.stat_result | None], str],
                 absent: str | None = None) -> None:
        self.root, self.known, self.fingerprint, self.absent = root, known, fingerprint, absent
        self.found: dict[str, str] = {}
        self.unknown = False
        self.resolved: dict[str, str | None] = {}
        # what the looks found that is no link (``looked``'s memo): whether a path escapes asks it again (a
        # kustomization's folder, 1,013 of a GitOps tree's looks: one ``lstat`` each, not four)
        self.looks: dict[str, tuple[int, int]] = {}
        # what one file's stage found, when a worker process watches it (``watching``): sent to the run
        self.since: dict[str, str] | None = None

    def look(self, path: str | os.PathLike[str] | None) -> None:
        if path in self.found or path in self.known:  # looked at already (a key is absolute and normalised)
            return
        where = os.path.abspath(path) if path is not None else None  # normalised (``abspath`` does that)
        if where is None or where in self.known or where in self.found or self.unknown:
            self.unknown = self.unknown or where is None
            return
        # nothing outside the repository, nor in its .git, is read for a fingerprint (the module's docstring)
        if not _within(where, self.root):
            self.unknown = True
            return
        status: os.stat_result | None = None
        try:
            status = os.lstat(where)
        except FileNotFoundError:  # nothing there, not even a link (a README or sidecar most folders lack)
            if self.absent is not None:
                self._found(where, self.absent)
                return
        except (OSError, ValueError):
            pass  # as os.path.lexists answers: not there
        else:
            if not stat.S_ISLNK(status.st_mode):
                self.looks[where] = (status.st_mode, status.st_mode)
            if escapes(where, self.root, memo=self.resolved, looks=self.looks):
                self.unknown = True
                return
        self._found(where, self.fingerprint(where, status))

    def _found(self, where: str, fingerprint: str) -> None:
        self.found[where] = fingerprint
        if self.since is not None:
            self.since[where] = fingerprint


@contextmanager
def watching() -> Iterator[list]:
    """Within this block (a worker process's stage of one file), what the run's ``noting`` notes is also
    gathered in the list yielded, filled at the end: [what was found at each path, whether a read named
    no path]. A worker notes into its own copy of the run's ``Noted``: the run adds this to its own
    (``noted``), in the order of the files. Nothing when no run is noting."""
    found: list = []
    if not _NOTED:
        yield found
        return
    current = _NOTED[-1]
    current.since, unknown = {}, current.unknown
    try:
        yield found
    finally:
        found.extend([current.since, current.unknown and not unknown])
        current.since = None


def noted(found: dict[str, str], unknown: bool) -> None:
    """What a worker's stage of a file found beyond it (``watching``), added to what this run notes."""
    if _NOTED:
        current = _NOTED[-1]
        for where, fingerprint in found.items():
            current.found.setdefault(where, fingerprint)
        current.unknown = current.unknown or unknown


@contextmanager
def noting(root: str, known: set[str], fingerprint: Callable[[str, os.stat_result | None], str],
           absent: str | None = None) -> Iterator[Noted]:
    """Within this block every ``read_beyond`` is noted (one run, the whole-run cache's): ``root`` the
    repository's absolute path, ``known`` the files whose text the cache's key holds, ``absent`` what
    ``fingerprint`` says of a path with nothing at it (said without calling it, when given)."""
    noted = Noted(root, known, fingerprint, absent)
    _NOTED.append(noted)
    try:
        yield noted
    finally:
        _NOTED.remove(noted)


def reads_beyond() -> int:
    """How many reads beyond the file being adapted this process has made (compared before and after)."""
    return _BEYOND[0]


def git_may_find_repository(folder: Path) -> bool:
    """False only when git started in ``folder`` certainly finds no repository: none of GIT_DIR,
    GIT_WORK_TREE, GIT_COMMON_DIR is set, and neither ``folder`` nor a folder above it (as written, or
    with its links resolved, as git sees its working directory) holds a ``.git`` (folder, or the file
    of a worktree or submodule) or a ``HEAD`` (a git directory itself: git's discovery in setup.c,
    ``setup_git_directory_gently_1``, looks for nothing else). A lint outside any repository then
    starts no git process; inside one, git still decides (worktrees, ``core.worktree``, ceiling
    directories, ``safe.directory``): that much git is not worth reimplementing."""
    if any(name in os.environ for name in _GIT_LOCATION_VARIABLES):
        return True
    for start in dict.fromkeys((os.path.abspath(folder), os.path.realpath(folder))):
        current, parent = start, os.path.dirname(start)
        while True:
            if os.path.lexists(os.path.join(current, ".git")) or os.path.lexists(os.path.join(current, "HEAD")):
                return True
            if parent == current:
                break
            current, parent = parent, os.path.dirname(parent)
    return False


def child(folder: str, name: str) -> str:
    """``os.path.join(folder, name)`` of an absolute, normalised ``folder`` and one ``name`` without a separator
    (a constant, or the last part of a path): by concatenation, where a join costs a microsecond and a GitOps
    tree's kustomizations ask for some 12,000."""
    return folder + name if folder.endswith(os.sep) else folder + os.sep + name


def looked(path: str, memo: dict[str, tuple[int, int]] | None = None) -> tuple[int, int]:
    """What is at ``path``: the mode ``os.lstat`` gives (0: nothing, not even a link) and ``os.stat`` (0:
    nothing, a link to nothing or a loop): one system call for what is not a link. ``memo``: the run's
    answers so far (the ``LOOKED`` space)."""
    if memo is not None and path in memo:
        return memo[path]
    try:
        own = os.lstat(path).st_mode
    except (OSError, ValueError):  # as os.path.lexists answers
        own = 0
    target = own
    if stat.S_ISLNK(own):
        try:
            target = os.stat(path).st_mode
        except (OSError, ValueError):
            target = 0
    if memo is not None:
        memo[path] = (own, target)
    return own, target


class UnsafePath(ValueError):
    """A path that leaves the repository, or is a symlink where none is allowed; one line."""


def repo_relative(root: Path, path: str | os.PathLike[str], *, what: str = "path") -> str:
    """``path`` as a ``/``-separated path relative to ``root``, judged as written (nothing followed).

    Raises UnsafePath for a ``..`` component and for an absolute path outside ``root``.
    """
    if ".." in os.fspath(path).replace(os.sep, "/").split("/"):  # Path(path).parts, by strings
        raise UnsafePath(f"{what} {_shown(path)} contains '..'; refused")
    base = os.path.abspath(root)
    written = os.path.abspath(os.path.join(base, path))
    if not _within(written, base):
        raise UnsafePath(f"{what} {_shown(path)} is outside the repository; refused")
    return "." if written == base else written[len(base.rstrip(os.sep)) + 1:].replace(os.sep, "/")


def inside_repo(root: Path, path: str | os.PathLike[str], *, what: str = "path", links: bool = True,
                memo: dict[str, str | None] | None = None) -> Path:
    """``path`` (relative to ``root``, or absolute) resolved, when it stays inside ``root``.

    Raises UnsafePath when the path is refused by :func:`repo_relative`, when following its symlinks
    leads out of ``root`` or into its ``.git``, or (``links=False``) when any part of it below ``root``
    is a symlink at all.
    The resolved path is returned so the caller opens what was checked, not the link again.
    ``memo``: the folders already resolved by the caller in this run (a kustomization tree asks about
    thousands of paths in a few folders), so each new path costs one ``lstat``.
    """
    base = os.path.abspath(root)
    written = os.path.join(base, repo_relative(base, path, what=what))
    if not links:
        link = _first_link(Path(base), Path(written))
        if link is not None:
            raise UnsafePath(f"{what} {_shown(path)} goes through a symlink ({_shown(link.relative_to(base))}); "
                             "refused")
    return Path(_real_inside(base, written, path, what, memo))


def inside_by_strings(base: str, path: str, *, what: str, memo: dict[str, str | None],
                      looks: dict[str, tuple[int, int]] | None = None) -> str:
    """``inside_repo`` of a ``path`` absolute and normalised (no ``..``: one a kustomization names, joined
    to its folder) in the repository ``base`` (absolute, normalised), links allowed: the resolved path, by
    strings, without the ``Path`` objects (thousands of references a run); ``looks``: as ``_resolved``."""
    if not _within(path, base):
        raise UnsafePath(f"{what} {_shown(path)} is outside the repository; refused")
    return _real_inside(base, path, path, what, memo, looks)


def _real_inside(base: str, written: str, path: object, what: str, memo: dict[str, str | None] | None,
                 looks: dict[str, tuple[int, int]] | None = None) -> str:
    """``written`` (inside ``base`` as written) resolved, when its links stay inside ``base`` and out of its
    ``.git``; ``path``: as the user wrote it, for the message."""
    real, real_base = _resolved(written, memo, looks), _resolved(base, memo, looks)
    if real is None or real_base is None:
        raise UnsafePath(f"{what} {_shown(path)} cannot be resolved (a symlink loop); refused")
    if not _within(real, real_base):
        raise UnsafePath(f"{what} {_shown(path)} is a symlink to outside the repository; refused")
    if _within(real, child(real_base, ".git")):  # git's own files: the checkout's credentials live there
        raise UnsafePath(f"{what} {_shown(path)} leads into .git; refused")
    return real


def _resolved(path: str, memo: dict[str, str | None] | None = None,
              looks: dict[str, tuple[int, int]] | None = None) -> str | None:
    """``Path.resolve()`` by strings (pathlib's objects cost more than the system calls here, on
    every kustomize reference); None for a symlink loop. With ``memo`` (path -> its resolution, for
    one run: the tree does not change under it) as ``os.path.realpath`` does it, component by component
    from the left: the folder's resolution, then the last name, followed when it is a link (``path`` is
    absolute and normalised). ``looks``: what the run found at the paths it looked at (``looked``): the
    one ``lstat`` that tells a link also tells the caller what is there (a kustomization's reference is
    resolved, then looked at)."""
    if memo is not None:
        if path in memo:  # a path the run asked about before (a kustomization's index hook, then its renderer)
            return memo[path]
        folder, name = os.path.split(path)
        if folder == path or not name:
            memo[path] = _resolved(path)
            return memo[path]
        real_folder = memo[folder] if folder in memo else _resolved(folder, memo, looks)
        joined = child(real_folder, name) if real_folder is not None else None
        link = joined is not None and (stat.S_ISLNK(looked(joined, looks)[0]) if looks is not None
                                       else os.path.islink(joined))
        memo[path] = _resolved(joined) if link else joined
        return memo[path]
    try:
        real = os.path.realpath(path)
    except OSError:
        return None
    try:
        os.stat(real)  # realpath leaves a loop unresolved without a word
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
    return real


def escapes(path: Path | str, root: Path | str, real: Path | None = None,
            memo: dict[str, str | None] | None = None, looks: dict[str, tuple[int, int]] | None = None) -> bool:
    """True when ``path`` goes through a symlink (itself or a parent folder) to outside ``root``, or leads
    into a ``.git`` folder of it (the checkout's credentials live there: a ``.env`` linked to
    ``.git/config`` is never read). ``memo``: the paths resolved so far in the run (``_resolved``), for
    a caller that asks about thousands of paths in a few folders (every kustomization's references);
    ``looks``: what the run found at the paths it looked at (``looked``)."""
    if memo is not None and real is None:
        return escapes_by_strings(os.path.normpath(os.path.abspath(path)), os.path.abspath(root), memo, looks)
    try:
        real = real or path.resolve(strict=True)
    except (OSError, RuntimeError):
        return True
    try:
        inside = real.relative_to(root.resolve())
    except ValueError:
        inside = None
    if inside is not None and ".git" in inside.parts:
        return True
    if os.path.normpath(path.absolute()) == str(real):
        return False
    return inside is None


def escapes_by_strings(path: str, root: str, memo: dict[str, str | None],
                       looks: dict[str, tuple[int, int]] | None = None) -> bool:
    """``escapes`` by strings, each folder resolved once per run: ``path`` and ``root`` absolute and
    normalised."""
    real, real_root = _resolved(path, memo, looks), _resolved(root, memo, looks)
    if real is None or real_root is None or not looked(real, looks)[1]:  # as resolve(strict=True) refuses
        return True
    inside = _within(real, real_root)
    if inside and ".git" in real[len(real_root):].split(os.sep):
        return True
    return not inside and path != real


def blob_at(root: Path, commit: str, path: str, *, what: str, limit: int) -> bytes | None:
    """The bytes of the regular file ``path`` (repo-relative) at ``commit``, read from git's objects,
    never from the work tree; None when the commit has no such file.

    Raises UnsafePath for a symlink entry (mode 120000: its blob is the link's target, and following
    it is what must not happen), for a folder or submodule, and for a blob larger than ``limit``.
    """
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise ValueError(f"blob_at needs a full commit id, not {commit!r}")
    try:
        listed = run(root, "ls-tree", "-z", "--full-tree", "--end-of-options", commit, "--", path)
        entry = listed.stdout.split(b"\0")[0] if listed.returncode == 0 else b""
        if not entry:
            return None
        mode, kind, blob = entry.partition(b"\t")[0].decode("ascii").split()
        if mode == "120000":
            raise UnsafePath(f"{what} {_shown(path)} is a symlink at {commit[:12]}; refused")
        if kind != "blob":
            raise UnsafePath(f"{what} {_shown(path)} is not a file at {commit[:12]}; refused")
        size = int(run(root, "cat-file", "-s", "--end-of-options", blob, check=True).stdout)
        if size > limit:
            raise UnsafePath(f"{what} {_shown(path)} is larger than {limit:,} bytes; refused")
        return run(root, "cat-file", "blob", "--end-of-options", blob, check=True).stdout
    except GitError as exc:
        raise UnsafePath(f"{what} {_shown(path)} cannot be read at {commit[:12]} ({exc})") from None


def _within(path: str | Path, base: str | Path) -> bool:
    """Whether ``path`` is ``base`` or below it; both absolute and normalised."""
    inner, outer = str(path), str(base)
    return inner == outer or inner.startswith(outer if outer.endswith(os.sep) else outer + os.sep)


def _first_link(base: Path, path: Path) -> Path | None:
    current = base
    for part in path.relative_to(base).parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def _shown(path: object) -> str:
    """The path as the user wrote it, cut short and on one line (it may come from a hostile file)."""
    text = str(path)
    return repr(text if len(text) <= 80 else text[:77] + "...")  # repr escapes control characters
