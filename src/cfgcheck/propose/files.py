"""Reading and writing files of a worktree without following a symbolic link.

The worktree holds commits that someone else may have written (the base branch, an open proposal's
branch): a symlinked ``docs/adr``, ADR or values file there must not make cfgcheck read or write
outside it. Every path is walked from the root one component at a time with ``openat`` and
``O_NOFOLLOW``, so no component is followed when it is a link, even one swapped in after a check.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .plan import PlanError

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted where a file is expected fails at once instead of hanging the run
_FILE = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class FileError(PlanError, ValueError):
    """A file that cannot be read or written (a ValueError too: ``cfgcheck fix`` reports it as a
    usage error, propose as a one-line error)."""


class UnsafePath(FileError):
    """A path that leaves the root, or goes through a symbolic link or something not a regular file."""


def parts(rel: str) -> list[str]:
    """The components of a root-relative path; absolute paths and ``..`` are refused."""
    names = [name for name in str(rel).replace("\\", "/").split("/") if name not in ("", ".")]
    if not names or str(rel).startswith("/") or ".." in names:
        raise UnsafePath(f"{rel} is not a path inside the repository")
    return names


def _refusal(rel: str, names: list[str], depth: int, dir_fd: int) -> UnsafePath:
    shown = "/".join(names[:depth + 1])
    try:
        mode = os.stat(names[depth], dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        mode = 0
    what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular folder or file"
    return UnsafePath(f"{shown} is {what}; cfgcheck does not read or write {rel} through it "
                      "(it could lead outside the repository)")


def _open_folder(root: Path, names: list[str], rel: str, create: bool) -> int:
    """A descriptor of the folder holding ``names[-1]``, each folder opened without following links."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for depth, name in enumerate(names[:-1]):
        try:
            if create:
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            child = os.open(name, _DIRECTORY, dir_fd=fd)
        except OSError as exc:
            refusal = _refusal(rel, names, depth, fd) if exc.errno in (errno.ELOOP, errno.ENOTDIR) else None
            os.close(fd)
            if refusal is not None:
                raise refusal from None
            raise
        os.close(fd)
        fd = child
    return fd


def _open_file(root: Path, rel: str, flags: int) -> int:
    names = parts(rel)
    folder = _open_folder(root, names, rel, create=bool(flags & os.O_CREAT))
    try:
        try:
            fd = os.open(names[-1], flags | _FILE, 0o666, dir_fd=folder)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise _refusal(rel, names, len(names) - 1, folder) from None
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise _refusal(rel, names, len(names) - 1, folder)
        return fd
    finally:
        os.close(folder)


def read_bytes(root: Path, rel: str) -> bytes:
    """The bytes of the regular file ``rel`` under ``root``."""
    try:
        with os.fdopen(_open_file(root, rel, os.O_RDONLY), "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise FileError(f"cannot read {rel}: {exc.strerror or exc}") from None


def write_bytes(root: Path, rel: str, data: bytes) -> None:
    """Replace the contents of ``rel`` under ``root`` (created with its folders when missing; an
    existing file keeps its mode)."""
    try:
        with os.fdopen(_open_file(root, rel, os.O_WRONLY | os.O_CREAT), "wb") as handle:
            handle.truncate(0)
            handle.write(data)
    except OSError as exc:
        raise FileError(f"cannot write {rel}: {exc.strerror or exc}") from None
