"""Every git process cfgcheck starts, in one place (git reads a repository a pull request wrote:
docs/SECURITY.md, "Rendering threat model").

Each call is ``git -c core.fsmonitor=false -c core.hooksPath=/dev/null SUBCOMMAND OPTIONS``: the
callers put their fixed options first, ``--end-of-options`` before any revision or ref that came from
outside (a ``--base`` or branch name such as ``--output=/tmp/x`` is then a name, not an option: git
2.24 and later, git-scm.com/docs/gitcli), and pathspecs after ``--``. The configuration options
neutralise the two settings that make a read-only command run a program of the repository's choice
(git-scm.com/docs/git-config: ``core.fsmonitor`` may name a hook command, ``core.hooksPath`` where
hooks are looked for).

The environment is built from an allow-list, never the caller's whole one: ``PATH``, ``HOME`` and
``XDG_CONFIG_HOME`` (the user's global configuration: ``safe.directory`` in a container,
git-scm.com/docs/git-config#Documentation/git-config.txt-safedirectory), the variables that say which
repository the user means (``REPOSITORY_ENV``), and what cfgcheck sets on purpose:
``GIT_CONFIG_NOSYSTEM=1`` (no system configuration), ``GIT_TERMINAL_PROMPT=0`` (never wait for a
password), no pager, ``GIT_OPTIONAL_LOCKS=0`` (a read takes no lock and writes no index), the C locale
(messages are matched). ``propose``, which fetches and pushes, also keeps what the transport and the
committer identity need (``TRANSPORT_ENV``, ``IDENTITY_ENV``) and drops the repository variables: it
runs git in a worktree of its own. Every call is bounded in time and output (``sandbox.Running``, as
``run_bounded`` runs it).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .sandbox import Outcome, Running

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:  # imported by ``run``, which starts git: reading the configuration outside a repository does not
    import subprocess
    from typing import Iterator

TIMEOUT = 300.0  # seconds for one git process
MAX_OUTPUT = 256 * 1024 * 1024  # bytes of one git process's output
HARDENING = ("-c", "core.fsmonitor=false", "-c", f"core.hooksPath={os.devnull}")
_BASE_ENV = ("PATH", "HOME", "XDG_CONFIG_HOME", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP", "USERPROFILE",
             "HOMEDRIVE", "HOMEPATH")
# which repository git works on (git-scm.com/docs/git, "ENVIRONMENT VARIABLES"): the user's choice
REPOSITORY_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                  "GIT_DISCOVERY_ACROSS_FILESYSTEM")
# what fetch and push need to reach the remote as the user does (propose only)
TRANSPORT_ENV = ("SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "SSH_ASKPASS",
                 "DISPLAY", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "http_proxy", "https_proxy", "HTTP_PROXY",
                 "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
                 "SSL_CERT_FILE", "SSL_CERT_DIR")
IDENTITY_ENV = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE")
_SET = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat",
        "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


class GitError(Exception):
    """git could not be run, or failed where the caller needs its answer; one line."""


def environment(keep: tuple[str, ...] = REPOSITORY_ENV, extra: dict[str, str] | None = None) -> dict[str, str]:
    """git's environment: the allow-list (module docstring), ``keep`` from the caller, then ``extra``."""
    env = {name: os.environ[name] for name in (*_BASE_ENV, *keep) if name in os.environ}
    env.update(_SET)
    env.update(extra or {})
    return env


def run(cwd: Path | str, *args: str, check: bool = False, error: type[Exception] = GitError, text: bool = False,
        input: str | bytes | None = None, keep: tuple[str, ...] = REPOSITORY_ENV, env: dict[str, str] | None = None,
        timeout: float = TIMEOUT, limit: int = MAX_OUTPUT) -> subprocess.CompletedProcess:
    """``git ARGS`` in ``cwd`` (module docstring); with ``check``, ``error`` (one line: the subcommand and
    git's last message) when it fails. Output beyond ``limit`` bytes or ``timeout`` seconds is a failure."""
    data = input.encode("utf-8") if isinstance(input, str) else input
    try:
        outcome = _start(cwd, args, keep, env, timeout, limit, data).finish()
    except OSError as exc:
        raise error(f"cannot run git: {exc.strerror or exc}") from None
    return _completed(args, outcome, check, error, text, timeout, limit)


def _start(cwd: Path | str, args: tuple[str, ...], keep: tuple[str, ...] = REPOSITORY_ENV,
           env: dict[str, str] | None = None, timeout: float = TIMEOUT, limit: int = MAX_OUTPUT,
           input: bytes | None = None) -> Running:
    """``git ARGS`` started in ``cwd`` (``run``'s process, read by its ``finish``). Raises OSError."""
    return Running(["git", *HARDENING, *args], cwd=cwd, env=environment(keep, env), timeout=timeout, limit=limit,
                   input=input)


def _completed(args: tuple[str, ...], outcome: Outcome, check: bool, error: type[Exception], text: bool,
               timeout: float, limit: int) -> subprocess.CompletedProcess:
    """``run``'s answer from what the bounded run gave."""
    import subprocess  # for its result record: the process itself is sandbox.Running's

    stderr, code = outcome.stderr, outcome.returncode
    if outcome.stopped is not None:
        bound = f"{timeout:g} s" if outcome.stopped == "timeout" else f"{limit:,} bytes of output"
        stderr, code = f"fatal: stopped after {bound}\n".encode(), code or 1
    message = stderr.decode("utf-8", "replace")
    if check and code != 0:
        last = message.strip().splitlines()[-1] if message.strip() else code
        raise error(f"git {' '.join(args[:2])} failed: {last}")
    if text:
        return subprocess.CompletedProcess(["git", *args], code, outcome.stdout.decode("utf-8", "replace"), message)
    return subprocess.CompletedProcess(["git", *args], code, outcome.stdout, stderr)


def toplevel(folder: Path) -> Path | None:
    """The work tree holding ``folder`` as git sees it, or None outside one (or without git)."""
    try:
        found = run(folder, "rev-parse", "--show-toplevel", text=True)
    except GitError:
        return None
    return Path(found.stdout.strip()).resolve() if found.returncode == 0 and found.stdout.strip() else None


def ls_files(root: Path, *options: str, paths: tuple[str, ...] = (".",), literal: bool = False) -> list[str] | None:
    """``git ls-files -z OPTIONS -- PATHS`` in ``root``: the entries, or None outside a work tree. With
    ``literal``, the paths are names, not patterns (``GIT_LITERAL_PATHSPECS``). The tracked files of the
    whole work tree (no options, ``.``) are listed once while its index is unchanged (``_tracked``)."""
    if not options and paths == (".",) and not literal:
        return _tracked(root)
    if paths == (".",) and not literal and {"-t", "-c"} <= set(options) <= _TAGGING:
        index, listed = _tagged(root, options)
        if index is not None and listed is not None:  # its cached entries are the tracked files, in order
            _TRACKED[str(root)] = (index, [entry[2:] for entry in listed if entry[:2] in _CACHED_TAGS])
        return listed
    return _listed(root, options, paths, literal)


def _tagged(root: Path, options: tuple[str, ...]) -> tuple[tuple[int, int, int] | None, list[str] | None]:
    """A tagged listing of the work tree ``root``, the one started ahead when there is one (``listing_ahead``),
    with the index's identity read before it began (an index written after it is another identity)."""
    ahead = _AHEAD.pop(os.path.realpath(root), None) if options == WORK_TREE_LISTING else None
    if ahead is None:
        return _index_identity(root), _listed(root, options, (".",), False)
    index, running = ahead
    try:
        outcome = running.finish()
    except OSError:
        return index, None
    return index, _names(_completed(_ls_args(options, (".",)), outcome, False, GitError, False, TIMEOUT, MAX_OUTPUT))


# A tagged listing of the whole work tree (discovery's: ``-t -c -o --exclude-standard``) holds the tracked
# files as its cached entries (git's ls-files.c: H cached, S skip-worktree, M unmerged, once per stage as an
# untagged listing has them; R deleted and ? untracked are the other options'): kept as ``_tracked``'s
# answer, which spares a run's third git process (20-25 ms, a tenth of a run the whole-run cache answers).
_TAGGING = frozenset({"-t", "-c", "-o", "-d", "--exclude-standard"})
_CACHED_TAGS = frozenset({"H ", "S ", "M "})


def _listed(root: Path, options: tuple[str, ...], paths: tuple[str, ...], literal: bool) -> list[str] | None:
    try:
        found = run(root, *_ls_args(options, paths), env={"GIT_LITERAL_PATHSPECS": "1"} if literal else None)
    except GitError:
        return None
    return _names(found)


def _ls_args(options: tuple[str, ...], paths: tuple[str, ...]) -> tuple[str, ...]:
    return ("ls-files", "-z", *options, "--", *paths)


def _names(found: subprocess.CompletedProcess) -> list[str] | None:
    if found.returncode != 0:
        return None
    return [name for name in found.stdout.decode("utf-8", "surrogateescape").split("\0") if name]


# Discovery's listing of a work tree (``discover._git_listing``): every file, tagged (``-t``), the untracked
# ones not ignored. Not ``-d`` (the tracked files deleted from the work tree): git would look at each tracked
# file (16 of its 40 ms on the GitOps tree), and discovery's own ``lstat`` of each file finds them
WORK_TREE_LISTING = ("-t", "-c", "-o", "--exclude-standard")
# The listings started ahead (``listing_ahead``), by the work tree's real path: the index's identity when each
# started, and the git process
_AHEAD: dict[str, tuple[tuple[int, int, int] | None, Running]] = {}


@contextlib.contextmanager
def listing_ahead(folders: list[Path]) -> Iterator[None]:
    """Within this block, discovery's listing (``WORK_TREE_LISTING``) of each of ``folders`` that is the top of
    a work tree (it holds ``.git``) is under way already: git walks the work tree (60 ms of a GitOps tree's
    5,000 files) while cfgcheck imports its modules and reads its configuration. A listing the run did not
    ask for is killed when the block ends."""
    started = []
    if not any(name in os.environ for name in REPOSITORY_ENV):  # they may name another repository
        for folder in dict.fromkeys(os.path.realpath(folder) for folder in folders):
            if os.path.lexists(os.path.join(folder, ".git")) and folder not in _AHEAD:
                index = _index_identity(Path(folder))
                try:
                    _AHEAD[folder] = (index, _start(folder, _ls_args(WORK_TREE_LISTING, (".",))))
                except OSError:
                    continue  # no git: discovery finds out itself
                started.append(folder)
    try:
        yield
    finally:
        for key in started:
            unused = _AHEAD.pop(key, None)
            if unused is not None:
                unused[1].cancel()


# The tracked files of a work tree, with the index's identity when they were listed: a lint run asks twice
# (its whole-run cache key, its reads of repository files), and a change to the index (git add, a commit in
# ``propose``) writes a new index file, which a new (inode, size, mtime) shows.
_TRACKED: dict[str, tuple[tuple[int, int, int], list[str] | None]] = {}


def _tracked(root: Path) -> list[str] | None:
    index = _index_identity(root)
    if index is None:  # a worktree's or GIT_DIR's index elsewhere: asked of git each time
        return _listed(root, (), (".",), False)
    known = _TRACKED.get(str(root))
    if known is not None and known[0] == index:
        return list(known[1]) if known[1] is not None else None
    listed = _listed(root, (), (".",), False)
    _TRACKED[str(root)] = (index, listed)
    return list(listed) if listed is not None else None


def _index_identity(root: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of ``root``'s own ``.git/index``; None when git would read another (the
    repository variables set, ``.git`` a file) or there is none."""
    if any(name in os.environ for name in REPOSITORY_ENV):
        return None
    try:
        found = os.stat(os.path.join(root, ".git", "index"))
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns
