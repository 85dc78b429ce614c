"""A fake GitHub REST API server for the cfgcheck test suite.

The server is a stdlib ``ThreadingHTTPServer`` bound to ``127.0.0.1`` on an
ephemeral port, served from a daemon thread.  PyGithub talks to it over real
HTTP::

    with FakeGitHub() as gh:
        repo = gh.add_repo("acme/app", files={"values.yaml": "replicas: 1\\n"})
        pr = gh.add_pull("acme/app", head="bump", changes={"values.yaml": "replicas: 2\\n"})
        client = gh.client()                      # github.Github(base_url=gh.url, ...)
        client.get_repo("acme/app").get_pull(pr.number).get_files()

Every request body is validated with ``jsonschema`` against the request schema
of its operation in ``shared/github-api/openapi-subset.json`` and every
response body against the response schema for its status.  Failures are
recorded in :attr:`FakeGitHub.errors` (the ``fake_github`` fixture fails the
test at teardown if any occurred).  Requests that reach a route which is not
in the subset are answered 404 and recorded as errors too: cfgcheck must only
use the operations listed in ``x-cfgcheck.operations``.

Cheat sheet (all on :class:`FakeGitHub`)::

    gh.url / gh.web_url                   base_url for PyGithub (…/api/v3) / html root
    gh.token, gh.read_token, gh.human_token   bot write, bot read-only, human (octocat)
    gh.client(token=None, retry="default", timeout=10, **Github_kwargs)
    gh.add_repo("o/r", files={...}) -> Repo          gh.push("o/r", branch, {path: text|None})
    gh.add_pull("o/r", head=, base=, changes={path: text} | files={path: patch}) -> PullRequest
    gh.add_review_comment("o/r", n, body=, path=, line=, side=, user=)   gh.reply("o/r", id, body)
    gh.add_issue_comment("o/r", n, body, user=)   gh.close_pull("o/r", n)   gh.delete_branch("o/r", b)
    comments record their author (the token's login), ``edited_by`` logins; ``repo.deleted`` (comment, login)
    bodies over MAX_BODY (65,536) characters are refused with 422, as GitHub does
    gh.fail(route, 500, times=2)   gh.rate_limit(route, status=403|429, retry_after=1)
    gh.timeout(route, seconds)     gh.not_found(route)   gh.close_pull_on(route, "o/r", n)
    gh.inject(route, status=, body=, headers=, delay=, action=, when=)   # generic
    gh.requests / gh.requests_for(op)   gh.errors / gh.take_errors()   gh.state.repo("o/r")

``route`` is an operationId (``"pulls/get"``), ``"METHOD /path-glob"``
relative to the API root, ``"*"``, or a predicate on :class:`RecordedRequest`.

Only ``tests/support/fakegithub.py`` and ``tests/github/test_fakegithub.py`` belong to this
component; ``tests/conftest.py`` only holds the ``fake_github`` fixture.
"""

from __future__ import annotations

import base64
import difflib
import fnmatch
import hashlib
import json
import math
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

# --------------------------------------------------------------------------- #
# Locations and constants
# --------------------------------------------------------------------------- #

#: ``shared/`` lives beside the repository clone (/work/main -> /work/shared).
SHARED_DIR = Path(__file__).resolve().parents[2].parent / "shared"
SPEC_PATH = SHARED_DIR / "github-api" / "openapi-subset.json"
SKIP_REASON = (
    "../shared/github-api/openapi-subset.json not found: "
    "the fake GitHub server validates against GitHub's schemas"
)

API_PREFIX = "/api/v3"
DOCS_URL = "https://docs.github.com/rest"
BOT_LOGIN = "github-actions[bot]"
BOT_ID = 41898282
HUMAN_LOGIN = "octocat"

BOT_TOKEN = "ghs_fakeBotWriteToken0000000000000000"
READ_TOKEN = "ghs_fakeBotReadOnlyToken000000000000"
HUMAN_TOKEN = "ghp_fakeHumanToken0000000000000000000"

NOT_ACCESSIBLE = "Resource not accessible by integration"
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
#: GitHub refuses comment, review and pull request bodies longer than this (422 "body is too long").
MAX_BODY = 65536
EMPTY_TREE_SHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_SPEC_URI = "urn:cfgcheck:github-openapi-subset"


class SpecNotFound(FileNotFoundError):
    """The OpenAPI subset is missing (the fixture turns this into a skip)."""


# --------------------------------------------------------------------------- #
# Schema access and validation
# --------------------------------------------------------------------------- #


def _format_checker():
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    date_time = re.compile(
        r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
    )

    @checker.checks("date-time")
    def _is_date_time(value: object) -> bool:
        return not isinstance(value, str) or bool(date_time.match(value))

    @checker.checks("uri")
    def _is_uri(value: object) -> bool:
        if not isinstance(value, str):
            return True
        parts = urlsplit(value)
        return bool(parts.scheme) and bool(parts.netloc) and " " not in value

    return checker


class Spec:
    """The OpenAPI subset, with cached compiled validators per JSON pointer."""

    def __init__(self, path: Path):
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        if not Path(path).is_file():
            raise SpecNotFound(str(path))
        self.path = Path(path)
        self.doc = json.loads(self.path.read_text(encoding="utf-8"))
        self.operations: dict[str, dict] = self.doc["x-cfgcheck"]["operations"]
        resource = Resource.from_contents(self.doc, default_specification=DRAFT202012)
        self._registry = Registry().with_resource(_SPEC_URI, resource)
        self._validator_cls = Draft202012Validator
        self._format_checker = _format_checker()
        self._validators: dict[str, Any] = {}
        self._lock = threading.Lock()

    def validator(self, pointer: str):
        with self._lock:
            v = self._validators.get(pointer)
            if v is None:
                v = self._validator_cls(
                    {"$ref": _SPEC_URI + pointer},
                    registry=self._registry,
                    format_checker=self._format_checker,
                )
                self._validators[pointer] = v
            return v

    def check(self, pointer: str, instance: Any) -> list[str]:
        """Return readable validation errors (empty when valid)."""
        from jsonschema.exceptions import best_match

        out = []
        for err in self.validator(pointer).iter_errors(instance):
            if err.validator == "oneOf" and "is valid under each of" in err.message:
                # GitHub's description uses oneOf for overlapping alternatives (e.g. the
                # 409 of contents PUT: basic-error | repository-rule-violation-error,
                # neither with required keys); read it as anyOf.
                continue
            if err.context:
                err = best_match(err.context) or err
            where = "/".join(str(p) for p in err.absolute_path) or "<root>"
            msg = err.message
            if len(msg) > 300:
                msg = msg[:300] + "..."
            out.append(f"{where}: {msg}")
            if len(out) >= 10:
                break
        return out


_SPEC_CACHE: dict[Path, Spec] = {}
_SPEC_CACHE_LOCK = threading.Lock()


def load_spec(path: Path | str | None = None) -> Spec:
    """Load (once per process) the OpenAPI subset; raises :class:`SpecNotFound`."""
    p = Path(path) if path is not None else SPEC_PATH
    p = p.resolve()
    with _SPEC_CACHE_LOCK:
        if p not in _SPEC_CACHE:
            _SPEC_CACHE[p] = Spec(p)
        return _SPEC_CACHE[p]


# --------------------------------------------------------------------------- #
# Diff helpers
# --------------------------------------------------------------------------- #

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified-diff patch as GitHub counts it."""

    position: int  # 1 = line right below the first @@ header
    hunk: int  # 0-based hunk index
    kind: str  # " ", "+", "-" or "@" (hunk header)
    left: int | None  # line number on the LEFT (base) side
    right: int | None  # line number on the RIGHT (head) side


def parse_patch(patch: str | None) -> list[DiffLine]:
    """Parse a GitHub ``patch`` (hunks only, no ---/+++ header).

    Positions follow GitHub's (deprecated) ``position`` rule: the line just
    below the first ``@@`` header is position 1 and counting continues through
    later hunk headers.
    """
    out: list[DiffLine] = []
    if not patch:
        return out
    hunk = -1
    left = right = 0
    position = -1
    raw_lines = patch.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()  # trailing newline of the patch text
    for raw in raw_lines:
        if raw.startswith("@@"):
            m = _HUNK_RE.match(raw)
            if not m:
                continue
            hunk += 1
            position += 1
            left, right = int(m.group(1)), int(m.group(3))
            if position > 0:
                out.append(DiffLine(position, hunk, "@", None, None))
            continue
        if hunk < 0 or raw.startswith("\\"):
            continue  # preamble or "\ No newline at end of file"
        position += 1
        kind = raw[:1] if raw[:1] in "+-" else " "
        if kind == "+":
            out.append(DiffLine(position, hunk, kind, None, right))
            right += 1
        elif kind == "-":
            out.append(DiffLine(position, hunk, kind, left, None))
            left += 1
        else:
            out.append(DiffLine(position, hunk, kind, left, right))
            left += 1
            right += 1
    return out


def diff_lines(patch: str | None, side: str = "RIGHT") -> set[int]:
    """The line numbers a review comment may target on ``side``."""
    attr = "right" if side == "RIGHT" else "left"
    return {getattr(d, attr) for d in parse_patch(patch) if getattr(d, attr) is not None}


def diff_hunk_for(patch: str, position: int) -> str:
    """GitHub's ``diff_hunk``: the hunk header through the commented line."""
    lines = patch.split("\n")
    pos = -1
    start = 0
    for i, raw in enumerate(lines):
        if raw.startswith("@@"):
            pos += 1
            start = i
        elif raw.startswith("\\"):
            continue
        else:
            pos += 1
        if pos == position:
            return "\n".join(lines[start : i + 1])
    return "\n".join(lines[start:])


def make_patch(old: str | None, new: str | None) -> tuple[str, int, int]:
    """A GitHub-style patch (no file header) plus addition/deletion counts."""
    a = (old or "").splitlines()
    b = (new or "").splitlines()
    body = list(difflib.unified_diff(a, b, lineterm="", n=3))[2:]
    adds = sum(1 for line in body if line.startswith("+"))
    dels = sum(1 for line in body if line.startswith("-"))
    return "\n".join(body), adds, dels


def _patch_counts(patch: str | None) -> tuple[int, int]:
    lines = parse_patch(patch)
    return (sum(1 for d in lines if d.kind == "+"), sum(1 for d in lines if d.kind == "-"))


# --------------------------------------------------------------------------- #
# State
# --------------------------------------------------------------------------- #


def _ts(dt: datetime | None) -> str | None:
    return None if dt is None else dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _git_sha(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "User" | "Bot" | "Organization"
    name: str | None = None

    @property
    def email(self) -> str:
        return f"{self.id}+{self.login}@users.noreply.github.com"


@dataclass
class Token:
    token: str
    login: str
    write: bool = True


@dataclass
class TreeEntry:
    name: str
    mode: str  # "100644", "100755", "040000", "160000", "120000"
    type: str  # "blob" | "tree" | "commit"
    sha: str


@dataclass
class GitCommit:
    sha: str
    tree: str
    parents: list[str]
    message: str
    author: dict  # {"name", "email", "date"}
    committer: dict


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str = ""
    default: bool = False


@dataclass
class PullRequest:
    number: int
    id: int
    title: str
    body: str | None
    user: str
    head_ref: str
    head_sha: str
    base_ref: str
    base_sha: str  # merge base recorded at creation: the diff is base_sha..head
    state: str = "open"
    draft: bool = False
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    closed_at: datetime | None = None
    labels: list[str] = field(default_factory=list)
    files: list[dict] | None = None  # explicit diff entries; None = computed


@dataclass
class Review:
    id: int
    pull_number: int
    user: str
    body: str
    state: str  # COMMENTED | APPROVED | CHANGES_REQUESTED | PENDING
    commit_id: str
    submitted_at: datetime | None


@dataclass
class ReviewComment:
    id: int
    pull_number: int
    review_id: int | None
    user: str
    body: str
    path: str
    commit_id: str
    original_commit_id: str
    line: int | None
    side: str | None
    start_line: int | None
    start_side: str | None
    position: int | None
    diff_hunk: str
    subject_type: str = "line"
    in_reply_to_id: int | None = None
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    edited_by: list[str] = field(default_factory=list)  # login of every update, in order


@dataclass
class IssueComment:
    id: int
    issue_number: int
    user: str
    body: str
    created_at: datetime = EPOCH
    updated_at: datetime = EPOCH
    edited_by: list[str] = field(default_factory=list)  # login of every update, in order


@dataclass
class CheckRun:
    id: int
    name: str
    head_sha: str
    status: str = "queued"
    conclusion: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    details_url: str | None = None
    external_id: str | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[dict] = field(default_factory=list)
    check_suite_id: int = 0
    app_login: str = BOT_LOGIN


class Repo:
    """An in-memory repository: git objects, refs, pulls, comments, checks."""

    def __init__(self, state: "State", owner: str, name: str, *, default_branch: str, private: bool,
                 description: str | None):
        self.state = state
        self.owner = owner
        self.name = name
        self.id = state.next_id()
        self.default_branch = default_branch
        self.private = private
        self.description = description
        self.created_at = state.now()
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, list[TreeEntry]] = {EMPTY_TREE_SHA: []}
        self.commits: dict[str, GitCommit] = {}
        self.refs: dict[str, str] = {}  # "refs/heads/main" -> sha
        self.pulls: dict[int, PullRequest] = {}
        self.labels: dict[str, Label] = {}  # lower(name) -> Label
        self.reviews: dict[int, Review] = {}
        self.review_comments: dict[int, ReviewComment] = {}
        self.issue_comments: dict[int, IssueComment] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.deleted: list[tuple[ReviewComment | IssueComment, str | None]] = []  # (comment, who deleted it)
        self.next_number = 1

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    # -- git objects ------------------------------------------------------- #

    def put_blob(self, data: bytes | str) -> str:
        if isinstance(data, str):
            data = data.encode("utf-8")
        sha = _git_sha("blob", data)
        self.blobs[sha] = data
        return sha

    def put_tree(self, entries: Iterable[TreeEntry]) -> str:
        entries = sorted(entries, key=lambda e: e.name + ("/" if e.type == "tree" else ""))
        raw = b"".join(
            f"{e.mode.lstrip('0') if e.type == 'tree' else e.mode} {e.name}\0".encode() + bytes.fromhex(e.sha)
            for e in entries
        )
        sha = _git_sha("tree", raw)
        self.trees[sha] = list(entries)
        return sha

    def flatten(self, tree_sha: str, prefix: str = "") -> dict[str, TreeEntry]:
        """Leaf entries (blobs/submodules) of a tree, keyed by full path."""
        out: dict[str, TreeEntry] = {}
        for e in self.trees.get(tree_sha, []):
            path = prefix + e.name
            if e.type == "tree":
                out.update(self.flatten(e.sha, path + "/"))
            else:
                out[path] = TreeEntry(path, e.mode, e.type, e.sha)
        return out

    def build_tree(self, flat: dict[str, TreeEntry]) -> str:
        """Build nested tree objects from ``{path: leaf entry}``; returns root sha."""
        children: dict[str, dict[str, TreeEntry]] = {}
        leaves: list[TreeEntry] = []
        for path, e in flat.items():
            head, sep, rest = path.partition("/")
            if sep:
                children.setdefault(head, {})[rest] = e
            else:
                leaves.append(TreeEntry(head, e.mode, e.type, e.sha))
        for name, sub in children.items():
            leaves.append(TreeEntry(name, "040000", "tree", self.build_tree(sub)))
        return self.put_tree(leaves)

    def put_commit(self, tree: str, parents: list[str], message: str, *, author: dict | None = None,
                   committer: dict | None = None) -> str:
        now = _ts(self.state.now())
        bot = self.state.users.get(BOT_LOGIN)
        default = {"name": BOT_LOGIN, "email": bot.email if bot else "bot@example.com", "date": now}
        author = {**default, **(author or {})}
        committer = {**default, **(committer or author)}
        text = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
        text += f"author {author['name']} <{author['email']}> {author['date']}\n"
        text += f"committer {committer['name']} <{committer['email']}> {committer['date']}\n\n{message}"
        sha = _git_sha("commit", text.encode("utf-8"))
        self.commits[sha] = GitCommit(sha, tree, list(parents), message, author, committer)
        return sha

    def files_at(self, commit_sha: str | None) -> dict[str, TreeEntry]:
        if not commit_sha or commit_sha not in self.commits:
            return {}
        return self.flatten(self.commits[commit_sha].tree)

    def read(self, path: str, ref: str | None = None) -> str | None:
        """Text of ``path`` at ``ref`` (default branch if omitted), or None."""
        sha = self.resolve(ref or self.default_branch)
        e = self.files_at(sha).get(path)
        return None if e is None else self.blobs[e.sha].decode("utf-8", "replace")

    def commit_files(self, branch: str, changes: dict[str, str | bytes | None], message: str = "Update files",
                     *, author: dict | None = None, from_ref: str | None = None) -> str:
        """Commit ``{path: content | None (delete)}`` on ``branch`` and move it.

        A missing branch is created from ``from_ref`` (default branch)."""
        parent = self.refs.get(f"refs/heads/{branch}")
        if parent is None and from_ref is not None:
            parent = self.resolve(from_ref)
        if parent is None and branch != self.default_branch:
            parent = self.refs.get(f"refs/heads/{self.default_branch}")
        flat = self.files_at(parent)
        for path, content in changes.items():
            if content is None:
                flat.pop(path, None)
            else:
                flat[path] = TreeEntry(path, "100644", "blob", self.put_blob(content))
        tree = self.build_tree(flat)
        sha = self.put_commit(tree, [parent] if parent else [], message, author=author)
        self.refs[f"refs/heads/{branch}"] = sha
        return sha

    def resolve(self, ref: str | None) -> str | None:
        """Commit sha for a sha / short sha / branch / ``heads/x`` / ``refs/heads/x``."""
        if not ref:
            return None
        if ref in self.commits:
            return ref
        for cand in (ref, f"refs/{ref}", f"refs/heads/{ref}", f"refs/tags/{ref}"):
            if cand in self.refs:
                return self.refs[cand]
        if re.fullmatch(r"[0-9a-f]{7,39}", ref):
            hits = [s for s in self.commits if s.startswith(ref)]
            if len(hits) == 1:
                return hits[0]
        return None

    def ancestors(self, sha: str | None) -> set[str]:
        seen: set[str] = set()
        todo = [sha] if sha else []
        while todo:
            s = todo.pop()
            if s in seen or s not in self.commits:
                continue
            seen.add(s)
            todo.extend(self.commits[s].parents)
        return seen

    @property
    def branches(self) -> dict[str, str]:
        return {r[len("refs/heads/"):]: s for r, s in self.refs.items() if r.startswith("refs/heads/")}

    def delete_branch(self, name: str) -> None:
        self.refs.pop(f"refs/heads/{name}", None)

    # -- pull requests ------------------------------------------------------ #

    def pull(self, number: int) -> PullRequest:
        return self.pulls[number]

    def head_sha(self, pr: PullRequest) -> str:
        """An open PR follows its head branch; a closed one keeps its last sha."""
        if pr.state == "open":
            sha = self.refs.get(f"refs/heads/{pr.head_ref}")
            if sha:
                pr.head_sha = sha
        return pr.head_sha

    def pull_files(self, pr: PullRequest) -> list[dict]:
        """Diff entries ``{filename, status, patch, additions, deletions, sha}``."""
        if pr.files is not None:
            return pr.files
        old = self.files_at(pr.base_sha)
        new = self.files_at(self.head_sha(pr))
        out = []
        for path in sorted(set(old) | set(new)):
            a, b = old.get(path), new.get(path)
            if a is not None and b is not None and a.sha == b.sha:
                continue
            text_a = self.blobs[a.sha].decode("utf-8", "replace") if a else None
            text_b = self.blobs[b.sha].decode("utf-8", "replace") if b else None
            patch, adds, dels = make_patch(text_a, text_b)
            status = "added" if a is None else "removed" if b is None else "modified"
            out.append({"filename": path, "status": status, "patch": patch, "additions": adds,
                        "deletions": dels, "sha": (b or a).sha})
        return out

    def label(self, name: str, color: str = "ededed", description: str = "") -> Label:
        lab = self.labels.get(name.lower())
        if lab is None:
            lab = Label(self.state.next_id(), name, color, description)
            self.labels[name.lower()] = lab
        return lab


class State:
    """All in-memory data of a fake server.  Guarded by :attr:`lock`."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.tokens: dict[str, Token] = {}
        self.repos: dict[str, Repo] = {}  # lower(full_name) -> Repo
        self._next_id = 1000
        self._tick = 0

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def now(self) -> datetime:
        """Deterministic clock: 2024-01-01T00:00:00Z plus one second per call."""
        self._tick += 1
        return EPOCH + timedelta(seconds=self._tick)

    def user(self, login: str, *, type: str | None = None, id: int | None = None) -> User:
        u = self.users.get(login)
        if u is None:
            u = User(login, id or self.next_id(), type or ("Bot" if login.endswith("[bot]") else "User"))
            self.users[login] = u
        return u

    def repo(self, full_name: str) -> Repo:
        return self.repos[full_name.lower()]


# --------------------------------------------------------------------------- #
# Requests, faults, errors
# --------------------------------------------------------------------------- #


@dataclass
class RecordedRequest:
    method: str
    path: str  # relative to the API root, e.g. "/repos/acme/app/pulls/1"
    query: dict[str, str]
    body: Any
    headers: dict[str, str]
    op: str | None  # operationId from the OpenAPI subset
    login: str | None = None
    status: int | None = None

    def __repr__(self) -> str:
        q = ("?" + urlencode(self.query)) if self.query else ""
        return f"<{self.method} {self.path}{q} [{self.op}] -> {self.status}>"


@dataclass
class Fault:
    """A queued fault.  ``route``: operationId, ``"METHOD /glob"``, ``"*"`` or a predicate."""

    route: str | Callable[[RecordedRequest], bool]
    times: int = 1
    status: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    action: Callable[["FakeGitHub"], None] | None = None
    when: str = "before"  # for actions: "before" or "after" the request is handled
    hits: int = 0

    def matches(self, req: RecordedRequest) -> bool:
        if self.times <= 0:
            return False
        if callable(self.route):
            return bool(self.route(req))
        if self.route == "*" or self.route == req.op:
            return True
        if " " in self.route:
            return fnmatch.fnmatchcase(f"{req.method} {req.path}", self.route)
        return False


class ApiError(Exception):
    def __init__(self, status: int, message: str, *, errors: list | None = None,
                 headers: dict[str, str] | None = None, doc: str = DOCS_URL):
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = headers or {}
        self.doc = doc

    def body(self) -> dict:
        out: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            out["errors"] = self.errors
        out["documentation_url"] = self.doc
        out["status"] = str(self.status)
        return out


def _not_found() -> ApiError:
    return ApiError(404, "Not Found")


def _validation_failed(*errors: dict) -> ApiError:
    return ApiError(422, "Validation Failed", errors=list(errors))


def _unprocessable(*errors: str) -> ApiError:
    return ApiError(422, "Unprocessable Entity", errors=list(errors))


def _check_body(resource: str, body: str | None, *, simple: bool = False) -> None:
    """GitHub's answer to a body over :data:`MAX_BODY` characters."""
    if body is None or len(body) <= MAX_BODY:
        return
    message = f"body is too long (maximum is {MAX_BODY} characters)"
    if simple:
        raise _unprocessable(f"{resource} {message}")
    raise _validation_failed({"resource": resource, "code": "custom", "field": "body", "message": message})


# path parameters that may contain "/"
_GREEDY_PARAMS = {"path", "ref", "branch"}
_INT_PARAMS = {"pull_number", "issue_number", "comment_id", "review_id", "check_run_id"}


class _Route:
    def __init__(self, op: str, method: str, template: str):
        self.op = op
        self.method = method
        self.template = template
        regex = ""
        for part in re.split(r"(\{[^}]+\})", template):
            if part.startswith("{"):
                name = part[1:-1]
                if name == "path":  # contents/ (repository root) is valid
                    regex += f"(?P<{name}>.*)"
                elif name in _GREEDY_PARAMS:
                    regex += f"(?P<{name}>.+)"
                else:
                    regex += f"(?P<{name}>[^/]+)"
            else:
                regex += re.escape(part)
        self.regex = re.compile(regex + r"/?$")
        literal = re.sub(r"\{[^}]+\}", "", template)
        self.sort_key = (-literal.count("/"), -len(literal))

    def match(self, method: str, path: str) -> dict[str, str] | None:
        if method != self.method:
            return None
        m = self.regex.match(path)
        if not m:
            return None
        params = {k: unquote(v) for k, v in m.groupdict().items()}
        for k in _INT_PARAMS & params.keys():
            if not params[k].isdigit():
                return None
        return params


# --------------------------------------------------------------------------- #
# HTTP plumbing
# --------------------------------------------------------------------------- #


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "GitHub.com"
    sys_version = ""
    timeout = 60

    def setup(self) -> None:
        super().setup()
        # headers and body are separate writes: without TCP_NODELAY, Nagle plus
        # delayed ACKs add ~200 ms to every request on a kept-alive connection
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence
        pass

    def _dispatch(self) -> None:
        self.server.fake._serve(self)  # type: ignore[attr-defined]

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _dispatch


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):  # client went away (timeouts) etc.
        pass


# --------------------------------------------------------------------------- #
# The fake server
# --------------------------------------------------------------------------- #


class FakeGitHub:
    """A fake GitHub REST server (context manager).

    Constructor arguments:
      ``spec_path``     OpenAPI subset (default ``shared/github-api/openapi-subset.json``)
      ``bot_login``     login of the write/read-only tokens (``github-actions[bot]``)
      ``token``         write token of the bot          (:data:`BOT_TOKEN`)
      ``read_token``    read-only token of the bot      (:data:`READ_TOKEN`)
      ``human_login``   a human user with a write token (``octocat``)
      ``human_token``   that user's token               (:data:`HUMAN_TOKEN`)
      ``validate``      validate request/response bodies (default True)

    Attributes: ``url`` (PyGithub ``base_url``), ``web_url``, ``state``,
    ``requests`` (list of :class:`RecordedRequest`), ``errors`` (list of str),
    ``faults`` (pending :class:`Fault` objects).
    """

    def __init__(self, *, spec_path: Path | str | None = None, bot_login: str = BOT_LOGIN,
                 token: str = BOT_TOKEN, read_token: str = READ_TOKEN, human_login: str = HUMAN_LOGIN,
                 human_token: str = HUMAN_TOKEN, validate: bool = True):
        self.spec = load_spec(spec_path)
        self.validate = validate
        self.state = State()
        self.requests: list[RecordedRequest] = []
        self.errors: list[str] = []
        self.faults: list[Fault] = []
        self.bot_login = bot_login
        self.human_login = human_login
        self.token, self.read_token, self.human_token = token, read_token, human_token
        self.state.user(bot_login, type="Bot", id=BOT_ID if bot_login == BOT_LOGIN else None)
        self.state.user(human_login, type="User")
        self.add_token(token, bot_login, write=True)
        self.add_token(read_token, bot_login, write=False)
        self.add_token(human_token, human_login, write=True)
        self.rate_limit_remaining = 5000
        self._routes = sorted(
            (_Route(op, o["method"].upper(), o["path"]) for op, o in self.spec.operations.items()),
            key=lambda r: r.sort_key,
        )
        self._stop = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.web_url = ""
        self.port = 0

    # -- lifecycle --------------------------------------------------------- #

    def start(self) -> "FakeGitHub":
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self  # type: ignore[attr-defined]
        self.port = self._httpd.server_address[1]
        self.web_url = f"http://127.0.0.1:{self.port}"
        self.url = self.web_url + API_PREFIX
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-github", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "FakeGitHub":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- clients ------------------------------------------------------------ #

    def client(self, token: str | None = None, *, retry: Any = "default", timeout: int = 10, **kwargs: Any):
        """A ``github.Github`` for this server.

        ``retry="default"`` gives a fast ``GithubRetry(total=3, backoff_factor=0)``
        (``Retry-After`` is still honoured); pass ``None`` to disable retries or
        any ``int``/``urllib3.Retry``.  PyGithub's own throttling
        (``seconds_between_requests``/``_writes``) is switched off unless given."""
        import github

        if retry == "default":
            retry = github.GithubRetry(total=3, backoff_factor=0, secondary_rate_wait=0.1)
        # PyGithub throttles itself by default (0.25 s between requests, 1 s between writes)
        kwargs.setdefault("seconds_between_requests", None)
        kwargs.setdefault("seconds_between_writes", None)
        return github.Github(auth=github.Auth.Token(token or self.token), base_url=self.url,
                             retry=retry, timeout=timeout, **kwargs)

    def add_token(self, token: str, login: str, *, write: bool = True, type: str | None = None) -> Token:
        with self.state.lock:
            self.state.user(login, type=type)
            t = Token(token, login, write)
            self.state.tokens[token] = t
            return t

    # -- errors -------------------------------------------------------------- #

    def take_errors(self) -> list[str]:
        """Return and clear recorded validation errors (for tests that expect them)."""
        with self.state.lock:
            out, self.errors[:] = list(self.errors), []
            return out

    def requests_for(self, op: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.op == op]

    # -- seeding ------------------------------------------------------------- #

    def add_repo(self, full_name: str, *, default_branch: str = "main", files: dict[str, str] | None = None,
                 private: bool = False, description: str | None = "A fake repository") -> Repo:
        """Create a repository with an initial commit holding ``files``."""
        owner, _, name = full_name.partition("/")
        with self.state.lock:
            self.state.user(owner)
            repo = Repo(self.state, owner, name, default_branch=default_branch, private=private,
                        description=description)
            self.state.repos[full_name.lower()] = repo
            repo.commit_files(default_branch, dict(files or {"README.md": f"# {name}\n"}), "Initial commit")
            return repo

    def repo(self, full_name: str) -> Repo:
        return self.state.repo(full_name)

    def push(self, repo: str, branch: str, changes: dict[str, str | None], message: str = "Update files",
             *, from_ref: str | None = None) -> str:
        """Commit ``changes`` to ``branch`` (created from ``from_ref``/default branch)."""
        with self.state.lock:
            return self.repo(repo).commit_files(branch, changes, message, from_ref=from_ref)

    def add_pull(self, repo: str, *, head: str = "feature", base: str | None = None, title: str = "Update config",
                 body: str | None = "", user: str | None = None, changes: dict[str, str | None] | None = None,
                 files: list[dict] | dict[str, str] | None = None, draft: bool = False,
                 labels: Iterable[str] = (), state: str = "open") -> PullRequest:
        """Seed a pull request.

        ``changes`` (``{path: new content | None}``) are committed on ``head``
        (created from ``base`` if missing) and the PR files/patches are the real
        diff.  ``files`` instead gives explicit diff entries, either
        ``{filename: patch}`` or ``[{"filename", "patch", "status"?}]``; a
        commit is still made on ``head`` so the head sha exists."""
        with self.state.lock:
            r = self.repo(repo)
            base = base or r.default_branch
            base_sha = r.refs[f"refs/heads/{base}"]
            if changes or f"refs/heads/{head}" not in r.refs:
                r.commit_files(head, dict(changes or {}), f"Update {head}", from_ref=base)
            pr = self._new_pull(r, head, base, base_sha, title, body, user or self.human_login, draft)
            if files is not None:
                pr.files = self._explicit_files(files)
            for name in labels:
                pr.labels.append(r.label(name).name)
            if state == "closed":
                self.close_pull(repo, pr.number)
            return pr

    def _explicit_files(self, files: list[dict] | dict[str, str]) -> list[dict]:
        items = [{"filename": k, "patch": v} for k, v in files.items()] if isinstance(files, dict) else files
        out = []
        for f in items:
            adds, dels = _patch_counts(f.get("patch"))
            entry = {"filename": f["filename"], "status": f.get("status", "modified"),
                     "additions": f.get("additions", adds), "deletions": f.get("deletions", dels),
                     "sha": f.get("sha") or _git_sha("blob", (f.get("patch") or "").encode())}
            if f.get("patch") is not None:
                entry["patch"] = f["patch"]
            if f.get("previous_filename"):
                entry["previous_filename"] = f["previous_filename"]
            out.append(entry)
        return out

    def _new_pull(self, r: Repo, head: str, base: str, base_sha: str, title: str, body: str | None, user: str,
                  draft: bool) -> PullRequest:
        self.state.user(user)
        now = self.state.now()
        pr = PullRequest(number=r.next_number, id=self.state.next_id(), title=title, body=body, user=user,
                         head_ref=head, head_sha=r.refs[f"refs/heads/{head}"], base_ref=base, base_sha=base_sha,
                         draft=draft, created_at=now, updated_at=now)
        r.next_number += 1
        r.pulls[pr.number] = pr
        return pr

    def close_pull(self, repo: str, number: int, *, delete_branch: bool = False) -> None:
        with self.state.lock:
            r = self.repo(repo)
            pr = r.pulls[number]
            r.head_sha(pr)
            pr.state = "closed"
            pr.closed_at = pr.updated_at = self.state.now()
            if delete_branch:
                r.delete_branch(pr.head_ref)

    def delete_branch(self, repo: str, branch: str) -> None:
        with self.state.lock:
            self.repo(repo).delete_branch(branch)

    def add_review_comment(self, repo: str, number: int, *, body: str, path: str | None = None,
                           line: int | None = None, side: str = "RIGHT", start_line: int | None = None,
                           user: str | None = None, in_reply_to: int | None = None,
                           subject_type: str = "line") -> ReviewComment:
        """Seed an inline review comment (default author: the human user).

        With ``in_reply_to`` it is a reply in that comment's thread (path/line
        are taken from the thread).  The line is checked against the diff."""
        with self.state.lock:
            r = self.repo(repo)
            pr = r.pulls[number]
            login = user or self.human_login
            self.state.user(login)
            spec = {"body": body, "path": path or "", "side": side, "subject_type": subject_type}
            if line is not None:
                spec["line"] = line
            if start_line is not None:
                spec["start_line"] = start_line
            if in_reply_to is not None:
                return self._reply(r, pr, login, in_reply_to, body)
            review = self._add_review(r, pr, login, "", "COMMENTED", r.head_sha(pr))
            target = self._comment_target(r, pr, spec, single=True)
            return self._add_comment(r, pr, review.id, login, body, target, r.head_sha(pr))

    def reply(self, repo: str, comment_id: int, body: str, *, user: str | None = None) -> ReviewComment:
        """Seed a reply (default author: the human user) to a review comment."""
        with self.state.lock:
            r = self.repo(repo)
            parent = r.review_comments[comment_id]
            return self.add_review_comment(repo, parent.pull_number, body=body, user=user, in_reply_to=comment_id)

    def add_issue_comment(self, repo: str, number: int, body: str, *, user: str | None = None) -> IssueComment:
        with self.state.lock:
            r = self.repo(repo)
            if number not in r.pulls:
                raise KeyError(number)
            return self._add_issue_comment(r, number, user or self.human_login, body)

    # -- fault injection ----------------------------------------------------- #

    def inject(self, route: str | Callable[[RecordedRequest], bool], *, status: int | None = None,
               body: Any = None, headers: dict[str, str] | None = None, times: int = 1, delay: float = 0.0,
               action: Callable[["FakeGitHub"], None] | None = None, when: str = "before") -> Fault:
        """Queue a fault for ``route`` (operationId like ``"pulls/get"``, a
        ``"METHOD /path-glob"`` relative to the API root, ``"*"``, or a
        predicate on :class:`RecordedRequest`).  It fires for the next
        ``times`` matching requests.  ``status`` answers immediately with
        ``body``/``headers``; ``delay`` sleeps first (then answers normally
        unless ``status`` is set); ``action(server)`` mutates state
        ``when="before"`` or ``"after"`` the request is handled."""
        f = Fault(route, times, status, body, dict(headers or {}), delay, action, when)
        with self.state.lock:
            self.faults.append(f)
        return f

    def fail(self, route: str | Callable, status: int = 500, *, times: int = 1) -> Fault:
        """Answer the next ``times`` matching requests with a 5xx (or any) error."""
        messages = {500: "Server Error", 502: "Server Error", 503: "Service Unavailable", 504: "Gateway Timeout"}
        return self.inject(route, status=status, times=times,
                           body={"message": messages.get(status, "Server Error"), "documentation_url": DOCS_URL,
                                 "status": str(status)})

    def rate_limit(self, route: str | Callable, *, status: int = 403, retry_after: int | None = 1, times: int = 1,
                   primary: bool = False) -> Fault:
        """Secondary (default) or primary rate limit: 403/429 with ``Retry-After``
        and ``x-ratelimit-remaining: 0``."""
        headers = {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000", "x-ratelimit-used": "5000",
                   "x-ratelimit-reset": str(int(time.time()) + 1), "x-ratelimit-resource": "core"}
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        if primary:
            message = "API rate limit exceeded for installation ID 1."
            doc = "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"
        else:
            message = SECONDARY_RATE_LIMIT_MESSAGE
            doc = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
        return self.inject(route, status=status, times=times, headers=headers,
                           body={"message": message, "documentation_url": doc, "status": str(status)})

    def timeout(self, route: str | Callable, seconds: float, *, times: int = 1) -> Fault:
        """Delay the next matching request by ``seconds`` (longer than the client's
        timeout); the request is still processed afterwards, like a slow server."""
        return self.inject(route, delay=seconds, times=times)

    def not_found(self, route: str | Callable, *, times: int = 1) -> Fault:
        return self.inject(route, status=404, times=times, body=ApiError(404, "Not Found").body())

    def close_pull_on(self, route: str | Callable, repo: str, number: int, *, when: str = "after",
                      delete_branch: bool = False, times: int = 1) -> Fault:
        """Close PR ``number`` when ``route`` is hit (``after``: the matching
        request still sees it open, the following ones see it closed)."""
        return self.inject(route, times=times, when=when,
                           action=lambda s: s.close_pull(repo, number, delete_branch=delete_branch))

    def clear_faults(self) -> None:
        with self.state.lock:
            self.faults.clear()

    def _take_fault(self, req: RecordedRequest) -> Fault | None:
        with self.state.lock:
            for f in self.faults:
                if f.matches(req):
                    f.times -= 1
                    f.hits += 1
                    if f.times <= 0:
                        self.faults.remove(f)
                    return f
        return None

    # -- request handling ----------------------------------------------------- #

    def _match(self, method: str, path: str) -> tuple[str | None, dict[str, str]]:
        for route in self._routes:
            params = route.match(method, path)
            if params is not None:
                return route.op, params
        return None, {}

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        path = parts.path
        if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
            path = path[len(API_PREFIX):] or "/"
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        method = h.command.upper()
        op, params = self._match(method, path)
        body: Any = None
        bad_json = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body, bad_json = raw.decode("utf-8", "replace"), True
        req = RecordedRequest(method, path, query, body, {k: v for k, v in h.headers.items()}, op)
        with self.state.lock:
            self.requests.append(req)

        status, payload, headers = self._respond(req, params, bad_json)
        req.status = status
        self._send(h, status, payload, headers)

    def _respond(self, req: RecordedRequest, params: dict[str, str], bad_json: bool):
        headers: dict[str, str] = {}
        fault = self._take_fault(req)
        after = None
        if fault is not None:
            if fault.delay:
                self._stop.wait(fault.delay)
            if fault.action is not None and fault.when == "before":
                with self.state.lock:
                    fault.action(self)
            elif fault.action is not None:
                after = fault
            if fault.status is not None:
                return fault.status, fault.body, dict(fault.headers)
            headers.update(fault.headers)
        with self.state.lock:
            try:
                if bad_json:
                    raise ApiError(400, "Problems parsing JSON")
                self._authenticate(req)
                if req.op is None:
                    self._error(f"{req.method} {req.path}: no operation in the OpenAPI subset matches this route")
                    raise _not_found()
                self._validate_request(req)
                status, payload, extra = self._call(req, params)
                headers.update(extra)
            except ApiError as e:
                status, payload = e.status, e.body()
                headers.update(e.headers)
            self._validate_response(req, status, payload)
            if after is not None:  # mutate before the answer leaves: no race with the next call
                after.action(self)  # type: ignore[misc]
            return status, payload, headers

    def _error(self, message: str) -> None:
        self.errors.append(message)

    def _authenticate(self, req: RecordedRequest) -> None:
        auth = req.headers.get("Authorization") or req.headers.get("authorization")
        if not auth:
            if req.method != "GET":
                raise ApiError(401, "Requires authentication")
            return
        scheme, _, value = auth.strip().partition(" ")
        tok = self.state.tokens.get(value.strip()) if scheme.lower() in ("token", "bearer") else None
        if tok is None:
            raise ApiError(401, "Bad credentials")
        req.login = tok.login
        if req.method != "GET" and not tok.write:
            raise ApiError(403, NOT_ACCESSIBLE, doc=DOCS_URL)

    def _validate_request(self, req: RecordedRequest) -> None:
        op = self.spec.operations[req.op]
        pointer = op.get("requestBody")
        if not pointer or not self.validate:
            return
        body = req.body
        if req.op == "issues/add-labels" and isinstance(body, list):
            body = {"labels": body}  # known gap: GitHub (and PyGithub) accept a bare array
        if body is None:
            body = {}
        problems = self.spec.check(pointer, body)
        if problems:
            self._error(f"{req.method} {req.path} [{req.op}] request body invalid: " + "; ".join(problems))
            raise ApiError(422, "Invalid request.\n\n" + "\n".join(problems))

    def _validate_response(self, req: RecordedRequest, status: int, payload: Any) -> None:
        if not self.validate or req.op is None:
            return
        responses = self.spec.operations[req.op]["responses"]
        key = str(status)
        if key in responses:
            pointer = responses[key]
            if pointer is None:
                if payload not in (None, b"", ""):
                    self._error(f"{req.method} {req.path} [{req.op}] {status} must have no body")
                return
        elif status >= 400:
            pointer = "#/components/schemas/basic-error"
        else:
            self._error(f"{req.method} {req.path} [{req.op}] status {status} is not documented")
            return
        problems = self.spec.check(pointer, payload)
        if problems:
            self._error(f"{req.method} {req.path} [{req.op}] {status} response invalid: " + "; ".join(problems))

    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str]) -> None:
        # bytes are sent as they are (an HTML error page from a proxy, a body that is not JSON)
        data = payload if isinstance(payload, bytes) else \
            b"" if payload is None or status == 204 else json.dumps(payload).encode("utf-8")
        with self.state.lock:
            self.rate_limit_remaining = max(0, self.rate_limit_remaining - 1)
            remaining = self.rate_limit_remaining
        base = {
            "Content-Type": "application/json; charset=utf-8",
            "X-GitHub-Api-Version-Selected": "2022-11-28",
            "X-GitHub-Media-Type": "github.v3; format=json",
            "X-GitHub-Request-Id": f"FAKE:{len(self.requests):06d}",
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": str(remaining),
            "x-ratelimit-reset": str(int(time.time()) + 3600),
            "x-ratelimit-used": str(5000 - remaining),
            "x-ratelimit-resource": "core",
        }
        lower = {k.lower() for k in headers}
        base = {k: v for k, v in base.items() if k.lower() not in lower}
        try:
            h.send_response(status)
            for k, v in {**base, **headers}.items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if data:
                h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, OSError):
            h.close_connection = True  # the client timed out and went away

    def _call(self, req: RecordedRequest, params: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        handler = getattr(self, "_op_" + re.sub(r"[^a-z0-9]", "_", req.op))
        repo = None
        if "owner" in params:
            repo = self.state.repos.get(f"{params['owner']}/{params['repo']}".lower())
            if repo is None:
                raise _not_found()
            if repo.private and req.login is None:
                raise _not_found()
        result = handler(req, repo, params)
        if len(result) == 2:
            return result[0], result[1], {}
        return result

    def _paginate(self, req: RecordedRequest, items: list) -> tuple[list, dict[str, str]]:
        try:
            per_page = min(max(int(req.query.get("per_page", 30)), 1), 100)
            page = max(int(req.query.get("page", 1)), 1)
        except ValueError:
            raise ApiError(400, "Bad Request")
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(p: int, rel: str) -> str:
            q = {**req.query, "per_page": str(per_page), "page": str(p)}
            return f'<{self.url}{req.path}?{urlencode(q)}>; rel="{rel}"'

        links = []
        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        return chunk, ({"Link": ", ".join(links)} if links else {})

    def _write_login(self, req: RecordedRequest) -> str:
        return req.login or self.bot_login

    # -- JSON renderers ------------------------------------------------------- #

    def _api(self, repo: Repo) -> str:
        return f"{self.url}/repos/{repo.full_name}"

    def _web(self, repo: Repo) -> str:
        return f"{self.web_url}/{repo.full_name}"

    def user_json(self, login: str | None) -> dict | None:
        if login is None:
            return None
        u = self.state.user(login)
        a = f"{self.url}/users/{quote(login)}"
        return {
            "login": u.login, "id": u.id, "node_id": f"U_kgDO{u.id:08d}",
            "avatar_url": f"{self.web_url}/avatars/u/{u.id}?v=4", "gravatar_id": "",
            "url": a, "html_url": f"{self.web_url}/{quote(login)}",
            "followers_url": a + "/followers", "following_url": a + "/following{/other_user}",
            "gists_url": a + "/gists{/gist_id}", "starred_url": a + "/starred{/owner}{/repo}",
            "subscriptions_url": a + "/subscriptions", "organizations_url": a + "/orgs",
            "repos_url": a + "/repos", "events_url": a + "/events{/privacy}",
            "received_events_url": a + "/received_events", "type": u.type, "user_view_type": "public",
            "site_admin": False,
        }

    def _association(self, repo: Repo, login: str) -> str:
        if login == repo.owner:
            return "OWNER"
        if login.endswith("[bot]"):
            return "NONE"
        return "COLLABORATOR"

    def repo_json(self, repo: Repo, *, full: bool = False, login: str | None = None) -> dict:
        a, w = self._api(repo), self._web(repo)
        open_issues = sum(1 for p in repo.pulls.values() if p.state == "open")
        ts = _ts(repo.created_at)
        d = {
            "id": repo.id, "node_id": f"R_kgDO{repo.id:08d}", "name": repo.name, "full_name": repo.full_name,
            "private": repo.private, "owner": self.user_json(repo.owner), "html_url": w,
            "description": repo.description, "fork": False, "url": a,
            "archive_url": a + "/{archive_format}{/ref}", "assignees_url": a + "/assignees{/user}",
            "blobs_url": a + "/git/blobs{/sha}", "branches_url": a + "/branches{/branch}",
            "collaborators_url": a + "/collaborators{/collaborator}", "comments_url": a + "/comments{/number}",
            "commits_url": a + "/commits{/sha}", "compare_url": a + "/compare/{base}...{head}",
            "contents_url": a + "/contents/{+path}", "contributors_url": a + "/contributors",
            "deployments_url": a + "/deployments", "downloads_url": a + "/downloads", "events_url": a + "/events",
            "forks_url": a + "/forks", "git_commits_url": a + "/git/commits{/sha}",
            "git_refs_url": a + "/git/refs{/sha}", "git_tags_url": a + "/git/tags{/sha}",
            "git_url": f"git://127.0.0.1:{self.port}/{repo.full_name}.git",
            "issue_comment_url": a + "/issues/comments{/number}", "issue_events_url": a + "/issues/events{/number}",
            "issues_url": a + "/issues{/number}", "keys_url": a + "/keys{/key_id}", "labels_url": a + "/labels{/name}",
            "languages_url": a + "/languages", "merges_url": a + "/merges",
            "milestones_url": a + "/milestones{/number}",
            "notifications_url": a + "/notifications{?since,all,participating}", "pulls_url": a + "/pulls{/number}",
            "releases_url": a + "/releases{/id}", "ssh_url": f"git@127.0.0.1:{repo.full_name}.git",
            "stargazers_url": a + "/stargazers", "statuses_url": a + "/statuses/{sha}",
            "subscribers_url": a + "/subscribers", "subscription_url": a + "/subscription", "tags_url": a + "/tags",
            "teams_url": a + "/teams", "trees_url": a + "/git/trees{/sha}", "clone_url": w + ".git",
            "mirror_url": None, "hooks_url": a + "/hooks", "svn_url": w, "homepage": None, "language": None,
            "forks_count": 0, "forks": 0, "stargazers_count": 0, "watchers_count": 0, "watchers": 0, "size": 1,
            "default_branch": repo.default_branch, "open_issues_count": open_issues, "open_issues": open_issues,
            "is_template": False, "topics": [], "has_issues": True, "has_projects": True, "has_wiki": True,
            "has_pages": False, "has_downloads": True, "has_discussions": False, "archived": False,
            "disabled": False, "visibility": "private" if repo.private else "public", "pushed_at": ts,
            "created_at": ts, "updated_at": ts, "license": None, "allow_forking": True,
            "web_commit_signoff_required": False,
        }
        if full:
            tok_write = any(t.write for t in self.state.tokens.values() if t.login == login)
            d.update(network_count=0, subscribers_count=0, permissions={
                "admin": False, "maintain": False, "push": tok_write, "triage": tok_write, "pull": True})
        return d

    def label_json(self, repo: Repo, lab: Label) -> dict:
        return {"id": lab.id, "node_id": f"LA_kwDO{lab.id:08d}",
                "url": f"{self._api(repo)}/labels/{quote(lab.name)}", "name": lab.name,
                "description": lab.description or "", "color": lab.color, "default": lab.default}

    def pull_json(self, repo: Repo, pr: PullRequest, *, simple: bool = False) -> dict:
        a = self._api(repo)
        pa, ia = f"{a}/pulls/{pr.number}", f"{a}/issues/{pr.number}"
        w = f"{self._web(repo)}/pull/{pr.number}"
        head_sha = repo.head_sha(pr)
        base_sha = repo.refs.get(f"refs/heads/{pr.base_ref}", pr.base_sha)
        owner_user = self.user_json(repo.owner)
        repo_obj = self.repo_json(repo)
        d = {
            "url": pa, "id": pr.id, "node_id": f"PR_kwDO{pr.id:08d}", "html_url": w, "diff_url": w + ".diff",
            "patch_url": w + ".patch", "issue_url": ia, "commits_url": pa + "/commits",
            "review_comments_url": pa + "/comments", "review_comment_url": a + "/pulls/comments{/number}",
            "comments_url": ia + "/comments", "statuses_url": f"{a}/statuses/{head_sha}", "number": pr.number,
            "state": pr.state, "locked": False, "title": pr.title, "user": self.user_json(pr.user),
            "body": pr.body,
            "labels": [self.label_json(repo, repo.labels[n.lower()]) for n in pr.labels],
            "milestone": None, "active_lock_reason": None, "created_at": _ts(pr.created_at),
            "updated_at": _ts(pr.updated_at), "closed_at": _ts(pr.closed_at), "merged_at": None,
            "merge_commit_sha": None, "assignee": None, "assignees": [], "requested_reviewers": [],
            "requested_teams": [],
            "head": {"label": f"{repo.owner}:{pr.head_ref}", "ref": pr.head_ref, "sha": head_sha,
                     "user": owner_user, "repo": repo_obj},
            "base": {"label": f"{repo.owner}:{pr.base_ref}", "ref": pr.base_ref, "sha": base_sha,
                     "user": owner_user, "repo": repo_obj},
            "_links": {"self": {"href": pa}, "html": {"href": w}, "issue": {"href": ia},
                       "comments": {"href": ia + "/comments"}, "review_comments": {"href": pa + "/comments"},
                       "review_comment": {"href": a + "/pulls/comments{/number}"},
                       "commits": {"href": pa + "/commits"}, "statuses": {"href": f"{a}/statuses/{head_sha}"}},
            "author_association": self._association(repo, pr.user), "auto_merge": None, "draft": pr.draft,
        }
        if not simple:
            files = repo.pull_files(pr)
            open_ = pr.state == "open"
            d.update(
                merged=False, mergeable=True if open_ else None, rebaseable=True if open_ else None,
                mergeable_state="clean" if open_ else "unknown", merged_by=None,
                comments=sum(1 for c in repo.issue_comments.values() if c.issue_number == pr.number),
                review_comments=sum(1 for c in repo.review_comments.values() if c.pull_number == pr.number),
                maintainer_can_modify=False,
                commits=max(1, len(repo.ancestors(head_sha) - repo.ancestors(pr.base_sha))),
                additions=sum(f["additions"] for f in files), deletions=sum(f["deletions"] for f in files),
                changed_files=len(files),
            )
        return d

    def diff_entry_json(self, repo: Repo, ref: str, f: dict) -> dict:
        w = self._web(repo)
        d = {"sha": f.get("sha"), "filename": f["filename"], "status": f["status"],
             "additions": f["additions"], "deletions": f["deletions"],
             "changes": f["additions"] + f["deletions"],
             "blob_url": f"{w}/blob/{ref}/{quote(f['filename'])}", "raw_url": f"{w}/raw/{ref}/{quote(f['filename'])}",
             "contents_url": f"{self._api(repo)}/contents/{quote(f['filename'])}?ref={ref}"}
        if f.get("patch") is not None:
            d["patch"] = f["patch"]
        if f.get("previous_filename"):
            d["previous_filename"] = f["previous_filename"]
        return d

    def review_json(self, repo: Repo, rv: Review) -> dict:
        pa = f"{self._api(repo)}/pulls/{rv.pull_number}"
        w = f"{self._web(repo)}/pull/{rv.pull_number}#pullrequestreview-{rv.id}"
        d = {"id": rv.id, "node_id": f"PRR_kwDO{rv.id:08d}", "user": self.user_json(rv.user), "body": rv.body,
             "state": rv.state, "html_url": w, "pull_request_url": pa,
             "_links": {"html": {"href": w}, "pull_request": {"href": pa}},
             "commit_id": rv.commit_id, "author_association": self._association(repo, rv.user)}
        if rv.submitted_at is not None:
            d["submitted_at"] = _ts(rv.submitted_at)
        return d

    def _comment_now(self, repo: Repo, c: ReviewComment) -> dict:
        """Current position/line/commit of a comment against the PR's current diff."""
        pr = repo.pulls[c.pull_number]
        head = repo.head_sha(pr)
        if c.subject_type == "file" or head == c.original_commit_id:
            return {"position": c.position, "line": c.line, "start_line": c.start_line, "commit_id": head}
        files = {f["filename"]: f for f in repo.pull_files(pr)}
        f = files.get(c.path)
        attr = "right" if c.side == "RIGHT" else "left"
        for dl in parse_patch(f.get("patch") if f else None):
            if getattr(dl, attr) == c.line:
                return {"position": dl.position, "line": c.line, "start_line": c.start_line, "commit_id": head}
        return {"position": None, "line": None, "start_line": None, "commit_id": c.original_commit_id}

    def review_comment_json(self, repo: Repo, c: ReviewComment, *, legacy: bool = False) -> dict:
        """``pull-request-review-comment`` (or ``review-comment`` when ``legacy``)."""
        a = self._api(repo)
        url = f"{a}/pulls/comments/{c.id}"
        pa = f"{a}/pulls/{c.pull_number}"
        w = f"{self._web(repo)}/pull/{c.pull_number}#discussion_r{c.id}"
        now = self._comment_now(repo, c)
        d: dict[str, Any] = {
            "url": url, "pull_request_review_id": c.review_id, "id": c.id, "node_id": f"PRRC_kwDO{c.id:08d}",
            "diff_hunk": c.diff_hunk, "path": c.path, "commit_id": now["commit_id"],
            "original_commit_id": c.original_commit_id, "user": self.user_json(c.user), "body": c.body,
            "created_at": _ts(c.created_at), "updated_at": _ts(c.updated_at), "html_url": w,
            "pull_request_url": pa, "author_association": self._association(repo, c.user),
            "_links": {"self": {"href": url}, "html": {"href": w}, "pull_request": {"href": pa}},
            "reactions": {"url": url + "/reactions", "total_count": 0, "+1": 0, "-1": 0, "laugh": 0,
                          "confused": 0, "heart": 0, "hooray": 0, "eyes": 0, "rocket": 0},
            "start_line": now["start_line"], "original_start_line": c.start_line,
            "start_side": c.start_side if c.start_line is not None else None,
            "subject_type": c.subject_type,
            "original_position": c.position or 1,
        }
        if c.side is not None:
            d["side"] = c.side
        if c.line is not None:
            d["original_line"] = c.line
        if now["line"] is not None:
            d["line"] = now["line"]
        if legacy or now["position"] is not None:
            d["position"] = now["position"]
        if c.in_reply_to_id is not None:
            d["in_reply_to_id"] = c.in_reply_to_id
        return d

    def issue_comment_json(self, repo: Repo, c: IssueComment) -> dict:
        a = self._api(repo)
        url = f"{a}/issues/comments/{c.id}"
        return {
            "id": c.id, "node_id": f"IC_kwDO{c.id:08d}", "url": url,
            "html_url": f"{self._web(repo)}/pull/{c.issue_number}#issuecomment-{c.id}", "body": c.body,
            "user": self.user_json(c.user), "created_at": _ts(c.created_at), "updated_at": _ts(c.updated_at),
            "issue_url": f"{a}/issues/{c.issue_number}", "author_association": self._association(repo, c.user),
            "reactions": {"url": url + "/reactions", "total_count": 0, "+1": 0, "-1": 0, "laugh": 0,
                          "confused": 0, "heart": 0, "hooray": 0, "eyes": 0, "rocket": 0},
        }

    def _git_user_json(self, who: dict) -> dict:
        return {"name": who["name"], "email": who["email"], "date": who["date"]}

    def _verification(self) -> dict:
        return {"verified": False, "reason": "unsigned", "signature": None, "payload": None, "verified_at": None}

    def git_commit_json(self, repo: Repo, c: GitCommit) -> dict:
        a, w = self._api(repo), self._web(repo)
        return {
            "sha": c.sha, "node_id": f"C_kwDO{c.sha[:12]}", "url": f"{a}/git/commits/{c.sha}",
            "html_url": f"{w}/commit/{c.sha}", "author": self._git_user_json(c.author),
            "committer": self._git_user_json(c.committer), "message": c.message,
            "tree": {"sha": c.tree, "url": f"{a}/git/trees/{c.tree}"},
            "parents": [{"sha": p, "url": f"{a}/git/commits/{p}", "html_url": f"{w}/commit/{p}"} for p in c.parents],
            "verification": self._verification(),
        }

    def commit_json(self, repo: Repo, c: GitCommit, *, with_files: bool = True) -> dict:
        a, w = self._api(repo), self._web(repo)
        d = {
            "url": f"{a}/commits/{c.sha}", "sha": c.sha, "node_id": f"C_kwDO{c.sha[:12]}",
            "html_url": f"{w}/commit/{c.sha}", "comments_url": f"{a}/commits/{c.sha}/comments",
            "commit": {"url": f"{a}/git/commits/{c.sha}", "author": self._git_user_json(c.author),
                       "committer": self._git_user_json(c.committer), "message": c.message,
                       "tree": {"sha": c.tree, "url": f"{a}/git/trees/{c.tree}"}, "comment_count": 0,
                       "verification": self._verification()},
            "author": self.user_json(c.author["name"]) if c.author["name"] in self.state.users else None,
            "committer": self.user_json(c.committer["name"]) if c.committer["name"] in self.state.users else None,
            "parents": [{"sha": p, "url": f"{a}/commits/{p}", "html_url": f"{w}/commit/{p}"} for p in c.parents],
        }
        if with_files:
            fake_pr = PullRequest(0, 0, "", None, "", "", c.sha, "", c.parents[0] if c.parents else "", state="closed")
            files = repo.pull_files(fake_pr)
            adds, dels = sum(f["additions"] for f in files), sum(f["deletions"] for f in files)
            d["stats"] = {"additions": adds, "deletions": dels, "total": adds + dels}
            d["files"] = [self.diff_entry_json(repo, c.sha, f) for f in files]
        return d

    def git_ref_json(self, repo: Repo, ref: str) -> dict:
        a = self._api(repo)
        sha = repo.refs[ref]
        return {"ref": ref, "node_id": f"REF_kwDO{hashlib.sha1(ref.encode()).hexdigest()[:12]}",
                "url": f"{a}/git/{quote(ref)}",
                "object": {"type": "commit", "sha": sha, "url": f"{a}/git/commits/{sha}"}}

    def git_tree_json(self, repo: Repo, sha: str, *, recursive: bool = False) -> dict:
        a = self._api(repo)
        entries: list[dict] = []

        def walk(tree_sha: str, prefix: str) -> None:
            for e in repo.trees[tree_sha]:
                item = {"path": prefix + e.name, "mode": e.mode, "type": e.type, "sha": e.sha}
                if e.type == "blob":
                    item["size"] = len(repo.blobs[e.sha])
                    item["url"] = f"{a}/git/blobs/{e.sha}"
                elif e.type == "tree":
                    item["url"] = f"{a}/git/trees/{e.sha}"
                entries.append(item)
                if recursive and e.type == "tree":
                    walk(e.sha, prefix + e.name + "/")

        walk(sha, "")
        return {"sha": sha, "url": f"{a}/git/trees/{sha}", "tree": entries, "truncated": False}

    def _content_entry(self, repo: Repo, path: str, ref: str, e_type: str, sha: str, size: int) -> dict:
        a, w = self._api(repo), self._web(repo)
        self_url = f"{a}/contents/{quote(path)}?ref={quote(ref, safe='')}"
        if e_type == "dir":
            git_url, html_url, download = f"{a}/git/trees/{sha}", f"{w}/tree/{ref}/{quote(path)}", None
        else:
            git_url, html_url = f"{a}/git/blobs/{sha}", f"{w}/blob/{ref}/{quote(path)}"
            download = f"{self.web_url}/raw/{repo.full_name}/{ref}/{quote(path)}"
        return {"type": e_type, "size": size, "name": path.rsplit("/", 1)[-1], "path": path, "sha": sha,
                "url": self_url, "git_url": git_url, "html_url": html_url, "download_url": download,
                "_links": {"self": self_url, "git": git_url, "html": html_url}}

    def check_run_json(self, repo: Repo, cr: CheckRun) -> dict:
        a = self._api(repo)
        url = f"{a}/check-runs/{cr.id}"
        prs = [p for p in repo.pulls.values() if p.state == "open" and repo.head_sha(p) == cr.head_sha]
        mini_repo = {"id": repo.id, "url": a, "name": repo.name}
        app_owner = self.user_json(repo.owner)
        return {
            "id": cr.id, "head_sha": cr.head_sha, "node_id": f"CR_kwDO{cr.id:08d}",
            "external_id": cr.external_id or "", "url": url,
            "html_url": f"{self._web(repo)}/runs/{cr.id}", "details_url": cr.details_url or
            f"{self._web(repo)}/runs/{cr.id}", "status": cr.status, "conclusion": cr.conclusion,
            "started_at": _ts(cr.started_at), "completed_at": _ts(cr.completed_at),
            "output": {"title": cr.title, "summary": cr.summary, "text": cr.text,
                       "annotations_count": len(cr.annotations), "annotations_url": url + "/annotations"},
            "name": cr.name, "check_suite": {"id": cr.check_suite_id},
            "app": {"id": 15368, "slug": "github-actions", "node_id": "MDM6QXBwMTUzNjg", "owner": app_owner,
                    "name": "GitHub Actions", "description": "Automate your workflow from idea to production",
                    "external_url": f"{self.web_url}/features/actions",
                    "html_url": f"{self.web_url}/apps/github-actions", "created_at": _ts(EPOCH),
                    "updated_at": _ts(EPOCH),
                    "permissions": {"checks": "write", "contents": "write", "issues": "write",
                                    "metadata": "read", "pull_requests": "write"},
                    "events": ["check_run", "pull_request", "push"]},
            "pull_requests": [
                {"id": p.id, "number": p.number, "url": f"{a}/pulls/{p.number}",
                 "head": {"ref": p.head_ref, "sha": repo.head_sha(p), "repo": mini_repo},
                 "base": {"ref": p.base_ref, "sha": repo.refs.get(f"refs/heads/{p.base_ref}", p.base_sha),
                          "repo": mini_repo}}
                for p in prs
            ],
        }

    # -- internal mutations (shared by seeding and the API) ------------------ #

    def _add_review(self, r: Repo, pr: PullRequest, login: str, body: str, state: str, commit_id: str) -> Review:
        rv = Review(self.state.next_id(), pr.number, login, body, state, commit_id,
                    None if state == "PENDING" else self.state.now())
        r.reviews[rv.id] = rv
        return rv

    def _comment_target(self, r: Repo, pr: PullRequest, spec: dict, *, single: bool) -> dict:
        """Check an inline comment against the PR diff like GitHub; returns the
        resolved ``path/line/side/start_line/start_side/position/diff_hunk``."""

        def fail(field_: str, message: str) -> ApiError:
            if single:
                return _validation_failed({"resource": "PullRequestReviewComment", "code": "custom",
                                           "field": field_, "message": message})
            return _unprocessable(message)

        path = spec.get("path", "")
        files = {f["filename"]: f for f in r.pull_files(pr)}
        if path not in files:
            raise fail("pull_request_review_thread.path", "Path could not be resolved")
        patch = files[path].get("patch")
        lines = parse_patch(patch)
        if spec.get("subject_type") == "file":
            return {"path": path, "line": None, "side": None, "start_line": None, "start_side": None,
                    "position": None, "diff_hunk": diff_hunk_for(patch, 1) if patch else "",
                    "subject_type": "file"}
        bad_line = ("Pull request review thread line must be part of the diff and "
                    "Pull request review thread diff hunk can't be blank")
        if "line" not in spec and "position" in spec:
            hits = [d for d in lines if d.position == spec["position"] and d.kind != "@"]
            if not hits:
                raise fail("pull_request_review_thread.position", "Pull request review thread position is invalid")
            dl = hits[0]
            side = "LEFT" if dl.kind == "-" else "RIGHT"
            line = dl.left if side == "LEFT" else dl.right
            return {"path": path, "line": line, "side": side, "start_line": None, "start_side": None,
                    "position": dl.position, "diff_hunk": diff_hunk_for(patch, dl.position), "subject_type": "line"}
        line = spec.get("line")
        side = spec.get("side") or "RIGHT"
        if side not in ("LEFT", "RIGHT"):
            raise fail("pull_request_review_thread.side", f"Pull request review thread side {side} is invalid")
        index = {("RIGHT", d.right): d for d in lines if d.right is not None}
        index.update({("LEFT", d.left): d for d in lines if d.left is not None})
        dl = index.get((side, line)) if isinstance(line, int) else None
        if dl is None:
            raise fail("pull_request_review_thread.line", bad_line)
        start_line, start_side = spec.get("start_line"), None
        if start_line is not None:
            start_side = spec.get("start_side") or side
            sdl = index.get((start_side, start_line))
            if sdl is None:
                raise fail("pull_request_review_thread.start_line",
                           "Pull request review thread start line must be part of the diff")
            if sdl.hunk != dl.hunk:
                raise fail("pull_request_review_thread.start_line",
                           "Pull request review thread start line must be in the same hunk as the line")
            if sdl.position >= dl.position:
                raise fail("pull_request_review_thread.start_line",
                           "Pull request review thread start line must precede the end line")
        return {"path": path, "line": line, "side": side, "start_line": start_line, "start_side": start_side,
                "position": dl.position, "diff_hunk": diff_hunk_for(patch, dl.position), "subject_type": "line"}

    def _add_comment(self, r: Repo, pr: PullRequest, review_id: int | None, login: str, body: str, target: dict,
                     commit_id: str, in_reply_to: int | None = None) -> ReviewComment:
        now = self.state.now()
        c = ReviewComment(
            id=self.state.next_id(), pull_number=pr.number, review_id=review_id, user=login, body=body,
            path=target["path"], commit_id=commit_id, original_commit_id=commit_id, line=target["line"],
            side=target["side"], start_line=target["start_line"], start_side=target["start_side"],
            position=target["position"], diff_hunk=target["diff_hunk"], subject_type=target["subject_type"],
            in_reply_to_id=in_reply_to, created_at=now, updated_at=now)
        r.review_comments[c.id] = c
        pr.updated_at = now
        return c

    def _reply(self, r: Repo, pr: PullRequest, login: str, parent_id: int, body: str) -> ReviewComment:
        parent = r.review_comments.get(parent_id)
        if parent is None or parent.pull_number != pr.number:
            raise _validation_failed({"resource": "PullRequestReviewComment", "code": "custom",
                                      "field": "in_reply_to", "message": "in_reply_to is not a valid comment"})
        root = parent
        while root.in_reply_to_id is not None and root.in_reply_to_id in r.review_comments:
            root = r.review_comments[root.in_reply_to_id]
        review = self._add_review(r, pr, login, "", "COMMENTED", parent.original_commit_id)
        target = {"path": root.path, "line": root.line, "side": root.side, "start_line": root.start_line,
                  "start_side": root.start_side, "position": root.position, "diff_hunk": root.diff_hunk,
                  "subject_type": root.subject_type}
        return self._add_comment(r, pr, review.id, login, body, target, root.original_commit_id, root.id)

    def _add_issue_comment(self, r: Repo, number: int, login: str, body: str) -> IssueComment:
        now = self.state.now()
        c = IssueComment(self.state.next_id(), number, login, body, now, now)
        r.issue_comments[c.id] = c
        return c

    # -- operations ----------------------------------------------------------- #
    # Each ``_op_<operationId>`` returns (status, body[, headers]).

    def _pull_or_404(self, r: Repo, p: dict) -> PullRequest:
        pr = r.pulls.get(int(p["pull_number"]))
        if pr is None:
            raise _not_found()
        return pr

    # rate limit
    def _op_rate_limit_get(self, req, r, p):
        rl = {"limit": 5000, "remaining": self.rate_limit_remaining, "reset": int(time.time()) + 3600,
              "used": 5000 - self.rate_limit_remaining}
        search = {"limit": 30, "remaining": 30, "reset": int(time.time()) + 60, "used": 0}
        return 200, {"resources": {"core": rl, "search": search, "graphql": dict(rl)}, "rate": rl}

    # repos
    def _op_repos_get(self, req, r, p):
        return 200, self.repo_json(r, full=True, login=req.login)

    def _op_repos_get_branch(self, req, r, p):
        sha = r.refs.get(f"refs/heads/{p['branch']}")
        if sha is None:
            raise ApiError(404, "Branch not found")
        a = self._api(r)
        return 200, {
            "name": p["branch"], "commit": self.commit_json(r, r.commits[sha], with_files=False),
            "_links": {"self": f"{a}/branches/{quote(p['branch'])}",
                       "html": f"{self._web(r)}/tree/{quote(p['branch'])}"},
            "protected": False, "protection": {"enabled": False},
            "protection_url": f"{a}/branches/{quote(p['branch'])}/protection",
        }

    def _op_repos_get_commit(self, req, r, p):
        sha = r.resolve(p["ref"])
        if sha is None:
            raise ApiError(422, f"No commit found for SHA: {p['ref']}", errors=[])
        return 200, self.commit_json(r, r.commits[sha])

    def _op_repos_get_content(self, req, r, p):
        ref = req.query.get("ref") or r.default_branch
        sha = r.resolve(ref)
        if sha is None:
            raise ApiError(404, f"No commit found for the ref {ref}")
        path = p["path"].strip("/")
        flat = r.files_at(sha)
        e = flat.get(path)
        if e is not None and e.type == "blob":
            data = r.blobs[e.sha]
            d = self._content_entry(r, path, ref, "file", e.sha, len(data))
            d["encoding"] = "base64"
            enc = base64.b64encode(data).decode("ascii")
            d["content"] = "\n".join(enc[i : i + 60] for i in range(0, len(enc), 60)) + "\n"
            return 200, d
        # a directory?
        tree = r.commits[sha].tree
        for part in [x for x in path.split("/") if x]:
            sub = [t for t in r.trees.get(tree, []) if t.name == part and t.type == "tree"]
            if not sub:
                raise _not_found()
            tree = sub[0].sha
        items = []
        for t in r.trees[tree]:
            child = f"{path}/{t.name}" if path else t.name
            kind = "dir" if t.type == "tree" else "submodule" if t.type == "commit" else "file"
            size = len(r.blobs[t.sha]) if t.type == "blob" else 0
            items.append(self._content_entry(r, child, ref, kind, t.sha, size))
        return 200, items

    def _op_repos_create_or_update_file_contents(self, req, r, p):
        b = req.body
        path = p["path"].strip("/")
        branch = b.get("branch") or r.default_branch
        parent = r.refs.get(f"refs/heads/{branch}")
        if parent is None:
            raise ApiError(404, f"Branch {branch} not found")
        try:
            content = base64.b64decode(b["content"], validate=True)
        except ValueError:
            raise _validation_failed({"resource": "Commit", "field": "content", "code": "invalid"})
        existing = r.files_at(parent).get(path)
        if existing is not None and "sha" not in b:
            raise ApiError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.')
        if existing is not None and b["sha"] != existing.sha:
            raise ApiError(409, f"{path} does not match {b['sha']}")
        who = b.get("author") or b.get("committer")
        author = None
        if who:
            author = {"name": who["name"], "email": who["email"], **({"date": who["date"]} if "date" in who else {})}
        elif req.login:
            u = self.state.user(req.login)
            author = {"name": u.login, "email": u.email}
        sha = r.commit_files(branch, {path: content}, b["message"], author=author)
        blob = r.files_at(sha)[path]
        entry = self._content_entry(r, path, branch, "file", blob.sha, len(content))
        return (200 if existing is not None else 201), {"content": entry,
                                                          "commit": self.git_commit_json(r, r.commits[sha])}

    # git
    def _op_git_get_ref(self, req, r, p):
        ref = "refs/" + p["ref"].strip("/")
        if ref not in r.refs:
            raise _not_found()
        return 200, self.git_ref_json(r, ref)

    def _op_git_create_ref(self, req, r, p):
        ref, sha = req.body["ref"], req.body["sha"]
        if not ref.startswith("refs/") or ref.count("/") < 2:
            raise ApiError(422, "Reference name must start with 'refs/' and have at least two slashes.")
        if ref in r.refs:
            raise ApiError(422, "Reference already exists")
        if sha not in r.commits:
            raise ApiError(422, "Object does not exist")
        r.refs[ref] = sha
        return 201, self.git_ref_json(r, ref)

    def _op_git_update_ref(self, req, r, p):
        ref = "refs/" + p["ref"].strip("/")
        sha = req.body["sha"]
        if ref not in r.refs:
            raise ApiError(422, "Reference does not exist")
        if sha not in r.commits:
            raise ApiError(422, "Object does not exist")
        if not req.body.get("force") and r.refs[ref] not in r.ancestors(sha):
            raise ApiError(422, "Update is not a fast forward")
        r.refs[ref] = sha
        return 200, self.git_ref_json(r, ref)

    def _op_git_create_blob(self, req, r, p):
        enc = req.body.get("encoding", "utf-8")
        if enc not in ("utf-8", "utf8", "base64"):
            raise _validation_failed({"resource": "Blob", "field": "encoding", "code": "invalid"})
        data = base64.b64decode(req.body["content"]) if enc == "base64" else req.body["content"].encode("utf-8")
        sha = r.put_blob(data)
        return 201, {"url": f"{self._api(r)}/git/blobs/{sha}", "sha": sha}

    def _op_git_create_tree(self, req, r, p):
        base = req.body.get("base_tree")
        if base is not None and base not in r.trees:
            base = r.commits[base].tree if base in r.commits else None
            if base is None:
                raise ApiError(422, "base_tree is not a valid tree oid")
        flat = r.flatten(base) if base else {}
        for i, e in enumerate(req.body["tree"]):
            path = e.get("path")
            if not path:
                raise _validation_failed({"resource": "Tree", "field": f"tree.{i}.path", "code": "missing_field"})
            if "content" in e:
                flat[path] = TreeEntry(path, e.get("mode", "100644"), "blob", r.put_blob(e["content"]))
            elif e.get("sha") is None:
                for k in [k for k in flat if k == path or k.startswith(path + "/")]:
                    del flat[k]
            elif e.get("type") == "tree":
                if e["sha"] not in r.trees:
                    raise ApiError(422, f"tree.sha {e['sha']} is not a valid tree")
                for k in [k for k in flat if k == path or k.startswith(path + "/")]:
                    del flat[k]
                for sub, leaf in r.flatten(e["sha"], path + "/").items():
                    flat[sub] = leaf
            else:
                if e.get("type", "blob") == "blob" and e["sha"] not in r.blobs:
                    raise ApiError(422, f"tree.sha {e['sha']} is not a valid blob")
                flat[path] = TreeEntry(path, e.get("mode", "100644"), e.get("type", "blob"), e["sha"])
        sha = r.build_tree(flat)
        return 201, self.git_tree_json(r, sha)

    def _op_git_get_tree(self, req, r, p):
        sha = p["tree_sha"]
        if sha not in r.trees:
            sha = r.commits[sha].tree if sha in r.commits else (
                r.commits[r.resolve(sha)].tree if r.resolve(sha) else None)
        if sha is None:
            raise _not_found()
        return 200, self.git_tree_json(r, sha, recursive=bool(req.query.get("recursive")))

    def _op_git_get_commit(self, req, r, p):
        c = r.commits.get(p["commit_sha"])
        if c is None:
            raise _not_found()
        return 200, self.git_commit_json(r, c)

    def _op_git_create_commit(self, req, r, p):
        b = req.body
        if b["tree"] not in r.trees:
            raise _validation_failed({"resource": "Commit", "field": "tree", "code": "invalid",
                                      "message": "Tree SHA does not exist"})
        for parent in b.get("parents", []):
            if parent not in r.commits:
                raise _validation_failed({"resource": "Commit", "field": "parents", "code": "invalid",
                                          "message": "Parent SHA does not exist or is not a commit object"})
        author = b.get("author")
        if author is None and req.login:
            u = self.state.user(req.login)
            author = {"name": u.login, "email": u.email}
        sha = r.put_commit(b["tree"], list(b.get("parents", [])), b["message"], author=author,
                           committer=b.get("committer") or author)
        return 201, self.git_commit_json(r, r.commits[sha])

    # checks
    def _op_checks_create(self, req, r, p):
        b = req.body
        if b["head_sha"] not in r.commits:
            raise _validation_failed({"resource": "CheckRun", "field": "head_sha", "code": "invalid",
                                      "message": f"No commit found for SHA: {b['head_sha']}"})
        cr = CheckRun(self.state.next_id(), b["name"], b["head_sha"], check_suite_id=self.state.next_id(),
                      app_login=self._write_login(req))
        self._apply_check(cr, b)
        r.check_runs[cr.id] = cr
        return 201, self.check_run_json(r, cr)

    def _apply_check(self, cr: CheckRun, b: dict) -> None:
        for k in ("name", "details_url", "external_id", "status"):
            if k in b:
                setattr(cr, k, b[k])
        if "conclusion" in b:
            cr.conclusion, cr.status = b["conclusion"], "completed"
        if cr.status == "completed" and cr.conclusion is None:
            raise _validation_failed({"resource": "CheckRun", "field": "conclusion", "code": "missing_field",
                                      "message": "conclusion is required when status is completed"})
        if cr.status in ("in_progress", "completed") and cr.started_at is None:
            cr.started_at = self.state.now()
        if cr.status == "completed" and cr.completed_at is None:
            cr.completed_at = self.state.now()
        out = b.get("output")
        if out:
            cr.title = out.get("title", cr.title)
            cr.summary = out.get("summary", cr.summary)
            cr.text = out.get("text", cr.text)
            cr.annotations.extend(out.get("annotations", []))

    def _op_checks_update(self, req, r, p):
        cr = r.check_runs.get(int(p["check_run_id"]))
        if cr is None:
            raise _not_found()
        self._apply_check(cr, req.body or {})
        return 200, self.check_run_json(r, cr)

    def _op_checks_list_for_ref(self, req, r, p):
        sha = r.resolve(p["ref"])
        if sha is None:
            raise ApiError(422, f"No commit found for SHA: {p['ref']}", errors=[])
        runs = [c for c in r.check_runs.values() if c.head_sha == sha]
        if "check_name" in req.query:
            runs = [c for c in runs if c.name == req.query["check_name"]]
        if "status" in req.query:
            runs = [c for c in runs if c.status == req.query["status"]]
        if req.query.get("filter", "latest") == "latest":
            latest: dict[str, CheckRun] = {}
            for c in runs:
                latest[c.name] = c
            runs = list(latest.values())
        runs.sort(key=lambda c: -c.id)
        page, headers = self._paginate(req, runs)
        return 200, {"total_count": len(runs), "check_runs": [self.check_run_json(r, c) for c in page]}, headers

    # pulls
    def _op_pulls_get(self, req, r, p):
        return 200, self.pull_json(r, self._pull_or_404(r, p))

    def _op_pulls_list(self, req, r, p):
        q = req.query
        state = q.get("state", "open")
        if state not in ("open", "closed", "all"):
            raise _validation_failed({"resource": "Issue", "field": "state", "code": "invalid"})
        pulls = [pr for pr in r.pulls.values() if state == "all" or pr.state == state]
        head = q.get("head")
        if head and ":" in head:  # like GitHub, a head filter without "owner:" is ignored
            owner, _, ref = head.partition(":")
            pulls = [pr for pr in pulls if owner.lower() == r.owner.lower() and pr.head_ref == ref]
        if q.get("base"):
            pulls = [pr for pr in pulls if pr.base_ref == q["base"]]
        sort = q.get("sort", "created")
        key = {"updated": lambda pr: (pr.updated_at, pr.number)}.get(sort, lambda pr: (pr.created_at, pr.number))
        pulls.sort(key=key, reverse=q.get("direction", "desc") == "desc")
        page, headers = self._paginate(req, pulls)
        return 200, [self.pull_json(r, pr, simple=True) for pr in page], headers

    def _op_pulls_create(self, req, r, p):
        b = req.body
        head = b["head"]
        if ":" in head:
            owner, _, head = head.partition(":")
            if owner.lower() != r.owner.lower():
                raise _validation_failed({"resource": "PullRequest", "field": "head", "code": "invalid"})
        if f"refs/heads/{b['base']}" not in r.refs:
            raise _validation_failed({"resource": "PullRequest", "field": "base", "code": "invalid"})
        if f"refs/heads/{head}" not in r.refs:
            raise _validation_failed({"resource": "PullRequest", "field": "head", "code": "invalid"})
        if not b.get("title"):
            raise _validation_failed({"resource": "Issue", "field": "title", "code": "missing_field"})
        _check_body("PullRequest", b.get("body"))
        for pr in r.pulls.values():
            if pr.state == "open" and pr.head_ref == head and pr.base_ref == b["base"]:
                raise _validation_failed({"resource": "PullRequest", "code": "custom",
                                          "message": f"A pull request already exists for {r.owner}:{head}."})
        head_sha, base_sha = r.refs[f"refs/heads/{head}"], r.refs[f"refs/heads/{b['base']}"]
        if head_sha in r.ancestors(base_sha):
            raise _validation_failed({"resource": "PullRequest", "code": "custom",
                                      "message": f"No commits between {b['base']} and {head}"})
        merge_base = base_sha
        head_anc = r.ancestors(head_sha)
        if base_sha not in head_anc:  # diverged: diff from the newest common ancestor
            todo, seen = [base_sha], set()
            while todo:
                s = todo.pop(0)
                if s in head_anc:
                    merge_base = s
                    break
                if s not in seen and s in r.commits:
                    seen.add(s)
                    todo.extend(r.commits[s].parents)
        pr = self._new_pull(r, head, b["base"], merge_base, b["title"], b.get("body"), self._write_login(req),
                            bool(b.get("draft", False)))
        return 201, self.pull_json(r, pr)

    def _op_pulls_update(self, req, r, p):
        pr = self._pull_or_404(r, p)
        b = req.body or {}
        _check_body("PullRequest", b.get("body"))
        if "title" in b:
            pr.title = b["title"]
        if "body" in b:
            pr.body = b["body"]
        if "base" in b:
            if f"refs/heads/{b['base']}" not in r.refs:
                raise _validation_failed({"resource": "PullRequest", "field": "base", "code": "invalid"})
            pr.base_ref = b["base"]
        if b.get("state") == "closed" and pr.state == "open":
            r.head_sha(pr)
            pr.state, pr.closed_at = "closed", self.state.now()
        elif b.get("state") == "open" and pr.state == "closed":
            if f"refs/heads/{pr.head_ref}" not in r.refs:
                raise _validation_failed({"resource": "PullRequest", "field": "state", "code": "invalid",
                                          "message": "state cannot be changed. The head branch was deleted."})
            pr.state, pr.closed_at = "open", None
        pr.updated_at = self.state.now()
        return 200, self.pull_json(r, pr)

    def _op_pulls_list_files(self, req, r, p):
        pr = self._pull_or_404(r, p)
        head = r.head_sha(pr)
        page, headers = self._paginate(req, r.pull_files(pr))
        return 200, [self.diff_entry_json(r, head, f) for f in page], headers

    def _op_pulls_create_review(self, req, r, p):
        pr = self._pull_or_404(r, p)
        b = req.body or {}
        login = self._write_login(req)
        commit_id = b.get("commit_id") or r.head_sha(pr)
        if commit_id not in r.commits:
            raise _unprocessable(f"Commit {commit_id} could not be resolved")
        event = b.get("event")
        state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED",
                 None: "PENDING"}[event]
        if event in ("APPROVE", "REQUEST_CHANGES") and login == pr.user:
            verb = "approve" if event == "APPROVE" else "request changes on"
            raise _unprocessable(f"Can not {verb} your own pull request")
        if event in ("REQUEST_CHANGES", "COMMENT") and not b.get("body") and not b.get("comments"):
            raise _unprocessable("Body is required when using REQUEST_CHANGES or COMMENT for the event parameter")
        _check_body("PullRequestReview", b.get("body"), simple=True)
        for c in b.get("comments", []):
            _check_body("PullRequestReviewComment", c.get("body"), simple=True)
        targets = [self._comment_target(r, pr, c, single=False) for c in b.get("comments", [])]
        rv = self._add_review(r, pr, login, b.get("body", ""), state, commit_id)
        for c, target in zip(b.get("comments", []), targets):
            self._add_comment(r, pr, rv.id, login, c["body"], target, commit_id)
        return 200, self.review_json(r, rv)

    def _op_pulls_list_reviews(self, req, r, p):
        pr = self._pull_or_404(r, p)
        reviews = sorted((rv for rv in r.reviews.values() if rv.pull_number == pr.number), key=lambda rv: rv.id)
        page, headers = self._paginate(req, reviews)
        return 200, [self.review_json(r, rv) for rv in page], headers

    def _op_pulls_list_review_comments(self, req, r, p):
        pr = self._pull_or_404(r, p)
        comments = sorted((c for c in r.review_comments.values() if c.pull_number == pr.number), key=lambda c: c.id)
        if req.query.get("direction") == "desc":
            comments.reverse()
        page, headers = self._paginate(req, comments)
        return 200, [self.review_comment_json(r, c) for c in page], headers

    def _op_pulls_list_comments_for_review(self, req, r, p):
        pr = self._pull_or_404(r, p)
        rv = r.reviews.get(int(p["review_id"]))
        if rv is None or rv.pull_number != pr.number:
            raise _not_found()
        comments = sorted((c for c in r.review_comments.values() if c.review_id == rv.id), key=lambda c: c.id)
        page, headers = self._paginate(req, comments)
        return 200, [self.review_comment_json(r, c, legacy=True) for c in page], headers

    def _op_pulls_create_review_comment(self, req, r, p):
        pr = self._pull_or_404(r, p)
        b = req.body
        login = self._write_login(req)
        _check_body("PullRequestReviewComment", b.get("body"))
        if b.get("in_reply_to") is not None:
            c = self._reply(r, pr, login, int(b["in_reply_to"]), b["body"])
            return 201, self.review_comment_json(r, c)
        if b["commit_id"] not in r.commits:
            raise _validation_failed({"resource": "PullRequestReviewComment", "code": "custom",
                                      "field": "commit_id", "message": "commit_id is not part of the pull request"})
        target = self._comment_target(r, pr, b, single=True)
        rv = self._add_review(r, pr, login, "", "COMMENTED", b["commit_id"])
        c = self._add_comment(r, pr, rv.id, login, b["body"], target, b["commit_id"])
        return 201, self.review_comment_json(r, c)

    def _review_comment_or_404(self, r: Repo, p: dict) -> ReviewComment:
        c = r.review_comments.get(int(p["comment_id"]))
        if c is None:
            raise _not_found()
        return c

    def _op_pulls_get_review_comment(self, req, r, p):
        return 200, self.review_comment_json(r, self._review_comment_or_404(r, p))

    def _op_pulls_update_review_comment(self, req, r, p):
        c = self._review_comment_or_404(r, p)
        _check_body("PullRequestReviewComment", req.body["body"])
        c.body = req.body["body"]
        c.updated_at = self.state.now()
        c.edited_by.append(self._write_login(req))
        return 200, self.review_comment_json(r, c)

    def _op_pulls_delete_review_comment(self, req, r, p):
        c = self._review_comment_or_404(r, p)
        del r.review_comments[c.id]
        r.deleted.append((c, req.login))
        return 204, None

    # issues
    def _issue_or_404(self, r: Repo, p: dict) -> int:
        n = int(p["issue_number"])
        if n not in r.pulls:
            raise _not_found()
        return n

    def _issue_comment_or_404(self, r: Repo, p: dict) -> IssueComment:
        c = r.issue_comments.get(int(p["comment_id"]))
        if c is None:
            raise _not_found()
        return c

    def _op_issues_list_comments(self, req, r, p):
        n = self._issue_or_404(r, p)
        comments = sorted((c for c in r.issue_comments.values() if c.issue_number == n), key=lambda c: c.id)
        if req.query.get("since"):
            comments = [c for c in comments if _ts(c.updated_at) >= req.query["since"]]
        page, headers = self._paginate(req, comments)
        return 200, [self.issue_comment_json(r, c) for c in page], headers

    def _op_issues_create_comment(self, req, r, p):
        n = self._issue_or_404(r, p)
        _check_body("IssueComment", req.body["body"])
        c = self._add_issue_comment(r, n, self._write_login(req), req.body["body"])
        return 201, self.issue_comment_json(r, c)

    def _op_issues_get_comment(self, req, r, p):
        return 200, self.issue_comment_json(r, self._issue_comment_or_404(r, p))

    def _op_issues_update_comment(self, req, r, p):
        c = self._issue_comment_or_404(r, p)
        _check_body("IssueComment", req.body["body"])
        c.body = req.body["body"]
        c.updated_at = self.state.now()
        c.edited_by.append(self._write_login(req))
        return 200, self.issue_comment_json(r, c)

    def _op_issues_delete_comment(self, req, r, p):
        c = self._issue_comment_or_404(r, p)
        del r.issue_comments[c.id]
        r.deleted.append((c, req.login))
        return 204, None

    def _op_issues_add_labels(self, req, r, p):
        n = self._issue_or_404(r, p)
        b = req.body
        names = b if isinstance(b, list) else (b or {}).get("labels", [])
        pr = r.pulls[n]
        for item in names:
            name = item["name"] if isinstance(item, dict) else item
            lab = r.label(name)
            if lab.name not in pr.labels:
                pr.labels.append(lab.name)
        pr.updated_at = self.state.now()
        return 200, [self.label_json(r, r.labels[name.lower()]) for name in pr.labels]


# --------------------------------------------------------------------------- #
# Context manager / pytest helpers
# --------------------------------------------------------------------------- #


def running(**kwargs: Any):
    """``with running() as gh:`` - same as ``with FakeGitHub(**kwargs) as gh:``."""
    return FakeGitHub(**kwargs)


def fake_github_fixture(**kwargs: Any) -> Iterator[FakeGitHub]:
    """Generator behind the ``fake_github`` pytest fixture (see conftest.py).

    Skips when the OpenAPI subset is missing; fails the test at teardown when
    any request/response failed schema validation (use ``take_errors()`` in a
    test that provokes validation errors on purpose)."""
    import pytest

    path = kwargs.get("spec_path") or SPEC_PATH
    if not Path(path).is_file():
        pytest.skip(SKIP_REASON)
    with FakeGitHub(**kwargs) as server:
        yield server
        errors = list(server.errors)
    if errors:
        pytest.fail("fake GitHub server recorded validation errors:\n  " + "\n  ".join(errors), pytrace=False)
