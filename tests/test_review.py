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
    assert "fixes **2** existing findings" in summary.body


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
    assert set(action["inputs"]) == {"paths", "config", "fail-on", "github-token", "sarif-file", "comment"}
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert set(action["outputs"]) == {"findings", "errors", "sarif-file"}
    steps = action["runs"]["steps"]
    assert any(str(s.get("uses", "")).startswith("actions/setup-python@") for s in steps)
    runs = [s["run"] for s in steps if "run" in s]
    assert runs and all("${{" not in run for run in runs), "inputs reach the shell through env:, never ${{ }}"
    assert any('pip install' in run and '"$GITHUB_ACTION_PATH"' in run for run in runs)
    assert any("args=(review " in run and "cfgcheck-venv" in run for run in runs)
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    review = next(s for s in steps if "run" in s and "args=(review " in s["run"])
    assert review["id"] and "GITHUB_TOKEN" in review["env"]
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.{review['id']}.outputs.{name} }}}}"
