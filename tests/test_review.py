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

BASE = f"""\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  replicas: 2
  image: vllm/vllm-openai:v0.23.0@{DIGEST}
  # measured: 8 fits the pool
  parallelSlots: 8
  vllmConfig:
    maxModelLen: 32768
  extraArgs:
    - --enable-prefix-caching
"""
INJECTION = "1<img src=x onerror=alert(1)>@octocat|**b**[x](http://evil)\\n::set-output name=pwned::1"
# CFG106 on parallelSlots (line 10: outside the diff), CFG101 on line 15, CFG105 (the injection) on line 17
HEAD = BASE + f"""\
    - --max-num-seq
    - "4"
    - "--kv-cache-memory-bytes={INJECTION}"
"""
# both inline findings fixed
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
    assert first.exit_code == 1, first.stderr  # errors introduced, --fail-on error
    reviews = pull.reviews()
    assert len(reviews) == 1 and "cfgcheck" in reviews[0].body
    inline = pull.review_comments()
    assert sorted(codes_in(c.body).pop() for c in inline) == ["CFG101", "CFG105"]
    assert all(c.side == "RIGHT" and c.line in (15, 17) for c in inline)
    assert all(len(FP_MARKER.findall(c.body)) == 1 for c in inline)
    cfg101 = next(c for c in inline if "CFG101" in c.body)
    assert "docs/rules.md#cfg101-abbreviated-flag" in cfg101.body and "**Fix:**" in cfg101.body
    summaries = pull.issue_comments()
    assert len(summaries) == 1 and summaries[0].body.startswith(SUMMARY_MARKER)
    summary = summaries[0].body
    assert codes_in(summary) >= {"CFG101", "CFG105", "CFG106"}
    assert "not in the diff" in summary  # CFG106 sits on parallelSlots, an unchanged line
    assert "max\\_num\\_seqs" in summary and "| before | after |" in summary
    assert "1 new review comments" not in first.stderr and "2 new review comments" in first.stderr
    # annotations, step summary, outputs, SARIF
    assert first.stdout.count("::error ") == 2 and first.stdout.count("::warning ") == 1
    assert "CFG106" in pull.summary_file.read_text()
    outputs = pull.output_file.read_text()
    assert "findings=3\n" in outputs and "errors=2\n" in outputs and f"sarif-file={pull.sarif}\n" in outputs
    sarif = json.loads(pull.sarif.read_text())
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"CFG101", "CFG105", "CFG106"}

    # re-run, nothing changed: nothing new, the summary is not duplicated
    mark = len(pull.gh.requests)
    again = pull.run()
    assert again.exit_code == 1
    assert pull.ops("pulls/create-review", mark) == 0 and pull.ops("issues/create-comment", mark) == 0
    assert pull.ops("pulls/delete-review-comment", mark) == 0
    assert len(pull.review_comments()) == 2 and len(pull.issue_comments()) == 1 and len(pull.reviews()) == 1
    assert "summary comment unchanged" in again.stderr

    # a human replies to the CFG105 comment; then both inline findings are fixed
    cfg105 = next(c for c in inline if "CFG105" in c.body)
    pull.gh.reply(NAME, cfg105.id, "why is this an error?")
    pull.push(FIXED)
    mark = len(pull.gh.requests)
    fixed = pull.run()
    assert fixed.exit_code == 0, fixed.stdout + fixed.stderr
    assert pull.ops("pulls/create-review", mark) == 0 and pull.ops("issues/create-comment", mark) == 0
    left = pull.review_comments()
    assert [c.id for c in left] == [cfg105.id], "the unreplied stale comment is deleted"
    head = pull.gh.repo(NAME).branches["feature"]
    assert RESOLVED_MARKER in left[0].body and f"Resolved in {head[:7]}" in left[0].body
    assert len(pull.review_comments(top_level=False)) == 2, "the human reply stays"
    summaries = pull.issue_comments()
    assert len(summaries) == 1 and summaries[0].id == pull.issue_comments()[0].id
    assert "no new findings" in summaries[0].body and "fixes **" in summaries[0].body
    assert pull.ops("issues/update-comment", mark) == 1

    # one more run: the resolved comment is left as it is
    mark = len(pull.gh.requests)
    pull.run()
    assert pull.ops("pulls/update-review-comment", mark) == 0 and pull.ops("pulls/delete-review-comment", mark) == 0


def test_injection_is_escaped_and_token_never_printed(pull: PullRequest) -> None:
    result = pull.run()
    bodies = [c.body for c in pull.review_comments()] + [c.body for c in pull.issue_comments()]
    bodies += [r.body for r in pull.reviews()]
    step = pull.summary_file.read_text()
    for body in [b for b in bodies if "CFG105" in b] + [step]:
        assert "<img" not in body and "\\<img" in body
        assert "@octocat" not in body and "@\u200boctocat" in body
        assert "[x](http://evil)" not in body and "\\*\\*b\\*\\*" in body
        assert not re.search(r"(?m)^::", body)
    # the table cell cannot be split by the `|` from the YAML value
    row = next(line for line in step.splitlines() if "CFG105" in line and line.startswith("|"))
    assert row.count("|") - row.count("\\|") == 5
    # annotations: one line each, nothing can start a second workflow command
    lines = result.stdout.splitlines()
    assert all(re.match(r"::(error|warning|notice) file=", line) for line in lines)
    assert "%0A::set-output" in result.stdout
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
    assert result.stdout.count("::error ") == 2
    step = pull.summary_file.read_text()
    assert "read-only token" in step and "CFG105" in step and "not in the diff" not in step
    assert pull.gh.read_token not in result.stderr + result.stdout + step
    assert pull.run("--fail-on", "never").exit_code == 0


def test_server_error_is_retried(pull: PullRequest) -> None:
    pull.gh.fail("pulls/create-review", 500, times=1)
    pull.gh.fail("pulls/list-files", 502, times=1)
    result = pull.run()
    assert result.exit_code == 1, result.stderr
    assert len(pull.reviews()) == 1 and len(pull.review_comments()) == 2
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
    assert head_run.stdout == merge_run.stdout and "other.yaml" not in head_run.stdout
    assert head_run.stdout.count("::error ") == 2


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
    assert any("cfgcheck review" in run for run in runs)
    assert all(s.get("shell") == "bash" for s in steps if "run" in s)
    review = next(s for s in steps if "run" in s and "cfgcheck review" in s["run"])
    assert review["id"] and "GITHUB_TOKEN" in review["env"]
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.{review['id']}.outputs.{name} }}}}"
