"""``cfgcheck review`` against the fake GitHub server, with a real local git repository.

Each test makes a pull request twice: as commits in a local repository (what the Actions checkout
holds, and what diff mode lints) and on the fake server (what the API answers: files, patches,
comments). The event file, environment and CLI are what a workflow step would see.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cfgcheck.cli import app
from cfgcheck.github.review import FP_MARKER, RESOLVED_MARKER, SUMMARY_MARKER, right_lines
from cfgcheck.yamlio import parse_text
from helpers import REPO, git

NAME = "acme/models"
PATH = "apps/ai/chat.yaml"
DIGEST = "sha256:" + "a" * 64

CEILING = "# HARD CEILING <img src=x onerror=alert(1)> @octocat |x| **b** [x](http://evil) ::set-output name=c::1, never raise."
BASE = f"""\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: "chat<b>@octocat\\n::set-output name=pwned::1"
spec:
  runtime: vllm
  replicas: 2
  image: vllm/vllm-openai:v0.23.0@{DIGEST}
  vllmConfig:
    maxModelLen: 32768
    {CEILING}
    gpuMemoryUtilization: 0.8
  extraArgs:
    - --enable-prefix-caching
"""
# CFG204 (error) on line 12, CFG205 (warning) on line 16; the ceiling comment and the served model's name
# carry markdown, HTML, an @mention and a workflow command
HEAD = BASE.replace("gpuMemoryUtilization: 0.8", "gpuMemoryUtilization: 0.9") + """\
    - --max-num-seqs
    - "4"
"""
# both fixed
FIXED = BASE + """\
    # measured: 4 keeps TTFT under 2 s at the p99 prompt
    - --max-num-seqs
    - "4"
"""


class PullRequest:
    """A pull request both in a local git checkout and on the fake server, and a runner for the CLI."""

    def __init__(self, gh, tmp_path: Path, monkeypatch, base: str = BASE, head: str = HEAD):
        self.gh, self.tmp = gh, tmp_path
        self.repo = tmp_path / "checkout"
        (self.repo / PATH).parent.mkdir(parents=True)
        git(self.repo, "init", "-q", "-b", "main")
        self._commit(base, "base")
        self.base_sha = git(self.repo, "rev-parse", "HEAD").strip()
        git(self.repo, "checkout", "-q", "-b", "feature")
        self._commit(head, "change")
        gh.add_repo(NAME, files={PATH: base})
        self.number = gh.add_pull(NAME, head="feature", changes={PATH: head}).number
        self.event = tmp_path / "event.json"
        self.summary_file = tmp_path / "step-summary.md"
        self.output_file = tmp_path / "output.txt"
        self.sarif = tmp_path / "out" / "cfgcheck.sarif"
        self._write_event()
        for key, value in {"GITHUB_TOKEN": gh.token, "GITHUB_API_URL": gh.url, "GITHUB_REPOSITORY": NAME,
                           "GITHUB_EVENT_PATH": str(self.event), "GITHUB_STEP_SUMMARY": str(self.summary_file),
                           "GITHUB_OUTPUT": str(self.output_file), "CFGCHECK_GITHUB_THROTTLE": "0",
                           "GITHUB_ACTIONS": "true"}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("CFGCHECK_BOT_LOGIN", raising=False)
        monkeypatch.chdir(self.repo)

    def _commit(self, text: str, message: str) -> None:
        (self.repo / PATH).write_text(text)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", message)

    def _write_event(self) -> None:
        head = self.gh.repo(NAME).branches["feature"]
        self.event.write_text(json.dumps({
            "action": "synchronize", "number": self.number,
            "pull_request": {"number": self.number, "base": {"ref": "main", "sha": self.base_sha},
                             "head": {"ref": "feature", "sha": head}},
            "repository": {"full_name": NAME}}))

    def push(self, text: str) -> None:
        """A new commit on the PR branch, in the checkout and on the server."""
        self._commit(text, "fix")
        self.gh.push(NAME, "feature", {PATH: text})
        self._write_event()

    def run(self, *args: str):
        result = CliRunner().invoke(app, ["review", "--sarif", str(self.sarif), *args])
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result

    # what the server holds
    def review_comments(self, top_level: bool = True):
        comments = self.gh.repo(NAME).review_comments.values()
        return [c for c in comments if not top_level or c.in_reply_to_id is None]

    def issue_comments(self):
        return list(self.gh.repo(NAME).issue_comments.values())

    def reviews(self):
        return [r for r in self.gh.repo(NAME).reviews.values() if r.user == self.gh.bot_login]

    def ops(self, op: str, since: int = 0) -> int:
        return sum(1 for r in self.gh.requests[since:] if r.op == op and r.status is not None and r.status < 300)


@pytest.fixture
def pull(fake_github, tmp_path, monkeypatch) -> PullRequest:
    return PullRequest(fake_github, tmp_path, monkeypatch)


def codes_in(body: str) -> set[str]:
    return set(re.findall(r"CFG\d{3}", body))


def test_right_lines_follow_hunks() -> None:
    patch = "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,2 +10,3 @@ x:\n k\n+l\n m\n\\ No newline at end of file"
    assert right_lines(patch) == {1, 2, 3, 10, 11, 12}
    assert right_lines(None) == set()


def test_first_run_rerun_and_fix(pull: PullRequest) -> None:
    first = pull.run()
    assert first.exit_code == 1, first.stderr  # an error introduced, --fail-on error
    reviews = pull.reviews()
    assert len(reviews) == 1 and "cfgcheck" in reviews[0].body
    inline = {codes_in(c.body).pop(): c for c in pull.review_comments()}
    assert set(inline) >= {"CFG204", "CFG205"}
    assert (inline["CFG204"].line, inline["CFG205"].line) == (12, 16)
    assert all(c.side == "RIGHT" and len(FP_MARKER.findall(c.body)) == 1 for c in inline.values())
    assert "docs/rules.md#cfg204-memory-above-ceiling" in inline["CFG204"].body
    assert "**Fix:**" in inline["CFG204"].body
    (summary,) = pull.issue_comments()
    assert summary.body.startswith(SUMMARY_MARKER)
    assert codes_in(summary.body) >= {"CFG204", "CFG205"}
    assert "gpu\\_memory\\_utilization | 0.8 | **0.9** |" in summary.body
    assert "max\\_num\\_seqs |" in summary.body and "| before | after |" in summary.body
    assert "new review comments" in first.stderr and "summary comment created" in first.stderr
    # annotations, step summary, outputs, SARIF
    assert first.stdout.count("::error ") == 1 and first.stdout.count("::warning ") >= 1
    assert "CFG204" in pull.summary_file.read_text()
    outputs = pull.output_file.read_text()
    assert "errors=1\n" in outputs and f"sarif-file={pull.sarif}\n" in outputs
    assert re.search(r"(?m)^findings=[2-9]$", outputs)
    sarif = json.loads(pull.sarif.read_text())
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} >= {"CFG204", "CFG205"}

    # re-run, nothing changed: nothing new, the summary is not duplicated
    count = len(inline)
    mark = len(pull.gh.requests)
    again = pull.run()
    assert again.exit_code == 1
    assert pull.ops("pulls/create-review", mark) == 0 and pull.ops("issues/create-comment", mark) == 0
    assert pull.ops("pulls/delete-review-comment", mark) == 0
    assert len(pull.review_comments()) == count and len(pull.issue_comments()) == 1 and len(pull.reviews()) == 1
    assert "summary comment unchanged" in again.stderr

    # a human replies to the CFG204 comment; then both findings are fixed
    pull.gh.reply(NAME, inline["CFG204"].id, "this one is on purpose, isn't it?")
    pull.push(FIXED)
    mark = len(pull.gh.requests)
    fixed = pull.run()
    assert fixed.exit_code == 0, fixed.stdout + fixed.stderr
    assert pull.ops("pulls/create-review", mark) == 0 and pull.ops("issues/create-comment", mark) == 0
    left = pull.review_comments()
    assert [c.id for c in left] == [inline["CFG204"].id], "stale comments without a reply are deleted"
    head = pull.gh.repo(NAME).branches["feature"]
    assert RESOLVED_MARKER in left[0].body and f"Resolved in {head[:7]}" in left[0].body
    assert FP_MARKER.search(left[0].body) and "~~" in left[0].body
    assert len(pull.review_comments(top_level=False)) == 2, "the human reply stays"
    (summary_after,) = pull.issue_comments()
    assert summary_after.id == summary.id and "no new findings" in summary_after.body
    assert pull.ops("issues/update-comment", mark) == 1

    # one more run: the resolved comment is left as it is
    mark = len(pull.gh.requests)
    pull.run()
    assert pull.ops("pulls/update-review-comment", mark) == 0 and pull.ops("pulls/delete-review-comment", mark) == 0


def test_injection_is_escaped_and_token_never_printed(pull: PullRequest) -> None:
    result = pull.run()
    bodies = [c.body for c in pull.review_comments()] + [c.body for c in pull.issue_comments()]
    step = pull.summary_file.read_text()
    assert len([b for b in bodies if "CFG204" in b]) == 2
    for body in [b for b in bodies if "CFG204" in b] + [step]:
        assert not re.search(r"(?<!\\)<(img|b>)", body) and "\\<img" in body
        assert "@octocat" not in body and "@\u200boctocat" in body
        assert not re.search(r"(?<!\\)\[x(?<!\\)\]\(", body) and "\\*\\*b\\*\\*" in body
        assert not re.search(r"(?m)^\s*::", body), "a YAML newline cannot start a line"
    # the table cell cannot be split by the `|` from the YAML comment
    row = next(line for line in step.splitlines() if "CFG204" in line and line.startswith("|"))
    assert row.count("|") - row.count("\\|") == 6  # five columns
    # the mermaid chart title keeps only plain characters
    assert all("<" not in line and "@" not in line for line in step.splitlines() if "title" in line)
    # annotations: one line per finding, nothing can start a second workflow command; the first
    # line is the plain log line naming the compared commit
    assert result.stdout.startswith("cfgcheck: compared with ")
    lines = result.stdout.splitlines()[1:]
    assert lines and all(re.match(r"::(error|warning|notice) file=", line) for line in lines)
    # the token appears nowhere
    posted = json.dumps([r.body for r in pull.gh.requests])
    for text in (result.stdout, result.stderr, pull.sarif.read_text(), step, pull.output_file.read_text(), posted):
        assert pull.gh.token not in text


def test_only_findings_outside_the_diff(fake_github, tmp_path, monkeypatch) -> None:
    """An unused suppression annotation far above the changed line: summary only, no review."""
    base = ("apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata:\n  name: chat\n"
            "  annotations:\n    cfgcheck.io/ignore: \"CFG302,CFG301: staging tracks nightly on purpose\"\n"
            "spec:\n  runtime: vllm\n  replicas: 2\n  vllmConfig:\n    maxModelLen: 32768\n  resources:\n"
            "    cpu: \"2\"\n    memory: 24Gi\n  image: vllm/vllm-openai:nightly\n")
    head = base.replace("vllm/vllm-openai:nightly", f"vllm/vllm-openai:v0.23.0@{DIGEST}")
    pr = PullRequest(fake_github, tmp_path, monkeypatch, base=base, head=head)
    result = pr.run("--fail-on", "warning")
    assert result.exit_code == 1
    assert pr.reviews() == [] and pr.ops("pulls/create-review") == 0
    (summary,) = pr.issue_comments()
    assert "CFG002" in summary.body and "not in the diff" in summary.body
    assert "fixes **1** existing finding" in summary.body


def test_read_only_token_degrades(pull: PullRequest, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", pull.gh.read_token)
    result = pull.run()
    assert result.exit_code == 1  # by --fail-on: the errors still fail the check
    notices = [line for line in result.stderr.splitlines() if "read-only token" in line]
    assert len(notices) == 1 and "403" in notices[0]
    assert pull.review_comments() == [] and pull.issue_comments() == []
    assert result.stdout.count("::error ") == 1
    step = pull.summary_file.read_text()
    assert "read-only token" in step and "CFG204" in step and "| comment |" not in step
    assert pull.gh.read_token not in result.stderr + result.stdout + step
    assert pull.run("--fail-on", "never").exit_code == 0


def test_server_error_is_retried(pull: PullRequest) -> None:
    pull.gh.fail("pulls/create-review", 500, times=1)
    pull.gh.fail("pulls/list-files", 502, times=1)
    result = pull.run()
    assert result.exit_code == 1, result.stderr
    assert len(pull.reviews()) == 1 and len(pull.review_comments()) >= 2
    assert len(pull.gh.requests_for("pulls/create-review")) == 2


def test_bad_token_is_one_line_exit_2(pull: PullRequest, monkeypatch) -> None:
    secret = "ghs_" + "S3cr3tT0kenValue" * 3
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    result = pull.run()
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "401" in result.stderr
    assert secret not in result.stdout + result.stderr


def test_missing_pull_request_is_one_line_exit_2(pull: PullRequest) -> None:
    result = pull.run("--pr", "99")
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "404" in result.stderr


def test_bot_login_leaves_lookalike_comments_alone(pull: PullRequest) -> None:
    """A human comment that carries the bot's markers is never edited or deleted when the login is known."""
    lookalike = pull.gh.add_issue_comment(NAME, pull.number, f"{SUMMARY_MARKER}\nquoting the bot")
    result = pull.run("--bot-login", pull.gh.bot_login)
    assert result.exit_code == 1
    comments = pull.issue_comments()
    assert len(comments) == 2 and comments[0].id == lookalike.id and comments[0].body.endswith("quoting the bot")
    mark = len(pull.gh.requests)
    pull.run("--bot-login", pull.gh.bot_login)
    assert pull.ops("issues/update-comment", mark) == 0 and pull.ops("issues/create-comment", mark) == 0


def untouched(pull: PullRequest, comment) -> bool:
    """Neither edited nor deleted by anyone, with its body as seeded."""
    repo = pull.gh.repo(NAME)
    store = repo.issue_comments if hasattr(comment, "issue_number") else repo.review_comments
    body = comment.body
    return (comment.id in store and store[comment.id].body == body and not store[comment.id].edited_by
            and all(c.id != comment.id for c, _ in repo.deleted))


def test_default_bot_login_leaves_a_forged_summary_alone(pull: PullRequest) -> None:
    """Without --bot-login the bot is github-actions[bot]: a human's comment with the summary marker is
    neither overwritten nor deleted as a duplicate, now or on a re-run."""
    forged = pull.gh.add_issue_comment(NAME, pull.number, f"{SUMMARY_MARKER}\nall good, merge it", user="mallory")
    older = pull.gh.add_issue_comment(NAME, pull.number, f"{SUMMARY_MARKER}\nsecond copy", user="mallory")
    first = pull.run()
    assert first.exit_code == 1
    assert "comments by mallory carry cfgcheck's markers but not its login 'github-actions[bot]'" in first.stderr
    pull.push(FIXED)
    assert pull.run().exit_code == 0
    assert untouched(pull, forged) and untouched(pull, older)
    ours = [c for c in pull.issue_comments() if c.user == pull.gh.bot_login]
    assert len(ours) == 1 and ours[0].body.startswith(SUMMARY_MARKER) and ours[0].edited_by == [pull.gh.bot_login]


def test_forged_fingerprint_neither_suppresses_nor_is_touched(pull: PullRequest) -> None:
    """The PR author posts the bot's predictable fingerprint first: the bot still posts its own inline error,
    and never deletes or rewrites the forged comment (not even as "Resolved") when the finding goes away."""
    pull.run()
    real = {codes_in(c.body).pop(): c for c in pull.review_comments()}
    for comment in list(pull.gh.repo(NAME).review_comments.values()):  # a fresh PR, as the attacker sees it
        del pull.gh.repo(NAME).review_comments[comment.id]
    for comment in list(pull.gh.repo(NAME).issue_comments.values()):
        del pull.gh.repo(NAME).issue_comments[comment.id]
    forged = pull.gh.add_review_comment(NAME, pull.number, body=real["CFG204"].body, path=PATH, line=12)
    forged_resolved = pull.gh.add_review_comment(
        NAME, pull.number, body=real["CFG205"].body + f"\n{RESOLVED_MARKER}", path=PATH, line=16)
    pull.gh.reply(NAME, forged.id, "a reply, so a bot would 'resolve' rather than delete")

    assert pull.run().exit_code == 1
    bot = [c for c in pull.review_comments() if c.user == pull.gh.bot_login]
    assert {codes_in(c.body).pop() for c in bot} >= {"CFG204", "CFG205"}, "the forged marker suppressed nothing"
    pull.push(FIXED)
    assert pull.run().exit_code == 0
    assert untouched(pull, forged) and untouched(pull, forged_resolved)
    assert all(c.user != pull.gh.bot_login for c in pull.review_comments()), "the bot's own stale ones are gone"


def test_comments_under_another_login_are_reported_not_adopted(pull: PullRequest, monkeypatch) -> None:
    """A personal token posts as its user: cfgcheck says which login to configure, and with it re-runs clean."""
    monkeypatch.setenv("GITHUB_TOKEN", pull.gh.human_token)
    first = pull.run()
    assert f"'{pull.gh.human_login}', not 'github-actions[bot]'" in first.stderr
    assert "bot-login" in first.stderr and pull.gh.human_token not in first.stderr
    count = len(pull.review_comments())
    mark = len(pull.gh.requests)
    again = pull.run("--bot-login", pull.gh.human_login)
    assert "not 'github-actions[bot]'" not in again.stderr
    assert pull.ops("pulls/create-review", mark) == 0 and pull.ops("issues/create-comment", mark) == 0
    assert len(pull.review_comments()) == count and len(pull.issue_comments()) == 1


def test_one_refused_inline_comment_costs_only_itself(pull: PullRequest) -> None:
    """GitHub refuses a review for one bad comment (422); each is then posted alone, the refused one is listed in
    the summary, and the summary still updates."""
    pull.gh.inject("pulls/create-review", status=422, body={
        "message": "Unprocessable Entity", "errors": ["Pull request review thread line must be part of the diff"],
        "documentation_url": "https://docs.github.com/rest"})
    pull.gh.inject(lambda r: r.op == "pulls/create-review-comment" and "CFG205" in str((r.body or {}).get("body")),
                   status=422, body={"message": "Validation Failed", "errors": [
                       {"resource": "PullRequestReviewComment", "code": "custom", "field": "line",
                        "message": "line must be part of the diff"}],
                       "documentation_url": "https://docs.github.com/rest"})
    result = pull.run()
    assert result.exit_code == 1, result.stderr
    inline = {codes_in(c.body).pop() for c in pull.review_comments()}
    assert "CFG204" in inline and "CFG205" not in inline
    (summary,) = pull.issue_comments()
    row = next(line for line in summary.body.splitlines() if "CFG205" in line and line.startswith("|"))
    assert "GitHub refused the comment" in row
    assert result.stderr.count("422") == 2 and "Traceback" not in result.stderr


HUGE = "x" * 200_000


def test_huge_values_are_cut_to_fit_githubs_limit(fake_github, tmp_path, monkeypatch) -> None:
    """A 200,000-character served model name reaches the capacity table and every inline comment: each body is
    cut with a visible note and stays under 65,536 characters, so nothing is refused."""
    head = HEAD.replace('name: "chat<b>', f'name: "chat{HUGE}<b>')
    pr = PullRequest(fake_github, tmp_path, monkeypatch, base=BASE.replace('name: "chat<b>', f'name: "chat{HUGE}<b>'),
                     head=head)
    result = pr.run()
    assert result.exit_code == 1, result.stderr
    assert all(r.status is None or r.status < 400 for r in fake_github.requests), result.stderr
    inline = pr.review_comments()
    (summary,) = pr.issue_comments()
    assert {"CFG204", "CFG205"} <= codes_in(summary.body) and len(inline) >= 2
    for body in [summary.body] + [c.body for c in inline]:
        assert len(body) <= 65_536 and HUGE[:5000] not in body
    assert "truncated" in summary.body and all("truncated" in c.body for c in inline)


def test_summary_drops_rows_with_a_note_when_too_long() -> None:
    from cfgcheck.github.bodies import MAX_COMMENT
    from cfgcheck.github.summary import render_summary
    from cfgcheck.lint import LintResult
    from cfgcheck.model import Finding, Location

    findings = [Finding(code="CFG204", rule="memory-above-ceiling", severity="error",
                        message=f"finding {i}: " + "long words " * 80, location=Location(PATH, i, 1))
                for i in range(1, 400)]
    body = render_summary(LintResult(findings, [], []), [], None)
    assert len(body) <= MAX_COMMENT and "more (too many for one comment)" in body
    assert body.count("| error |") < 399


def test_stale_run_does_not_write(pull: PullRequest) -> None:
    """The PR moved on while this run linted an older head: the newer run owns the comments."""
    pull.gh.push(NAME, "feature", {"README.md": "newer\n"})
    result = pull.run()
    assert result.exit_code == 1
    assert pull.review_comments() == [] and pull.issue_comments() == []
    assert "moved on" in result.stderr and "moved on" in pull.summary_file.read_text()


def test_head_checkout_and_merge_checkout_agree(pull: PullRequest) -> None:
    """The base branch moves on after the PR was opened: the merge base keeps the diff to the PR's own."""
    git(pull.repo, "checkout", "-q", "main")
    (pull.repo / "apps/other.yaml").write_text(BASE.replace("name: chat", "name: other").replace(
        f"v0.23.0@{DIGEST}", "nightly"))
    git(pull.repo, "add", "-A")
    git(pull.repo, "commit", "-qm", "unrelated")
    tip = git(pull.repo, "rev-parse", "HEAD").strip()
    git(pull.repo, "checkout", "-q", "feature")
    head_run = pull.run("--no-comment", "--base", tip)
    git(pull.repo, "checkout", "-q", "--detach", tip)
    git(pull.repo, "merge", "-q", "--no-ff", "-m", "merge", "feature")
    merge_run = pull.run("--no-comment", "--base", tip)
    # the annotations agree; the first line names the compared commit (the fork point, or the tip)
    annotations = [run.stdout.splitlines()[1:] for run in (head_run, merge_run)]
    assert annotations[0] == annotations[1] and "other.yaml" not in head_run.stdout
    assert head_run.stdout.count("::error ") == 1


OTHER = BASE.replace('name: "chat<b>', 'name: "other<b>').replace(f"v0.23.0@{DIGEST}", "nightly")


def push_event(pull: PullRequest, monkeypatch) -> None:
    """A push to main: an event without a pull request, and a file the PR never touched with a finding."""
    (pull.repo / "apps/other.yaml").write_text(OTHER)
    pull.event.write_text(json.dumps({"ref": "refs/heads/main", "before": "0" * 40, "after": pull.base_sha,
                                      "repository": {"full_name": NAME}}))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")


def test_push_event_lints_the_whole_repository_for_code_scanning(pull: PullRequest, monkeypatch) -> None:
    push_event(pull, monkeypatch)
    result = pull.run("--fail-on", "warning")
    assert result.exit_code == 1, result.stderr
    assert "linting the whole repository (event push)" in result.stderr
    assert pull.gh.requests == [], "no pull request: no API call"
    sarif = json.loads(pull.sarif.read_text())
    files = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert files >= {PATH, "apps/other.yaml"}
    assert "apps/other.yaml" in result.stdout and "The repository has" in pull.summary_file.read_text()
    assert "findings=" in pull.output_file.read_text()


@pytest.mark.parametrize("event, pr, base, mode, expected", [
    ("pull_request", 7, None, "auto", "review"), ("pull_request_target", None, None, "auto", "review"),
    ("push", None, None, "auto", "lint"), ("schedule", None, None, "auto", "lint"),
    ("workflow_dispatch", None, None, "auto", "lint"), ("", None, "main", "auto", "review"),
    ("", None, None, "auto", "lint"), ("push", None, None, "review", "review"),
    ("pull_request", 7, None, "lint", "lint")])
def test_mode_follows_the_event(monkeypatch, event, pr, base, mode, expected) -> None:
    from cfgcheck.github.review import Context, Options, decide_mode

    monkeypatch.setenv("GITHUB_EVENT_NAME", event)
    options = Options(paths=[Path(".")], base=base, mode=mode)
    assert decide_mode(options, Context(NAME, pr, None, None)) == expected


def test_mode_lint_on_a_pull_request_posts_nothing(pull: PullRequest) -> None:
    result = pull.run("--mode", "lint", "--fail-on", "warning")
    assert result.exit_code == 1 and pull.gh.requests == []
    assert pull.review_comments() == [] and pull.issue_comments() == []
    assert "CFG205" in pull.sarif.read_text()


def test_mode_review_without_a_pull_request_or_base_is_a_usage_error(pull: PullRequest, monkeypatch) -> None:
    from cfgcheck.config import ConfigError

    push_event(pull, monkeypatch)
    monkeypatch.setenv("CFGCHECK_MODE", "review")
    with pytest.raises(ConfigError, match="no base to compare with"):
        pull.run()


@pytest.mark.parametrize("text", [".@org/team", "é@org/team", "x@octocat", "&commat;org/team", "&#64;octocat",
                                  "&#x40;octocat", "&#X40;org/team"])
def test_mentions_cannot_be_spelled_in_any_way(text: str) -> None:
    """GitHub would notify on each of these after rendering; escaped, none is a mention or an entity."""
    from cfgcheck.reporters.markdown import escape

    out = escape(text)
    assert not re.search(r"@[A-Za-z0-9]", out) and not re.search(r"&(?!amp;)", out), out
    assert out.replace("\u200b", "").replace("&amp;", "&").replace("\\", "") == text


@pytest.mark.parametrize("text", ["https://evil.example/x?y=1", "see http://a.b/c", "www.evil.example",
                                  "WWW.Evil.example/x", "ftp://files.example", "mail me: a@b.example"])
def test_bare_urls_are_not_autolinked(text: str) -> None:
    from cfgcheck.reporters.markdown import escape

    out = escape(text)
    assert "://" not in out and not re.search(r"(?i)\bwww\.", out) and not re.search(r"@[a-z]", out), out
    assert out.replace("\u200b", "") == text


def test_review_bodies_carry_no_mention_entity_or_autolink(fake_github, tmp_path, monkeypatch) -> None:
    tricks = ".@acme/admins é@acme/ops &commat;acme/team &#64;octocat &#x40;octocat https://evil.example/x www.evil.example"
    head = HEAD.replace("# HARD CEILING", f"# HARD CEILING {tricks}")
    pr = PullRequest(fake_github, tmp_path, monkeypatch, base=BASE.replace("# HARD CEILING", f"# HARD CEILING {tricks}"),
                     head=head)
    pr.run()
    bodies = [c.body for c in pr.review_comments()] + [c.body for c in pr.issue_comments()]
    assert any("acme/admins" in b for b in bodies)
    for body in bodies:
        assert not re.search(r"@[A-Za-z0-9]", body), body
        assert not re.search(r"&(?:commat|#64|#x40);", body, re.I)
        assert "https://evil" not in body and "www.evil" not in body


def test_github_and_jinja2_stay_off_the_lint_path() -> None:
    import subprocess
    import sys

    code = ("import sys, cfgcheck.cli, cfgcheck.github.review, cfgcheck.github.client; "
            "print(sorted(m for m in ('github', 'jinja2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_action_yml_is_valid() -> None:
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    loaded = parse_text("action.yml", text)
    assert loaded.error is None
    action = loaded.documents[0].root.to_python()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"paths", "config", "fail-on", "github-token", "sarif-file", "comment",
                                     "bot-login", "mode", "hub", "baseline"}
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert action["inputs"]["bot-login"]["default"] == "github-actions[bot]"
    assert action["inputs"]["mode"]["default"] == "auto"
    assert set(action["outputs"]) == {"findings", "errors", "sarif-file"}
    steps = action["runs"]["steps"]
    assert any(str(s.get("uses", "")).startswith("actions/setup-python@") for s in steps)
    runs = [s["run"] for s in steps if "run" in s]
    assert runs and all("${{" not in run for run in runs), "inputs reach the shell through env:, never ${{ }}"
    assert any("args=(review " in run and "cfgcheck-venv" in run for run in runs)
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    review = next(s for s in steps if "run" in s and "args=(review " in s["run"])
    assert review["id"] and "GITHUB_TOKEN" in review["env"]
    assert review["env"]["CFGCHECK_BOT_LOGIN"] == "${{ inputs.bot-login }}"
    assert review["env"]["CFGCHECK_MODE"] == "${{ inputs.mode }}"
    # the Hub lookup sends model ids out of CI: off unless asked for, said in its description, and its
    # answers cached between runs in the folder cfgcheck uses
    assert action["inputs"]["hub"]["default"] == "false" and review["env"]["CFGCHECK_HUB"] == "${{ inputs.hub }}"
    assert "model ids" in action["inputs"]["hub"]["description"] and "HF_ENDPOINT" in action["inputs"]["hub"]["description"]
    assert action["inputs"]["baseline"]["default"] == "" and review["env"]["CFGCHECK_BASELINE"] == "${{ inputs.baseline }}"
    hub_cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@") and "hub" in s["with"]["key"])
    assert hub_cache["with"]["path"] == review["env"]["CFGCHECK_CACHE_DIR"]
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.{review['id']}.outputs.{name} }}}}"


def test_action_pins_actions_and_installs_from_the_hash_lock() -> None:
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    uses = re.findall(r"(?m)^\s*(?:-\s*)?uses:\s*(\S+)(.*)$", text)
    assert {ref.split("@")[0] for ref, _ in uses} >= {"actions/setup-python", "actions/cache"}
    for ref, comment in uses:  # a tag can be moved; a commit cannot
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), ref
        assert re.fullmatch(r"\s+#\s+v\d+(\.\d+)*", comment), f"{ref}: the tag belongs in a comment"
    install = next(s["run"] for s in parse_text("action.yml", text).documents[0].root.to_python()["runs"]["steps"]
                   if "pip install" in s.get("run", "") or "--require-hashes" in s.get("run", ""))
    assert '--require-hashes -r "$GITHUB_ACTION_PATH/requirements/action.txt"' in install
    assert '--no-deps --no-build-isolation "$GITHUB_ACTION_PATH"' in install
    assert "PIP_CACHE_DIR" in text and "hashlib.sha256" in text  # the cache is keyed on the lock


def test_readme_workflow_is_hardened() -> None:
    """The workflow users copy: actions pinned by commit, no token left in .git/config, code scanning on push."""
    import yaml

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("Save this as `.github/workflows/cfgcheck.yml`:", 1)[1].split("```yaml\n", 1)[1]
    workflow = yaml.safe_load(block.split("```", 1)[0])
    assert {"pull_request", "push", "schedule"} <= set(workflow[True])  # YAML 1.1 reads the key "on" as True
    steps = workflow["jobs"]["cfgcheck"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False and checkout["with"]["fetch-depth"] == 0
    for step in steps:
        name, _, ref = step.get("uses", "").partition("@")
        if not name.startswith("cfgcheck/"):
            assert re.fullmatch(r"[0-9a-f]{40}", ref), step["uses"]
    # cfgcheck itself: no release is tagged, so a tag would not resolve; main does, and the text says how to pin it
    cfgcheck = next(s for s in steps if s.get("uses", "").startswith("cfgcheck/cfgcheck@"))
    assert cfgcheck["uses"] == "cfgcheck/cfgcheck@main" and "git ls-remote https://github.com/cfgcheck/cfgcheck" in readme
    assert cfgcheck["with"]["baseline"] == ".cfgcheck-baseline.json" and "hub" not in cfgcheck["with"]
    # SARIF: the permission it needs, and no upload where the token is read-only (forks, Dependabot)
    job = workflow["jobs"]["cfgcheck"]
    assert job["permissions"] == {"contents": "read", "pull-requests": "write", "security-events": "write"}
    assert workflow["permissions"] == {"contents": "read"}
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    condition = " ".join(upload["if"].split())
    assert "github.event.pull_request.head.repo.full_name == github.repository" in condition
    assert "github.actor != 'dependabot[bot]'" in condition and "always()" in condition


def action_step(step_id: str) -> dict:
    action = parse_text("action.yml", (REPO / "action.yml").read_text(encoding="utf-8")).documents[0].root.to_python()
    return next(s for s in action["runs"]["steps"] if s.get("id") == step_id)


def run_step(tmp_path: Path, cfgcheck: str, env: dict[str, str], cwd: Path):
    """The Action's "Run cfgcheck" step, as the runner runs it: bash, RUNNER_TEMP holding the venv."""
    import os
    import stat
    import subprocess

    venv_bin = tmp_path / "runner-temp" / "cfgcheck-venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "cfgcheck").write_text(cfgcheck)
    (venv_bin / "cfgcheck").chmod(stat.S_IRWXU)
    defaults = {"CFGCHECK_PATHS": ".", "CFGCHECK_CONFIG": "", "CFGCHECK_FAIL_ON": "error", "CFGCHECK_SARIF": "",
                "CFGCHECK_COMMENT": "true", "CFGCHECK_BOT_LOGIN": "github-actions[bot]", "CFGCHECK_MODE": "auto",
                "CFGCHECK_BASELINE": ""}
    full = {**os.environ, **defaults, **env, "RUNNER_TEMP": str(tmp_path / "runner-temp")}
    return subprocess.run(["bash", "-c", action_step("review")["run"]], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


def test_action_run_step_passes_inputs_as_arguments_never_as_code(tmp_path: Path) -> None:
    echo = "#!/usr/bin/env bash\nprintf '%s\\n' \"$@\"\n"
    out = run_step(tmp_path, echo, {"CFGCHECK_PATHS": "apps/*.yaml  'two words'\n$(touch pwned) -x",
                                    "CFGCHECK_COMMENT": "false", "CFGCHECK_SARIF": "out dir/c.sarif",
                                    "CFGCHECK_CONFIG": "cfg;rm -rf /.yaml", "CFGCHECK_BASELINE": "$(touch pwned).json"},
                   tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["review", "--fail-on", "error", "--config", "cfg;rm -rf /.yaml", "--sarif",
                                       "out dir/c.sarif", "--baseline", "$(touch pwned).json", "--no-comment", "--",
                                       "apps/*.yaml", "'two", "words'", "$(touch", "pwned)", "-x"]
    assert not (tmp_path / "pwned").exists()


def test_action_run_step_on_push_lints_the_repository(tmp_path: Path) -> None:
    """The real CLI behind the step: a push event (no pull request) lints everything and writes SARIF."""
    import sys

    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "other.yaml").write_text(OTHER)
    git(repo, "init", "-q")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main", "repository": {"full_name": NAME}}))
    real = f"#!/usr/bin/env bash\nexec {sys.executable} -m cfgcheck \"$@\"\n"
    env = {"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": NAME,
           "CFGCHECK_SARIF": str(tmp_path / "cfgcheck.sarif"), "CFGCHECK_FAIL_ON": "warning",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
    out = run_step(tmp_path, real, env, repo)
    assert out.returncode == 1, out.stderr
    assert "linting the whole repository (event push)" in out.stderr and "Traceback" not in out.stderr
    results = json.loads((tmp_path / "cfgcheck.sarif").read_text())["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"CFG302"}
    assert "sarif-file=" in (tmp_path / "output.txt").read_text()


def _lock() -> dict[str, tuple[str, list[str]]]:
    """requirements/action.txt: normalized name -> (version, hashes)."""
    text = (REPO / "requirements" / "action.txt").read_text(encoding="utf-8")
    entries = {}
    for block in re.split(r"\n(?=[A-Za-z])", text.split("\n", 1)[1] if text.startswith("#") else text):
        match = re.match(r"([A-Za-z0-9._-]+)==([^\s\\;]+)", block)
        if match:
            entries[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = (
                match.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return entries


def test_action_lock_matches_pyproject() -> None:
    """Every dependency and build requirement of pyproject.toml is locked, at a version its range admits, with
    hashes; nothing is left unpinned."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    lock = _lock()
    assert lock and all(hashes for _, hashes in lock.values()), "every locked file is hash-checked"
    raw = (REPO / "requirements" / "action.txt").read_text(encoding="utf-8")
    assert not re.search(r"(?m)^[A-Za-z][^=\n]*$", raw), "every requirement is pinned with =="
    wanted = project["project"]["dependencies"] + project["build-system"]["requires"]
    python = str(action_step("python")["with"]["python-version"])  # the interpreter the Action installs into
    for spec in map(Requirement, wanted):
        if spec.marker and not spec.marker.evaluate({"python_version": python, "python_full_version": python + ".0"}):
            continue  # e.g. tomli, for Python 3.10 only
        name = re.sub(r"[-_.]+", "-", spec.name).lower()
        assert name in lock, f"{spec.name} is in pyproject.toml but not in requirements/action.txt"
        version = lock[name][0]
        assert spec.specifier.contains(version, prereleases=True), f"{spec.name}=={version} is outside {spec}"
