"""Rendering runs someone else's program (docs/SECURITY.md, "Rendering threat model"): each attack of
that section reproduced against the real ``helm`` (the ``[helm]`` extra), the real ``kubectl`` (skipped
with a reason where there is none) and real git repositories, and shown to fail. Time bounds are
injected (sub-second): no test waits for a real timeout."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cfgcheck.config import Config, ConfigError
from helpers import git, make_repo, write

APP = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "8192"]
"""
FAKE_TOKEN = "ghs_" + "F4ke" * 9  # a GITHUB_TOKEN-shaped value no real service issued


def recorder(folder: Path, name: str = "ran.sh") -> tuple[Path, Path]:
    """A script that writes its environment to a file when anything runs it: (script, the file)."""
    folder.mkdir(parents=True, exist_ok=True)
    record, script = folder / f"{name}.env", folder / name
    script.write_text(f"#!/bin/sh\nenv > '{record}'\ncat >/dev/null\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, record


# ---------------------------------------------------------------- git


def test_git_runs_no_program_the_repository_or_the_caller_configures(tmp_path: Path, monkeypatch) -> None:
    """``core.fsmonitor`` names a program git runs on ``diff`` and ``ls-files`` (with the caller's whole
    environment): set in ``.git/config`` or through ``GIT_CONFIG_*`` variables, it never runs, and no
    ``GIT_*`` of the caller reaches git."""
    from cfgcheck.diff import lint_diff

    repo = make_repo(tmp_path, {"app.yaml": APP})
    from_config, config_ran = recorder(tmp_path / "hooks", "config.sh")
    from_env, env_ran = recorder(tmp_path / "hooks", "env.sh")
    git(repo, "config", "core.fsmonitor", str(from_config))
    write(repo, {"app.yaml": APP.replace("8192", "16384")})
    monkeypatch.setenv("GITHUB_TOKEN", FAKE_TOKEN)
    for name, value in {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
                        "GIT_CONFIG_VALUE_0": str(from_env), "GIT_TRACE": str(tmp_path / "trace")}.items():
        monkeypatch.setenv(name, value)
    result = lint_diff([repo], Config(repo.resolve()), "HEAD")
    assert [m.path for m in result.models] == ["app.yaml"]
    assert not config_ran.exists() and not env_ran.exists() and not (tmp_path / "trace").exists()


def test_a_base_that_looks_like_an_option_is_a_name(tmp_path: Path) -> None:
    from cfgcheck.diff import lint_diff

    repo = make_repo(tmp_path, {"app.yaml": APP})
    written = tmp_path / "written"
    with pytest.raises(ConfigError, match="is not a commit, branch or tag"):
        lint_diff([repo], Config(repo.resolve()), f"--output={written}")
    assert not written.exists()


def test_git_sees_only_the_allow_listed_environment(monkeypatch) -> None:
    from cfgcheck import git as gitmodule

    for name in ("GITHUB_TOKEN", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY", "GIT_EXTERNAL_DIFF", "GIT_DIR"):
        monkeypatch.setenv(name, "x")
    env = gitmodule.environment()
    assert {"GITHUB_TOKEN", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY", "GIT_EXTERNAL_DIFF"}.isdisjoint(env)
    assert env["GIT_DIR"] == "x", "which repository the user means is theirs to say"
    assert (env["GIT_CONFIG_NOSYSTEM"], env["GIT_TERMINAL_PROMPT"], env["GIT_PAGER"]) == ("1", "0", "cat")
    assert "GIT_DIR" not in gitmodule.environment(gitmodule.TRANSPORT_ENV), "propose's git works in its own worktree"


def test_git_output_is_bounded(tmp_path: Path) -> None:
    from cfgcheck import git as gitmodule

    repo = make_repo(tmp_path, {"app.yaml": APP})
    with pytest.raises(gitmodule.GitError, match="stopped after 3 bytes of output"):
        gitmodule.run(repo, "ls-files", check=True, limit=3)
