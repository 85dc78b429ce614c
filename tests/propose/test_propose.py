"""``cfgcheck propose`` and ``cfgcheck fix``: real git repositories with a local bare remote, and the
fake GitHub server (tests/support/fakegithub.py) for the pull requests.

The seed scenario is the P1 ticket's: ``qwen3-5-2b`` serves a 262,144-token window with
``--max-num-seqs 4`` on a 995,932-token KV pool (3.80 full-length requests). Raising the sequence
limit alone is refused with CFG201's arithmetic; with the context capped at 32,768 it becomes one PR
with ADR 0014, a two-line values diff, the governance checklist and 3.80x -> 30.39x.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import LintResult
from cfgcheck.model import Edit, Finding, Fix, Location
from cfgcheck.propose import edit, plan
from cfgcheck.propose.fix import compute, unified_diff
from cfgcheck.reporters.markdown import escape as md_escape
from cfgcheck.yamlio import parse_text
from tests.github.test_change_summary import NO_GPU

REPO = "acme/ai-helm-values"
VALUES = "environments/prod/values/inference.yaml"
CONFIG = """\
values:
  - files: ["environments/*/values/inference.yaml"]
    models: "models.*"
    engine: vllm
    settings:
      image: image
      model: model
      replicas: replicas
      strategy: strategy
      max_model_len: serving.contextSize
      gpu_memory_utilization: serving.gpuMemoryUtilization
      extra_args: serving.extraArgs
"""
VALUES_TEXT = """\
# ai-helm-values: production inference (Argo CD syncs this file)
models:
  qwen3-5-2b:
    image: vllm/vllm-openai:v0.11.0
    model: Qwen/Qwen3.5-2B
    replicas: 1
    strategy: Recreate   # one GPU: the old pod must stop first
    # GPU KV cache size: 995,932 tokens (engine start-up log, 2026-09-03)
    # cfgcheck: kv-pool-tokens=995932
    serving:
      contextSize: 262144   # ADR-0011: serve the small model at 32k
      gpuMemoryUtilization: 0.9
      extraArgs:
        - --max-num-seqs
        - "4"
        - --enable-prefix-caching
"""
LLMKUBE_TEXT = """\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: qwen3-5-2b
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.11.0
  # GPU KV cache size: 995,932 tokens (engine start-up log)
  # cfgcheck: kv-pool-tokens=995932
  parallelSlots: 4
  vllmConfig:
    maxModelLen: 262144
    gpuMemoryUtilization: 0.9
"""
TITLE = "Cap the context at 32k and raise max-num-seqs 4 -> 16"
WHY = "The P0 sweep shows admission queueing at --max-num-seqs 4; ADR-0011 caps the window first."
CAP_AND_RAISE = ["--set", "qwen3-5-2b.max_num_seqs=16", "--set", "qwen3-5-2b.max_model_len=32768",
                 "--title", TITLE, "--why", WHY]


# ---------------------------------------------------------------- helpers


def git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_", "GH_"))}
    env.update({"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev",
                "GIT_COMMITTER_EMAIL": "dev@example.com", "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
                "CFGCHECK_GITHUB_THROTTLE": "0", "CFGCHECK_DATE": "2026-09-10", "NO_COLOR": "1"})
    return env


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=git_env(cwd.parent))
    assert result.returncode == 0, result.stderr
    return result.stdout


def make_repo(tmp_path: Path, files: dict[str, str], adrs: int = 13) -> tuple[Path, Path]:
    """A working clone with a bare ``origin`` holding ``files`` and ADRs 0001..``adrs`` on main."""
    bare, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run(["git", "init", "--quiet", "--bare", "-b", "main", str(bare)], check=True, env=git_env(tmp_path))
    subprocess.run(["git", "init", "--quiet", "-b", "main", str(work)], check=True, env=git_env(tmp_path))
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text, encoding="utf-8")
    (work / "docs/adr").mkdir(parents=True, exist_ok=True)
    for number in range(1, adrs + 1):
        (work / f"docs/adr/{number:04d}-decision-{number}.md").write_text(f"# {number:04d}. Decision\n", "utf-8")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "initial")
    git(work, "remote", "add", "origin", str(bare))
    git(work, "push", "--quiet", "origin", "main")
    return work, bare


def seed_repo(tmp_path: Path) -> tuple[Path, Path]:
    return make_repo(tmp_path, {".cfgcheck.yaml": CONFIG, VALUES: VALUES_TEXT})


def cfgcheck(work: Path, *args: str, fake=None, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = git_env(work.parent)
    if fake is not None:
        env.update({"GITHUB_TOKEN": fake.token, "GITHUB_API_URL": fake.url})
    env.update(extra_env or {})
    result = subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=work, capture_output=True, text=True,
                            env=env, timeout=120)
    if fake is not None:
        assert fake.token not in result.stdout + result.stderr
    return result


def propose(work: Path, *args: str, fake=None, **kwargs) -> subprocess.CompletedProcess:
    extra = ["--repo", REPO] if fake is not None and "--dry-run" not in args else []
    return cfgcheck(work, "propose", *args, *extra, fake=fake, **kwargs)


class Mirror:
    """Keeps the fake GitHub repository's branches equal to the bare remote's (what a push to GitHub
    does), before every API request."""

    def __init__(self, fake, bare: Path):
        from fakegithub import TreeEntry

        self.fake, self.bare, self.entry = fake, bare, TreeEntry
        self.shas: dict[str, str] = {}
        fake.add_repo(REPO)
        original = fake._respond

        def respond(req, params, bad_json):
            with fake.state.lock:
                self.sync()
            return original(req, params, bad_json)

        fake._respond = respond

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.bare, capture_output=True, text=True, check=True,
                              env=git_env(self.bare.parent)).stdout

    def sync(self) -> None:
        repo = self.fake.repo(REPO)
        heads = dict(line.split(" ", 1)[::-1] for line in
                     self._git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads").splitlines())
        for ref, sha in heads.items():
            for line in self._git("rev-list", "--reverse", "--topo-order", "--parents", sha).splitlines():
                commit, *parents = line.split()
                if commit in self.shas:
                    continue
                flat = {}
                for entry in self._git("ls-tree", "-r", "-z", commit).split("\0"):
                    if not entry:
                        continue
                    meta, path = entry.split("\t", 1)
                    blob = subprocess.run(["git", "cat-file", "blob", meta.split()[2]], cwd=self.bare,
                                          capture_output=True, check=True).stdout
                    flat[path] = self.entry(path, "100644", "blob", repo.put_blob(blob))
                message = self._git("log", "-1", "--format=%B", commit)
                self.shas[commit] = repo.put_commit(repo.build_tree(flat), [self.shas[p] for p in parents], message)
            repo.refs[ref] = self.shas[sha]
        for ref in [r for r in repo.refs if r.startswith("refs/heads/") and r not in heads]:
            del repo.refs[ref]


@pytest.fixture
def seed(tmp_path, fake_github):
    work, bare = seed_repo(tmp_path)
    Mirror(fake_github, bare)
    return work, bare, fake_github


def branches(bare: Path) -> dict[str, str]:
    out = git(bare, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads")
    return dict(line.split(" ", 1) for line in out.splitlines())


def open_pulls(fake) -> list:
    return [pr for pr in fake.repo(REPO).pulls.values() if pr.state == "open"]


def changed_lines(bare: Path, base: str, head: str, path: str) -> list[str]:
    diff = git(bare, "diff", "--unified=0", base, head, "--", path)
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


# ---------------------------------------------------------------- the seed scenario


def test_raise_alone_is_refused_with_the_arithmetic(seed):
    work, bare, fake = seed
    result = propose(work, "--set", "qwen3-5-2b.max_num_seqs=16", "--title", "Raise", "--why", "queueing", fake=fake)
    assert result.returncode == 1, result.stderr
    assert "CFG201" in result.stdout
    assert "max_num_seqs raised 4 -> 16 but only 3.80 full-length requests fit" in result.stdout
    assert "995,932" in result.stdout and "cap max_model_len at 61,440" in result.stdout
    assert "proposal refused" in result.stderr
    assert set(branches(bare)) == {"main"} and not fake.repo(REPO).pulls
    assert git(work, "worktree", "list").count("\n") == 1  # the temporary worktree is gone


def test_seed_scenario_one_pr_idempotent_and_batched(seed):
    work, bare, fake = seed
    main = branches(bare)["main"]

    first = propose(work, *CAP_AND_RAISE, fake=fake)
    assert first.returncode == 0, first.stderr
    assert "opened pull request #1" in first.stdout
    (pr,) = open_pulls(fake)
    branch = pr.head_ref
    assert branch == "cfgcheck/qwen3-5-2b-max-model-len-max-num-seqs"
    head = branches(bare)[branch]
    assert git(bare, "rev-list", "--count", f"{main}..{head}").strip() == "1"
    # a two-line values diff: exactly the two values, comments and quoting kept
    assert changed_lines(bare, main, head, VALUES) == [
        "-      contextSize: 262144   # ADR-0011: serve the small model at 32k",
        "+      contextSize: 32768   # ADR-0011: serve the small model at 32k",
        '-        - "4"',
        '+        - "16"',
    ]
    added = git(bare, "diff", "--name-status", main, head).split("\n")
    assert "A\tdocs/adr/0014-cap-the-context-at-32k-and-raise-max-num-seqs-4-16.md" in added
    adr = git(bare, "show", f"{head}:docs/adr/0014-cap-the-context-at-32k-and-raise-max-num-seqs-4-16.md")
    # the title is Markdown-escaped in the ADR (templates autoescape: docs/SECURITY.md), verbatim in the PR title
    assert adr.startswith("# 0014. " + md_escape(TITLE)) and "Status: Proposed" in adr and WHY in adr
    assert "995,932 ÷ 262,144 = 3.80x before, 995,932 ÷ 32,768 = 30.39x after" in adr
    assert "](../../environments/prod/values/inference.yaml)" in adr
    body = pr.body
    assert pr.title == TITLE
    assert "3.80x → 30.39x" in body and "`max_num_seqs` `4` → `16`" in body
    assert "## Governance checklist" in body
    for item in ("Context cap applied in this PR with the sequence raise", "Pool size read from the engine start-up log",
                 "Benchmark re-run unchanged", "Dated benchmark report added", "Measured numbers updated",
                 "If goodput did not improve", "Outage window announced", "ADR 0014"):
        assert f"- [ ] {item}" in body or item in body, item
    assert "0014-cap-the-context" in body and "the change fixes CFG203" in body
    assert "CFG401" in body  # the outage note is listed
    main_files = git(work, "ls-files")
    assert "0014" not in main_files  # the user's tree knows nothing of it

    # the same command again changes nothing
    again = propose(work, *CAP_AND_RAISE, fake=fake)
    assert again.returncode == 0, again.stderr
    assert "no new commit" in again.stdout and "is up to date" in again.stdout
    assert branches(bare)[branch] == head and len(fake.repo(REPO).pulls) == 1
    assert not fake.requests_for("pulls/update")

    # a second proposal for the same served model joins the open PR
    second = propose(work, "--set", "qwen3-5-2b.gpu_memory_utilization=0.85", "--title", "Leave headroom",
                     "--why", "The sidecar needs 2 GiB.", fake=fake)
    assert second.returncode == 0, second.stderr
    assert "updated pull request #1" in second.stdout
    assert len(fake.repo(REPO).pulls) == 1 and set(branches(bare)) == {"main", branch}
    new_head = branches(bare)[branch]
    assert git(bare, "rev-list", "--count", f"{main}..{new_head}").strip() == "2"
    assert changed_lines(bare, head, new_head, VALUES) == ["-      gpuMemoryUtilization: 0.9",
                                                           "+      gpuMemoryUtilization: 0.85"]
    names = git(bare, "ls-tree", "--name-only", new_head, "docs/adr/").split()
    assert [n for n in names if "0014" in n or "0015" in n] == [
        "docs/adr/0014-cap-the-context-at-32k-and-raise-max-num-seqs-4-16.md"]
    (pr,) = open_pulls(fake)
    assert pr.title == TITLE + " (+1 more)"
    assert "Leave headroom" in pr.body and md_escape(TITLE) in pr.body and "`0.85`" in pr.body
    adr = git(bare, "show", f"{new_head}:docs/adr/0014-cap-the-context-at-32k-and-raise-max-num-seqs-4-16.md")
    assert "The sidecar needs 2 GiB." in adr and WHY in adr and "Date: 2026-09-10" in adr


def test_dry_run_prints_and_writes_nothing(tmp_path):
    work, bare = seed_repo(tmp_path)
    result = propose(work, *CAP_AND_RAISE, "--dry-run")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "-      contextSize: 262144" in out and "+        - \"16\"" in out
    assert "==> docs/adr/0014-cap-the-context-at-32k-and-raise-max-num-seqs-4-16.md <==" in out
    assert "3.80x → 30.39x" in out and "## Governance checklist" in out
    assert set(branches(bare)) == {"main"}
    assert git(work, "status", "--porcelain") == "" and git(work, "worktree", "list").count("\n") == 1
    assert git(work, "for-each-ref", "refs/heads").count("\n") == 1


def test_proposal_file_and_adr_dir(tmp_path):
    work, _ = make_repo(tmp_path, {".cfgcheck.yaml": CONFIG + "adr_dir: decisions\n", VALUES: VALUES_TEXT}, adrs=0)
    (work / "decisions").mkdir()
    (work / "decisions/0007-older.md").write_text("# 0007\n")
    (work / "decisions/README.md").write_text("not an ADR\n")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "adrs")
    git(work, "push", "--quiet", "origin", "main")
    (tmp_path / "p.yaml").write_text("title: Cap and raise\nwhy: Because.\nset:\n  qwen3-5-2b:\n"
                                     "    max_model_len: 32768\n    max_num_seqs: 16\n")
    result = propose(work, "--file", str(tmp_path / "p.yaml"), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "==> decisions/0008-cap-and-raise.md <==" in result.stdout and "# 0008. Cap and raise" in result.stdout
    assert "3.80x → 30.39x" in result.stdout


def test_llmkube_typed_fields(tmp_path):
    work, _ = make_repo(tmp_path, {"isvc.yaml": LLMKUBE_TEXT})
    refused = propose(work, "--set", "qwen3-5-2b.max_num_seqs=16", "--title", "t", "--why", "w", "--dry-run")
    assert refused.returncode == 1 and "CFG201" in refused.stdout
    result = propose(work, *CAP_AND_RAISE, "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "-  parallelSlots: 4\n+  parallelSlots: 16\n" in result.stdout
    assert "-    maxModelLen: 262144\n+    maxModelLen: 32768\n" in result.stdout
    assert "3.80x → 30.39x" in result.stdout


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("args, message", [
    (["--set", "qwen9.max_num_seqs=16"], "unknown served model 'qwen9' (served models: qwen3-5-2b)"),
    (["--set", "qwen3-5-2b.max_num_sequences=16"], "unknown setting 'max_num_sequences' for qwen3-5-2b (valid: "),
    (["--set", "qwen3-5-2b.max_num_seqs=sixteen"], "max_num_seqs takes an integer, not 'sixteen'"),
    (["--set", "qwen3-5-2b.gpu_memory_utilization=90"], "gpu_memory_utilization is a fraction of GPU memory"),
    (["--set", "qwen3-5-2b.max_num_seqs"], "expected NAME.SETTING=VALUE"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, args, message):
    work, bare = seed_repo(tmp_path)
    result = propose(work, *args, "--title", "t", "--why", "w", "--dry-run")
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and set(branches(bare)) == {"main"}


def test_no_remote_and_no_token(tmp_path):
    work, _ = seed_repo(tmp_path)
    no_token = propose(work, *CAP_AND_RAISE, "--repo", REPO)
    assert no_token.returncode == 2 and "no GitHub token" in no_token.stderr and no_token.stderr.count("\n") == 1
    git(work, "remote", "remove", "origin")
    result = propose(work, *CAP_AND_RAISE, extra_env={"GITHUB_TOKEN": "ghp_" + "x" * 36})
    assert result.returncode == 2 and "no remote 'origin'" in result.stderr and result.stderr.count("\n") == 1
    assert "ghp_" not in result.stderr


def test_arg_flag_is_appended_in_the_list_style(tmp_path):
    work, _ = seed_repo(tmp_path)
    result = propose(work, "--set", "qwen3-5-2b.arg:--max-num-batched-tokens=8192", "--title", "t", "--why", "w",
                     "--dry-run", "--allow-findings")
    assert result.returncode == 0, result.stderr
    assert '         - --enable-prefix-caching\n+        - --max-num-batched-tokens\n+        - "8192"\n' in result.stdout


# ---------------------------------------------------------------- working tree safety


def _state(work: Path) -> str:
    files = sorted(p for p in work.rglob("*") if p.is_file() and ".git" not in p.relative_to(work).parts)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(work).as_posix().encode() + b"\0" + path.read_bytes())
    parts = [digest.hexdigest(), git(work, "rev-parse", "HEAD"), git(work, "symbolic-ref", "-q", "HEAD") if
             subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=work).returncode == 0 else "detached",
             git(work, "ls-files", "-s", "--debug"), git(work, "diff", "--cached"), git(work, "diff"),
             git(work, "stash", "list"), git(work, "for-each-ref", "refs/heads", "refs/stash", "refs/tags"),
             git(work, "worktree", "list", "--porcelain")]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def test_dirty_tree_index_head_and_stash_are_untouched(seed):
    work, bare, fake = seed
    values = work / VALUES
    values.write_text(values.read_text().replace("gpuMemoryUtilization: 0.9", "gpuMemoryUtilization: 0.7"))
    git(work, "stash", "push", "--quiet", "-m", "parked")
    (work / "notes.txt").write_text("untracked\n")
    (work / ".cfgcheck.yaml").write_text(CONFIG + "# staged edit\n")
    git(work, "add", ".cfgcheck.yaml")
    values.write_text(values.read_text().replace("replicas: 1", "replicas: 1  # dirty"))
    before = _state(work)

    dry = propose(work, *CAP_AND_RAISE, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert _state(work) == before
    real = propose(work, *CAP_AND_RAISE, fake=fake)
    assert real.returncode == 0, real.stderr
    assert _state(work) == before
    # the proposal is built from the base branch, not from the dirty tree
    head = branches(bare)["cfgcheck/qwen3-5-2b-max-model-len-max-num-seqs"]
    assert "# dirty" not in git(bare, "show", f"{head}:{VALUES}")

    git(work, "checkout", "--quiet", "--detach", "HEAD")
    before = _state(work)
    assert propose(work, *CAP_AND_RAISE, fake=fake).returncode == 0
    assert _state(work) == before


# ---------------------------------------------------------------- faults


def test_pr_creation_fails_after_push_then_rerun_completes_it(seed):
    work, bare, fake = seed
    fake.fail("pulls/create", 502, times=10)
    failed = propose(work, *CAP_AND_RAISE, fake=fake)
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert failed.stderr.startswith("cfgcheck: error: open the pull request") and failed.stderr.count("\n") == 1, \
        failed.stderr
    branch = "cfgcheck/qwen3-5-2b-max-model-len-max-num-seqs"
    # the one line says the branch is there and how to finish: run again, or open it by hand
    assert f"; the branch {branch} is pushed to 'origin': run the same command again, or open the pull request " \
           f"by hand: {fake.web_url}/{REPO}/compare/main...{branch}" in failed.stderr, failed.stderr
    pushed = branches(bare)[branch]
    assert not fake.repo(REPO).pulls
    fake.clear_faults()

    resumed = propose(work, *CAP_AND_RAISE, fake=fake)
    assert resumed.returncode == 0, resumed.stderr
    assert "no new commit" in resumed.stdout and "opened pull request #1" in resumed.stdout, resumed.stdout
    assert "pushed" not in resumed.stdout and branches(bare)[branch] == pushed, resumed.stdout
    (pr,) = open_pulls(fake)
    assert pr.head_ref == branch and "3.80x → 30.39x" in pr.body


def test_a_pull_request_created_by_a_timed_out_request_is_joined_not_duplicated(seed):
    """A create that timed out may still be processed by GitHub; a re-run can then see "none open" and
    get "A pull request already exists" on its own create. It updates that one instead of failing."""
    work, bare, fake = seed
    branch = "cfgcheck/qwen3-5-2b-max-model-len-max-num-seqs"
    fake.inject(lambda req: req.op == "pulls/list" and "head" in req.query, times=1, when="after",
                action=lambda server: server.add_pull(REPO, head=branch, title="Slow create", body="late"))
    result = propose(work, *CAP_AND_RAISE, fake=fake)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "updated pull request #1" in result.stdout, result.stdout
    (pr,) = open_pulls(fake)
    assert pr.head_ref == branch and pr.title == TITLE and "3.80x → 30.39x" in pr.body
    assert len(fake.requests_for("pulls/create")) == 1


def test_api_error_on_listing_is_one_line_and_nothing_is_pushed(seed):
    work, bare, fake = seed
    fake.inject("pulls/list", status=404, times=10, body={"message": "Not Found"})
    result = propose(work, *CAP_AND_RAISE, fake=fake)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "404" in result.stderr
    assert set(branches(bare)) == {"main"}


# ---------------------------------------------------------------- fix


def test_fix_applies_edits_keeping_every_other_byte(tmp_path):
    text = "args:\r\n  - --max-model 4096   # abbreviated\r\n  - --gpu-mem=0.9\r\nkeep: 'x'\r\n"
    loaded = parse_text("d.yaml", text)
    first = Finding("abbrev", Location("d.yaml", 2, 5), fix=Fix("spell out", (
        Edit(Location("d.yaml", 2, 5, 2, 16), "--max-model", "--max-model-len"),)), code="CFG101", severity="error")
    second = Finding("abbrev", Location("d.yaml", 3, 5), fix=Fix("spell out", (
        Edit(Location("d.yaml", 3, 5, 3, 14), "--gpu-mem", "--gpu-memory-utilization"),)), code="CFG101",
        severity="error")
    stale = Finding("abbrev", Location("d.yaml", 4, 1), fix=Fix("x", (
        Edit(Location("d.yaml", 4, 1, 4, 5), "nope", "yes"),)), code="CFG101", severity="error")
    outcome = compute(LintResult([first, second, stale], [loaded], []))
    assert [f.code for f in outcome.applied] == ["CFG101", "CFG101"] and len(outcome.skipped) == 1
    (changed,) = outcome.files
    assert changed.after == text.replace("--max-model ", "--max-model-len ").replace("--gpu-mem=", "--gpu-memory-utilization=")
    diff = unified_diff(outcome.files)
    assert diff.startswith("--- a/d.yaml\n+++ b/d.yaml\n") and "+  - --max-model-len 4096" in diff


def test_fix_command_with_the_abbreviated_flag_rule(tmp_path):
    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
            "          # keep this comment\n          args: [\"--model\", \"m\", \"--max-model\", \"4096\"]\n")
    (tmp_path / "d.yaml").write_text(text)
    diff = cfgcheck(tmp_path, "fix", ".", "--diff")
    if "--max-model-len" not in diff.stdout:
        pytest.skip("CFG101 gives no fix here (the vLLM flag catalog is not available in this checkout)")
    assert (tmp_path / "d.yaml").read_text() == text  # --diff writes nothing
    assert cfgcheck(tmp_path, "fix", ".").returncode == 0
    assert (tmp_path / "d.yaml").read_text() == text.replace('"--max-model"', '"--max-model-len"')


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  replicas: 1
  strategy:
    type: Recreate
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          # the abbreviation below is what CFG101 spells out
          args: ["--model", "Qwen/Qwen3-8B", "--max-model", "4096"]
"""


def test_propose_fix_is_one_pr_of_mechanical_fixes(tmp_path, fake_github):
    work, bare = make_repo(tmp_path, {"deploy.yaml": DEPLOYMENT}, adrs=2)
    fake = fake_github
    Mirror(fake, bare)
    first = propose(work, "--fix", fake=fake)
    if "nothing to fix" in first.stdout:
        pytest.skip("CFG101 gives no fix here (the vLLM flag catalog is not available in this checkout)")
    assert first.returncode == 0, first.stderr
    (pr,) = open_pulls(fake)
    assert pr.head_ref == "cfgcheck/fix-cfg101"
    head = branches(bare)[pr.head_ref]
    assert changed_lines(bare, "main", head, "deploy.yaml") == [
        '-          args: ["--model", "Qwen/Qwen3-8B", "--max-model", "4096"]',
        '+          args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "4096"]']
    assert git(bare, "diff", "--name-only", "main", head).split() == ["deploy.yaml"]  # no ADR for a fix
    assert "CFG101" in pr.body and "behaviour is unchanged" in pr.body and "Outage window announced" in pr.body
    again = propose(work, "--fix", fake=fake)
    assert again.returncode == 0 and "no new commit" in again.stdout and "is up to date" in again.stdout
    assert branches(bare)[pr.head_ref] == head and len(fake.repo(REPO).pulls) == 1


# ---------------------------------------------------------------- edits


def _models(text: str, name: str = "f.yaml", config: dict | None = None):
    from cfgcheck.lint import served_models

    loaded = parse_text(name, text)
    return loaded, served_models([loaded], Config(Path("."), config or {}))


def _apply(loaded, model, sets: list[str]) -> str:
    proposal = plan.build(sets, None, "t", "w", [model.name])
    edits = []
    for item in plan.resolve(proposal, [model]):
        edits.extend(edit.edits_for(item, loaded, {}))
    (result,) = edit.apply({loaded.path: loaded}, {loaded.path: edits})
    return result.after


def test_insertions_follow_the_siblings():
    loaded, (model,) = _models(LLMKUBE_TEXT.replace("\n", "\r\n"))
    after = _apply(loaded, model, ["qwen3-5-2b.kv_cache_dtype=fp8", "qwen3-5-2b.arg:--enforce-eager="])
    assert after == LLMKUBE_TEXT.replace("    gpuMemoryUtilization: 0.9\n", "    gpuMemoryUtilization: 0.9\n"
                                         "    kvCacheDtype: fp8\n  extraArgs:\n    - --enforce-eager\n").replace("\n", "\r\n")

    flow = LLMKUBE_TEXT + "  extraArgs: [\"--max-num-seqs\", \"4\"]\n"
    loaded, (model,) = _models(flow)
    after = _apply(loaded, model, ["qwen3-5-2b.max_num_seqs=8", "qwen3-5-2b.arg:--block-size=32"])
    # the extraArgs token wins over parallelSlots, so it is the one replaced; the new flag joins the list
    assert after == flow.replace('["--max-num-seqs", "4"]', '["--max-num-seqs", "8", "--block-size", "32"]')

    shell = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n"
             "      containers:\n        - name: e\n          image: vllm/vllm-openai:v0.11.0\n"
             "          command: [\"sh\", \"-c\"]\n          args:\n            - |\n"
             "              exec vllm serve m \\\n                --max-num-seqs 4\n")
    loaded, (model,) = _models(shell)
    after = _apply(loaded, model, ["d/e.max_num_seqs=16", "d/e.max_model_len=8192"])
    assert after == shell.replace("--max-num-seqs 4\n", "--max-num-seqs 16 --max-model-len 8192\n")


def test_values_mapping_insert_and_image_tag():
    config = {"values": [{"files": ["v.yaml"], "models": "models.*", "engine": "vllm",
                          "settings": {"image": "image", "max_model_len": "serving.contextSize",
                                       "max_num_seqs": "serving.maxNumSeqs"}}]}
    text = ("models:\n  a.b:\n    image:\n      repository: vllm/vllm-openai\n      tag: \"v0.11.0\"\n"
            "    serving:\n      contextSize: 8192\n")
    loaded, (model,) = _models(text, "v.yaml", config)
    proposal = plan.build(["a.b.max_num_seqs=8", "a.b.image=vllm/vllm-openai:v0.12.0"], None, "t", "w", [model.name])
    edits = []
    for item in plan.resolve(proposal, [model]):
        edits.extend(edit.edits_for(item, loaded, config))
    (result,) = edit.apply({loaded.path: loaded}, {loaded.path: edits})
    assert result.after == text.replace('"v0.11.0"', '"v0.12.0"').replace(
        "contextSize: 8192\n", "contextSize: 8192\n      maxNumSeqs: 8\n")


def test_git_messages_never_carry_credentials():
    from cfgcheck.propose.gitops import clean, repository_from_url

    token = "ghs_" + "a" * 36
    message = f"fatal: unable to access 'https://x-access-token:{token}@github.com/acme/app.git/': 403\n"
    assert clean(message, token) == "fatal: unable to access 'https://***@github.com/acme/app.git/': 403"
    assert repository_from_url("git@github.com:acme/app.git") == "acme/app"
    assert repository_from_url("https://github.com/acme/app") == "acme/app"
    assert repository_from_url("/srv/git/origin.git") is None  # a local path names no GitHub repository


def test_production_stack_fields_go_into_the_entry():
    text = ("servingEngineSpec:\n  strategy:\n    type: Recreate\n  modelSpec:\n    - name: llama\n"
            "      repository: vllm/vllm-openai\n      tag: v0.11.0\n      modelURL: meta-llama/Llama-3.1-8B\n"
            "      vllmConfig:\n        maxModelLen: 8192\n    - name: small\n      repository: vllm/vllm-openai\n"
            "      tag: v0.11.0\n      modelURL: Qwen/Qwen3-0.6B\n")
    loaded, models = _models(text, "values.yaml")
    llama, small = models
    assert _apply(loaded, llama, ["llama.max_num_seqs=8"]) == text.replace(
        "        maxModelLen: 8192\n", "        maxModelLen: 8192\n        maxNumSeqs: 8\n")
    assert _apply(loaded, small, ["small.max_model_len=4096"]) == text + "      vllmConfig:\n        maxModelLen: 4096\n"


def test_proposal_without_a_stated_gpu_shows_the_memory_one_gpu_needs(tmp_path):
    work, _ = make_repo(tmp_path, {"llama.yaml": NO_GPU.format(length=131072)})
    result = propose(work, "--set", "llama-70b/vllm.max_model_len=16384", "--title", "Cap the window",
                     "--why", "Fit one 80 GB GPU per rank", "--dry-run", "--allow-findings")
    assert result.returncode == 0, result.stderr
    assert "## GPU memory needed (the GPU is not stated)" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("| llama-70b/vllm | 131,072 → 16,384 |"))
    assert "95.4 GiB → 76.4 GiB" in row and row.endswith("| A100-80GB 80 GB |")
