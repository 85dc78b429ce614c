"""Git for ``propose``: a temporary worktree, one commit, a push. The user's working tree, index,
HEAD and stash are never touched: the proposal is built in a detached worktree outside the
repository (removed afterwards), committed there without creating a local branch, and pushed as
``HEAD:refs/heads/<branch>``. Fetching updates only remote-tracking refs, as ``git fetch`` does.
A dry run writes nothing in the repository at all: it works in a scratch repository that borrows
the repository's objects read-only, and fetches into that.

Every message of git that propose shows passes ``redact`` (URL credentials and query strings,
``extraheader``/``Authorization`` values, the token).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .. import git
from ..redact import redact
from .plan import PlanError

# What propose's git keeps of the caller's environment besides cfgcheck/git.py's allow-list: the
# transport (fetch, push) and the committer identity; never a variable that would point git at another
# repository or index than the one we mean (GIT_DIR, GIT_INDEX_FILE, ...).
_KEPT_ENV = git.TRANSPORT_ENV + git.IDENTITY_ENV
FALLBACK_NAME, FALLBACK_EMAIL = "cfgcheck", "cfgcheck@users.noreply.github.com"


class GitError(PlanError):
    pass


# The trailer propose writes in each of its commits: a branch is adopted only when all its own commits
# carry it (https://git-scm.com/docs/git-interpret-trailers).
TRAILER = "Cfgcheck-Proposal"


def clean(text: str, token: str | None = None) -> str:
    """One line, with no credentials (URL userinfo and query strings, auth headers, tokens)."""
    return " ".join(redact(text, token).split())


class Git:
    def __init__(self, cwd: Path, token: str | None = None):
        self.cwd = Path(cwd)
        self.token = token

    def run(self, *args: str, check: bool = True, input: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        result = git.run(self.cwd, *args, error=GitError, text=True, input=input, keep=_KEPT_ENV, env=env)
        if check and result.returncode != 0:
            lines = [line for line in (result.stderr or result.stdout).strip().splitlines() if line.strip()]
            detail = next((line for line in reversed(lines) if line.startswith(("fatal:", "error:"))),
                          lines[-1] if lines else f"exit {result.returncode}")
            raise GitError(clean(f"git {args[0]} failed: {detail}", self.token))
        return result

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.strip()

    # ------------------------------------------------------------ the user's repository (read-mostly)

    def toplevel(self) -> Path:
        found = self.run("rev-parse", "--show-toplevel", check=False)
        if found.returncode != 0 or not found.stdout.strip():
            raise GitError(f"{self.cwd} is not in a git repository")
        return Path(found.stdout.strip()).resolve()

    def remote_url(self, remote: str) -> str | None:
        found = self.run("remote", "get-url", "--end-of-options", remote, check=False)
        return found.stdout.strip() if found.returncode == 0 else None

    def remote_head(self, remote: str) -> str | None:
        """The remote's default branch (``ls-remote --symref REMOTE HEAD``)."""
        found = self.run("ls-remote", "--symref", "--end-of-options", remote, "HEAD", check=False)
        match = re.search(r"^ref: refs/heads/(\S+)\tHEAD", found.stdout or "", re.M)
        return match.group(1) if match else None

    def current_branch(self) -> str | None:
        """The branch checked out, or None when HEAD is detached."""
        found = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        return found.stdout.strip() or None if found.returncode == 0 else None

    def remote_branch(self, remote: str, branch: str) -> str | None:
        """The sha of ``branch`` on the remote, or None."""
        found = self.run("ls-remote", "--heads", "--end-of-options", remote, f"refs/heads/{branch}")
        for line in found.stdout.splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def fetch(self, remote: str, branch: str) -> str:
        """Fetch ``branch`` into its remote-tracking ref and return its sha."""
        tracking = f"refs/remotes/{remote}/{branch}"
        self.run("fetch", "--quiet", "--no-tags", "--end-of-options", remote, f"+refs/heads/{branch}:{tracking}")
        return self.out("rev-parse", "--verify", "--end-of-options", f"{tracking}^{{commit}}")

    def resolve(self, ref: str) -> str:
        found = self.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}",
                         check=False)
        if found.returncode != 0:
            raise GitError(f"'{ref}' is not a commit, branch or tag in this repository")
        return found.stdout.strip()

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        found = self.run("merge-base", "--is-ancestor", "--end-of-options", ancestor, descendant, check=False)
        return found.returncode == 0

    def merge_base(self, a: str, b: str) -> str:
        return self.out("merge-base", "--end-of-options", a, b)

    def foreign_commits(self, base: str, tip: str, branch: str) -> int:
        """How many commits of ``tip`` that ``base`` lacks were not made by propose for ``branch``: each
        of its commits ends with the trailer ``Cfgcheck-Proposal: <branch>``; merges count as foreign."""
        # "%x1e" starts a record, "%x1f" separates its fields (not str.strip()ped: both count as spaces)
        listing = self.run("log", "--no-decorate", f"--format=%x1e%p%x1f%(trailers:key={TRAILER},valueonly,"
                           "separator=%x1f)", "--end-of-options", f"{base}..{tip}").stdout
        foreign = 0
        for record in listing.split("\x1e")[1:]:
            parents, *values = record.rstrip("\n").split("\x1f")
            if len(parents.split()) != 1 or branch not in (value.strip() for value in values):
                foreign += 1
        return foreign

    def identity(self) -> list[str]:
        """``-c`` options for a committer identity when the repository has none configured."""
        name = self.run("config", "user.name", check=False).stdout.strip()
        email = self.run("config", "user.email", check=False).stdout.strip()
        options = []
        if not name and not os.environ.get("GIT_COMMITTER_NAME"):
            options += ["-c", f"user.name={FALLBACK_NAME}"]
        if not email and not os.environ.get("GIT_COMMITTER_EMAIL"):
            options += ["-c", f"user.email={FALLBACK_EMAIL}"]
        return options


class Worktree:
    """A detached worktree in a temporary folder outside the repository; removed on exit. Created by the
    first ``checkout``; fetches go to the repository's remote-tracking refs."""

    def __init__(self, repo: Git):
        self.repo = repo
        self.parent: Path | None = None
        self.git: Git | None = None

    def __enter__(self) -> "Worktree":
        self.parent = Path(tempfile.mkdtemp(prefix="cfgcheck-propose-"))
        return self

    def __exit__(self, *exc: object) -> None:
        if self.parent is None:
            return
        if self.git is not None:
            # only our own worktree: no global ``worktree prune``, which could drop the user's other entries
            self.repo.run("worktree", "remove", "--force", str(self.root), check=False)
        shutil.rmtree(self.parent, ignore_errors=True)

    @property
    def root(self) -> Path:
        assert self.parent is not None
        return self.parent / "tree"

    def fetch(self, remote: str, branch: str) -> str:
        """Fetch ``branch`` of ``remote``; its sha."""
        return self.repo.fetch(remote, branch)

    def checkout(self, commit: str) -> None:
        if self.git is None:
            self.repo.run("worktree", "add", "--quiet", "--detach", "--end-of-options", str(self.root), commit)
            self.git = Git(self.root, self.repo.token)
        else:  # a commit id resolved here: no option can hide in it (checkout takes no --end-of-options)
            self.git.run("checkout", "--quiet", "--detach", commit)

    def head(self) -> str:
        return self.git.out("rev-parse", "HEAD")

    def stage(self) -> bool:
        """Stage everything in the worktree; True when it differs from HEAD."""
        self.git.run("add", "--all", ".")
        return self.git.run("diff", "--cached", "--quiet", check=False).returncode != 0

    def staged_diff(self, *paths: str) -> str:
        return self.git.run("diff", "--cached", "--no-color", "--no-ext-diff", "--", *paths).stdout

    def added_files(self, since: str, folder: str) -> list[str]:
        """Files added between ``since`` and HEAD under ``folder``."""
        out = self.git.run("diff", "--name-only", "--diff-filter=A", "-z", "--end-of-options", since, "HEAD", "--",
                           folder).stdout
        return [p for p in out.split("\0") if p]

    def commit_staged(self, message: str) -> str:
        self.git.run(*self.repo.identity(), "commit", "--quiet", "--no-verify", "-F", "-", input=message)
        return self.head()

    def push(self, remote: str, branch: str, expected: str | None) -> None:
        """Push HEAD to ``branch``; ``expected`` is the sha the remote branch must still have (a lease)."""
        lease = f"--force-with-lease=refs/heads/{branch}:{expected or ''}"
        self.git.run("push", "--quiet", "--no-verify", lease, "--end-of-options", remote, f"HEAD:refs/heads/{branch}")


class Scratch(Worktree):
    """For a dry run: a throwaway repository in the temporary folder that borrows the repository's
    object store read-only (``objects/info/alternates``); checking out, staging and fetching write
    only there, so the repository gains no object, ref, index or worktree entry."""

    def __enter__(self) -> "Scratch":
        super().__enter__()
        try:
            object_format = self.repo.out("rev-parse", "--show-object-format")
            self.objects = self.repo.out("rev-parse", "--path-format=absolute", "--git-path", "objects")
            # no template: no sample hooks, nothing but the store and HEAD
            self.repo.run("init", "--quiet", "--template=", f"--object-format={object_format}", str(self.root))
            info = self.root / ".git" / "objects" / "info"
            info.mkdir(parents=True, exist_ok=True)
            (info / "alternates").write_text(self.objects + "\n")
            self._lend_promisors()
        except BaseException:
            self.__exit__()
            raise
        self.git = Git(self.root, self.repo.token)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.parent is not None:
            shutil.rmtree(self.parent, ignore_errors=True)

    def _lend_promisors(self) -> None:
        """In a partial clone, the blobs a checkout needs may be on the remote only: the scratch
        repository names the same promisor remotes, so git fetches them lazily into the scratch store."""
        scratch = Git(self.root, self.repo.token)
        found = self.repo.run("config", "--get-regexp", r"^remote\..*\.promisor$", check=False).stdout
        for line in found.splitlines():
            key, _, value = line.partition(" ")
            remote = key[len("remote."):-len(".promisor")]
            if value.strip().lower() not in ("true", "yes", "on", "1") or not self.repo.remote_url(remote):
                continue
            scratch.run("config", "core.repositoryformatversion", "1")
            scratch.run("config", "extensions.partialClone", remote)
            scratch.run("config", f"remote.{remote}.url", self.repo.remote_url(remote))
            scratch.run("config", f"remote.{remote}.promisor", "true")

    def fetch(self, remote: str, branch: str) -> str:
        sha = self.repo.remote_branch(remote, branch)
        if sha is None:
            raise GitError(f"branch '{branch}' is not on remote '{remote}'")
        # Run in the repository so that its remote, credential and URL settings apply, with the objects
        # going to the scratch store and nothing else written: no ref (--refmap=), no FETCH_HEAD, no gc.
        redirect = {"GIT_OBJECT_DIRECTORY": str(self.root / ".git" / "objects"),
                    "GIT_ALTERNATE_OBJECT_DIRECTORIES": self.objects}
        self.repo.run("fetch", "--quiet", "--no-tags", "--no-prune", "--no-write-fetch-head", "--refmap=",
                      "--no-auto-gc", "--no-recurse-submodules", "--end-of-options", remote, f"refs/heads/{branch}",
                      env=redirect)
        if self.git.run("cat-file", "-e", "--end-of-options", f"{sha}^{{commit}}", check=False).returncode != 0:
            raise GitError(f"branch '{branch}' moved on '{remote}' while it was fetched; run again")
        return sha

    def checkout(self, commit: str) -> None:
        self.git.run("checkout", "--quiet", "--detach", commit)


def repository_from_url(url: str | None) -> str | None:
    """``owner/name`` from a GitHub remote URL (https, ssh or scp-like), else None."""
    if not url:
        return None
    match = re.search(r"(?:[:/])([^/:]+)/([^/]+?)(?:\.git)?/?$", url.strip())
    if not match or "://" not in url and ":" not in url:
        return None
    return f"{match.group(1)}/{match.group(2)}"
