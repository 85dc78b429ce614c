"""Files a served model depends on but that are not its own document: a compose file's ``.env`` and
``env_file``, an engine ``--config`` file, a Dockerfile. The repository names them, so a pull request
chooses what is read: only what Git holds for the repository is (docs/SECURITY.md, "Promises"), within
the file size limit, once per run.

* Inside a Git work tree, a file is read only when Git tracks it (``git ls-files``): an ignored
  ``.env`` an earlier job step or a developer left in the work tree (``gha-creds-*.json``, real keys)
  is never read. At a commit (diff mode and ``review``: the head's and the base's files,
  ``Workspace.commit``), the commit's blob is read, never the work tree.
* Outside Git, the ``.gitignore`` files between the repository root and the file apply, as they do
  to the files discovery lists.
* Nothing inside ``.git`` (where the checkout keeps its token) is read; a symlink is followed only when
  every link lands inside the repository, outside ``.git``, on a file read by the rules above.

Every git process goes through ``git.py``.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from ... import lazy
from ... import git
from ...discover import gitignored
from ...paths import UnsafePath, git_may_find_repository, inside_repo, read_beyond
from ...yamlio import DEFAULT_LIMITS, LoadedFile, YamlError, decode, parse_text
from ..core.contexts import Workspace
from ..core.protocol import file_format

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable, Protocol

# the launches run on a host from the folder of their file (a shell script, a make recipe), where a relative
# path names a file beside it; a Dockerfile's, a workflow step's or a llama-swap command's run elsewhere
HOST_KINDS = ("shell script", "make target", "just recipe")
_MAX_LINKS = 8  # links followed from one name at a commit (the kernel allows 40; a repository needs few)


def repo_path(base_file: str, written: str) -> str | None:
    """The repository-relative path of ``written`` (relative to the folder of ``base_file``, or to the
    repository root when it starts with ``/``), or None when it leaves the repository or enters ``.git``."""
    if not written or "\0" in written or "$" in written or "{{" in written:
        return None
    joined = written.lstrip("/") if written.startswith("/") else posixpath.join(posixpath.dirname(base_file), written)
    return _normal(joined)


def _normal(joined: str) -> str | None:
    normal = posixpath.normpath(joined)
    if normal in (".", "") or normal == ".." or normal.startswith(("../", "/")) or ".git" in normal.split("/"):
        return None
    return normal


if TYPE_CHECKING:
    class _Source(Protocol):
        def read(self, rel: str, limit: int) -> bytes | None: ...

        def holds_folder(self, rel: str) -> bool: ...

        def files_in(self, rel: str) -> list[str]: ...

    def files(self, suffixes: tuple[str, ...]) -> list[str]: ...


class _Files:
    """This module's index space: the texts read (path -> text, or None) and where they come from,
    decided at the first read."""

    def __init__(self, texts: dict[str, str | None] | None = None, source: _Source | None = None) -> None:
        self.texts = {} if texts is None else texts
        self.source = source


def read_text(workspace: Workspace, rel: str) -> str | None:
    """The text of the repository file ``rel``, or None when it is absent, unreadable, too large, not
    held by Git (see the module's docstring), inside ``.git``, or reached through a link that leaves."""
    root = workspace.config.get("root")
    files = _noted(workspace, rel, file=True)
    if rel in files.texts:
        return files.texts[rel]
    if isinstance(files.source, _Tracked) and rel not in files.source.tracked:
        return None  # most reads of a run: a README or sidecar a folder lacks (5,000 on a GitOps tree)
    files.texts[rel] = None
    if not root or _normal(rel) != rel:
        return None
    limit = {**DEFAULT_LIMITS, **(workspace.config.get("limits") or {})}["max-file-bytes"]
    try:
        raw = _source_of(workspace, files).read(rel, limit)
        files.texts[rel] = decode(raw) if raw is not None else None
    except (OSError, YamlError, UnsafePath):
        return None
    return files.texts[rel]


def absent(workspace: Workspace, rel: str) -> bool:
    """Whether the repository has no file ``rel`` at all: neither Git nor the folder holds one. A file that
    is there and is not read (ignored by Git, too large, a link that leaves) is not absent; nor is anything
    at a commit, whose tree is read blob by blob."""
    root = workspace.config.get("root")
    if not root or workspace.commit is not None or _normal(rel) != rel:
        return False
    if read_text(workspace, rel) is not None:
        return False
    read_beyond(os.path.join(str(root), rel))  # whatever Git tracks, what is on disk decides
    return not os.path.lexists(Path(str(root)) / rel)


def holds_folder(workspace: Workspace, rel: str) -> bool:
    """Whether the repository holds a folder ``rel`` with a file in it that would be read (tracked by Git,
    at the commit, or not ignored outside Git)."""
    root = workspace.config.get("root")
    files = _noted(workspace, rel)
    if not root or _normal(rel) != rel:
        return False
    try:
        return _source_of(workspace, files).holds_folder(rel)
    except (OSError, UnsafePath):
        return False


def files_in(workspace: Workspace, rel: str) -> list[str]:
    """The names of the files directly in the repository folder ``rel`` (``""``: the root) that would be
    read (tracked by Git, at the commit, or not ignored outside Git), sorted."""
    root = workspace.config.get("root")
    files = _noted(workspace, rel)
    if not root or (rel and _normal(rel) != rel):
        return []
    try:
        return _source_of(workspace, files).files_in(rel)
    except (OSError, UnsafePath):
        return []


def lister(workspace: Workspace) -> Callable[[str], list[str]]:
    """``files_in`` of ``workspace``'s run, for a caller that asks it of many folders (the README reader asks
    each of a GitOps tree's 1,254 folders, 3,762 times a run): where Git's index decides (no look to note for
    the whole-run cache, ``_noted``), the index's own answer, without the checks each call makes again."""
    root = workspace.config.get("root")
    try:
        source = _source_of(workspace, workspace.space(__name__, _Files)) if root else None
    except (OSError, UnsafePath):
        source = None
    if isinstance(source, _Tracked):
        return source.files_in  # its folders' names as Git lists them: normal, none in .git
    return lambda rel: files_in(workspace, rel)


def files_ending(workspace: Workspace, suffixes: tuple[str, ...]) -> list[str]:
    """The repository's files (repo-relative) whose names end with one of ``suffixes`` and that would be
    read (tracked by Git, at the commit, or not ignored outside Git), sorted."""
    root = workspace.config.get("root")
    files = _noted(workspace, "")
    if not root:
        return []
    try:
        return sorted(_source_of(workspace, files).files(suffixes))
    except (OSError, UnsafePath):
        return []


def _noted(workspace: Workspace, rel: str, file: bool = False) -> _Files:
    """This module's index space, once the look at ``rel`` (a ``file`` read, else a folder listed) is noted
    for the whole-run cache (``paths.read_beyond``: it checks the path again before it reuses a run), unless
    Git's list of tracked files alone decides the answer (a file it does not track, which files a folder
    holds): the run's key holds that list (``whole_run.whole_run``). On a GitOps tree 9,000 of 13,700 looks were
    such, each a ``stat`` of a README or sidecar most folders lack."""
    root = workspace.config.get("root")
    files = workspace.space(__name__, _Files)
    if root:
        try:
            source = _source_of(workspace, files)
        except (OSError, UnsafePath):
            source = None
        if isinstance(source, _Tracked) and (not file or rel not in source.tracked):
            return files
    read_beyond(os.path.join(str(root), rel) if root else None)
    return files


def _source_of(workspace: Workspace, files: _Files) -> _Source:
    """Where the repository's files are read from (Git's index, a commit, or the folder), decided at the
    first read of the run (raises OSError or UnsafePath as the readers do)."""
    if files.source is None:
        files.source = _source(Path(str(workspace.config.get("root"))), workspace.commit)
    return files.source


def _by_folder(paths) -> dict[str, list[str]]:
    """The file names of ``paths`` by folder, each folder's sorted."""
    found: dict[str, list[str]] = {}
    for path in sorted(paths):
        folder, _, name = path.rpartition("/")
        found.setdefault(folder, []).append(name)
    return found


def _folders_of(paths) -> set[str]:
    """Every folder above each of ``paths`` (the text before each of its ``/``), found from the deepest up,
    each path's walk ending at a folder found before (its parents are): the tracked files of a GitOps tree
    were walked character by character (5,000 paths, 300,000 characters a run)."""
    folders: set[str] = set()
    for path in paths:
        end = path.rfind("/")
        while end >= 0 and path[:end] not in folders:
            folders.add(path[:end])
            end = path.rfind("/", 0, end)
    return folders


# a cd (or pushd) anywhere but to the script's own folder (cd "$(dirname "$0")", or of ${BASH_SOURCE[0]})
_CD = lazy.Pattern(r"(?:^|[;&|({]|\bthen|\bdo)\s*(?:builtin\s+)?(?:cd|pushd)\s+(?!\"?\$\(\s*dirname\s+\"?\$(?:0|\{?BASH_SOURCE"
                 r"(?:\[0\])?\}?)\"?\s*\)\"?\s*(?:$|[;&|]))", re.M)


def changes_folder(text: str) -> bool:
    """Whether a script changes folder (``cd`` or ``pushd`` other than to its own folder): a relative path
    it hands its engine after that is relative to a folder the repository does not show."""
    return _CD.search(text) is not None


def beside_script(text: str, written: str) -> bool:
    """Whether the relative path ``written`` a script hands its engine is a file the repository should
    hold beside the script: not when the script changes folder (``cd`` other than to its own folder), nor
    when it names the file again (it writes, copies or downloads it before the engine starts)."""
    return not changes_folder(text) and text.count(posixpath.basename(written)) <= 1


def read_yaml(workspace: Workspace, rel: str) -> LoadedFile | None:
    """``rel`` parsed as YAML (located nodes and comments), or None when it cannot be read or parsed."""
    text = read_text(workspace, rel)
    if text is None:
        return None
    loaded = parse_text(rel, text, workspace.config.get("limits"), reader=file_format(rel))
    return None if loaded.error is not None else loaded


def _source(root: Path, commit: str | None) -> _Source:
    """Where the run's repository files come from: a commit, Git's index, or the folder with its
    ``.gitignore`` files."""
    if commit is not None:
        return _Commit(root, commit)
    listed = git.ls_files(root) if git_may_find_repository(root) else None
    return _Tracked(root, set(listed)) if listed is not None else _Folder(root)


def _git(root: Path, *args: str) -> bytes | None:
    """``git ARGS`` in ``root`` (``git.py``), its output; None when it cannot run or fails."""
    try:
        found = git.run(root, *args)
    except git.GitError:
        return None
    return found.stdout if found.returncode == 0 else None


def _read_file(path: Path, limit: int) -> bytes | None:
    return path.read_bytes() if path.is_file() and path.stat().st_size <= limit else None


class _Tracked:
    """The work tree's files Git tracks; a link only to another tracked file inside the repository."""

    def __init__(self, root: Path, tracked: set[str]) -> None:
        self.root, self.tracked = root, tracked
        self.folders: set[str] | None = None
        self.names: dict[str, list[str]] | None = None

    def files_in(self, rel: str) -> list[str]:
        if self.names is None:
            self.names = _by_folder(self.tracked)
        return self.names.get(rel, [])

    def holds_folder(self, rel: str) -> bool:
        if self.folders is None:
            self.folders = _folders_of(self.tracked)
        return rel in self.folders

    def files(self, suffixes: tuple[str, ...]) -> list[str]:
        return [rel for rel in self.tracked if rel.endswith(suffixes)]

    def read(self, rel: str, limit: int) -> bytes | None:
        if rel not in self.tracked:
            return None
        real = inside_repo(self.root, rel)  # UnsafePath: a link out of the repository or into .git
        target = Path(os.path.relpath(real, os.path.realpath(self.root))).as_posix()
        return _read_file(real, limit) if target in self.tracked else None


class _Folder:
    """Outside Git: the folder's files that no ``.gitignore`` between the root and them ignores."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def holds_folder(self, rel: str) -> bool:
        real = inside_repo(self.root, rel)
        return real.is_dir() and not gitignored(real, Path(os.path.realpath(self.root)))

    def files_in(self, rel: str) -> list[str]:
        real = inside_repo(self.root, rel) if rel else Path(os.path.realpath(self.root))
        top = Path(os.path.realpath(self.root))
        if not real.is_dir():
            return []
        return sorted(entry.name for entry in real.iterdir() if entry.is_file() and not gitignored(entry, top))

    def files(self, suffixes: tuple[str, ...]) -> list[str]:
        top = Path(os.path.realpath(self.root))
        found = []
        for folder, names, files in os.walk(top):
            names[:] = [name for name in names if name != ".git"]
            base = Path(folder)
            found += [(base / name).relative_to(top).as_posix() for name in files
                      if name.endswith(suffixes) and not gitignored(base / name, top)]
        return found

    def read(self, rel: str, limit: int) -> bytes | None:
        real = inside_repo(self.root, rel)  # UnsafePath: a link out of the folder or into .git
        top = Path(os.path.realpath(self.root))
        for path in {top / rel, real}:  # the name as written, and where its links lead
            if gitignored(path, top):
                return None
        return _read_file(real, limit)


class _Commit:
    """The blobs of one commit, never the work tree; its links followed inside the commit's tree."""

    def __init__(self, root: Path, commit: str) -> None:
        self.root, self.commit = root, commit
        self.entries: dict[str, tuple[str, str]] | None = None  # path -> (mode, blob)
        self.folders: set[str] | None = None
        self.names: dict[str, list[str]] | None = None

    def files_in(self, rel: str) -> list[str]:
        if self.names is None:
            self._entry(rel)
            self.names = _by_folder(self.entries or {})
        return self.names.get(rel, [])

    def holds_folder(self, rel: str) -> bool:
        if self.folders is None:
            self._entry(rel)
            self.folders = _folders_of(self.entries or {})
        return rel in self.folders

    def files(self, suffixes: tuple[str, ...]) -> list[str]:
        self._entry("")
        return [rel for rel in self.entries or {} if rel.endswith(suffixes)]

    def _entry(self, rel: str) -> tuple[str, str] | None:
        if self.entries is None:
            self.entries = {}
            listing = _git(self.root, "ls-tree", "-r", "-z", "--end-of-options", self.commit) or b""
            for line in filter(None, listing.decode("utf-8", "surrogateescape").split("\0")):
                meta, _, path = line.partition("\t")
                mode, kind, blob = meta.split()
                if kind == "blob":
                    self.entries[path] = (mode, blob)
        return self.entries.get(rel)

    def read(self, rel: str, limit: int) -> bytes | None:
        for _ in range(_MAX_LINKS):
            entry = self._entry(rel)
            size = _git(self.root, "cat-file", "-s", "--end-of-options", entry[1]) if entry is not None else None
            if entry is None or size is None or int(size) > limit:
                return None
            mode, blob = entry
            content = _git(self.root, "cat-file", "blob", "--end-of-options", blob)
            if mode != "120000" or content is None:
                return content
            target = content.decode("utf-8", "surrogateescape")
            if target.startswith("/"):
                return None  # an absolute link leaves the commit's tree
            found = _normal(posixpath.join(posixpath.dirname(rel), target))
            if found is None:
                return None
            rel = found
        return None
