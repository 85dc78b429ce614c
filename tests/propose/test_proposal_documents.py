"""What a proposal's PR body and ADR say, end to end: real git repositories with a bare remote, the fake
GitHub (which refuses bodies over GitHub's 65,536 characters, validated against ../shared/github-api).

Scenarios: ``upgrade`` over 32 SGLang served models in 20 files (one changes table, one drift table per
set of drifted defaults, an upgrade checklist, rollback and success criteria, the base branch by name);
the same with the limit lowered so that the fit step must fold (never an error, and saying so); a
seed-style ``max_num_seqs`` raise beside an explanation comment; a Recreate single replica against a
RollingUpdate that keeps the old pod (outage wording from the real strategy).
"""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

from cfgcheck.github.proposals import BODY_LIMIT, read_marker
from cfgcheck.propose import documents, upgrade
from cfgcheck.propose.run import Options, main as propose_main
from tests.propose.test_propose import (CONFIG, REPO, VALUES, VALUES_TEXT, Mirror, branches, cfgcheck, git,
                                        make_repo, open_pulls, propose)

MODELS = ["Qwen/Qwen3-8B", "Qwen/Qwen3-4B", "Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B-Instruct"]
SGLANG_IMAGE = "lmsysorg/sglang:v0.5.5.post3-cu129-amd64"


def sglang_deployment(name: str, model: str, *, strategy: str = "", replicas: int = 2, args: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
{strategy}  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: sglang
          image: {SGLANG_IMAGE}
          command: ["python3", "-m", "sglang.launch_server"]
          args:
            - --model-path
            - {model}
{args}          resources:
            limits:
              nvidia.com/gpu: 1
"""


def fleet(removed_flag: bool = False) -> dict[str, str]:
    """32 SGLang served models in 20 files: 12 files with two Deployments, 8 with one; three rewrite a
    renamed flag, one is a Recreate single replica; optionally one keeps a flag 0.5.23 removed."""
    files: dict[str, str] = {}
    number = 0
    for index in range(20):
        docs = []
        for _ in range(2 if index < 12 else 1):
            args = '            - --cuda-graph-max-bs\n            - "256"\n' if number % 11 == 3 else ""
            if removed_flag and number == 7:
                args += "            - --prefill-round-robin-balance\n"
            strategy = "  strategy:\n    type: Recreate\n" if number == 5 else ""
            docs.append(sglang_deployment(f"chat-{number:02d}", MODELS[number % len(MODELS)], strategy=strategy,
                                          replicas=1 if number == 5 else 2, args=args))
            number += 1
        files[f"apps/team-{index:02d}/serving.yaml"] = "---\n".join(docs)
    return files


def plain(text: str) -> str:
    """Markdown as read: the backslash escapes of the templates' autoescape removed."""
    return re.sub(r"\\(.)", r"\1", text)


def _adr(bare: Path, branch: str) -> str:
    names = git(bare, "diff", "--name-only", "--diff-filter=A", "main", branch, "--", "docs/adr").split()
    (name,) = names
    return git(bare, "show", f"{branch}:{name}")


def _assert_board_sections(text: str, branch: str) -> None:
    """Rollback and success criteria with metric and threshold; the target branch by its name."""
    assert "## Rollback" in text and "Previous values:" in text and "`git revert <commit>`" in text
    assert "Expected recovery:" in text
    assert "## Success criteria" in text and "| metric | threshold | when measured | served models |" in text
    assert f"branch `{branch}` into `main`" in text and "`HEAD`" not in text


def test_upgrade_of_32_models_is_one_table_within_the_limit(tmp_path, fake_github):
    work, bare = make_repo(tmp_path, fleet(), adrs=0)
    Mirror(fake_github, bare)
    result = cfgcheck(work, "upgrade", "sglang", "0.5.23", "--offline", "--repo", REPO, fake=fake_github)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    (pull,) = open_pulls(fake_github)
    body, branch = pull.body, "cfgcheck/upgrade-sglang-0-5-23"
    assert pull.head_ref == branch and f"opened pull request #{pull.number}" in result.stdout
    assert len(body) <= BODY_LIMIT and "Shortened to fit" not in body
    # one table of changes: one row per served model, not one section each
    rows = [line for line in body.splitlines() if line.startswith("| chat-")]
    assert len(rows) == 32 and body.count("## Changes") == 1
    assert body.count("## Engine upgrade: SGLang 0.5.5.post3 → 0.5.23") == 1
    # one table per distinct set of drifted defaults the models read; the defaults none of them reads
    # (hierarchical cache, data parallel: features these models do not use) fold into one line
    assert body.count("Defaults that change for") <= 3
    assert body.count("change between these versions, for none of these served models") == 1
    assert "`flag` `--cuda-graph-max-bs` → `--cuda-graph-max-bs-decode`" in body
    assert "Release notes of the " in body and "releases/tag/v0.5.23" in body
    # outage only where the strategy stops the old pod first
    recreate = next(row for row in rows if row.startswith("| chat-05/sglang |"))
    assert "yes, outage: Recreate, 1 replica" in recreate
    assert all("the old pod serves until the new one is Ready" in row for row in rows if row is not recreate)
    assert body.count("Outage window announced") == 1 and "`chat-05/sglang`" in body
    # an upgrade's checklist is about the upgrade, not about benchmarks
    for item in ("Release notes of SGLang 0.5.5.post3 → 0.5.23 read", "Canary first:",
                 "The previous image is still pullable"):
        assert f"- [ ] {item}" in body, item
    assert "Benchmark re-run unchanged" not in body
    _assert_board_sections(body, branch)
    assert "all 32 served models" in body  # grouped, not 32 names repeated per section
    adr = _adr(bare, branch)
    _assert_board_sections(adr, branch)
    assert len(adr) < BODY_LIMIT and adr.count("### Engine upgrade: SGLang 0.5.5.post3 → 0.5.23") == 1
    assert "| pods of every moved served model Ready on the new version | all, none restarting |" in adr
    marker = read_marker(body)
    assert marker["branch"] == branch and len(marker["models"]) == 32


def _dry_run_body(repo: Path, monkeypatch, limit: int) -> tuple[int, str]:
    """The PR body of an in-process dry-run upgrade with GitHub's limit lowered to ``limit``."""
    monkeypatch.setattr(documents, "LIMIT", limit)
    monkeypatch.setenv("CFGCHECK_DATE", "2026-09-10")
    out, err = io.StringIO(), io.StringIO()
    target = upgrade.Target("sglang", "0.5.23", dry_run=True, offline=True)
    code = propose_main(Options(paths=[repo], dry_run=True, upgrade=target, allow_findings=True, cwd=repo), out, err)
    text = out.getvalue()
    return code, text[text.index("==> pull request into "):].split("<==\n", 1)[1]


def test_the_fit_step_folds_and_says_so_but_never_drops_an_error(tmp_path, monkeypatch):
    work, _ = make_repo(tmp_path, fleet(removed_flag=True), adrs=0)
    code, full = _dry_run_body(work, monkeypatch, BODY_LIMIT)
    assert code == 0 and "Shortened to fit" not in full
    assert "| error | CFG104 removed-flag |" in full
    code, body = _dry_run_body(work, monkeypatch, 9000)
    assert code == 0 and len(body) <= 9000 < len(full)
    note = next(line for line in body.splitlines() if line.startswith("> Shortened to fit"))
    assert "limit of 9,000 characters" in note and "the places of repeated findings" in note
    assert "| error | CFG104 removed-flag |" in body and "--prefill-round-robin-balance" in body
    assert read_marker(body)["branch"] == "cfgcheck/upgrade-sglang-0-5-23"  # the marker is kept whole


def test_a_comment_that_explains_the_old_value_is_kept_flagged_and_a_restatement_follows(tmp_path, fake_github):
    values = VALUES_TEXT.replace("contextSize: 262144   # ADR-0011: serve the small model at 32k",
                                 "contextSize: 262144   # 256k context").replace(
        '      extraArgs:\n        - --max-num-seqs\n        - "4"',
        '      extraArgs:\n        # 4 seqs: measured on the A100 (P0 sweep, 2026-08-01)\n'
        '        - --max-num-seqs\n        - "4"')
    work, bare = make_repo(tmp_path, {".cfgcheck.yaml": CONFIG, VALUES: values})
    Mirror(fake_github, bare)
    result = propose(work, "--set", "qwen3-5-2b.max_num_seqs=16", "--set", "qwen3-5-2b.max_model_len=32768",
                     "--title", "Cap the context and raise max-num-seqs 4 -> 16", "--why", "Queueing at 4 in the P0 sweep",
                     fake=fake_github)
    assert result.returncode == 0, result.stderr
    (pull,) = open_pulls(fake_github)
    after = git(bare, "show", f"{branches(bare)[pull.head_ref]}:{VALUES}")
    # the restatement follows the value; the measurement stays as written, with a marker line below it
    assert "contextSize: 32768   # 32k context\n" in after
    assert "        # 4 seqs: measured on the A100 (P0 sweep, 2026-08-01)\n        # cfgcheck propose 2026-09-10: 4 -> 16;" in after
    assert after.count('"16"') == 1 and "4 seqs: measured" in after
    line = after.splitlines().index("        # 4 seqs: measured on the A100 (P0 sweep, 2026-08-01)") + 1
    item = f"- [ ] The comment at `{VALUES}:{line}` explains the old value `4`; update it (re-measure at `16`)"
    assert item in pull.body
    assert f"`{VALUES}:{line - 3}` restated the old value `262,144` of `max_model_len`: it now reads " \
           "`32k context`" in pull.body
    # every other line is byte-identical
    before_lines, after_lines = values.splitlines(), after.splitlines()
    assert [x for x in after_lines if x not in before_lines] == [
        "      contextSize: 32768   # 32k context",
        "        # cfgcheck propose 2026-09-10: 4 -> 16; the comment above is about 4: re-measure, then update it",
        '        - "16"']
    # the success criteria come from the capacity numbers and the reason given
    assert "| KV-pool concurrency in the start-up log line `Maximum concurrency for 32,768 tokens per request` " \
           "| ≥ 30.39x at max\\_model\\_len 32,768 |" in pull.body
    assert "preempted requests (`vllm:num_preemptions`) | no increase | first hour after the rollout" \
           in plain(pull.body)
    assert "requests waiting at the same load" in pull.body


VLLM_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 1
  strategy:
{strategy}
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "8192", "--max-num-seqs", "8"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""
RECREATE = "    type: Recreate"
ROLLING = "    type: RollingUpdate\n    rollingUpdate:\n      maxUnavailable: 0\n      maxSurge: 1"


def test_outage_wording_follows_the_rollout_strategy(tmp_path, fake_github):
    work, bare = make_repo(tmp_path, {"recreate.yaml": VLLM_DEPLOYMENT.format(name="single", strategy=RECREATE),
                                      "rolling.yaml": VLLM_DEPLOYMENT.format(name="rolling", strategy=ROLLING)})
    Mirror(fake_github, bare)
    for name in ("single", "rolling"):
        result = propose(work, "--set", f"{name}/vllm.max_num_seqs=16", "--title", f"Raise {name} to 16",
                         "--why", "Throughput at the same latency", fake=fake_github)
        assert result.returncode == 0, result.stdout + result.stderr
    single, rolling = (plain(p.body) for p in sorted(open_pulls(fake_github), key=lambda p: p.number))
    heads = [p.head_ref for p in sorted(open_pulls(fake_github), key=lambda p: p.number)]
    assert "yes, outage: Recreate, 1 replica" in single
    assert "- [ ] Outage window announced: applying restarts `single/vllm` with nothing else serving" in single
    assert "a revert is the same outage again" in single
    assert "Outage window" not in rolling and "yes, outage" not in rolling
    assert "yes, rolling: the old pod serves until the new one is Ready (the new pod needs 1 free GPU" in rolling
    assert "- [ ] 1 GPU free for `rolling/vllm`'s new pod while the old one serves" in rolling
    assert "no outage: a revert rolls out the same way" in rolling
    for body, head in zip((single, rolling), heads):
        _assert_board_sections(body, head)
        _assert_board_sections(_adr(bare, head), head)
    assert "Applying stops 1 served model before the new pod starts" in _adr(bare, heads[0])
    assert "Applying stops" not in _adr(bare, heads[1]) and "no outage for them" in _adr(bare, heads[1])


def test_without_a_remote_the_base_is_the_checked_out_branch_by_name(tmp_path):
    work, _ = make_repo(tmp_path, {".cfgcheck.yaml": CONFIG, VALUES: VALUES_TEXT})
    git(work, "remote", "remove", "origin")
    git(work, "checkout", "--quiet", "-b", "release-7")
    result = propose(work, "--set", "qwen3-5-2b.gpu_memory_utilization=0.85", "--title", "Headroom",
                     "--why", "The sidecar needs 2 GiB", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "into `release-7`" in result.stdout and "==> pull request into release-7:" in result.stdout
    assert "`HEAD`" not in result.stdout
    git(work, "checkout", "--quiet", "--detach")
    detached = propose(work, "--set", "qwen3-5-2b.gpu_memory_utilization=0.85", "--title", "Headroom",
                       "--why", "The sidecar needs 2 GiB", "--dry-run")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True).stdout[:12]
    assert detached.returncode == 0 and f"into `{sha}`" in detached.stdout
    assert re.search(r"into `HEAD`", detached.stdout) is None
