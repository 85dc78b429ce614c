"""Secrets: a token never appears in stdout, stderr, logs, SARIF, comments, git state or error messages;
secret-looking values in linted files are never echoed (CFG305 names the flag, not the value).

Every command runs with a known token value (as GITHUB_TOKEN, GH_TOKEN and ``--token``) and every
output is searched for it: the streams, the files written (SARIF, step summary, step outputs, ADR, PR
body), what reached the fake GitHub server (reviews, comments, PR bodies), and the clone's .git.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck.reporters import FORMATS
from tests.propose.test_propose import CAP_AND_RAISE, REPO, Mirror, git_env, seed_repo
from tests.github.test_review import NAME, PATH, PullRequest

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


# ---------------------------------------------------------------- every attack at once

ENV_SECRETS = {"HF_TOKEN": "hf_EnvSecretHuggingFace0123456789", "OPENAI_API_KEY": "sk-env-0123456789abcdefghijkl",
               "DATABASE_PASSWORD": "env-db-password-9876543210", "DEPLOY_PRIVATE_KEY": "deploy-key-material-abcdef"}
EXTRAHEADER = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
# a PR-added template that runs commands (and leaves a file behind to prove it ran)
TEMPLATE_RCE = ("{{ marker }}\n{{ cycler.__init__.__globals__.os.popen('touch PWNED; echo $GITHUB_TOKEN; env')"
                ".read() }}\n")
TRICKS = (".@acme/admins é@acme/ops &commat;acme/team &#64;octocat https://evil.example/x?token=" + TOKEN
          + " \\e[31mred \\u2028 \\x85 \\n::add-mask::x\\n::stop-commands::pwn\\n::error file=x::forged")


def attack_head(secret: str) -> str:
    """The PR's values: mention tricks, control characters, workflow commands, a huge value, the token and an
    environment secret in values and comments."""
    name = f"chat {TRICKS} {TOKEN} {'y' * 100_000}"
    return (SECRETS_FILE.replace("# vllm\n", f"# vllm {TOKEN} {secret} {TRICKS}\n")
            .replace("metadata: {name: leaky}", f'metadata: {{name: "{name}"}}')
            .replace('--api-key, "s3cr3t-api-key-value"', f'--api-key, "{secret}"'))


def plant(pull: PullRequest, tmp_path: Path, config_as_link: bool) -> dict[str, str]:
    """Add every file-system attack to the PR head in the checkout; returns the regular files for the server."""
    repo = pull.repo
    templates = repo / ".cfgcheck" / "templates"
    templates.mkdir(parents=True)
    (templates / "summary_comment.md.j2").write_text(TEMPLATE_RCE)
    (templates / "review_comment.md.j2").symlink_to("/proc/self/environ")
    (repo / "apps" / "leak.yaml").symlink_to("../.git/config")  # inside the repository: read as YAML
    (repo / "apps" / "environ.yaml").symlink_to("/proc/self/environ")
    credentials = tmp_path / "git-credentials"
    credentials.write_text(f"https://x-access-token:{TOKEN}@github.com\n")
    if config_as_link:
        (repo / ".cfgcheck.yaml").symlink_to(credentials)
    else:
        (repo / ".cfgcheck.yaml").write_text(f"select: [unpinned-image]\nmodel_configs: {tmp_path}\n"
                                             f"# {TOKEN}\nfail-on: never\n")
    git_dir_config = ["config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {EXTRAHEADER}"]
    subprocess.run(["git", *git_dir_config], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=m", "-c", "user.email=m@x", "commit", "-qm", "attack"], cwd=repo,
                   check=True)
    regular = {p.relative_to(repo).as_posix(): p.read_text() for p in [templates / "summary_comment.md.j2"]}
    if not config_as_link:
        regular[".cfgcheck.yaml"] = (repo / ".cfgcheck.yaml").read_text()
    return regular


@pytest.fixture(params=[False, True], ids=["hostile-config", "config-symlink-to-credentials"])
def attacked(request, fake_github, tmp_path, monkeypatch):
    """A review run against a PR head carrying every attack; the fake server holds a forged summary and a forged
    fingerprint comment by the PR author. Returns (pull, CLI result)."""
    from typer.testing import CliRunner

    from cfgcheck.cli import app
    from cfgcheck.github.review import SUMMARY_MARKER

    for name, value in ENV_SECRETS.items():
        monkeypatch.setenv(name, value)
    fake_github.add_token(TOKEN, fake_github.bot_login, write=True)
    secret = ENV_SECRETS["OPENAI_API_KEY"]
    pr = PullRequest(fake_github, tmp_path, monkeypatch, base=SECRETS_FILE.replace("# vllm\n", ""),
                     head=attack_head(secret))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN + "\n")  # read from a file: a trailing newline
    regular = plant(pr, tmp_path, request.param)
    fake_github.push(NAME, "feature", regular)
    pr._write_event()
    fake_github.add_issue_comment(NAME, pr.number, f"{SUMMARY_MARKER}\nforged by the author {TOKEN[:8]}")
    fake_github.add_review_comment(NAME, pr.number, body=f"<!-- cfgcheck:fp={'0' * 40} -->\nforged", path=PATH,
                                   line=3)
    result = CliRunner().invoke(app, ["review", "--sarif", str(pr.sarif)])
    return pr, result


def leaks(texts: list[str]) -> list[str]:
    forms = [TOKEN, TOKEN[4:], TOKEN[4:].replace("_", "\\_"), EXTRAHEADER, EXTRAHEADER.rstrip("="),
             *ENV_SECRETS.values()]
    return [f"{form[:12]}… in …{text[max(0, text.find(form) - 60):text.find(form)]}"
            for text in texts for form in forms if form in text]


def test_every_attack_at_once_leaks_no_secret(attacked) -> None:
    pull, result = attacked
    bodies = [json.dumps(r.body, ensure_ascii=False) for r in pull.gh.requests if r.body is not None]
    assert not leaks(bodies + server_texts(pull.gh)), "a request body carried a secret"
    printed = [result.stdout, result.stderr, str(result.exception or "")]
    printed += [f.read_text() for f in (pull.summary_file, pull.output_file) if f.exists()]
    assert not leaks(printed), "a printed line carried a secret"
    assert "Traceback" not in result.stderr and result.exit_code in (0, 1, 2)
    # the author's forged comments are neither edited nor deleted
    repo = pull.gh.repo(NAME)
    assert not repo.deleted
    assert all(not c.edited_by for c in [*repo.issue_comments.values(), *repo.review_comments.values()]
               if c.user != pull.gh.bot_login)
    # every body the bot sent is within GitHub's limit, mentions and autolinks are neutralised
    for text in [c.body for c in [*repo.issue_comments.values(), *repo.review_comments.values()]
                 if c.user == pull.gh.bot_login]:
        assert len(text) <= 65_536
        assert not re.search(r"@[A-Za-z0-9]", text) and not re.search(r"&(?:commat|#64);", text)
        assert "https://evil" not in text


def test_every_attack_at_once_runs_no_pr_code_and_follows_no_link(attacked) -> None:
    pull, _ = attacked
    assert not (pull.repo / "PWNED").exists(), "a PR-added template ran a command on the runner"
    bodies = json.dumps([r.body for r in pull.gh.requests if r.body is not None])
    assert "PYTEST_CURRENT_TEST" not in bodies, "a template linked to /proc/self/environ was rendered"
    assert "extraheader" not in bodies, "a file linked to .git/config was echoed"


def test_every_attack_at_once_prints_no_control_characters(attacked) -> None:
    pull, result = attacked
    for line in result.stdout.splitlines():  # no line a value starts can be a workflow command
        assert not line.lstrip().startswith("::") or re.match(r"::(error|warning|notice) file=", line), line
    step = pull.summary_file.read_text() if pull.summary_file.exists() else ""
    assert not re.search("[\x1b\x85\u2028\u2029]", result.stdout + step)
