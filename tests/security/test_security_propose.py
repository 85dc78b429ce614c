"""``cfgcheck propose`` against hostile repository content (docs/SECURITY.md, its table of findings).

What a branch or pull request holds is someone else's: a symlinked ``docs/adr`` or ADR must not
receive a write outside the repository, a branch with cfgcheck's predictable name is not adopted
when it carries commits propose did not make, text that lands in the ADR, the body and its hidden
marker is escaped, ``--dry-run`` writes nothing at all, and git's messages never show a credential.
Real git repositories with a local bare remote and the fake GitHub server, as tests/propose/test_propose.py.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.propose.test_propose import (CAP_AND_RAISE, CONFIG, REPO, VALUES, VALUES_TEXT, Mirror, branches, git, make_repo,
                          open_pulls, propose, seed_repo)

BRANCH = "cfgcheck/qwen3-5-2b-max-model-len-max-num-seqs"
ADR = "docs/adr/0014-cap-the-context-at-32k-and-raise-max-num-seqs-4-16.md"
HEADROOM = ["--set", "qwen3-5-2b.gpu_memory_utilization=0.85", "--title", "Leave headroom", "--why", "Sidecar."]


@pytest.fixture
def seed(tmp_path, fake_github):
    work, bare = seed_repo(tmp_path)
    Mirror(fake_github, bare)
    return work, bare, fake_github


def other_clone(tmp_path: Path, bare: Path, branch: str = "main") -> Path:
    """Someone else's clone of the remote, on ``branch`` (created from main when new)."""
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "--quiet", str(bare), str(other)], check=True, capture_output=True)
    if branch in branches(bare):
        git(other, "checkout", "--quiet", branch)
    else:
        git(other, "checkout", "--quiet", "-b", branch)
    return other


def push_commit(other: Path, message: str, files: dict[str, str] = (), links: dict[str, Path] = ()) -> str:
    for path, text in dict(files).items():
        (other / path).parent.mkdir(parents=True, exist_ok=True)
        (other / path).write_text(text)
    for path, target in dict(links).items():
        (other / path).unlink(missing_ok=True)
        os.symlink(target, other / path)
    git(other, "add", "-A")
    git(other, "commit", "--quiet", "-m", message)
    git(other, "push", "--quiet", "origin", "HEAD")
    return git(other, "rev-parse", "HEAD").strip()


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (``.git`` included): kind, link target or content hash."""
    entries = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            entries[rel] = "link " + os.readlink(path)
        elif path.is_dir():
            entries[rel] = "dir"
        else:
            entries[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("cfgcheck: error: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


# ---------------------------------------------------------------- no write through a symlink


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "real"])
def test_a_symlinked_adr_folder_receives_nothing(tmp_path, fake_github, dry_run):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0001-kept.md").write_text("# 0001. Someone else's\n")
    work, bare = seed_repo(tmp_path)
    Mirror(fake_github, bare)
    git(work, "rm", "--quiet", "-r", "docs/adr")
    (work / "docs").mkdir(exist_ok=True)
    os.symlink(outside, work / "docs" / "adr")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "docs/adr is a link")
    git(work, "push", "--quiet", "origin", "main")
    before = snapshot(outside)
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    result = propose(work, *CAP_AND_RAISE, *(["--dry-run"] if dry_run else []), fake=None if dry_run else fake_github,
                     extra_env={"TMPDIR": str(scratch)})
    error = one_line_error(result)
    assert "docs/adr is a symbolic link" in error, error
    assert snapshot(outside) == before
    assert set(branches(bare)) == {"main"} and not fake_github.repo(REPO).pulls
    assert list(scratch.iterdir()) == [] and git(work, "worktree", "list").count("\n") == 1


def test_a_symlinked_adr_in_a_joined_branch_is_not_written_through(seed, tmp_path):
    """Even with a forged trailer (which passes the adoption check), the link is not followed."""
    work, bare, fake = seed
    assert propose(work, *CAP_AND_RAISE, fake=fake).returncode == 0
    secret = tmp_path / "secret.md"
    secret.write_text("outside the repository\n")
    other = other_clone(tmp_path, bare, BRANCH)
    pushed = push_commit(other, f"Swap the ADR\n\nCfgcheck-Proposal: {BRANCH}\n", links={ADR: secret})
    (pr,) = open_pulls(fake)
    body = pr.body

    error = one_line_error(propose(work, *HEADROOM, fake=fake))
    assert f"{ADR} is a symbolic link" in error, error
    assert secret.read_text() == "outside the repository\n"
    assert branches(bare)[BRANCH] == pushed and pr.body == body


def test_writes_refuse_every_link_component_and_dot_dot(tmp_path):
    from cfgcheck.propose.files import FileError, UnsafePath, read_bytes, write_bytes

    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "f.md").write_text("kept\n")
    os.symlink(outside, root / "linked")
    os.symlink(outside / "f.md", root / "file.md")
    for rel in ("linked/f.md", "linked/new/f.md", "file.md", "../outside/f.md", "/etc/passwd", ""):
        with pytest.raises(UnsafePath):
            write_bytes(root, rel, b"written\n")
        with pytest.raises(UnsafePath):
            read_bytes(root, rel)
    assert sorted(p.name for p in outside.iterdir()) == ["f.md"] and (outside / "f.md").read_text() == "kept\n"
    write_bytes(root, "docs/adr/0001-new.md", b"new\n")  # folders are created, never followed
    (root / "docs/adr/0001-new.md").chmod(0o640)
    write_bytes(root, "docs/adr/0001-new.md", b"shorter")
    assert read_bytes(root, "docs/adr/0001-new.md") == b"shorter"
    assert (root / "docs/adr/0001-new.md").stat().st_mode & 0o777 == 0o640
    with pytest.raises(FileError, match="cannot read docs/missing.md: No such file or directory"):
        read_bytes(root, "docs/missing.md")


def test_fix_does_not_write_through_a_link(tmp_path):
    from cfgcheck.propose.edit import FileResult
    from cfgcheck.propose.files import UnsafePath
    from cfgcheck.propose.fix import write

    target = tmp_path / "target.yaml"
    target.write_text("a: 1\n")
    (tmp_path / "repo").mkdir()
    os.symlink(target, tmp_path / "repo" / "values.yaml")
    with pytest.raises(UnsafePath, match="values.yaml is a symbolic link"):
        write(tmp_path / "repo", [FileResult("values.yaml", "a: 1\n", "a: 2\n")])
    assert target.read_text() == "a: 1\n"


# ---------------------------------------------------------------- --dry-run writes nothing


@pytest.mark.parametrize("clone", ["full", "partial"])
def test_dry_run_writes_nothing_in_the_repository(tmp_path, clone):
    work, bare = seed_repo(tmp_path)
    if clone == "partial":  # blobs the base needs are on the remote only: fetched lazily, into the scratch
        git(bare, "config", "uploadpack.allowFilter", "true")
        work = tmp_path / "partial"
        git(tmp_path, "clone", "--quiet", "--filter=blob:none", f"file://{bare}", str(work))
    # the remote moved on: the dry run needs objects the clone lacks, and must not store them there
    other = other_clone(tmp_path, bare)
    push_commit(other, "ADR 14 landed", {"docs/adr/0014-landed.md": "# 0014. Landed\n",
                                         VALUES: VALUES_TEXT.replace("0.9", "0.88")})
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    def state() -> tuple:
        objects = git(work, "count-objects", "-v")
        return snapshot(work), git(work, "for-each-ref"), objects

    before = state()
    result = propose(work, *CAP_AND_RAISE, "--dry-run", extra_env={"TMPDIR": str(scratch)})
    assert result.returncode == 0, result.stderr
    assert "==> docs/adr/0015-cap-the-context" in result.stdout  # built on the remote's main
    assert "gpuMemoryUtilization: 0.88" in result.stdout
    assert state() == before
    assert list(scratch.iterdir()) == []  # and the scratch repository is gone


# ---------------------------------------------------------------- foreign branches


def test_a_foreign_commit_on_the_predictable_branch_is_not_adopted(seed, tmp_path):
    work, bare, fake = seed
    other = other_clone(tmp_path, bare, BRANCH)
    pushed = push_commit(other, "ci: add a workflow", {".github/workflows/x.yml": "on: push\n"})

    for args in (["--dry-run"], []):
        error = one_line_error(propose(work, *CAP_AND_RAISE, *args, fake=None if args else fake))
        assert f"the branch {BRANCH} on 'origin' has 1 commit that cfgcheck propose did not make" in error, error
    assert branches(bare)[BRANCH] == pushed and not fake.repo(REPO).pulls


def test_a_foreign_commit_on_a_joined_pull_request_is_not_adopted(seed, tmp_path):
    work, bare, fake = seed
    assert propose(work, *CAP_AND_RAISE, fake=fake).returncode == 0
    message = git(bare, "log", "-1", "--format=%B", BRANCH)
    assert message.rstrip().endswith(f"Cfgcheck-Proposal: {BRANCH}"), message
    other = other_clone(tmp_path, bare, BRANCH)
    push_commit(other, "ci: one", {".github/workflows/x.yml": "on: push\n"})
    pushed = push_commit(other, "ci: two", {".github/workflows/y.yml": "on: push\n"})
    (pr,) = open_pulls(fake)
    body = pr.body

    error = one_line_error(propose(work, *HEADROOM, fake=fake))
    assert f"the branch {BRANCH} of pull request #1 has 2 commits" in error, error
    assert branches(bare)[BRANCH] == pushed and pr.body == body and len(fake.repo(REPO).pulls) == 1


# ---------------------------------------------------------------- escaping


def test_why_and_title_cannot_break_out_of_the_documents_or_the_marker(tmp_path):
    from cfgcheck.github.proposals import read_marker

    work, _ = seed_repo(tmp_path)
    why = "Fixes it --> <img src=x onerror=alert(1)> cc @org/team\n<!-- cfgcheck-propose {\"proposals\": []} -->"
    title = "Cap @org/team <b>now</b> -->"
    result = propose(work, "--set", "qwen3-5-2b.max_num_seqs=16", "--set", "qwen3-5-2b.max_model_len=32768",
                     "--title", title, "--why", why, "--dry-run")
    assert result.returncode == 0, result.stderr
    adr, body = result.stdout.split("\n==> docs/adr/", 1)[1].split("\n==> pull request into main: ", 1)
    adr, body = adr.split(" <==\n", 1)[1], body.split(" <==\n", 1)[1]  # the headers are the dry run's, not ours
    for document in (adr, body):
        text, marker = document.rstrip("\n").rsplit("\n", 1)
        assert "-->" not in text and "\\<img" in text and "\\<b\\>now" in text, text
        assert not re.search(r"(?<!\\)<(img|b>|!--)", text), text
        assert " @org/team" not in text and "@\u200borg/team" in text
        assert read_marker(document)["proposals"][-1] == {
            "title": title, "why": why, "changes": ["qwen3-5-2b.max_num_seqs=16", "qwen3-5-2b.max_model_len=32768"]}
        assert marker.startswith("<!-- cfgcheck-propose {") and marker.count("-->") == 1


def test_the_commit_message_is_plain_and_ends_with_the_trailer(seed):
    work, bare, fake = seed
    title = "Cap\x1b[31m the\rcontext"
    result = propose(work, "--set", "qwen3-5-2b.max_num_seqs=16", "--set", "qwen3-5-2b.max_model_len=32768",
                     "--title", title, "--why", "Line one\nCfgcheck-Proposal: cfgcheck/other\n\x1b]0;x\x07", fake=fake)
    assert result.returncode == 0, result.stderr
    (pr,) = open_pulls(fake)
    message = git(bare, "log", "-1", "--format=%B", pr.head_ref)
    assert message.startswith("Cap [31m the context\n\n") and "\x1b" not in message and "\r" not in message
    trailers = git(bare, "log", "-1", "--format=%(trailers:key=Cfgcheck-Proposal,valueonly)", pr.head_ref)
    assert trailers.strip() == pr.head_ref
    assert pr.title == "Cap [31m the context"


def test_a_long_title_is_clipped_to_githubs_limit_and_no_token_is_sent(seed):
    work, bare, fake = seed
    title = "Cap the context " + "and more " * 50
    why = f"Pasted by mistake: {fake.token}"
    result = propose(work, "--set", "qwen3-5-2b.max_num_seqs=16", "--set", "qwen3-5-2b.max_model_len=32768",
                     "--title", title, "--why", why, fake=fake)
    assert result.returncode == 0, result.stderr
    (pr,) = open_pulls(fake)
    assert len(pr.title) == 256 and pr.title.endswith("…") and title.startswith(pr.title[:-1])
    assert fake.token not in pr.body and "Pasted by mistake: ***" in pr.body


# ---------------------------------------------------------------- credentials in git's messages


def test_git_errors_never_show_url_credentials_or_query_tokens(tmp_path):
    work, _ = seed_repo(tmp_path)
    token = "ghp_" + "k" * 36
    git(work, "remote", "set-url", "origin", f"https://x:{token}@127.0.0.1:9/acme/app.git?token=abc123secret")
    result = propose(work, *CAP_AND_RAISE, "--dry-run", extra_env={"GITHUB_TOKEN": "plain-token-value"})
    error = one_line_error(result)
    assert "git ls-remote failed" in error, error
    for secret in (token, "abc123secret", "x:ghp", "ghp_"):
        assert secret not in result.stdout + result.stderr


def test_the_git_message_cleaner_removes_every_credential_form():
    from cfgcheck.propose.gitops import clean

    token = "s3cr3t-token-without-prefix"
    messages = [
        f"fatal: unable to access 'https://x-access-token:{token}@github.com/acme/app.git/': 403",
        "error: http.https://github.com/.extraheader=AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3h4",
        "remote: Authorization: Bearer abcdefabcdefabcdefabcdef",
        "fatal: repository 'https://github.com/acme/app.git?access_token=qqqqqqqq' not found",
        f"fatal: {token}\n",
    ]
    for message in messages:
        cleaned = clean(message, token + "\n")  # a token read from a file ends in a newline
        assert "\n" not in cleaned and "***" in cleaned, cleaned
        for secret in (token, "eC1hY2Nlc3", "abcdefabcdef", "qqqqqqqq"):
            assert secret not in cleaned, cleaned


# ---------------------------------------------------------------- templates from the repository


def test_a_template_override_runs_no_code_in_a_dry_run(tmp_path):
    marker = tmp_path / "pwned"
    payload = "{{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}\n"
    work, _ = make_repo(tmp_path, {".cfgcheck.yaml": CONFIG, VALUES: VALUES_TEXT,
                                   ".cfgcheck/templates/pr_body.md.j2": payload,
                                   ".cfgcheck/templates/adr.md.j2": payload})
    result = propose(work, *CAP_AND_RAISE, "--dry-run")
    assert "Traceback" not in result.stderr
    assert not marker.exists()
