"""Tests of the fake GitHub REST server (tests/support/fakegithub.py), driven through PyGithub."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import github
import pytest
import requests
from github import GithubException, InputGitTreeElement

from fakegithub import (
    BOT_LOGIN,
    MAX_BODY,
    SKIP_REASON,
    FakeGitHub,
    diff_lines,
    fake_github_fixture,
    load_spec,
    parse_patch,
)

REPO = "acme/app"
BASE_VALUES = "".join(f"key{i}: {i}\n" for i in range(1, 21))  # 20 lines
HEAD_VALUES = BASE_VALUES.replace("key3: 3\n", "key3: 33\n").replace("key15: 15\n", "key15: 150\nkey15b: 1\n")

TWO_HUNKS = (
    "@@ -1,4 +1,4 @@\n"
    " a: 1\n"
    "-b: 2\n"
    "+b: 3\n"
    " c: 3\n"
    " d: 4\n"
    "@@ -20,3 +20,4 @@ section:\n"
    " t: 20\n"
    "+u: 21\n"
    " v: 22\n"
    " w: 23"
)


@pytest.fixture
def seeded(fake_github: FakeGitHub):
    """A repository with one open PR that changes values.yaml (real diff)."""
    fake_github.add_repo(REPO, files={"values.yaml": BASE_VALUES, "charts/app/Chart.yaml": "name: app\n"})
    pr = fake_github.add_pull(REPO, head="bump", title="Bump values", body="please review",
                              changes={"values.yaml": HEAD_VALUES})
    return fake_github, pr


# --------------------------------------------------------------------------- #
# patch parsing
# --------------------------------------------------------------------------- #


def test_parse_patch_positions_and_sides():
    lines = parse_patch(TWO_HUNKS)
    # position 1 is the line below the first header; the second header counts too
    assert [(d.position, d.kind) for d in lines][:5] == [(1, " "), (2, "-"), (3, "+"), (4, " "), (5, " ")]
    assert lines[5].kind == "@" and lines[5].position == 6
    assert diff_lines(TWO_HUNKS, "RIGHT") == {1, 2, 3, 4, 20, 21, 22, 23}
    assert diff_lines(TWO_HUNKS, "LEFT") == {1, 2, 3, 4, 20, 21, 22}
    plus_u = next(d for d in lines if d.kind == "+" and d.right == 21)
    assert (plus_u.position, plus_u.hunk) == (8, 1)


# --------------------------------------------------------------------------- #
# reading
# --------------------------------------------------------------------------- #


def test_get_repo_pull_and_files(seeded):
    gh, pr = seeded
    repo = gh.client().get_repo(REPO)
    assert repo.full_name == REPO and repo.default_branch == "main"
    assert repo.url.startswith(gh.url)  # lazy completion goes back to the fake server

    pull = repo.get_pull(pr.number)
    assert (pull.number, pull.title, pull.body, pull.state) == (1, "Bump values", "please review", "open")
    assert pull.head.ref == "bump" and pull.base.ref == "main"
    assert pull.head.sha == gh.repo(REPO).branches["bump"]
    assert pull.user.login == "octocat" and pull.changed_files == 1

    files = list(pull.get_files())
    assert [f.filename for f in files] == ["values.yaml"]
    assert files[0].status == "modified" and (files[0].additions, files[0].deletions) == (3, 2)
    assert "-key3: 3\n+key3: 33" in files[0].patch
    assert diff_lines(files[0].patch, "RIGHT") == set(range(1, 7)) | set(range(12, 20))

    branch = repo.get_branch("main")
    assert branch.commit.sha == gh.repo(REPO).branches["main"]
    content = repo.get_contents("values.yaml", ref="bump")
    assert content.decoded_content.decode() == HEAD_VALUES
    assert sorted(c.path for c in repo.get_contents("")) == ["charts", "values.yaml"]
    commit = repo.get_commit(pull.head.sha)
    assert commit.sha == pull.head.sha and [f.filename for f in commit.files] == ["values.yaml"]
    assert gh.client().get_rate_limit().resources.core.limit == 5000
    assert {r.op for r in gh.requests} >= {"repos/get", "pulls/get", "pulls/list-files", "repos/get-branch",
                                           "repos/get-content", "repos/get-commit", "rate-limit/get"}


def test_pagination_link_header(seeded):
    gh, pr = seeded
    for i in range(5):
        gh.add_issue_comment(REPO, pr.number, f"comment {i}")
    client = gh.client(per_page=2)
    comments = client.get_repo(REPO).get_pull(pr.number).get_issue_comments()
    assert [c.body for c in comments] == [f"comment {i}" for i in range(5)]
    pages = [r for r in gh.requests_for("issues/list-comments")]
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3"]

    resp = requests.get(f"{gh.url}/repos/{REPO}/issues/1/comments?per_page=2&page=2",
                        headers={"Authorization": f"token {gh.token}"})
    link = resp.headers["Link"]
    assert 'rel="next"' in link and 'rel="prev"' in link and 'rel="last"' in link and "page=3" in link
    assert len(resp.json()) == 2


# --------------------------------------------------------------------------- #
# reviews and review comments
# --------------------------------------------------------------------------- #


def test_create_review_with_inline_comments(seeded):
    gh, pr = seeded
    repo = gh.client().get_repo(REPO)
    pull = repo.get_pull(pr.number)
    commit = repo.get_commit(pull.head.sha)
    review = pull.create_review(commit=commit, body="cfgcheck found 2 issues", event="COMMENT", comments=[
        {"path": "values.yaml", "line": 3, "side": "RIGHT", "body": "key3 is too big"},
        {"path": "values.yaml", "start_line": 15, "line": 16, "side": "RIGHT", "body": "multi-line"},
    ])
    assert review.state == "COMMENTED" and review.user.login == BOT_LOGIN

    state = gh.repo(REPO)
    stored = sorted(state.review_comments.values(), key=lambda c: c.id)
    assert [(c.path, c.line, c.side, c.start_line, c.user, c.review_id, c.commit_id) for c in stored] == [
        ("values.yaml", 3, "RIGHT", None, BOT_LOGIN, review.id, commit.sha),
        ("values.yaml", 16, "RIGHT", 15, BOT_LOGIN, review.id, commit.sha),
    ]
    assert state.reviews[review.id].body == "cfgcheck found 2 issues"
    comments = list(pull.get_review_comments())
    assert comments[0].diff_hunk.startswith("@@ -1,6 +1,6 @@") and comments[0].diff_hunk.endswith("+key3: 33")
    assert comments[0].position == 4 and comments[0].original_position == 4
    assert [c.id for c in pull.get_single_review_comments(review.id)] == [c.id for c in stored]
    assert [r.id for r in pull.get_reviews()] == [review.id]


@pytest.mark.parametrize("comment", [
    {"path": "values.yaml", "line": 9, "side": "RIGHT", "body": "between hunks"},
    {"path": "values.yaml", "line": 99, "body": "past the end"},
    {"path": "values.yaml", "line": 19, "side": "LEFT", "body": "left hunk ends at 18"},
    {"path": "values.yaml", "start_line": 3, "line": 16, "body": "spans two hunks"},
    {"path": "missing.yaml", "line": 1, "body": "not in the PR"},
])
def test_create_review_line_outside_diff_is_422(seeded, comment):
    gh, pr = seeded
    repo = gh.client().get_repo(REPO)
    pull = repo.get_pull(pr.number)
    with pytest.raises(GithubException) as exc:
        pull.create_review(body="x", event="COMMENT", comments=[
            {"path": "values.yaml", "line": 3, "body": "valid one"}, comment])
    assert exc.value.status == 422 and exc.value.data["message"] == "Unprocessable Entity"
    assert gh.repo(REPO).reviews == {} and gh.repo(REPO).review_comments == {}  # atomic


def test_review_comments_on_explicit_patch(fake_github):
    gh = fake_github
    gh.add_repo(REPO)
    pr = gh.add_pull(REPO, head="feat", files={"cfg.yaml": TWO_HUNKS})
    repo = gh.client().get_repo(REPO)
    pull = repo.get_pull(pr.number)
    head = pull.head.sha
    ok = pull.create_review_comment("on u", head, "cfg.yaml", line=21, side="RIGHT")
    left = pull.create_review_comment("old b", head, "cfg.yaml", line=2, side="LEFT")
    assert (ok.line, ok.position, ok.side) == (21, 8, "RIGHT")
    assert (left.line, left.position, left.side) == (2, 2, "LEFT")
    with pytest.raises(GithubException) as exc:
        pull.create_review_comment("gap", head, "cfg.yaml", line=10, side="RIGHT")
    assert exc.value.status == 422 and exc.value.data["errors"][0]["field"] == "pull_request_review_thread.line"
    with pytest.raises(GithubException) as exc:
        pull.create_review_comment("left ends at 22", head, "cfg.yaml", line=23, side="LEFT")
    assert exc.value.status == 422
    assert sorted(c.line for c in gh.repo(REPO).review_comments.values()) == [2, 21]


def test_list_edit_delete_review_comments_and_human_reply(seeded):
    gh, pr = seeded
    bot_pull = gh.client().get_repo(REPO).get_pull(pr.number)
    head = bot_pull.head.sha
    c1 = bot_pull.create_review_comment("finding A", head, "values.yaml", line=3, side="RIGHT")
    c2 = bot_pull.create_review_comment("finding B", head, "values.yaml", line=16, side="RIGHT")

    # a human replies through the API with their own token ...
    human_pull = gh.client(gh.human_token).get_repo(REPO).get_pull(pr.number)
    reply = human_pull.create_review_comment("not a bug", head, "values.yaml", in_reply_to=c1.id)
    assert (reply.user.login, reply.in_reply_to_id, reply.line) == ("octocat", c1.id, 3)
    # ... or is seeded directly
    seeded_reply = gh.reply(REPO, c2.id, "will fix")
    assert seeded_reply.in_reply_to_id == c2.id and seeded_reply.user == "octocat"

    listed = list(bot_pull.get_review_comments())
    assert [(c.body, c.user.login, c.in_reply_to_id) for c in listed] == [
        ("finding A", BOT_LOGIN, None), ("finding B", BOT_LOGIN, None),
        ("not a bug", "octocat", c1.id), ("will fix", "octocat", c2.id)]

    bot_pull.get_review_comment(c1.id).edit("finding A (fixed)")
    assert gh.repo(REPO).review_comments[c1.id].body == "finding A (fixed)"
    c2.delete()
    assert c2.id not in gh.repo(REPO).review_comments
    with pytest.raises(github.UnknownObjectException):
        bot_pull.get_review_comment(c2.id)
    assert [c.body for c in bot_pull.get_review_comments()] == ["finding A (fixed)", "not a bug", "will fix"]


def test_comment_becomes_outdated_after_push(seeded):
    gh, pr = seeded
    pull = gh.client().get_repo(REPO).get_pull(pr.number)
    c = pull.create_review_comment("x", pull.head.sha, "values.yaml", line=16)
    gh.push(REPO, "bump", {"values.yaml": BASE_VALUES.replace("key3: 3\n", "key3: 33\n")})
    again = pull.get_review_comment(c.id)
    assert again.position is None and again.original_line == 16 and again.original_position == 14
    assert gh.client().get_repo(REPO).get_pull(pr.number).head.sha == gh.repo(REPO).branches["bump"]


def test_cannot_approve_own_pull(seeded):
    gh, pr = seeded
    human_pull = gh.client(gh.human_token).get_repo(REPO).get_pull(pr.number)
    with pytest.raises(GithubException) as exc:
        human_pull.create_review(body="lgtm", event="APPROVE")
    assert exc.value.status == 422
    assert gh.client().get_repo(REPO).get_pull(pr.number).create_review(event="APPROVE").state == "APPROVED"


# --------------------------------------------------------------------------- #
# issue comments, labels, pulls
# --------------------------------------------------------------------------- #


def test_issue_comments_and_labels(seeded):
    gh, pr = seeded
    pull = gh.client().get_repo(REPO).get_pull(pr.number)
    ic = pull.create_issue_comment("<!-- cfgcheck --> summary v1")
    gh.add_issue_comment(REPO, pr.number, "thanks bot")
    ic.edit("<!-- cfgcheck --> summary v2")
    assert [(c.body, c.user.login) for c in pull.get_issue_comments()] == [
        ("<!-- cfgcheck --> summary v2", BOT_LOGIN), ("thanks bot", "octocat")]
    # Issue.get_comment without issues/get (not in the subset): use a lazy client
    lazy_issue = gh.client(lazy=True).get_repo(REPO).get_issue(pr.number)
    assert lazy_issue.get_comment(ic.id).body.endswith("v2")
    stored = gh.repo(REPO).issue_comments[ic.id]
    assert stored.body == "<!-- cfgcheck --> summary v2" and stored.issue_number == pr.number
    ic.delete()
    assert ic.id not in gh.repo(REPO).issue_comments

    pull.add_to_labels("cfgcheck", "needs-review")  # PyGithub sends a bare array
    assert gh.repo(REPO).pulls[pr.number].labels == ["cfgcheck", "needs-review"]
    assert [lab.name for lab in gh.client().get_repo(REPO).get_pull(pr.number).labels] == ["cfgcheck", "needs-review"]


def test_bodies_over_the_limit_are_refused_with_422(seeded):
    """GitHub refuses comment, review and pull request bodies over 65,536 characters; so does the fake."""
    gh, pr = seeded
    pull = gh.client().get_repo(REPO).get_pull(pr.number)
    head = pull.head.sha
    at_limit, over = "x" * MAX_BODY, "x" * (MAX_BODY + 1)
    ok = pull.create_issue_comment(at_limit)
    inline = pull.create_review_comment("finding", head, "values.yaml", line=3, side="RIGHT")
    calls = {
        "issues/create-comment": lambda: pull.create_issue_comment(over),
        "issues/update-comment": lambda: ok.edit(over),
        "pulls/create-review-comment": lambda: pull.create_review_comment(over, head, "values.yaml", line=3),
        "pulls/update-review-comment": lambda: inline.edit(over),
        "pulls/create-review": lambda: pull.create_review(body="r", event="COMMENT", comments=[
            {"path": "values.yaml", "line": 3, "side": "RIGHT", "body": "short"},
            {"path": "values.yaml", "line": 16, "side": "RIGHT", "body": over}]),
        "pulls/update": lambda: pull.edit(body=over),
    }
    for op, call in calls.items():
        with pytest.raises(GithubException) as exc:
            call()
        assert exc.value.status == 422 and "too long" in str(exc.value.data), op
    repo = gh.repo(REPO)
    assert repo.issue_comments[ok.id].body == at_limit and repo.review_comments[inline.id].body == "finding"
    assert len(repo.review_comments) == 1, "a refused review creates none of its comments"
    assert repo.pulls[pr.number].body == "please review"


def test_comment_authors_editors_and_deleters_are_recorded(seeded):
    """Authorship is the token's user; seeded comments can belong to anyone; edits and deletes say who."""
    gh, pr = seeded
    human = gh.add_issue_comment(REPO, pr.number, "<!-- cfgcheck:summary --> forged", user="mallory")
    bot_pull = gh.client().get_repo(REPO).get_pull(pr.number)
    mine = bot_pull.create_issue_comment("bot")
    by_human = gh.client(gh.human_token).get_repo(REPO).get_pull(pr.number).create_issue_comment("human")
    listed = {c.body: c.user.login for c in bot_pull.get_issue_comments()}
    assert listed == {"<!-- cfgcheck:summary --> forged": "mallory", "bot": BOT_LOGIN, "human": gh.human_login}
    comments = {c.id: c for c in bot_pull.get_issue_comments()}
    comments[human.id].edit("edited by the bot")
    comments[by_human.id].delete()
    repo = gh.repo(REPO)
    assert repo.issue_comments[human.id].edited_by == [BOT_LOGIN]
    assert repo.issue_comments[mine.id].edited_by == []
    assert [(c.id, who) for c, who in repo.deleted] == [(by_human.id, BOT_LOGIN)]


def test_create_pull_and_list_by_head(fake_github):
    gh = fake_github
    gh.add_repo(REPO, files={"values.yaml": "a: 1\n"})
    gh.add_pull(REPO, head="other", changes={"x.yaml": "x: 1\n"})
    gh.push(REPO, "cfgcheck/propose", {"values.yaml": "a: 2\n"})
    repo = gh.client().get_repo(REPO)
    created = repo.create_pull(base="main", head="cfgcheck/propose", title="cfgcheck: raise a", body="why")
    assert created.user.login == BOT_LOGIN and created.number == 2
    assert [f.filename for f in created.get_files()] == ["values.yaml"]

    assert [p.number for p in repo.get_pulls(state="open", head="acme:cfgcheck/propose")] == [2]
    assert [p.number for p in repo.get_pulls(head="acme:nope")] == []
    # like GitHub, a head filter without "owner:" is ignored
    assert sorted(p.number for p in repo.get_pulls(head="cfgcheck/propose")) == [1, 2]
    with pytest.raises(GithubException) as exc:
        repo.create_pull(base="main", head="cfgcheck/propose", title="again")
    assert exc.value.status == 422 and "already exists" in exc.value.data["errors"][0]["message"]

    created.edit(title="cfgcheck: raise a (v2)", body="updated")
    pr = gh.repo(REPO).pulls[2]
    assert (pr.title, pr.body) == ("cfgcheck: raise a (v2)", "updated")
    created.edit(state="closed")
    assert gh.repo(REPO).pulls[2].state == "closed"
    assert [p.number for p in repo.get_pulls(state="closed")] == [2]


# --------------------------------------------------------------------------- #
# git data, contents, checks
# --------------------------------------------------------------------------- #


def test_git_ref_commit_tree_blob(fake_github):
    gh = fake_github
    gh.add_repo(REPO, files={"values.yaml": "a: 1\n", "charts/app/values.yaml": "b: 1\n"})
    repo = gh.client().get_repo(REPO)
    base_ref = repo.get_git_ref("heads/main")
    base = repo.get_git_commit(base_ref.object.sha)
    blob = repo.create_git_blob("a: 2\n", "utf-8")
    blob64 = repo.create_git_blob(base64.b64encode(b"c: 3\n").decode(), "base64")
    tree = repo.create_git_tree([
        InputGitTreeElement("values.yaml", "100644", "blob", sha=blob.sha),
        InputGitTreeElement("charts/app/new.yaml", "100644", "blob", sha=blob64.sha),
        InputGitTreeElement("charts/app/values.yaml", "100644", "blob", sha=None),  # delete
    ], base.tree)
    commit = repo.create_git_commit("cfgcheck: propose", tree, [base])
    ref = repo.create_git_ref("refs/heads/cfgcheck/propose", commit.sha)

    state = gh.repo(REPO)
    assert state.branches["cfgcheck/propose"] == commit.sha
    assert state.commits[commit.sha].parents == [base.sha]
    assert state.read("values.yaml", "cfgcheck/propose") == "a: 2\n"
    assert state.read("charts/app/new.yaml", "cfgcheck/propose") == "c: 3\n"
    assert state.read("charts/app/values.yaml", "cfgcheck/propose") is None
    assert {e.path for e in repo.get_git_tree(commit.sha, recursive=True).tree} == {
        "values.yaml", "charts", "charts/app", "charts/app/new.yaml"}
    assert repo.get_git_ref("heads/cfgcheck/propose").object.sha == commit.sha

    # fast-forward update, then a non-fast-forward one is refused unless forced
    tree2 = repo.create_git_tree([InputGitTreeElement("values.yaml", "100644", "blob", content="a: 3\n")],
                                 repo.get_git_tree(commit.sha))
    commit2 = repo.create_git_commit("again", tree2, [repo.get_git_commit(commit.sha)])
    ref.edit(commit2.sha)
    assert state.branches["cfgcheck/propose"] == commit2.sha
    with pytest.raises(GithubException) as exc:
        ref.edit(base.sha)
    assert exc.value.status == 422
    ref.edit(base.sha, force=True)
    assert state.branches["cfgcheck/propose"] == base.sha
    with pytest.raises(GithubException):
        repo.create_git_ref("refs/heads/cfgcheck/propose", commit.sha)  # already exists


def test_contents_api_create_and_update(fake_github):
    gh = fake_github
    gh.add_repo(REPO, files={"values.yaml": "a: 1\n"})
    repo = gh.client().get_repo(REPO)
    gh.push(REPO, "edit", {}, "branch point")
    created = repo.create_file("docs/new.md", "add doc", "hello\n", branch="edit")
    assert gh.repo(REPO).read("docs/new.md", "edit") == "hello\n"
    current = repo.get_contents("values.yaml", ref="edit")
    updated = repo.update_file("values.yaml", "bump a", "a: 2\n", current.sha, branch="edit")
    assert gh.repo(REPO).read("values.yaml", "edit") == "a: 2\n"
    assert updated["commit"].sha == gh.repo(REPO).branches["edit"] != created["commit"].sha
    with pytest.raises(GithubException) as exc:
        repo.update_file("values.yaml", "stale", "a: 3\n", current.sha, branch="edit")
    assert exc.value.status == 409


def test_check_runs(seeded):
    gh, pr = seeded
    repo = gh.client().get_repo(REPO)
    head = repo.get_pull(pr.number).head.sha
    run = repo.create_check_run("cfgcheck", head, status="in_progress",
                                output={"title": "cfgcheck", "summary": "running"})
    annotations = [{"path": "values.yaml", "start_line": 3, "end_line": 3, "annotation_level": "warning",
                    "message": f"issue {i}"} for i in range(50)]
    run.edit(conclusion="neutral", output={"title": "cfgcheck", "summary": "50 issues", "annotations": annotations})
    stored = gh.repo(REPO).check_runs[run.id]
    assert (stored.status, stored.conclusion, len(stored.annotations)) == ("completed", "neutral", 50)
    runs = list(repo.get_commit(head).get_check_runs(check_name="cfgcheck"))
    assert [(r.id, r.conclusion, r.output.annotations_count) for r in runs] == [(run.id, "neutral", 50)]
    assert [p.number for p in runs[0].pull_requests] == [pr.number]

    # 51 annotations break the request schema (maxItems 50): recorded + 422
    with pytest.raises(GithubException) as exc:
        run.edit(output={"title": "t", "summary": "s", "annotations": annotations + annotations[:1]})
    assert exc.value.status == 422
    errors = gh.take_errors()
    assert len(errors) == 1 and "checks/update" in errors[0] and "annotations" in errors[0]


def test_every_operation_is_served_and_validated(seeded):
    gh, pr = seeded
    client = gh.client()
    repo = client.get_repo(REPO)
    pull = repo.get_pull(pr.number)
    head = pull.head.sha
    list(repo.get_pulls(head=f"acme:{pull.head.ref}"))
    list(pull.get_files())
    commit = repo.get_commit(head)
    review = pull.create_review(commit=commit, body="b", event="COMMENT",
                                comments=[{"path": "values.yaml", "line": 3, "body": "c"}])
    list(pull.get_reviews())
    list(pull.get_single_review_comments(review.id))
    rc = pull.create_review_comment("single", head, "values.yaml", line=4)
    list(pull.get_review_comments())
    pull.get_review_comment(rc.id).edit("single (edited)")
    rc.delete()
    ic = pull.create_issue_comment("summary")
    list(pull.get_issue_comments())
    lazy_comment = gh.client(lazy=True).get_repo(REPO).get_issue(pr.number).get_comment(ic.id)
    assert lazy_comment.body == "summary"  # lazy completion: GET issues/comments/{id}
    lazy_comment.edit("summary 2")
    ic.delete()
    pull.add_to_labels("cfgcheck")
    pull.edit(body="edited")
    repo.get_branch("main")
    repo.get_contents("values.yaml")
    repo.create_file("new.txt", "m", "x", branch="bump")
    ref = repo.get_git_ref("heads/main")
    base = repo.get_git_commit(ref.object.sha)
    blob = repo.create_git_blob("y", "utf-8")
    tree = repo.create_git_tree([InputGitTreeElement("y.txt", "100644", "blob", sha=blob.sha)], base.tree)
    repo.get_git_tree(tree.sha)
    new = repo.create_git_commit("m", tree, [base])
    repo.create_git_ref("refs/heads/p", new.sha).edit(new.sha)
    repo.create_pull(base="main", head="p", title="t")
    run = repo.create_check_run("cfgcheck", head, status="in_progress")
    run.edit(conclusion="success")
    list(commit.get_check_runs())
    client.get_rate_limit()

    ops = set(load_spec().operations)
    assert len(ops) == 36
    assert {r.op for r in gh.requests} == ops
    assert all(r.status < 400 for r in gh.requests), [r for r in gh.requests if r.status >= 400]
    assert gh.errors == []


# --------------------------------------------------------------------------- #
# auth and validation
# --------------------------------------------------------------------------- #


def test_read_only_token_gets_403_on_writes(seeded):
    gh, pr = seeded
    pull = gh.client(gh.read_token).get_repo(REPO).get_pull(pr.number)  # reads are fine
    assert pull.number == pr.number
    with pytest.raises(GithubException) as exc:
        pull.create_issue_comment("nope")
    assert exc.value.status == 403
    assert exc.value.data["message"] == "Resource not accessible by integration"
    assert "documentation_url" in exc.value.data
    assert gh.repo(REPO).issue_comments == {}


def test_bad_token_gets_401(seeded):
    gh, _ = seeded
    with pytest.raises(github.BadCredentialsException) as exc:
        gh.client("ghp_not_a_token").get_repo(REPO)
    assert exc.value.status == 401 and exc.value.data["message"] == "Bad credentials"
    assert gh.requests[-1].status == 401 and gh.requests[-1].login is None


def test_invalid_request_body_is_recorded(seeded):
    gh, pr = seeded
    resp = requests.post(f"{gh.url}/repos/{REPO}/issues/{pr.number}/comments", json={"text": "no body key"},
                         headers={"Authorization": f"Bearer {gh.token}"})
    assert resp.status_code == 422
    assert gh.requests[-1].body == {"text": "no body key"}
    errors = gh.take_errors()
    assert len(errors) == 1 and "'body' is a required property" in errors[0]


def test_invalid_response_is_recorded(seeded, monkeypatch):
    gh, pr = seeded
    original = FakeGitHub.issue_comment_json

    def broken(self, repo, c):
        d = original(self, repo, c)
        del d["node_id"]
        d["html_url"] = "/not/absolute"
        return d

    monkeypatch.setattr(FakeGitHub, "issue_comment_json", broken)
    gh.client().get_repo(REPO).get_pull(pr.number).create_issue_comment("x")
    errors = gh.take_errors()
    assert len(errors) == 1 and "issues/create-comment" in errors[0]
    assert "'node_id' is a required property" in errors[0] and "is not a 'uri'" in errors[0]


def test_unknown_route_is_an_error(seeded):
    gh, _ = seeded
    resp = requests.get(f"{gh.url}/repos/{REPO}/releases", headers={"Authorization": f"token {gh.token}"})
    assert resp.status_code == 404
    assert "no operation in the OpenAPI subset" in gh.take_errors()[0]


def test_fixture_skips_without_spec(tmp_path: Path):
    gen = fake_github_fixture(spec_path=tmp_path / "missing.json")
    with pytest.raises(pytest.skip.Exception) as exc:
        next(gen)
    assert str(exc.value.msg) == SKIP_REASON


# --------------------------------------------------------------------------- #
# fault injection
# --------------------------------------------------------------------------- #


def test_injected_500_then_success_with_retrying_client(seeded):
    gh, pr = seeded
    gh.fail("pulls/get", 500, times=2)
    pull = gh.client().get_repo(REPO).get_pull(pr.number)  # GithubRetry(total=3, backoff_factor=0)
    assert pull.number == pr.number
    assert [r.status for r in gh.requests_for("pulls/get")] == [500, 500, 200]

    gh.fail("GET /repos/acme/app/pulls/*/files", 502)
    with pytest.raises(GithubException) as exc:
        list(gh.client(retry=None).get_repo(REPO).get_pull(pr.number).get_files())
    assert exc.value.status == 502
    assert gh.faults == []


@pytest.mark.parametrize("status", [429, 403])
def test_secondary_rate_limit_retry_after(seeded, status):
    gh, pr = seeded
    repo = gh.client().get_repo(REPO)
    gh.rate_limit("issues/create-comment", status=status, retry_after=1)
    started = time.monotonic()
    comment = repo.get_pull(pr.number).create_issue_comment("after backoff")
    assert time.monotonic() - started >= 0.9  # Retry-After: 1 was honoured
    calls = gh.requests_for("issues/create-comment")
    assert [r.status for r in calls] == [status, 201]
    assert [c.body for c in gh.repo(REPO).issue_comments.values()] == ["after backoff"]
    assert comment.id in gh.repo(REPO).issue_comments


def test_rate_limit_without_retry_raises(seeded):
    gh, pr = seeded
    gh.rate_limit("pulls/get", status=403)
    with pytest.raises(GithubException) as exc:
        gh.client(retry=None).get_repo(REPO).get_pull(pr.number)
    assert exc.value.status == 403 and exc.value.headers["retry-after"] == "1"
    assert exc.value.headers["x-ratelimit-remaining"] == "0"


def test_timeout_fault(seeded):
    gh, pr = seeded
    gh.timeout("pulls/get", 1.5)
    with pytest.raises(requests.exceptions.ReadTimeout):
        gh.client(retry=None, timeout=1).get_repo(REPO).get_pull(pr.number)
    gh.timeout("pulls/get", 1.5)
    assert gh.client(timeout=1).get_repo(REPO).get_pull(pr.number).number == pr.number  # retried


def test_deleted_branch_and_pr_closed_between_calls(seeded):
    gh, pr = seeded
    repo = gh.client().get_repo(REPO)
    gh.close_pull_on("pulls/get", REPO, pr.number, delete_branch=True)
    assert repo.get_pull(pr.number).state == "open"  # this call still sees it open ...
    assert repo.get_pull(pr.number).state == "closed"  # ... the next one does not
    with pytest.raises(github.UnknownObjectException):
        repo.get_branch("bump")
    with pytest.raises(github.UnknownObjectException):
        repo.get_git_ref("heads/bump")

    gh.not_found("repos/get-branch")
    with pytest.raises(github.UnknownObjectException):
        repo.get_branch("main")
    assert repo.get_branch("main").name == "main"
