"""What of a folder a renderer may see: the files Git tracks there, copied into a private folder
(docs/SECURITY.md, "Rendering threat model"). ``helm template`` and ``kubectl kustomize`` read every
file of the folder they are given (``.Files.Glob``, a ``configMapGenerator``), so they are given a copy
holding exactly:

* inside a git work tree, the files ``git ls-files`` lists under the folder, as the work tree has them:
  no untracked or ignored file (a credentials file an earlier job step left, ``gha-creds-*.json``);
* in a copy made from a commit's blobs (diff mode's base, :func:`from_commit`), every file of it;
* outside git, the files discovery's walk lists (every ``.gitignore`` applied);
* for a chart, minus what its ``.helmignore`` ignores, as helm's own loader reads it.

A tracked symlink is followed only to a regular file Git tracks, inside the repository and outside
``.git``; a link into ``.git`` or out of the repository stops the staging (the chart or kustomization
is not rendered, and a note says why); a link to a folder or to an untracked file is left out. Nothing
inside a ``.git`` folder is ever read.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from pathlib import Path

from .. import git
from ..discover import walk_files  # discovery's walk outside git: every .gitignore applied
from ..paths import UnsafePath, git_may_find_repository, inside_repo

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

HELMIGNORE = ".helmignore"
_copies: set[str] = set()  # folders made from a commit's blobs: every file in them is tracked


class StageError(Exception):
    """The folder cannot be staged (too large, a link out of the repository or into .git, a bad
    ``.helmignore``, nothing tracked); one line."""


@contextlib.contextmanager
def from_commit(copy: Path) -> Iterator[Path]:
    """While the block runs, ``copy`` (a folder written from a commit's blobs, links left out) is staged
    whole: Git tracked every file of it."""
    key = str(copy.resolve())
    _copies.add(key)
    try:
        yield copy
    finally:
        _copies.discard(key)


def stage(repo: Path, folder: Path, target: Path, budget: list[int], *, helm: bool = False,
          only: set[str] | None = None) -> int:
    """Copy the files of ``folder`` (inside ``repo``) a renderer may read into ``target`` (module
    docstring); ``helm`` applies the folder's ``.helmignore``; ``only`` (paths relative to ``folder``)
    stages just those. ``budget`` (:func:`new_budget`, shared by the stagings of one rendering) shrinks
    by each copied file. Returns the number of files copied."""
    base = repo.resolve()
    listed = listed_files(base, folder.resolve())
    scope = _rel(base, folder.resolve())
    rules = helmignore(folder) if helm else None
    copied = 0
    for rel in sorted(listed):
        inside = rel if scope == "." else rel[len(scope) + 1:]
        if ".git" in inside.split("/") or (rules is not None and rules.ignores(inside)) or \
                (only is not None and inside not in only):
            continue
        source = _readable(base, base / rel, listed)
        if source is None:
            continue
        budget[0] -= source.stat().st_size
        if budget[0] < 0:
            raise StageError(f"the files to render are larger than the staging limit ({budget[1]:,} bytes)")
        destination = target / inside
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
        copied += 1
    return copied


def new_budget(limit: int) -> list[int]:
    """A staging budget: [bytes left, the limit]."""
    return [limit, limit]


def _rel(base: Path, path: Path) -> str:
    return path.relative_to(base).as_posix() if path != base else "."


def listed_files(base: Path, folder: Path) -> set[str]:
    """Repo-relative files under ``folder`` that may be staged (module docstring)."""
    scope = _rel(base, folder)
    if _in_copy(folder):
        return {_rel(base, Path(top) / name) for top, dirs, files in os.walk(folder)
                for name in files if ".git" not in Path(top).relative_to(folder).parts}
    if git_may_find_repository(base):
        tracked = git.ls_files(base, "-c", paths=(scope,), literal=True)
        if tracked is not None:
            if not tracked:
                raise StageError("git tracks none of its files (add them to render it)")
            return set(tracked)

    return {_rel(base, path) for path in walk_files(folder, base)}


def _readable(base: Path, path: Path, listed: set[str]) -> Path | None:
    """The regular file to copy for the listed ``path``: itself, or the tracked file a link leads to;
    None for a folder, a device, a missing file or a link to what is not listed. StageError for a
    link out of the repository or into ``.git``."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None  # deleted from the work tree
    if stat.S_ISLNK(mode):
        shown = _rel(base, path)
        try:
            real = inside_repo(base, path, what="staged file")
        except UnsafePath:
            where = "into .git" if ".git" in Path(os.path.realpath(path)).parts else "outside the repository"
            raise StageError(f"{shown} links {where}") from None
        if ".git" in real.relative_to(base).parts:
            raise StageError(f"{shown} links into .git")
        if not real.is_file() or not _tracked(base, real, listed):
            return None
        return real
    return path if stat.S_ISREG(mode) else None


def _tracked(base: Path, real: Path, listed: set[str]) -> bool:
    """Whether the file a link leads to may be read: listed already, or tracked by git elsewhere in the
    repository (outside git and in a commit's copy, where links are not kept, any file inside)."""
    rel = _rel(base, real)
    if rel in listed or not git_may_find_repository(base) or _in_copy(base):
        return True
    return rel in (git.ls_files(base, "-c", paths=(rel,), literal=True) or [])


def _in_copy(path: Path) -> bool:
    text = str(path)
    return any(text == copy or text.startswith(copy + os.sep) for copy in _copies)


# ---------------------------------------------------------------- .helmignore, as helm reads it


class HelmIgnore:
    """helm's ignore rules (helm/helm ``internal/ignore/rules.go``, v3): one pattern a line, ``#``
    comments, ``!`` negates, a trailing ``/`` matches folders only, a leading ``/`` anchors at the
    chart, a pattern with a ``/`` matches the whole path and one without only the last name, each with
    Go's ``filepath.Match``; ``**`` is an error. The first pattern that decides wins; a negated one
    that does not match ignores the path. ``templates/.?*`` is always added (``AddDefaults``), and helm's
    directory loader skips a whole folder its rules ignore (``pkg/chart/loader/directory.go``)."""

    def __init__(self, lines: list[str]):
        self.patterns: list[tuple[bool, bool, str, re.Pattern]] = []
        for line in [*lines, "templates/.?*"]:
            rule = line.strip()
            if not rule or rule.startswith("#"):
                continue
            if "**" in rule:
                raise StageError(f"{HELMIGNORE}: double-star (**) syntax is not supported")
            negate, rule = rule.startswith("!"), rule[1:] if rule.startswith("!") else rule
            folder_only, rule = rule.endswith("/"), rule[:-1] if rule.endswith("/") else rule
            scope = "path" if "/" in rule else "name"
            self.patterns.append((negate, folder_only, scope, _go_match(rule.lstrip("/") if rule.startswith("/")
                                                                       else rule)))

    def ignores(self, rel: str) -> bool:
        """Whether helm leaves the chart file ``rel`` out: it, or a folder above it, is ignored."""
        parts = rel.split("/")
        return any(self._ignore("/".join(parts[:end]), end < len(parts)) for end in range(1, len(parts) + 1))

    def _ignore(self, path: str, is_folder: bool) -> bool:
        for negate, folder_only, scope, pattern in self.patterns:
            name = path if scope == "path" else path.rsplit("/", 1)[-1]
            if negate:
                if (folder_only and not is_folder) or not pattern.fullmatch(name):
                    return True
                continue
            if folder_only and not is_folder:
                continue
            if pattern.fullmatch(name):
                return True
        return False


def helmignore(folder: Path) -> HelmIgnore:
    """The rules of the chart at ``folder`` (only its own ``.helmignore``, not a link)."""
    path = folder / HELMIGNORE
    lines: list[str] = []
    if path.is_file() and not path.is_symlink():
        lines = path.read_text("utf-8", errors="replace").splitlines()
    return HelmIgnore(lines)


def _go_match(pattern: str) -> re.Pattern:
    """Go's ``path/filepath.Match`` as a regular expression: ``*`` and ``?`` stop at ``/``, ``[...]`` a
    class (``^`` negates, ``a-z`` a range, ``\\`` escapes); StageError for a pattern Go refuses."""
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if char == "[":
            end = pattern.find("]", index + 2)
            if end < 0:
                raise StageError(f"{HELMIGNORE}: syntax error in pattern {pattern[:40]!r}")
            out.append(_go_class(pattern[index + 1:end]))
            index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out.append(re.escape(pattern[index]))
        else:
            out.append({"*": "[^/]*", "?": "[^/]"}.get(char) or re.escape(char))
        index += 1
    try:
        return re.compile("".join(out), re.S)
    except re.error:
        raise StageError(f"{HELMIGNORE}: syntax error in pattern {pattern[:40]!r}") from None


def _go_class(body: str) -> str:
    negated = body.startswith("^")
    chars, index = [], 1 if negated else 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            index += 1
            chars.append(re.escape(body[index]))
        else:
            chars.append("-" if char == "-" else re.escape(char))
        index += 1
    return f"[{'^/' if negated else ''}{''.join(chars)}]"
