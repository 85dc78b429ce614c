"""The command line people expect: help everywhere, quiet, statistics,
fix markers, completion, colour variables, paths relative to the user, honest exit codes, a working
shallow-clone hint, the container image, licence and changelog, and start-up imports."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, git, lint_text
from runcli import invoke, spawn
from tests.cli.test_output_formats import SECRET_APP

MEDIA = "examples/kubernetes/apps/media"


def pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def commands() -> list[str]:
    from cfgcheck.cli import app

    return [c.name or c.callback.__name__ for c in app.registered_commands]


# ---------------------------------------------------------------- item 15: options


def test_short_help_on_every_command() -> None:
    names = commands()
    assert {"lint", "fix", "flags", "review", "propose"} <= set(names)
    for name in [*names, None]:
        result = invoke(*([name] if name else []), "-h")
        assert result.returncode == 0 and "Usage" in result.stdout, (name, result.stderr)


def test_quiet_prints_findings_only() -> None:
    loud, quiet = invoke("lint", "examples"), invoke("lint", "examples", "-q")
    assert loud.returncode == quiet.returncode == 1
    assert "served models" in loud.stdout.splitlines()[-1]
    assert quiet.stdout.strip() and "served models" not in quiet.stdout
    assert quiet.stdout == "".join(line + "\n" for line in loud.stdout.splitlines()[:-1])
    assert invoke("lint", MEDIA, "--quiet").stdout == ""


def test_statistics_counts_per_rule() -> None:
    text = invoke("lint", "examples", "--statistics")
    assert text.returncode == 1
    rows = [line.split("\t") for line in text.stdout.splitlines()]
    assert ["1", "CFG101", "[*] abbreviated-flag", "error"] in rows
    counts = [int(row[0]) for row in rows]
    assert counts == sorted(counts, reverse=True)
    data = json.loads(invoke("lint", "examples", "--statistics", "--format", "json").stdout)
    findings = json.loads(invoke("lint", "examples", "--format", "json").stdout)["findings"]
    assert sum(row["count"] for row in data) == sum(1 for f in findings if f["suppressed"] is None)
    refused = invoke("lint", "examples", "--statistics", "--format", "sarif")
    assert refused.returncode == 2 and "--statistics" in refused.stderr and len(refused.stderr.splitlines()) == 1


def test_fixable_marker_and_show_fixes() -> None:
    plain = invoke("lint", "examples").stdout
    marked = [line for line in plain.splitlines()[:-1] if " [*] " in line]
    assert len(marked) == 1 and "CFG101 [*] error" in marked[0]
    assert "1 fixable with `cfgcheck fix`" in plain.splitlines()[-1]
    shown = invoke("lint", "examples", "--show-fixes").stdout
    assert "fixable: spell out --kv-cache-memory-bytes" in shown
    assert re.search(r"qwen-chat\.yaml:\d+:\d+: '--kv-cache-memory' -> '--kv-cache-memory-bytes'", shown)


def test_shell_completion() -> None:
    completed = spawn(env={"_CFGCHECK_COMPLETE": "complete_bash", "COMP_WORDS": "cfgcheck li", "COMP_CWORD": "1"})
    assert completed.returncode == 0 and completed.stdout.split() == ["lint"]
    script = spawn(env={"_CFGCHECK_COMPLETE": "source_bash"})  # what --show-completion prints in bash
    assert script.returncode == 0 and "_CFGCHECK_COMPLETE=complete_bash" in script.stdout
    assert "--install-completion" in spawn("-h").stdout


@pytest.mark.parametrize("env, colored", [
    ({}, False), ({"FORCE_COLOR": "1"}, True), ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
    ({"FORCE_COLOR": ""}, False), ({"FORCE_COLOR": "0"}, False),
])
def test_no_color_and_force_color(env: dict, colored: bool) -> None:
    out = spawn("lint", "examples", env=env).stdout
    assert ("\x1b[" in out) is colored
    assert "\x1b[" not in spawn("lint", "examples", "--format", "json", env=env).stdout


# ---------------------------------------------------------------- item 12: paths where the user stands


def test_text_paths_are_relative_to_the_current_directory(tmp_path: Path) -> None:
    inside = spawn("lint", ".", cwd=REPO / "examples/kubernetes")  # the folder a shell stands in
    paths = [line.split(":")[0] for line in inside.stdout.splitlines() if re.match(r"\S+\.yaml:\d+", line)]
    assert paths and all(p.startswith("apps/") and (REPO / "examples/kubernetes" / p).is_file() for p in paths)
    sideways = invoke("lint", "../ai/qwen-chat", cwd=REPO / MEDIA)
    assert sideways.stdout.startswith("../ai/qwen-chat/qwen-chat.yaml:")
    above = invoke("lint", f"{REPO.name}/examples/kubernetes/apps/ai/qwen-chat", cwd=REPO.parent)
    assert above.stdout.startswith(f"{REPO.name}/examples/kubernetes/apps/ai/qwen-chat/qwen-chat.yaml:")
    elsewhere = invoke("lint", str(REPO / "examples/kubernetes/apps/ai/qwen-chat"), cwd=tmp_path)
    assert elsewhere.stdout.startswith(f"{REPO.resolve()}/examples/kubernetes/apps/ai/qwen-chat/qwen-chat.yaml:")
    sarif = json.loads(invoke("lint", ".", "--format", "sarif", cwd=REPO / "examples/kubernetes").stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert all(u.startswith("examples/kubernetes/apps/") for u in uris), "SARIF keeps repository paths"
    annotations = invoke("lint", ".", "--format", "github", cwd=REPO / "examples/kubernetes").stdout
    assert "file=examples/kubernetes/apps/" in annotations  # GitHub resolves file= from the repository root


# ---------------------------------------------------------------- item 14: exit codes and messages


def test_bare_cfgcheck_prints_help_without_an_error_line() -> None:
    result = spawn()
    assert "Usage" in result.stdout and "lint" in result.stdout
    assert result.stderr.strip() == "" and result.returncode == 2


def test_flags_rejects_what_is_not_a_version() -> None:
    bad = invoke("flags", "vllm", "banana")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()] and "'banana' is not a version of vllm" in bad.stderr
    newer = invoke("flags", "vllm", "99.0.0")
    assert newer.returncode == 0 and "--max-model-len" in newer.stdout and "not catalogued" in newer.stderr
    assert invoke("flags", "banana").returncode == 2


def test_fix_diff_exits_1_when_it_would_change_something(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    before = (tmp_path / "examples/kubernetes/apps/ai/qwen-chat/qwen-chat.yaml").read_text()
    changed = invoke("fix", "examples", "--diff", cwd=tmp_path)
    assert changed.returncode == 1 and "+" in changed.stdout and "--kv-cache-memory-bytes" in changed.stdout
    assert (tmp_path / "examples/kubernetes/apps/ai/qwen-chat/qwen-chat.yaml").read_text() == before
    assert invoke("fix", "examples", cwd=tmp_path).returncode == 0
    clean = invoke("fix", "examples", "--diff", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


@pytest.mark.parametrize("base", ["origin/main", "main", "sha"])
def test_shallow_clone_hint_is_a_command_that_works(tmp_path: Path, base: str) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    (upstream / "app.yaml").write_text("a: 1\n")
    git(upstream, "add", ".")
    git(upstream, "commit", "-qm", "one")
    git(upstream, "checkout", "-qb", "feature")
    (upstream / "app.yaml").write_text("a: 2\n")
    git(upstream, "commit", "-qam", "feature")
    git(upstream, "checkout", "-q", "main")
    (upstream / "other.yaml").write_text("b: 1\n")
    git(upstream, "add", ".")
    git(upstream, "commit", "-qm", "main moves on")
    ref = git(upstream, "rev-parse", "main").strip() if base == "sha" else base
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--single-branch", "-b", "feature", f"file://{upstream}", str(clone))
    refused = spawn("lint", "--base", ref, ".", cwd=clone)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    (command,) = re.findall(r"`(git fetch [^`]+)`", refused.stderr)
    assert "--unshallow" in command
    git(clone, *shlex.split(command)[1:])
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "false"
    assert git(clone, "merge-base", "HEAD", ref).strip()
    assert spawn("lint", "--base", ref, ".", cwd=clone).returncode == 0


def test_cfg205_states_the_default_once(tmp_path: Path) -> None:
    pinned = SECRET_APP.replace('"--api-key", "sk-live-abcdefghijklmnopqrstuvwxyz0123"', '"--max-num-seqs", "4"')
    result = lint_text(tmp_path, pinned)
    (finding,) = [f for f in result.findings if f.code == "CFG205"]
    assert finding.message.count("256") == 1, finding.message


# ---------------------------------------------------------------- item 15: image, licence, changelog


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped, as docker parses."""
    text = (REPO / "Dockerfile").read_text()
    logical, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    assert not pending, "a continuation runs off the end of the file"
    return [(parts[0].upper(), parts[1] if len(parts) > 1 else "") for parts in (line.strip().split(None, 1) for line in logical)]


def test_dockerfile_parses_and_runs_cfgcheck_as_non_root() -> None:
    known = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
             "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
    instructions = dockerfile_instructions()
    assert all(name in known for name, _ in instructions), instructions
    assert instructions[0][0] == "FROM"
    assert re.fullmatch(r"python:[\w.-]+-slim@sha256:[0-9a-f]{64}", instructions[0][1]), "base pinned by digest"
    entrypoint = [json.loads(args) for name, args in instructions if name == "ENTRYPOINT"]
    scripts = pyproject()["project"]["scripts"]
    assert entrypoint == [["cfgcheck"]] and "cfgcheck" in scripts
    users = [args.split(":")[0] for name, args in instructions if name == "USER"]
    assert users and users[-1] not in ("root", "0")
    last_user = max(i for i, (name, _) in enumerate(instructions) if name == "USER")
    assert last_user > max(i for i, (name, _) in enumerate(instructions) if name == "COPY")
    for name, args in instructions:
        if name == "COPY":
            sources = args.split()[:-1]
            assert all((REPO / source).exists() for source in sources), args
    readme = (REPO / "README.md").read_text()
    assert 'docker run --rm -v "$PWD:/src" -w /src' in readme


def test_license_matches_pyproject() -> None:
    license_text = (REPO / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert pyproject()["project"]["license"] == "Apache-2.0"


def test_readme_references_resolve_on_day_one() -> None:
    """The pre-commit and Action examples name what a fresh clone can resolve: a tag that exists, else main
    (no release is tagged yet), and the README says how to pin main's commit."""
    version = pyproject()["project"]["version"]
    changelog = (REPO / "CHANGELOG.md").read_text()
    readme = (REPO / "README.md").read_text()
    referenced = set(re.findall(r"(?:@|rev: )v(\d+\.\d+\.\d+)", readme))
    tags = set(subprocess.run(["git", "tag", "--list", "v*"], cwd=REPO, capture_output=True, text=True).stdout.split())
    assert not {f"v{number}" for number in referenced} - tags, "README names a version that is not tagged"
    if not tags:
        assert "rev: main" in readme and "cfgcheck/cfgcheck@main" in readme
        assert "autoupdate --bleeding-edge --freeze" in readme and "git ls-remote" in readme
    assert re.search(rf"^## \[{re.escape(version)}\]", changelog, re.M)


# ---------------------------------------------------------------- item 16: start-up imports

HEAVY = ("jsonschema", "jinja2", "github", "rich", "ruamel", "importlib.metadata", "xml")


def _heavy_imports_of_lint(folder: Path, file: str = "app.yaml") -> list[str]:
    """The HEAVY modules one ``cfgcheck lint FILE`` in ``folder`` imports (its cache under ``folder``)."""
    probe = (f"import sys\nfrom cfgcheck.cli import main\nsys.argv = ['cfgcheck', 'lint', {file!r}]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"print(sorted({{m.split('.')[0] if m.split('.')[0] != 'importlib' else m for m in sys.modules}} & set({HEAVY!r})))")
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "cache")}
    out = subprocess.run([sys.executable, "-c", probe], cwd=folder, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_linting_one_file_imports_only_what_it_needs(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text((REPO / MEDIA).joinpath(next(p.name for p in (REPO / MEDIA).iterdir()
                                                                     if p.suffix == ".yaml")).read_text())
    assert _heavy_imports_of_lint(tmp_path) == []
    served = tmp_path / "served"
    served.mkdir()
    shutil.copyfile(REPO / "examples/kubernetes/apps/ai/qwen-chat/qwen-chat.yaml", served / "app.yaml")
    assert _heavy_imports_of_lint(served) == []  # a served model is sized without them too


def test_a_configuration_validated_once_does_not_import_jsonschema_again(tmp_path: Path) -> None:
    """Start-up: jsonschema costs ~90 ms to import. A configuration that passed is remembered by
    digest under XDG_CACHE_HOME; any change (or an invalid one) is validated, with the same message."""
    (tmp_path / "app.yaml").write_text((REPO / MEDIA / "jellyfin.yaml").read_text())
    config = tmp_path / ".cfgcheck.yaml"
    config.write_text("gpu: H100-80GB\nrules:\n  CFG205:\n    min-reason-words: 3\n")
    assert _heavy_imports_of_lint(tmp_path) == ["jsonschema"]
    assert _heavy_imports_of_lint(tmp_path) == []
    assert len(list((tmp_path / "cache" / "cfgcheck" / "valid-config").iterdir())) == 2  # the file, the rule options
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for text, message in (("gpu: H100-80GB\nrules:\n  CFG205:\n    min-reason-words: '3'\n",
                           "rules.CFG205.min-reason-words: expected a whole number; got '3'"),
                          ("gpu: H100-80GB\nrules:\n  CFG205:\n    min-reason-word: 3\n",
                           "unknown key 'min-reason-word' (did you mean 'min-reason-words'?)")):
        config.write_text(text)
        for _ in range(2):  # a rejected configuration is never remembered
            out = subprocess.run([sys.executable, "-m", "cfgcheck", "lint", "app.yaml"], cwd=tmp_path,
                                 capture_output=True, text=True, env=env)
            assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
