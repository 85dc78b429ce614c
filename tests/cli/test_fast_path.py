"""Start-up: ``cfgcheck lint PATHS...`` starts without typer (``lint_command.fast_lint_arguments``).
The fast path must give the command exactly what typer gives it, and leave everything else (help, other
commands, option values it does not read, mistakes) to typer, so options, help, errors and exit codes
stay typer's."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck import cli
from cfgcheck.lint_command import fast_lint_arguments, lint_defaults, run_lint_command
from helpers import REPO

FAST = [
    ["lint"],
    ["lint", "app.yaml"],
    ["lint", "a.yaml", "deploy/b.yml", "./c.sh", "with space.yaml"],
    ["lint", "-q", "a.yaml", "--quiet"],
    ["lint", "a.yaml", "-f", "json"],
    ["lint", "--format", "sarif", "--offline", "--no-render-helm", "x", "--statistics", "--show-fixes"],
    ["lint", "--online", "--render-helm", "x"],
    ["lint", "-f", "json", "-f", "github", "x"],  # the last one wins, as in click
    ["lint", "--offline", "--online", "--no-render-helm", "--render-helm"],
    ["lint", "--format", "text", "x", "--format", "rdjson"],
]
TYPER = [
    [], ["--version"], ["--help"], ["rules"], ["rule", "CFG203"], ["capacity", "x"], ["lintx", "x"],
    ["lint", "--help"], ["lint", "-h"], ["lint", "x", "--help"],
    ["lint", "-"], ["lint", "--", "x"], ["lint", ""], ["lint", "a\nb"],
    ["lint", "--format=json", "x"], ["lint", "-fjson", "x"], ["lint", "-qf", "json"],
    ["lint", "--format", "nope", "x"], ["lint", "--format"], ["lint", "-f", "-q"],
    ["lint", "--base", "main"], ["lint", "--select", "CFG203", "x"], ["lint", "--fail-on", "warning", "x"],
    ["lint", "-o", "out.sarif", "x"], ["lint", "--config", "c.yaml", "x"], ["lint", "--quiett", "x"],
    ["lint", "--no-quiet", "x"], ["lint", "--stdin-filename", "a.yaml", "-"],
]


def typer_arguments(argv: list[str], monkeypatch) -> dict:
    """What typer passes to ``run_lint_command`` for ``cfgcheck ARGV``."""
    seen: list[dict] = []

    def record(*args, **kwargs) -> int:
        seen.append(inspect.signature(run_lint_command).bind(*args, **kwargs).arguments)
        return 0

    monkeypatch.setattr(cli, "run_lint_command", record)
    assert cli.app(argv, standalone_mode=False, prog_name="cfgcheck") == 0
    assert len(seen) == 1
    return dict(seen[0])


@pytest.mark.parametrize("argv", FAST, ids=" ".join)
def test_the_fast_path_passes_what_typer_passes(argv: list[str], monkeypatch) -> None:
    fast = fast_lint_arguments(argv)
    assert fast is not None
    assert fast == typer_arguments(argv, monkeypatch)
    assert set(fast) == set(inspect.signature(run_lint_command).parameters)


@pytest.mark.parametrize("argv", TYPER, ids=" ".join)
def test_everything_else_goes_to_typer(argv: list[str]) -> None:
    assert fast_lint_arguments(argv) is None


def test_the_defaults_are_typers(monkeypatch) -> None:
    assert typer_arguments(["lint"], monkeypatch) == lint_defaults()


def _both(argv: list[str], cwd: Path) -> list[subprocess.CompletedProcess]:
    """``cfgcheck ARGV`` through the entry point (the fast path) and through typer's ``cli.main``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    typer_probe = f"import sys\nfrom cfgcheck import cli\nsys.argv = ['cfgcheck'] + {argv!r}\ncli.main()"
    return [subprocess.run([sys.executable, *command], cwd=cwd, capture_output=True, text=True, env=env)
            for command in (["-m", "cfgcheck", *argv], ["-c", typer_probe])]


@pytest.mark.parametrize("argv", [
    ["lint", "app.yaml"],
    ["lint", "-q", "app.yaml", "-f", "json"],
    ["lint", "--statistics", "app.yaml"],
    ["lint", "--statistics", "-f", "sarif", "app.yaml"],  # a usage error raised by the command: exit 2
    ["lint", "missing.yaml"],  # a configuration error: exit 2, one line
    ["lint", "bad.yaml", "ok.yaml"],  # one bad file never stops the others
], ids=" ".join)
def test_same_output_and_exit_code_as_typer(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text((REPO / "examples/kubernetes/apps/ai/qwen-chat/qwen-chat.yaml").read_text())
    (tmp_path / "bad.yaml").write_text("a: [1,\n")
    (tmp_path / "ok.yaml").write_text("replicaCount: 1\n")
    fast, slow = _both(argv, tmp_path)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.stdout or fast.stderr  # something was reported
