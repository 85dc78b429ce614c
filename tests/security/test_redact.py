"""``cfgcheck.redact``: the one redaction pass over every body sent to GitHub and every line review prints."""

from __future__ import annotations

import base64
import os
import time

import pytest

from cfgcheck.redact import environment_secrets, redact
from cfgcheck.reporters.markdown import escape

BODY = "Kn0wnT0kenValue" * 3  # 45 alphanumerics, the shape of a token without its prefix
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No secret-named variable of the machine running the tests takes part."""
    for name, value in list(os.environ.items()):
        if environment_secrets({name: value}):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("token", [f"ghp_{BODY}", f"gho_{BODY}", f"ghu_{BODY}", f"ghs_{BODY}", f"ghr_{BODY}",
                                   f"github_pat_11ABCDEFG0_{BODY}"])
def test_every_github_token_format_by_shape(token: str) -> None:
    for text in (f"error: {token}.", f"url=https://api/{token}/x", escape(f"value {token} here")):
        out = redact(text)
        assert BODY not in out and "***" in out, out


@pytest.mark.parametrize("text", [f"Authorization: token {COMMIT}", f"token={COMMIT}", f"password: '{COMMIT}'",
                                  f"Bearer {COMMIT}", f"GH_TOKEN={COMMIT}", f"basic {COMMIT}"])
def test_classic_40_hex_tokens_where_named_as_credentials(text: str) -> None:
    assert COMMIT not in redact(text)


def test_commit_ids_and_fingerprints_survive() -> None:
    text = (f"<!-- cfgcheck:fp={COMMIT} -->\n[a.yaml:3](https://github.com/o/r/blob/{COMMIT}/a.yaml#L3) "
            f"· head {COMMIT[:7]} · sha256:{'a' * 64}")
    assert redact(text) == text


def test_authorization_and_extraheader_values() -> None:
    token = f"ghs_{BODY}"
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    for text in (f"AUTHORIZATION: basic {basic}", f"http.https://github.com/.extraheader AUTHORIZATION: basic {basic}",
                 "Authorization: Bearer abc.def.ghi", "proxy-authorization: Basic dXNlcjpwYXNz"):
        out = redact(text)
        assert basic not in out and "abc.def" not in out and "dXNlcjpwYXNz" not in out, out
    # the base64 of the configured token alone (a git config dump without the header name) too
    assert basic not in redact(f"config: {basic}", token)
    assert basic.rstrip("=") not in redact(f"config: {basic.rstrip('=')}", token)


@pytest.mark.parametrize("configured", [f"plain-secret-{'q' * 24}", f"plain-secret-{'q' * 24}\n",
                                        f"  {BODY}\r\n", BODY])
def test_the_configured_token_exactly_with_or_without_whitespace(configured: str) -> None:
    bare = configured.strip()
    for text in (f"failed with {bare}", f"failed with {configured}", escape(f"a *value* {bare}_x")):
        out = redact(text, configured)
        assert bare not in out and bare.replace("_", "\\_") not in out, out
    assert redact("nothing here", [None, configured, ""]) == "nothing here"


def test_url_credentials_and_query_strings() -> None:
    text = ("fatal: unable to access 'https://x-access-token:s3cr3t@github.com/o/r.git/': 403 "
            "and https://host/model?access_token=abc&rev=2#frag and git@github.com:o/r.git")
    out = redact(text)
    assert "s3cr3t" not in out and "access_token=abc" not in out
    assert "https://***@github.com/o/r.git/" in out and "https://host/model?***#frag" in out
    assert "git@github.com:o/r.git" in out  # an scp-style remote has no credential
    escaped = escape("see https://u:pw@host/x?sig=123")  # the Markdown escape breaks the link; redaction holds
    assert "pw" not in redact(escaped) and "sig=123" not in redact(escaped)


def test_secret_environment_values(monkeypatch) -> None:
    secrets = {"HF_TOKEN": "hf_" + "Zz9Yy8Xx7Ww6" * 2, "OPENAI_API_KEY": "sk-live-abcdef123456",
               "DB_PASSWORD": "hunter2hunter2", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GITHUB_EVENT_PATH", "/home/runner/work/_temp/event.json")
    monkeypatch.setenv("CFGCHECK_BOT_LOGIN", "github-actions[bot]")
    monkeypatch.setenv("KEYBOARD_LAYOUT", "qwerty-dvorak")
    text = " ".join(secrets.values()) + " /home/runner/work/_temp/event.json github-actions[bot] qwerty-dvorak"
    out = redact(text)
    assert not any(value in out for value in secrets.values()), out
    assert "event.json" in out and "github-actions[bot]" in out and "qwerty-dvorak" in out
    assert all(value not in redact(escape(value)) for value in secrets.values())


@pytest.mark.parametrize("hostile", ["a://" * 25_000, "token " * 20_000 + "x", "ghs_" * 25_000,
                                     "Authorization: " * 7_000, "https://" + "?" * 100_000,
                                     "password: " + "f" * 100_000, "x:" + "/" * 100_000 + "@"])
def test_linear_on_hostile_100kb_inputs(hostile: str) -> None:
    started = time.perf_counter()
    redact(hostile, f"ghs_{BODY}")
    assert time.perf_counter() - started < 5, "quadratic backtracking"  # linear: milliseconds; quadratic: minutes


def test_github_client_errors_are_redacted() -> None:
    from cfgcheck.github.client import describe, token_from

    token = f"  plain{BODY}\n"
    assert token_from(token) == token.strip()
    error = describe(ValueError(f"Invalid header value b'token {token}' for https://u:p@h/x?t=1"), token, "read")
    assert BODY not in str(error) and "u:p@" not in str(error) and "t=1" not in str(error)
    assert str(error).count("\n") == 0
