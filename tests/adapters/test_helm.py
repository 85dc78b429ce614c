"""Helm charts rendered with ``helm template`` and mapped back to values and templates,
with a fake ``helm`` on PATH that emits a rendered manifest deterministically (the real helm: test_helm_real.py),
and the not-installed path with no helm on PATH or beside the interpreter (``without_helm``)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from cfgcheck.__main__ import main as cfgcheck_main
from cfgcheck.render.charts import helm_binary
from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import without_helm

CHART = {
    "charts/chat/Chart.yaml": "apiVersion: v2\nname: chat\nversion: 0.1.0\n",
    "charts/chat/values.yaml": """\
image:
  repository: vllm/vllm-openai
  tag: nightly
model: Qwen/Qwen3-8B
maxModelLen: 64000
""",
    "charts/chat/values-prod.yaml": """\
# production: a pinned engine, a longer context
image:
  tag: v0.26.0
maxModelLen: 65536
""",
    "charts/chat/templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          args: ["--model", {{ .Values.model | quote }}, "--max-model-len", {{ .Values.maxModelLen | quote }},
                 "--kv-cache-memory", "4294967296"]
""",
}

RENDERED = """\
---
# Source: chat/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: "vllm/vllm-openai:$TAG"
          args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "$LEN",
                 "--kv-cache-memory", "4294967296"]
"""

FAKE_HELM = """\
#!/bin/sh
# a stand-in for `helm template [OPTIONS] [--values=FILE] -- NAME CHART`: the image tag and maxModelLen
# come from the chart's values.yaml, then from the --values file
[ "$1" = template ] || exit 2
VALUES=
while [ $# -gt 0 ]; do
  case "$1" in --values=*) VALUES=${1#--values=};; --) CHART=$3; break;; esac
  shift
done
pick() { sed -n "s/^ *$1: *//p" "$2" | head -n 1; }
TAG=$(pick tag "$CHART/values.yaml"); LEN=$(pick maxModelLen "$CHART/values.yaml")
if [ -n "$VALUES" ]; then
  [ -n "$(pick tag "$VALUES")" ] && TAG=$(pick tag "$VALUES")
  [ -n "$(pick maxModelLen "$VALUES")" ] && LEN=$(pick maxModelLen "$VALUES")
fi
cat <<EOF
{rendered}EOF
"""


def write_chart(root: Path) -> None:
    for name, text in CHART.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture()
def chart(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_chart(root)
    return root


def fake_helm(tmp_path: Path, monkeypatch, script: str | None = None) -> None:
    """Put a fake ``helm`` (by default the chart-reading one above) first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text(script if script is not None else FAKE_HELM.replace("{rendered}", RENDERED))
    helm.chmod(helm.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def located(result, code: str) -> list[tuple[str, int, str]]:
    return sorted((f.location.path, f.location.line, f.model or "") for f in result.findings if f.code == code)


@pytest.mark.e2e  # cfgcheck spawns the stand-in helm
def test_chart_rendered_and_findings_mapped_to_values_and_template(chart: Path, tmp_path: Path, monkeypatch,
                                                                    capsys) -> None:
    fake_helm(tmp_path, monkeypatch)
    result = lint([chart], Config(chart.resolve()))
    assert "CFG000" not in {f.code for f in result.findings}, "the raw template was linted"
    identities = sorted(m.identity for m in result.models)
    assert identities == ["charts/chat/Chart.yaml#helm[values-prod.yaml]/Deployment/chat/spec/template/spec/vllm",
                          "charts/chat/Chart.yaml#helm[values.yaml]/Deployment/chat/spec/template/spec/vllm"]
    # the value that breaks the model's maximum: the line of the values file that set it, per rendering
    context = located(result, "CFG207")
    assert [(path, line) for path, line, _ in context] == [("charts/chat/values-prod.yaml", 4),
                                                             ("charts/chat/values.yaml", 5)]
    # the rolling tag comes from values.yaml; the prod rendering pins a version
    assert [(p, line) for p, line, _ in located(result, "CFG302")] == [("charts/chat/values.yaml", 3)]
    # a literal in the template: the template's own line and column
    abbreviations = [f for f in result.findings if f.code == "CFG101"]
    assert {(f.location.path, f.location.line, f.location.column) for f in abbreviations} == {
        ("charts/chat/templates/deployment.yaml", 12, 19)}
    err = capsys.readouterr().err
    assert "charts/chat: 1 Helm template file (such as deployment.yaml) not linted one by one" in err


def test_diff_mode_renders_the_chart_at_head_and_base(tmp_path: Path, monkeypatch, capsys) -> None:
    """A pull request that raises maxModelLen in values.yaml and edits a template: the chart is
    rendered at both commits, only the raised context is new, and the template is no CFG000."""
    from cfgcheck.diff import lint_diff
    from helpers import git, make_repo, write

    fake_helm(tmp_path, monkeypatch)
    base_values = CHART["charts/chat/values.yaml"].replace("64000", "32768")
    repo = make_repo(tmp_path, {**CHART, "charts/chat/values.yaml": base_values})
    git(repo, "checkout", "-qb", "raise")
    template = CHART["charts/chat/templates/deployment.yaml"]
    write(repo, {"charts/chat/values.yaml": CHART["charts/chat/values.yaml"],
                 "charts/chat/templates/deployment.yaml": template.replace("spec:\n  template", "spec:\n  replicas: 1\n  template")})
    git(repo, "commit", "-qam", "raise the context")
    result = lint_diff([repo], Config(repo.resolve()), "main")
    assert [(f.code, f.location.path, f.location.line) for f in result.findings] == [
        ("CFG207", "charts/chat/values.yaml", 5)], [(f.code, f.message) for f in result.findings]
    assert {m.identity.split("#")[1].split("/")[0] for m in result.base_models} == {"helm[values.yaml]",
                                                                                     "helm[values-prod.yaml]"}
    assert "not linted one by one" in capsys.readouterr().err


def test_diff_mode_renders_a_chart_when_only_a_helper_template_changed(tmp_path: Path, monkeypatch) -> None:
    from cfgcheck.diff import lint_diff
    from helpers import make_repo, write

    fake_helm(tmp_path, monkeypatch)
    repo = make_repo(tmp_path, {**CHART, "charts/chat/templates/_helpers.tpl": "{{/* v1 */}}\n"})
    write(repo, {"charts/chat/templates/_helpers.tpl": "{{/* v2 */}}\n"})
    result = lint_diff([repo], Config(repo.resolve()), "HEAD")
    assert len(result.models) == 2 and len(result.base_models) == 2
    assert result.findings == [], "nothing new: the rendering is the same at both commits"


def test_without_helm_templates_are_skipped_with_one_note(chart: Path, monkeypatch, capsys) -> None:
    without_helm(monkeypatch)
    (chart / "charts/chat/templates/service.yaml").write_text("{{- if .Values.service }}\nkind: Service\n{{- end }}\n")
    result = lint([chart], Config(chart.resolve()))
    assert "CFG000" not in {f.code for f in result.findings}
    assert result.models == []
    err = capsys.readouterr().err
    assert err.count("Helm template file") == 1 and "charts/chat: 2 Helm template files" in err
    assert "helm not found" in err and "helm template NAME charts/chat | cfgcheck lint -" in err
    # a template named on the command line (a pre-commit hook names every changed file) is recognised
    # as a template too: a note, not a CFG000 error on every template edit
    named = lint([chart / "charts/chat/templates/service.yaml"], Config(chart.resolve()))
    assert named.findings == []
    assert "charts/chat/templates: 1 template file (such as service.yaml) not linted" in capsys.readouterr().err


def test_render_helm_asked_for_without_helm_is_a_usage_error(chart: Path, monkeypatch, capsys) -> None:
    without_helm(monkeypatch)
    monkeypatch.chdir(chart)
    with pytest.raises(SystemExit) as stopped:
        monkeypatch.setattr(sys, "argv", ["cfgcheck", "lint", str(chart), "--render-helm"])
        cfgcheck_main()
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "helm is not installed" in err and "Traceback" not in err


def test_helm_installed_beside_the_interpreter_is_found_without_path(tmp_path: Path, monkeypatch) -> None:
    """The ``helm`` extra installs helm into the venv's bin folder: found when cfgcheck runs by its full
    path with the venv not activated."""
    beside = tmp_path / "helm"
    beside.write_text("#!/bin/sh\n")
    beside.chmod(0o755)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("sys.executable", str(tmp_path / "python3"))
    assert helm_binary() == str(beside)
    beside.chmod(0o644)
    assert helm_binary() is None


def test_render_helm_off_does_not_run_helm(chart: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    fake_helm(tmp_path, monkeypatch)
    result = lint([chart], Config(chart.resolve(), {"render-helm": False}))
    assert result.models == [] and "rendering is off" in capsys.readouterr().err


@pytest.mark.e2e  # cfgcheck spawns the stand-in helm
def test_helm_failure_is_a_note_not_a_crash(chart: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    fake_helm(tmp_path, monkeypatch,
              "#!/bin/sh\necho 'Error: found in Chart.yaml, but missing in charts/ directory: redis' >&2\nexit 1\n")
    result = lint([chart], Config(chart.resolve()))
    assert result.models == [] and "helm template failed: Error: found in Chart.yaml" in capsys.readouterr().err


def test_a_chart_linking_outside_the_repository_is_not_rendered(chart: Path, tmp_path: Path, monkeypatch,
                                                                capsys) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2\n")
    (chart / "charts/chat/files").mkdir()
    (chart / "charts/chat/files/token").symlink_to(secret)
    fake_helm(tmp_path, monkeypatch)
    result = lint([chart], Config(chart.resolve()))
    assert result.models == []
    assert "chart not rendered: charts/chat/files/token links outside the repository" in capsys.readouterr().err


@pytest.mark.e2e  # cfgcheck spawns the stand-in helm
def test_endless_helm_output_is_cut_at_the_file_limit(chart: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    fake_helm(tmp_path, monkeypatch, "#!/bin/sh\nexec yes 'a: b'\n")
    result = lint([chart], Config(chart.resolve(), {"limits": {"max-file-bytes": 100_000}}))
    assert result.models == []
    assert "helm template printed more than 100,000 bytes" in capsys.readouterr().err


@pytest.mark.e2e  # cfgcheck spawns the stand-in helm
def test_renderings_per_chart_are_bounded(chart: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from cfgcheck.render import helm

    (chart / "charts/chat/values-staging.yaml").write_text("maxModelLen: 8192\n")
    monkeypatch.setattr(helm, "MAX_VALUES_FILES", 1)
    fake_helm(tmp_path, monkeypatch)
    result = lint([chart], Config(chart.resolve()))
    assert sorted(m.identity.split("#")[1].split("/")[0] for m in result.models) == [
        "helm[values-prod.yaml]", "helm[values.yaml]"]
    assert "2 values files; rendered with the first 1 only" in capsys.readouterr().err


def test_templates_in_folders_under_templates_are_set_aside_too(chart: Path, monkeypatch, capsys) -> None:
    # Helm renders templates/tests/ and other folders under templates/ as well (a CFG000 on them before)
    without_helm(monkeypatch)
    (chart / "charts/chat/templates/tests").mkdir()
    (chart / "charts/chat/templates/tests/test-connection.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"{{ .Release.Name }}-test\"\n")
    result = lint([chart], Config(chart.resolve()))
    assert "CFG000" not in {f.code for f in result.findings}
    assert "2 Helm template files" in capsys.readouterr().err
