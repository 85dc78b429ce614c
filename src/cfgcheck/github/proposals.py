"""Pull requests for ``propose`` (PyGithub, imported lazily through ``client``).

A proposal PR carries a hidden marker in its body naming the served models it changes, so a later
proposal for any of them joins it instead of opening a second PR, and a re-run finds it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .client import GitHubError, connect, describe, token_from
from ..redact import redact

MARKER = "cfgcheck-propose"
TITLE_LIMIT = 256  # GitHub refuses longer titles: "title is too long (maximum is 256 characters)"
BODY_LIMIT = 65_536  # and longer bodies: "body is too long (maximum is 65536 characters)"
# on a line of its own, the last one: text escaped into the body cannot start a line with "<!--"
_MARKER_RE = re.compile(r"^<!-- " + MARKER + r" (\{[^\n]*\}) -->[ \t]*$", re.M)


def marker(data: dict[str, Any]) -> str:
    """The hidden marker: JSON whose "--", "<" and ">" are written as JSON escapes, so no text in it can
    end the HTML comment or open another (it decodes to the same data)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    text = text.replace("--", "-\\u002d").replace(">", "\\u003e").replace("<", "\\u003c")
    return f"<!-- {MARKER} {text} -->"


def read_marker(text: str | None) -> dict[str, Any] | None:
    match = None
    for match in _MARKER_RE.finditer(text or ""):  # noqa: B007 (the last marker is the one that counts)
        pass
    if match is None:
        return None
    try:
        data = json.loads(match.group(1))
    except (ValueError, RecursionError):  # a pull request body anyone with access may edit
        return None
    return data if isinstance(data, dict) else None


def proposals_of(data: dict[str, Any] | None) -> list[dict]:
    """The proposals a marker records, each reduced to what propose writes (text title and why, a list
    of change specs, the fix flag): a marker is text someone else could have edited."""
    found = (data or {}).get("proposals")
    entries = []
    for item in found if isinstance(found, list) else []:
        if not isinstance(item, dict):
            continue
        changes = item.get("changes")
        entry = {"title": str(item.get("title") or ""), "why": str(item.get("why") or ""),
                 "changes": [str(c) for c in changes] if isinstance(changes, list) else []}
        if item.get("fix"):
            entry["fix"] = True
        entries.append(entry)
    return entries


def _outgoing(title: str, body: str, token: str | None) -> tuple[str, str]:
    """Title and body as sent: redacted, the title within GitHub's limit."""
    title = redact(title, token)
    if len(title) > TITLE_LIMIT:
        title = title[:TITLE_LIMIT - 1].rstrip() + "…"
    return title, redact(body, token)


@dataclass
class OpenProposal:
    number: int
    branch: str
    url: str
    title: str
    body: str
    models: list[str]
    pull: Any  # github.PullRequest.PullRequest
    proposals: list[dict] = field(default_factory=list)


class Hub:
    """The repository on GitHub, with every failure turned into a one-line ``GitHubError``."""

    def __init__(self, repository: str, token: str | None = None, api_url: str | None = None):
        self.repository = repository
        self.token = token_from(token)
        self.api_url = api_url
        self._repo = None
        self._conn = None

    def _call(self, action: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except GitHubError:
            raise
        except Exception as exc:  # noqa: BLE001 - PyGithub, requests and urllib3 errors alike
            raise describe(exc, self.token, action) from None

    @property
    def repo(self):
        if self._repo is None:
            self._conn = self._call("connect to GitHub", connect, self.token, self.api_url)
            self._repo = self._call(f"read repository {self.repository}", self._conn.github.get_repo,
                                    self.repository)
        return self._repo

    @property
    def owner(self) -> str:
        return self.repository.split("/", 1)[0]

    def html_url(self) -> str | None:
        try:
            return self.repo.html_url
        except GitHubError:
            return None

    def compare_url(self, base: str, branch: str) -> str:
        """Where a person opens the pull request from ``branch`` into ``base`` by hand."""
        root = self.html_url() or f"https://github.com/{self.repository}"
        return f"{root}/compare/{quote(base, safe='/')}...{quote(branch, safe='/')}"

    def outgoing(self, title: str, body: str) -> tuple[str, str]:
        """Title and body as GitHub will get them (redacted, the title within its limit); a body over
        GitHub's limit is refused here, before anything is pushed."""
        title, body = _outgoing(title, body, self.token)
        if len(body) > BODY_LIMIT:
            raise GitHubError(f"the pull request body is {len(body):,} characters, over GitHub's limit of "
                              f"{BODY_LIMIT:,}; nothing was pushed")
        return title, body

    def _proposal(self, pull) -> OpenProposal | None:
        """A cfgcheck proposal: the marker, on a ``cfgcheck/`` branch of this same repository (a marker
        pasted into someone else's pull request does not make cfgcheck push to it)."""
        data = read_marker(pull.body)
        if data is None or not pull.head.ref.startswith("cfgcheck/"):
            return None
        head_repo = pull.head.repo
        if head_repo is None or head_repo.full_name.lower() != self.repository.lower():
            return None
        models = data.get("models")
        return OpenProposal(pull.number, pull.head.ref, pull.html_url, pull.title, pull.body or "",
                            [str(m) for m in models] if isinstance(models, list) else [], pull, proposals_of(data))

    def open_proposals(self, base: str) -> list[OpenProposal]:
        def listing():
            return [p for p in (self._proposal(pull) for pull in self.repo.get_pulls(state="open", base=base))
                    if p is not None]

        return self._call("list open pull requests", listing)

    def find_for_models(self, identities: list[str], base: str) -> OpenProposal | None:
        """The oldest open cfgcheck proposal that changes any of these served models."""
        wanted = set(identities)
        found = [p for p in self.open_proposals(base) if wanted & set(p.models)]
        return min(found, key=lambda p: p.number) if found else None

    def find_for_branch(self, branch: str, base: str) -> Any | None:
        def listing():
            for pull in self.repo.get_pulls(state="open", base=base, head=f"{self.owner}:{branch}"):
                if pull.head.ref == branch:
                    return pull
            return None

        return self._call("list open pull requests", listing)

    def create(self, base: str, branch: str, title: str, body: str) -> tuple[Any, bool]:
        """Open the pull request: ``(pull, True)``. When GitHub answers that one already exists for the
        branch (a create that timed out was processed after all), that one: ``(pull, False)``."""
        title, body = self.outgoing(title, body)

        def attempt():
            try:
                return self.repo.create_pull(base=base, head=branch, title=title, body=body)
            except Exception as exc:  # noqa: BLE001 - PyGithub's GithubException, told apart by status
                if getattr(exc, "status", None) == 422 and "already exists" in json.dumps(getattr(exc, "data", "")):
                    return None
                raise

        pull = self._call("open the pull request", attempt)
        if pull is not None:
            return pull, True
        pull = self.find_for_branch(branch, base)
        if pull is None:
            raise GitHubError(f"open the pull request: GitHub says one exists for {branch} but lists none open")
        return pull, False

    def update(self, pull, title: str, body: str) -> bool:
        """Edit title and body when they differ; True when something changed."""
        title, body = self.outgoing(title, body)
        changes = {}
        if pull.title != title:
            changes["title"] = title
        if (pull.body or "") != body:
            changes["body"] = body
        if not changes:
            return False
        self._call(f"update pull request #{pull.number}", pull.edit, **changes)
        return True
