"""The linting pipeline as users of ruff, yamllint, Checkov and pre-commit expect it:
the merge base in diff mode, piped input, .gitignore, the baseline, related files for named files.

Real git repositories, a real pipe and a real FIFO; the command runs as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import git, make_repo, write
from runcli import invoke

MODEL = """\
apiVersion: inference.llmkube.dev/v1alpha1
kind: Model
metadata:
  name: qwen-chat
spec:
  source: hf://Qwen/Qwen3-8B@b968826d9c46dd6066d109eabc6255188de91218
  hardware:
    gpu: {enabled: true, count: 1, memory: 24Gi}
"""
SERVICE = """\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: qwen-chat
spec:
  modelRef: qwen-chat
  runtime: vllm
  image: vllm/vllm-openai:v0.26.0@sha256:5709fafe47123becb2f5e61c32d0b97beff1a629bb40bb753c15464f69a97a18
  replicas: 1
  resources:
    gpu: 1
  vllmConfig:
    maxModelLen: 64000
"""
ROLLING = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: embed
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:nightly
          args: ["--model", "BAAI/bge-m3"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def run(*args: str, cwd: Path, stdin=None, input_text: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=cwd, capture_output=True, text=True,
                          stdin=stdin, input=input_text, env=env, timeout=120)


# ---------------------------------------------------------------- item 1: the merge base


def test_stale_branch_is_not_blamed_for_what_main_changed(tmp_path: Path) -> None:
    """main fixed CFG207 in qwen-chat.yaml after the branch was cut; the branch never touched that
    file. Comparing with main's tip would report the (old) CFG207 as introduced by the branch."""
    repo = make_repo(tmp_path, {"qwen-chat.yaml": MODEL + "---\n" + SERVICE, "embed.yaml": ROLLING})
    fork = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-qb", "feature")
    write(repo, {"embed.yaml": ROLLING.replace("name: embed", "name: embed-v2")})
    git(repo, "commit", "-qam", "rename the embedder")
    git(repo, "checkout", "-q", "main")
    write(repo, {"qwen-chat.yaml": MODEL + "---\n" + SERVICE.replace("64000", "32768")})
    git(repo, "commit", "-qam", "cap the context")
    git(repo, "checkout", "-q", "feature")

    data = json.loads(invoke("lint", "--base", "main", "--format", "json", cwd=repo).stdout)
    assert "CFG207" not in {f["code"] for f in data["findings"]}, "blamed for main's later fix"
    assert data["summary"]["base"] == {"ref": "main", "commit": fork}

    text = invoke("lint", "--base", "main", cwd=repo).stdout
    assert f"compared with main at {fork[:12]} (merge base with HEAD)" in text.splitlines()[-1]
    sarif = json.loads(invoke("lint", "--base", "main", "--format", "sarif", cwd=repo).stdout)
    assert sarif["runs"][0]["properties"]["base"] == {"ref": "main", "commit": fork}
    markdown = invoke("lint", "--base", "main", "--format", "markdown", cwd=repo).stdout
    assert f"compared with main at {fork[:12]}" in markdown.splitlines()[0]
    annotations = invoke("lint", "--base", "main", "--format", "github", cwd=repo).stdout
    assert annotations.startswith(f"cfgcheck: compared with main at {fork[:12]}")


# ---------------------------------------------------------------- item 2: piped input


def test_stdin_with_stdin_filename_reports_that_path_and_uses_its_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {".cfgcheck.yaml": "ignore: [CFG303]\n", "apps/embed.yaml": ROLLING})
    result = run("lint", "-", "--stdin-filename", f"{repo.name}/apps/embed.yaml", "--format", "json", cwd=tmp_path,
                 input_text=ROLLING)
    data = json.loads(result.stdout)
    assert data["summary"]["files"] == 1 and data["summary"]["served_models"] == 1
    assert {f["path"] for f in data["findings"]} == {"apps/embed.yaml"}
    # the configuration beside --stdin-filename applies (run from outside the repository)
    assert "CFG303" not in {f["code"] for f in data["findings"]} and "CFG302" in {f["code"] for f in data["findings"]}
    plain = run("lint", "-", cwd=tmp_path, input_text=ROLLING)
    assert plain.returncode == 0 and plain.stdout.startswith("stdin:10:18: CFG302")


def test_dev_stdin_and_a_fifo_are_read(tmp_path: Path) -> None:
    source = tmp_path / "embed.yaml"
    source.write_text(ROLLING)
    with source.open() as handle:
        result = run("lint", "/dev/stdin", "--select", "CFG302", "--fail-on", "warning", cwd=tmp_path, stdin=handle)
    assert result.returncode == 1 and "CFG302" in result.stdout, result.stdout + result.stderr
    piped = subprocess.Popen(["cat", str(source)], stdout=subprocess.PIPE)
    result = run("lint", "/dev/stdin", "--select", "CFG302", cwd=tmp_path, stdin=piped.stdout)
    piped.wait()
    assert "1 files, 1 served models" in result.stdout

    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(ROLLING))
    writer.start()
    result = run("lint", str(fifo), "--format", "json", cwd=tmp_path)
    writer.join(timeout=30)
    data = json.loads(result.stdout)
    assert data["summary"]["files"] == 1 and {f["path"] for f in data["findings"]} == {str(fifo)}


def test_process_substitution_is_read(tmp_path: Path) -> None:
    (tmp_path / "embed.yaml").write_text(ROLLING)
    script = f"{sys.executable} -m cfgcheck lint <(cat embed.yaml) --format json"
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert json.loads(result.stdout)["summary"]["served_models"] == 1, result.stderr


def test_input_that_cannot_be_read_is_an_error_not_a_pass(tmp_path: Path) -> None:
    closed = subprocess.run(f"{sys.executable} -m cfgcheck lint - <&-", shell=True, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert closed.returncode == 2 and "cannot read stdin" in closed.stderr and "Traceback" not in closed.stderr
    socket_path = tmp_path / "sock"
    import socket

    server = socket.socket(socket.AF_UNIX)
    server.bind(str(socket_path))
    try:
        result = run("lint", str(socket_path), cwd=tmp_path)
    finally:
        server.close()
    assert result.returncode == 2 and "not a file, a folder or a readable stream" in result.stderr


# ---------------------------------------------------------------- item 6: .gitignore and exclude


IGNORED_TREE = {
    ".gitignore": "build/\n*.generated.yaml\n",
    "apps/embed.yaml": ROLLING,
    "apps/embed.generated.yaml": ROLLING,
    "build/embed.yaml": ROLLING,
    "node_modules/pkg/embed.yaml": ROLLING,
    ".venv/lib/embed.yaml": ROLLING,
    "apps/nested/.gitignore": "local.yaml\n",
    "apps/nested/local.yaml": ROLLING,
    "apps/nested/kept.yaml": ROLLING,
}


def _paths(result) -> set[str]:
    return {f.path for f in result.files}


@pytest.mark.parametrize("in_git", [True, False], ids=["git ls-files", "pathspec walk"])
def test_gitignore_is_respected_inside_and_outside_git(tmp_path: Path, in_git: bool) -> None:
    root = tmp_path / "tree"
    write(root, IGNORED_TREE)
    if in_git:
        git(root, "init", "-q")
        git(root, "add", "apps/embed.yaml")  # tracked and untracked files both count
        write(root, {"apps/gone.yaml": ROLLING})
        git(root, "add", "apps/gone.yaml")
        (root / "apps/gone.yaml").unlink()  # tracked, deleted from the work tree: not read
    result = lint([root], Config(root.resolve()))
    assert _paths(result) == {"apps/embed.yaml", "apps/nested/kept.yaml"}
    # a file named on the command line is read even when ignored
    named = lint([root / "build/embed.yaml"], Config(root.resolve()))
    assert _paths(named) == {"build/embed.yaml"}


def test_exclude_follows_gitignore_semantics_not_fnmatch(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    write(root, {"apps/a.yaml": ROLLING, "apps/deep/b.yaml": ROLLING, "charts/x/templates/t.yaml": ROLLING,
                 "other/a.yaml": ROLLING})
    config = Config(root.resolve(), {"exclude": ["apps/*.yaml", "charts/*/templates/**"]})
    # fnmatch's `*` would cross `/` and exclude apps/deep/b.yaml too
    assert _paths(lint([root], config)) == {"apps/deep/b.yaml", "other/a.yaml"}
    config = Config(root.resolve(), {"exclude": ["a.yaml"]})  # no slash: any depth, as in .gitignore
    assert _paths(lint([root], config)) == {"apps/deep/b.yaml", "charts/x/templates/t.yaml"}
    # exclude applies to named files too, so a pre-commit hook keeps honouring it
    assert _paths(lint([root / "other/a.yaml"], config)) == set()


# ---------------------------------------------------------------- item 8: baseline


def test_baseline_records_today_and_reports_only_new_findings(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"apps/embed.yaml": ROLLING})
    written = run("lint", "--write-baseline", "cfgcheck-baseline.json", "--fail-on", "warning", cwd=repo)
    assert written.returncode == 0 and "recorded 2 findings" in written.stderr
    data = json.loads((repo / "cfgcheck-baseline.json").read_text())
    assert data["version"] == 1 and {e["code"] for e in data["findings"]} == {"CFG302", "CFG303"}
    assert all("line" not in e for e in data["findings"])

    # the finding moves down three lines: still baselined
    write(repo, {"apps/embed.yaml": "# moved\n# down\n# three\n" + ROLLING})
    moved = invoke("lint", "--baseline", "cfgcheck-baseline.json", "--fail-on", "warning", "--format", "json", cwd=repo)
    assert moved.returncode == 0, moved.stdout
    assert all(f["suppressed"] == "in the baseline cfgcheck-baseline.json" for f in json.loads(moved.stdout)["findings"])

    # a second served model with the same problem is new
    write(repo, {"apps/other.yaml": ROLLING.replace("name: embed", "name: other")})
    new = invoke("lint", "--baseline", "cfgcheck-baseline.json", "--fail-on", "warning", cwd=repo)
    assert new.returncode == 1
    reported = [line for line in new.stdout.splitlines() if ": CFG" in line]
    assert reported and all(line.startswith("apps/other.yaml:") for line in reported)

    # fixed since: the baseline says it could shrink; recording one from a diff-mode run is refused
    write(repo, {"apps/embed.yaml": ROLLING.replace("nightly", "v0.26.0"), "apps/other.yaml": None})
    shrink = invoke("lint", "--baseline", "cfgcheck-baseline.json", cwd=repo)
    assert "1 baselined finding no longer occurs; shrink cfgcheck-baseline.json" in shrink.stderr
    refused = invoke("lint", "--base", "HEAD", "--write-baseline", "b.json", cwd=repo)
    assert refused.returncode == 2 and "drop --base" in refused.stderr


@pytest.mark.parametrize("content, message", [
    ("not json", "is not JSON"),
    ('{"version": 7, "findings": []}', "not a version 1 cfgcheck baseline"),
    ('{"version": 1, "findings": [{"code": 3}]}', "malformed entry"),
])
def test_a_bad_baseline_is_a_one_line_error(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "a.yaml").write_text(ROLLING)
    (tmp_path / "baseline.json").write_text(content)
    result = invoke("lint", ".", "--baseline", "baseline.json", cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- item 9: related files


def test_pre_commit_style_invocation_reads_the_model_in_another_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"models/qwen-model.yaml": MODEL, "services/qwen-chat.yaml": SERVICE,
                                "services/embed.yaml": ROLLING})
    write(repo, {"services/qwen-chat.yaml": SERVICE.replace("replicas: 1", "replicas: 1  # one GPU")})
    result = invoke("lint", "services/qwen-chat.yaml", "--format", "json", cwd=repo)  # as pre-commit calls it
    data = json.loads(result.stdout)
    assert "CFG207" in {f["code"] for f in data["findings"]}, "the Model in another file was not read"
    assert {f["path"] for f in data["findings"]} == {"services/qwen-chat.yaml"}, "reports only the named file"
    assert data["summary"]["files"] == 1

    outside_git = tmp_path / "plain"  # outside git the root is the named file's folder
    write(outside_git, {"services/qwen-model.yaml": MODEL, "services/qwen-chat.yaml": SERVICE})
    data = json.loads(invoke("lint", "services/qwen-chat.yaml", "--format", "json", cwd=outside_git).stdout)
    assert "CFG207" in {f["code"] for f in data["findings"]}


def test_named_file_sees_a_ceiling_documented_in_a_sibling_file(tmp_path: Path) -> None:
    """The seed of 27e20ad1d: qwen38 raised its memory fraction past the ceiling documented on
    qwen36, which shares its GPU. pre-commit passes only qwen38's file."""
    from helpers import shared

    seed = "kubernetes/apps/ai/llmkube/models"
    history = shared("corpus", "Tanguille__cluster", "_history")
    repo = make_repo(tmp_path, {
        f"{seed}/qwen36-27b-vllm.yaml": (history / "871966389" / seed / "qwen36-27b-vllm.yaml").read_text(),
        f"{seed}/qwen38-27b-vllm.yaml": (history / "27e20ad1d" / seed / "qwen38-27b-vllm.yaml").read_text()})
    data = json.loads(invoke("lint", f"{seed}/qwen38-27b-vllm.yaml", "--format", "json", cwd=repo).stdout)
    ceiling = [f for f in data["findings"] if f["code"] == "CFG204"]
    assert ceiling and "qwen36" in ceiling[0]["message"], data["findings"]
    assert {f["path"] for f in data["findings"]} == {f"{seed}/qwen38-27b-vllm.yaml"}


@pytest.mark.parametrize("args", [("fix", "-"), ("lint", "--base", "HEAD", "-"), ("fix", "/dev/stdin")])
def test_commands_that_need_files_refuse_streams(tmp_path: Path, args) -> None:
    make_repo(tmp_path, {"a.yaml": ROLLING})
    result = run(*args, cwd=tmp_path / "repo", input_text=ROLLING)
    assert result.returncode == 2 and "cannot use standard input or a pipe" in result.stderr
    assert sorted(p.name for p in (tmp_path / "repo").iterdir()) == [".git", "a.yaml"], "nothing written"


def test_submodules_are_linted_with_their_own_gitignore(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    git(sub, "init", "-q", "-b", "main")
    write(sub, {"serving/embed.yaml": ROLLING, ".gitignore": "scratch/\n", "scratch/embed.yaml": ROLLING})
    git(sub, "add", "-A")
    git(sub, "commit", "-qm", "sub")
    repo = make_repo(tmp_path, {"apps/embed.yaml": ROLLING})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor/sub")
    assert _paths(lint([repo], Config(repo.resolve()))) == {"apps/embed.yaml", "vendor/sub/serving/embed.yaml"}


def test_a_named_folder_without_yaml_says_so_and_large_stdin_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / ".cfgcheck.yaml").write_text("limits: {max-file-bytes: 1000}\n")
    result = run("lint", "empty", cwd=tmp_path)
    assert result.returncode == 0 and "no YAML files to lint under empty" in result.stderr
    big = run("lint", "-", "--format", "json", cwd=tmp_path, input_text=ROLLING + "# pad\n" * 400)
    (finding,) = json.loads(big.stdout)["findings"]
    assert finding["code"] == "CFG000" and "over the 1,000-byte limit (limit max-file-bytes)" in finding["message"]
