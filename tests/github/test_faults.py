"""GitHub faults against the fake server: each is retried, degraded, or reported in one line, and the
next run completes the work without duplicating it.

``cfgcheck review`` runs in-process (typer's runner) on the pull request of tests/github/test_review.py;
``cfgcheck propose`` faults (and the working-tree check after each) are in tests/propose/test_worktree_safety.py.
"""

from __future__ import annotations

import pytest

from tests.github.test_review import NAME, PullRequest, codes_in

REQUESTS_TIMEOUT = "1"  # CFGCHECK_GITHUB_TIMEOUT: seconds per request (PyGithub takes whole seconds), so a 3 s delay is a timeout


@pytest.fixture
def pull(fake_github, tmp_path, monkeypatch) -> PullRequest:
    monkeypatch.setenv("CFGCHECK_GITHUB_TIMEOUT", REQUESTS_TIMEOUT)
    return PullRequest(fake_github, tmp_path, monkeypatch)


def outcome(pull: PullRequest, result) -> str:
    """Retried / degraded / reported: never a traceback, a one-line error when it exits 2, no token."""
    out, err = result.stdout, result.stderr
    assert result.exit_code in (0, 1, 2), (result.exit_code, out, err)
    # PyGithub logs its retries; under typer's runner a handler may hold a closed stream and print a
    # "--- Logging error ---" block with a traceback of the logging module itself: not cfgcheck's
    assert (out + err).count("Traceback") == (out + err).count("--- Logging error ---")
    assert pull.gh.token not in out + err
    if result.exit_code == 2:
        assert err.strip().count("\n") == 0 and err.startswith("cfgcheck: error:"), err
        return "reported"
    return "completed"


def assert_complete_once(pull: PullRequest) -> None:
    """After the faults clear, a re-run leaves exactly one summary and no duplicated inline comment."""
    pull.gh.clear_faults()
    result = pull.run()
    assert result.exit_code == 1, result.stdout + result.stderr
    bot = [c for c in pull.issue_comments() if c.user == pull.gh.bot_login]
    assert len(bot) == 1, [c.body[:60] for c in bot]
    bodies = [c.body for c in pull.review_comments()]
    markers = [b.split("cfgcheck:fp=")[1][:40] for b in bodies if "cfgcheck:fp=" in b]
    assert len(markers) == len(set(markers)), "an inline comment was posted twice"
    assert codes_in(bot[0].body) or bodies


FAULTS = {
    "5xx-on-list-files": lambda gh, n: gh.fail("pulls/list-files", 503, times=2),
    "5xx-on-create-review": lambda gh, n: gh.fail("pulls/create-review", 502, times=2),
    "5xx-on-summary": lambda gh, n: gh.fail("issues/create-comment", 500, times=2),
    "5xx-persistent": lambda gh, n: gh.fail("*", 503, times=50),
    # Retry-After: 0 takes the same retry path without the wait (test_fakegithub checks a 1 s one is honoured)
    "secondary-rate-limit": lambda gh, n: gh.rate_limit("pulls/create-review", retry_after=0, times=1),
    "rate-limit-on-listing": lambda gh, n: gh.rate_limit("issues/list-comments", retry_after=0, times=2),
    "timeout-on-create-review": lambda gh, n: gh.timeout("pulls/create-review", 3, times=1),
    "timeout-on-summary": lambda gh, n: gh.timeout("issues/create-comment", 3, times=1),
    "timeout-persistent": lambda gh, n: gh.timeout("*", 3, times=50),
    "422-line-outside-diff": lambda gh, n: gh.inject("pulls/create-review", status=422, times=1, body={
        "message": "Unprocessable Entity", "errors": ["Line could not be resolved"],
        "documentation_url": "https://docs.github.com/rest"}),
    "404-pull-request": lambda gh, n: gh.not_found("pulls/get", times=5),
    "closed-between-calls": lambda gh, n: gh.close_pull_on("pulls/list-files", NAME, n),
    "branch-deleted-between-calls": lambda gh, n: gh.close_pull_on("pulls/list-files", NAME, n, delete_branch=True),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_review_under_fault(pull: PullRequest, fault: str) -> None:
    FAULTS[fault](pull.gh, pull.number)
    result = pull.run()
    kind = outcome(pull, result)
    if fault in ("5xx-on-list-files", "5xx-on-create-review", "5xx-on-summary", "secondary-rate-limit",
                 "rate-limit-on-listing"):
        assert kind == "completed" and result.exit_code == 1, result.stderr  # retried
    if fault == "422-line-outside-diff":
        # degraded: the findings still reach the reviewers (summary, annotations), exit follows --fail-on
        assert result.exit_code == 1, result.stderr
        assert codes_in(pull.summary_file.read_text()) and "::error" in result.stdout
    if fault.startswith(("closed", "branch-deleted")):
        return  # the pull request is gone: nothing to resume
    assert_complete_once(pull)


HTML = b"<html><head><title>502 Bad Gateway</title></head><body>upstream</body></html>"
# Answers no GitHub endpoint documents: cfgcheck ended with exit 2 (or a traceback) and posted nothing.
UNEXPECTED = {
    "html-502-everywhere": lambda gh: gh.inject("*", status=502, body=HTML, times=50,
                                                headers={"Content-Type": "text/html"}),
    "html-200-on-list-files": lambda gh: gh.inject("pulls/list-files", status=200, body=HTML, times=5,
                                                   headers={"Content-Type": "text/html"}),
    "404-on-list-review-comments": lambda gh: gh.not_found("pulls/list-review-comments", times=5),
    "404-on-create-review": lambda gh: gh.not_found("pulls/create-review", times=5),
    "pull-without-head": lambda gh: gh.inject("pulls/get", status=200, body={"number": 1, "state": "open"}, times=5),
    "files-of-the-wrong-shape": lambda gh: gh.inject("pulls/list-files", status=200, times=5,
                                                     body=[{"filename": ["not", "a", "string"], "patch": 7}]),
    "comments-of-the-wrong-shape": lambda gh: gh.inject("issues/list-comments", status=200, times=5,
                                                        body={"comments": "nope"}),
}


@pytest.mark.parametrize("fault", list(UNEXPECTED))
def test_review_degrades_on_an_unexpected_answer(pull: PullRequest, fault: str) -> None:
    """Post what can be posted, say what failed in one line (stderr and the step summary), and exit by
    the findings: the annotations, SARIF and step summary still carry them."""
    UNEXPECTED[fault](pull.gh)
    result = pull.run()
    assert outcome(pull, result) == "completed" and result.exit_code == 1, (result.stdout, result.stderr)
    failed = [line for line in result.stderr.splitlines() if "GitHub" in line and "degraded" in line]
    assert len(failed) == 1, result.stderr
    assert "<html" not in result.stderr
    summary = pull.summary_file.read_text()
    assert "degraded" in summary and codes_in(summary)
    assert "::error" in result.stdout and pull.sarif.is_file()
    assert_complete_once(pull)
