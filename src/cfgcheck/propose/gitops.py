"""Git for ``propose``: a temporary worktree, one commit, a push. The user's working tree, index,
HEAD and stash are never touched: the proposal is built in a detached worktree outside the
repository (removed afterwards), committed there without creating a local branch, and pushed as
``HEAD:refs/heads/<branch>``. Fetching updates only remote-tracking refs, as ``git fetch`` does.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..github.client import redact
from .plan import PlanError

# Variables that would point git at another repository or index than the one we mean.
_GIT_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX",
            "GIT_COMMON_DIR", "GIT_NAMESPACE")
_URL_CREDENTIALS = re.compile(r"(\w+://)[^/@\s]+@")
FALLBACK_NAME, FALLBACK_EMAIL = "cfgcheck", "cfgcheck@users.noreply.github.com"


class GitError(PlanError):
    pass


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV}
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    env["LC_ALL"] = "C"
    return env


def clean(text: str, token: str | None = None) -> str:
    """One line, with no credentials (URL userinfo, tokens)."""
    return " ".join(redact(_URL_CREDENTIALS.sub(r"\1***@", text), token).split())


class Git:
    def __init__(self, cwd: Path, token: str | None = None):
        self.cwd = Path(cwd)
        self.token = token

    def run(self, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        try:
            result = subprocess.run(["git", *args], cwd=self.cwd, capture_output=True, text=True, env=_env(),
                                    input=input, encoding="utf-8", errors="replace")
        except OSError as exc:
            raise GitError(f"cannot run git: {exc.strerror or exc}") from None
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
        found = self.run("remote", "get-url", remote, check=False)
        return found.stdout.strip() if found.returncode == 0 else None

    def remote_head(self, remote: str) -> str | None:
        """The remote's default branch (``ls-remote --symref REMOTE HEAD``)."""
        found = self.run("ls-remote", "--symref", remote, "HEAD", check=False)
        match = re.search(r"^ref: refs/heads/(\S+)\tHEAD", found.stdout or "", re.M)
        return match.group(1) if match else None

    def remote_branch(self, remote: str, branch: str) -> str | None:
        """The sha of ``branch`` on the remote, or None."""
        found = self.run("ls-remote", "--heads", remote, f"refs/heads/{branch}")
        for line in found.stdout.splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def fetch(self, remote: str, branch: str) -> str:
        """Fetch ``branch`` into its remote-tracking ref and return its sha."""
        tracking = f"refs/remotes/{remote}/{branch}"
        self.run("fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{branch}:{tracking}")
        return self.out("rev-parse", "--verify", f"{tracking}^{{commit}}")

    def resolve(self, ref: str) -> str:
        found = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        if found.returncode != 0:
            raise GitError(f"'{ref}' is not a commit, branch or tag in this repository")
        return found.stdout.strip()

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.run("merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str:
        return self.out("merge-base", a, b)

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
    """A detached worktree in a temporary folder outside the repository; removed on exit."""

    def __init__(self, repo: Git, commit: str):
        self.repo = repo
        self.commit = commit
        self.folder: Path | None = None
        self.git: Git | None = None

    def __enter__(self) -> "Worktree":
        parent = Path(tempfile.mkdtemp(prefix="cfgcheck-propose-"))
        self.folder = parent / "tree"
        try:
            self.repo.run("worktree", "add", "--quiet", "--detach", str(self.folder), self.commit)
        except GitError:
            shutil.rmtree(parent, ignore_errors=True)
            raise
        self.git = Git(self.folder, self.repo.token)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.folder is None:
            return
        # only our own worktree: no global ``worktree prune``, which could drop the user's other entries
        self.repo.run("worktree", "remove", "--force", str(self.folder), check=False)
        shutil.rmtree(self.folder.parent, ignore_errors=True)

    @property
    def root(self) -> Path:
        assert self.folder is not None
        return self.folder

    def checkout(self, commit: str) -> None:
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
        out = self.git.run("diff", "--name-only", "--diff-filter=A", "-z", since, "HEAD", "--", folder).stdout
        return [p for p in out.split("\0") if p]

    def commit_staged(self, message: str) -> str:
        self.git.run(*self.repo.identity(), "commit", "--quiet", "--no-verify", "-F", "-", input=message)
        return self.head()

    def push(self, remote: str, branch: str, expected: str | None) -> None:
        """Push HEAD to ``branch``; ``expected`` is the sha the remote branch must still have (a lease)."""
        lease = f"--force-with-lease=refs/heads/{branch}:{expected or ''}"
        self.git.run("push", "--quiet", "--no-verify", lease, remote, f"HEAD:refs/heads/{branch}")


def repository_from_url(url: str | None) -> str | None:
    """``owner/name`` from a GitHub remote URL (https, ssh or scp-like), else None."""
    if not url:
        return None
    match = re.search(r"(?:[:/])([^/:]+)/([^/]+?)(?:\.git)?/?$", url.strip())
    if not match or "://" not in url and ":" not in url:
        return None
    return f"{match.group(1)}/{match.group(2)}"
