"""Secrets: a token never appears in stdout, stderr, logs, SARIF, comments, git state or error messages;
secret-looking values in linted files are never echoed (CFG305 names the flag, not the value).

Every command runs with a known token value (as GITHUB_TOKEN, GH_TOKEN and ``--token``) and every
output is searched for it: the streams, the files written (SARIF, step summary, step outputs, ADR, PR
body), what reached the fake GitHub server (reviews, comments, PR bodies), and the clone's .git.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck.reporters import FORMATS
from test_propose import CAP_AND_RAISE, REPO, Mirror, git_env, seed_repo
from test_review import NAME, PullRequest

TOKEN = "ghs_" + "Kn0wnT0kenValue" * 3  # a GitHub-shaped token: redaction by pattern is not enough alone
PLAIN = "plain-secret-" + "q" * 24  # not GitHub-shaped: only exact redaction catches it
SECRET_VALUES = ("sk-live-" + "A1b2C3d4" * 4, "hf_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0", "s3cr3t-api-key-value")

SECRETS_FILE = f"""\
# vllm
apiVersion: apps/v1
kind: Deployment
metadata: {{name: leaky}}
spec:
  template:
    spec:
      containers:
      - name: engine
        image: vllm/vllm-openai:v0.26.0
        command: [vllm, serve, org/model]
        args: [--api-key, "{SECRET_VALUES[2]}", --max-model-len, "4096", --served-model-name, "{SECRET_VALUES[0]}"]
        env:
        - name: HF_TOKEN
          value: "{SECRET_VALUES[1]}"
        - name: VLLM_ADDITIONAL_ARGS
          value: "--api-key={SECRET_VALUES[0]}"
"""


def assert_clean(*texts: str, secrets=(TOKEN, PLAIN)) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text, f"secret leaked: ...{text[max(0, text.find(secret) - 80):text.find(secret)]}"


def run(cwd: Path, *args: str, token: str = TOKEN, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**git_env(cwd.parent), "GITHUB_TOKEN": token, "GH_TOKEN": token, **(env or {})}
    out = subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=cwd, capture_output=True, text=True,
                         env=full, timeout=120)
    assert "Traceback" not in out.stderr, out.stderr
    return out


@pytest.mark.parametrize("token", [TOKEN, PLAIN])
def test_local_commands_never_print_the_token(tmp_path: Path, token: str) -> None:
    (tmp_path / "leaky.yaml").write_text(SECRETS_FILE, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sarif = tmp_path / "out.sarif"
    outputs = []
    for args in (["lint", "."], ["lint", ".", "-f", "json"], ["lint", ".", "-f", "github"], ["lint", ".", "-f", "markdown"],
                 ["lint", ".", "-f", "sarif", "-o", str(sarif)], ["capacity", "."], ["capacity", ".", "-f", "json"],
                 ["rules"], ["rule", "CFG305"], ["fix", ".", "--diff"], ["lint", "--config", "missing.yaml"],
                 ["lint", "--base", "no-such-ref", "."], ["propose", "--set", "x.y=1", "--title", "t", "--why", "w",
                                                         "--dry-run", "--token", token], ["--help"], ["nonsense"]):
        out = run(tmp_path, *args, token=token)
        outputs += [out.stdout, out.stderr]
    outputs.append(sarif.read_text(encoding="utf-8"))
    assert_clean(*outputs, secrets=(token,))


def test_secret_values_in_linted_files_are_never_echoed(tmp_path: Path) -> None:
    (tmp_path / "leaky.yaml").write_text(SECRETS_FILE, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    outputs = []
    for fmt in FORMATS:
        out = run(tmp_path, "lint", ".", "-f", fmt)
        outputs += [out.stdout, out.stderr]
        assert "CFG305" in out.stdout or fmt == "markdown" and "CFG305" in out.stdout, out.stdout
    for fmt in ("text", "json"):
        out = run(tmp_path, "capacity", ".", "-f", fmt)
        outputs += [out.stdout, out.stderr]
    json_out = json.loads(run(tmp_path, "lint", ".", "-f", "json").stdout)
    cfg305 = [f for f in json_out["findings"] if f["code"] == "CFG305"]
    assert len(cfg305) >= 3  # the --api-key value, the HF token in env, the sk- key in the env args
    for finding in json_out["findings"]:  # not in fixes either: a fix must not copy the value around
        assert_clean(json.dumps(finding["fix"]), secrets=SECRET_VALUES)
    assert_clean(*outputs, secrets=SECRET_VALUES)


@pytest.fixture
def pull(fake_github, tmp_path, monkeypatch) -> PullRequest:
    fake_github.add_token(TOKEN, fake_github.bot_login, write=True)
    pr = PullRequest(fake_github, tmp_path, monkeypatch,
                     head=SECRETS_FILE.replace("# vllm\n", "").replace("leaky", "chat"))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    return pr


def server_texts(gh) -> list[str]:
    repo = gh.repo(NAME)
    texts = [c.body for c in repo.review_comments.values()] + [c.body for c in repo.issue_comments.values()]
    texts += [r.body or "" for r in repo.reviews.values()] + [p.body or "" for p in repo.pulls.values()]
    texts += [json.dumps(getattr(r, "body", None), default=str) for r in gh.requests]
    return texts


@pytest.mark.parametrize("fault", [None, "401", "500", "timeout", "exception"])
def test_review_never_leaks_the_token(pull: PullRequest, monkeypatch, fault) -> None:
    if fault == "401":
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN[:-1] + "X")  # a wrong token is still a secret
    elif fault == "500":
        pull.gh.fail("*", 500, times=100)
    elif fault == "timeout":
        monkeypatch.setenv("CFGCHECK_GITHUB_TIMEOUT", "1")
        pull.gh.timeout("*", 3, times=100)
    elif fault == "exception":
        monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:1/{TOKEN}/")  # connection refused, URL echoed
    result = pull.run()
    assert result.exit_code in (0, 1, 2)
    files = [pull.sarif, pull.summary_file, pull.output_file]
    texts = [result.stdout, result.stderr] + [f.read_text() for f in files if f.exists()]
    secrets = (TOKEN, TOKEN[:-1] + "X")
    assert_clean(*texts, *server_texts(pull.gh), secrets=secrets)
    assert_clean(*texts, *server_texts(pull.gh), secrets=SECRET_VALUES)


def test_propose_never_leaks_the_token(tmp_path, fake_github) -> None:
    fake_github.add_token(TOKEN, fake_github.bot_login, write=True)
    work, bare = seed_repo(tmp_path)
    Mirror(fake_github, bare)
    env = {"GITHUB_API_URL": fake_github.url}
    outs = []
    for args in (["--dry-run"], ["--repo", REPO], ["--repo", REPO, "--token", TOKEN]):
        out = run(work, "propose", *CAP_AND_RAISE, *args, env=env)
        assert out.returncode == 0, out.stderr
        outs += [out.stdout, out.stderr]
    fake_github.fail("*", 502, times=100)
    out = run(work, "propose", *CAP_AND_RAISE, "--set", "qwen3-5-2b.gpu_memory_utilization=0.85", "--repo", REPO,
              env=env)
    outs += [out.stdout, out.stderr]
    fake_github.clear_faults()
    gitdirs = []
    for repo_dir in (work / ".git", bare):
        for path in repo_dir.rglob("*"):
            if path.is_file() and path.suffix not in (".pack", ".idx") and "objects" not in path.parts:
                gitdirs.append(path.read_bytes().decode("utf-8", "replace"))
    history = subprocess.run(["git", "log", "--all", "-p"], cwd=bare, capture_output=True, text=True).stdout
    pulls = [p.body or "" for p in fake_github.repo(REPO).pulls.values()]
    assert_clean(*outs, *gitdirs, history, *pulls, secrets=(TOKEN,))
    assert_clean(git_env_dump(work), secrets=(TOKEN,))


def git_env_dump(work: Path) -> str:
    return subprocess.run(["git", "config", "--list", "--show-origin"], cwd=work, capture_output=True, text=True,
                          env=git_env(work.parent)).stdout
