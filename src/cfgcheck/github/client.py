"""A PyGithub connection as cfgcheck uses it: token from the environment, retries, one-line errors.

PyGithub is imported here only, and only on the paths that talk to GitHub (review, propose).
A token never reaches any output: every message that may quote a request goes through ``redact``
(``cfgcheck.redact``, re-exported here for the callers that import it from the client).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..redact import redact

DEFAULT_API_URL = "https://api.github.com"


class GitHubError(Exception):
    """A GitHub API failure the user can act on; the message is one line with no token in it."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Unanswered(GitHubError):
    """GitHub answered what no endpoint documents (a 5xx after the retries, an HTML page, a body of the
    wrong shape, a 404 on one of a pull request's endpoints): a review degrades (publishes what it can)
    and exits by its findings, not 2."""


def commit_id(value: object) -> str:
    """A commit id from an answer; ValueError when the answer has none (a body of the wrong shape)."""
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", value):
        raise ValueError("the answer holds no commit id")
    return value


def listed_files(files: list, changed: object) -> list:
    """A pull request's files, checked: a name and a patch each, and some when the pull request says it
    changes some (a body that is not a JSON list reads as no file at all)."""
    for file in files:
        if not isinstance(file.filename, str) or not isinstance(file.patch, (str, type(None))):
            raise ValueError("a listed file has no name or patch")
    if not files and isinstance(changed, int) and changed > 0:
        raise ValueError(f"no file listed of the {changed} the pull request changes")
    return files


@dataclass
class Connection:
    github: object  # github.Github
    token: str
    api_url: str

    def redact(self, text: str) -> str:
        return redact(text, self.token)


def token_from(explicit: str | None) -> str:
    token = (explicit or os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or "").strip()
    if not token:  # stripped: a token read from a file ends in a newline, which no HTTP header may carry
        raise GitHubError("no GitHub token: set GITHUB_TOKEN (in Actions: env GITHUB_TOKEN: ${{ github.token }}) "
                          "or pass --token")
    return token


def connect(token: str, api_url: str | None = None, retries: int = 3, timeout: int = 30,
            backoff: float | None = None) -> Connection:
    """A PyGithub client that retries 5xx and rate limits (honouring Retry-After).

    PyGithub's pacing between requests (which avoids secondary rate limits) stays on, unless
    ``CFGCHECK_GITHUB_THROTTLE=0`` (tests against a local server); the backoff follows it.
    """
    import github
    from github.GithubRetry import GithubRetry

    url = (api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    throttle = os.environ.get("CFGCHECK_GITHUB_THROTTLE", "1") != "0"
    backoff = (1.0 if throttle else 0.0) if backoff is None else backoff
    retry = GithubRetry(total=retries, backoff_factor=backoff, secondary_rate_wait=max(backoff, 1.0 if throttle else 0.0))
    pacing = {} if throttle else {"seconds_between_requests": None, "seconds_between_writes": None}
    timeout = int(os.environ.get("CFGCHECK_GITHUB_TIMEOUT", timeout))  # seconds per request
    client = github.Github(auth=github.Auth.Token(token), base_url=url, retry=retry, timeout=int(timeout),
                           per_page=100, **pacing)
    return Connection(client, token, url)


def describe(exc: Exception, token: str | None, action: str) -> GitHubError:
    """A one-line GitHubError for a PyGithub or network exception."""
    status = getattr(exc, "status", None)
    data = getattr(exc, "data", None)
    detail = data.get("message") if isinstance(data, dict) else None
    errors = data.get("errors") if isinstance(data, dict) else None
    if detail and isinstance(errors, list) and errors:  # 422: the first reason says which field and why
        first = errors[0]
        reason = first.get("message") or first.get("code") if isinstance(first, dict) else first
        detail = f"{detail}: {str(reason)[:200]}" if reason else detail
    if status == 401:
        text = f"{action}: GitHub rejected the token (401 Bad credentials)"
    elif status == 403:
        text = f"{action}: forbidden (403 {detail or 'Resource not accessible by integration'})"
    elif status == 404:
        text = f"{action}: not found (404): check the repository, pull request number and the token's access"
    elif status is not None:
        text = f"{action}: GitHub answered {status}" + (f" ({detail})" if detail else "")
    else:
        text = f"{action}: {type(exc).__name__}: {exc}"
    return GitHubError(redact(" ".join(text.split()), token), status)
