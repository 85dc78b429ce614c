"""Kustomize overlays that share a patch (through a component or a common base): one problem at one
source line is one finding, however many overlays render it; overlays that render it differently are
each reported. A reference that leaves the repository is never rendered nor read."""

from __future__ import annotations

import os
import shutil
import stat
from collections import Counter
from pathlib import Path
from typing import Callable

import pytest

from cfgcheck.render import kustomize
from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import FIXTURES, make_repo
from tests.adapters.test_adapters_formats import RENDERED as ONE_OVERLAY

OVERLAYS = FIXTURES / "formats" / "kustomize-overlays"

# What `kubectl kustomize` prints for envs/dev and envs/staging (v0.10.0 from the base) and envs/prod
# (its images: newTag v0.11.0), captured from kubectl v1.32 on this fixture; the base alone renders as
# its one file.
RENDERED = (ONE_OVERLAY.replace('        - "65536"\n', '        - "65536"\n        - --max-num-seqz\n        - "64"\n')
            .replace("vllm/vllm-openai:v0.10.0", "vllm/vllm-openai:{tag}"))


def fake_kubectl(tmp_path: Path) -> Path:
    """A kubectl that renders the fixture's overlays as the real one does, and logs every folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tag in ("v0.10.0", "v0.11.0"):
        (tmp_path / f"{tag}.yaml").write_text(RENDERED.format(tag=tag), encoding="utf-8")
    script = bin_dir / "kubectl"
    # `kubectl kustomize -- FOLDER`: the folder is the third argument
    script.write_text(f"#!/bin/sh\n[ \"$1\" = kustomize ] && [ \"$2\" = -- ] || exit 2\n"
                      f"echo \"$3\" >> '{tmp_path}/calls'\n"
                      f"case \"$3\" in */prod) cat '{tmp_path}/v0.11.0.yaml';;"
                      " */components/*) echo 'Error: a Component' >&2; exit 1;;"
                      f" */base) cat '{OVERLAYS}/base/deployment.yaml';; *) cat '{tmp_path}/v0.10.0.yaml';; esac\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def real_or_fake(request, monkeypatch, fake: Callable[[], Path]) -> str:
    """The installed kubectl (skipped when there is none), or ``fake()``'s folder first on PATH."""
    if request.param == "real-kubectl":
        if shutil.which("kubectl") is None:
            pytest.skip("kubectl is not installed: checked with the fake kubectl only")
        return request.param
    monkeypatch.setenv("PATH", str(fake()) + os.pathsep + os.environ.get("PATH", ""))
    return request.param


@pytest.fixture(params=["fake-kubectl", "real-kubectl"])
def kubectl(request, tmp_path: Path, monkeypatch) -> str:
    return real_or_fake(request, monkeypatch, lambda: fake_kubectl(tmp_path))


def placed(result) -> Counter:
    return Counter((f.code, f.location.path, f.location.line, f.location.column, f.message) for f in result.findings)


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_one_patch_rendered_through_three_overlays_is_one_finding(kubectl: str) -> None:
    result = lint([OVERLAYS], Config(OVERLAYS))
    counts = placed(result)
    assert counts and max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
    too_long = [f for f in result.findings if f.code == "CFG207"]
    assert [(f.location.path, f.location.line, f.location.column) for f in too_long] == \
        [("components/sim/patch.yaml", 10, 66)]
    unpinned = [f for f in result.findings if f.code == "CFG301"]
    assert sorted(f.location.path for f in unpinned) == ["base/deployment.yaml", "envs/prod/kustomization.yaml"]


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_overlays_that_render_a_line_differently_are_each_reported(kubectl: str) -> None:
    """dev and staging run vLLM 0.10.0, prod 0.11.0: the typo at the shared patch line is one finding
    per version, not one per overlay, and not one in all."""
    result = lint([OVERLAYS], Config(OVERLAYS))
    typo = [f for f in result.findings if f.code == "CFG103"]
    assert {(f.location.path, f.location.line, f.location.column) for f in typo} == \
        {("components/sim/patch.yaml", 10, 75)}
    assert sorted(f.message for f in typo) == ["unknown flag '--max-num-seqz' in vLLM 0.10.0",
                                              "unknown flag '--max-num-seqz' in vLLM 0.11.0"]


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_component_is_rendered_only_through_what_includes_it(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PATH", str(fake_kubectl(tmp_path)) + os.pathsep + os.environ.get("PATH", ""))
    lint([OVERLAYS], Config(OVERLAYS))
    calls = (tmp_path / "calls").read_text(encoding="utf-8").split()
    assert sorted(Path(c).name for c in calls) == ["base", "dev", "prod", "staging"]
    assert "kubectl kustomize failed" not in capsys.readouterr().err


def test_a_reference_outside_the_repository_is_not_followed(tmp_path: Path, monkeypatch, capsys) -> None:
    """``resources: ../../outside`` in a pull request: not read by cfgcheck, not rendered by kubectl."""
    monkeypatch.setenv("PATH", str(fake_kubectl(tmp_path)) + os.pathsep + os.environ.get("PATH", ""))
    outside = tmp_path / "outside"
    shutil.copytree(OVERLAYS / "base", outside)
    repo = tmp_path / "repo"
    (repo / "envs" / "evil").mkdir(parents=True)
    (repo / "envs" / "evil" / "kustomization.yaml").write_text("resources:\n  - ../../../outside\n", encoding="utf-8")
    reach = kustomize._reach(repo, repo / "envs" / "evil")
    assert reach.outside == "../../../outside" and not reach.remote
    assert all(outside not in file.parents for file in reach.files)
    result = lint([repo], Config(repo))
    assert not result.models and not (tmp_path / "calls").exists()
    assert "draws from outside the repository (../../../outside), not rendered" in capsys.readouterr().err


def test_a_symlink_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(OVERLAYS / "base", outside)
    repo = tmp_path / "repo"
    (repo / "envs" / "evil").mkdir(parents=True)
    (repo / "base").symlink_to(outside, target_is_directory=True)
    (repo / "envs" / "evil" / "kustomization.yaml").write_text("resources:\n  - ../../base\n", encoding="utf-8")
    assert kustomize._reach(repo, repo / "envs" / "evil").outside == "../../base"


# ---------------------------------------------------------------- a rendered copy keeps its source lines

REASONS = FIXTURES / "formats" / "kustomize-reasons"
# What `kubectl kustomize` (v1.32) prints for kustomize-reasons/overlay: no comment survives it.
REASONS_RENDERED = """\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  labels:
    team: search
  name: qwen3-32b
  namespace: ai
spec:
  image: vllm/vllm-openai:v0.26.0
  modelRef: qwen3-32b
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
  parallelSlots: 6
  replicas: {replicas}
  resources:
    gpu: 1
  runtime: vllm
  vllmConfig:
    maxModelLen: 8192
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: Model
metadata:
  name: qwen3-32b
  namespace: ai
spec:
  format: safetensors
  source: hf://Qwen/Qwen3-32B
"""
SLOTS_LINE = 20  # base/qwen.yaml: `parallelSlots: 6`, below the two comment lines that give the reason


def kubectl_printing(tmp_path: Path, rendered: str) -> Path:
    """A kubectl that prints ``rendered`` for an overlay and a base's own file for a base."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "overlay.yaml").write_text(rendered, encoding="utf-8")
    script = bin_dir / "kubectl"
    script.write_text(f"#!/bin/sh\ncase \"$3\" in */overlay) cat '{tmp_path}/overlay.yaml';;"
                      f" *) cat \"$3/qwen.yaml\";; esac\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.fixture(params=["fake-kubectl", "real-kubectl"])
def reasons_kubectl(request, tmp_path: Path, monkeypatch) -> str:
    return real_or_fake(request, monkeypatch, lambda: kubectl_printing(tmp_path, REASONS_RENDERED.format(replicas=1)))


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_base_rendered_through_an_overlay_is_one_served_model_at_its_source_lines(reasons_kubectl: str) -> None:
    """The overlay adds a namespace and a label: what the InferenceService runs is what its base file
    says, so the base and its rendering are one served model, and the reason written above
    ``parallelSlots`` is read (the CFG203 about it is a note, once, at that line; no CFG205)."""
    result = lint([REASONS], Config(REASONS))
    services = [m for m in result.models if m.kind == "InferenceService"]
    assert [(m.path, m.identity) for m in services] == [("base/qwen.yaml", "base/qwen.yaml#InferenceService/qwen3-32b")]
    seqs = [(f.location.path, f.location.line, f.severity) for f in result.findings if f.code == "CFG203"]
    assert seqs == [("base/qwen.yaml", SLOTS_LINE, "note")]
    assert "the measurement beside it is respected" in next(f.message for f in result.findings if f.code == "CFG203")
    assert not lint([REASONS], Config(REASONS), select=["CFG205"]).findings


@pytest.mark.e2e  # cfgcheck spawns the stand-in kubectl
def test_an_overlay_that_changes_a_base_keeps_the_comments_of_the_lines_it_did_not_change(tmp_path: Path,
                                                                                         monkeypatch) -> None:
    """An overlay that sets ``replicas: 2`` runs something else than its base: two served models. The
    rendered one has each setting at the line that sets it (the patch for replicas, the base for the
    rest, not the patch's ``metadata.name``), with the comments written there."""
    repo = tmp_path / "repo"
    shutil.copytree(REASONS, repo)
    patch = repo / "overlay" / "team-label.yaml"
    patch.write_text(patch.read_text(encoding="utf-8") + "spec:\n  replicas: 2\n", encoding="utf-8")
    monkeypatch.setenv("PATH", str(kubectl_printing(tmp_path, REASONS_RENDERED.format(replicas=2))) + os.pathsep
                       + os.environ.get("PATH", ""))
    result = lint([repo], Config(repo))
    (rendered,) = [m for m in result.models if m.identity.startswith("overlay/kustomization.yaml#rendered/")]
    assert (rendered.path, rendered.location.line) == ("base/qwen.yaml", 12)  # the base's metadata.name
    assert (rendered.replicas.location.path, rendered.replicas.location.line) == ("overlay/team-label.yaml", 8)
    slots = rendered.setting("max_num_seqs")
    assert (slots.location.path, slots.location.line) == ("base/qwen.yaml", SLOTS_LINE)
    assert len(slots.comments) == 2 and slots.comments[0].startswith("Load test 03-14")
    assert {(t.location.path, t.location.line) for t in rendered.argv if t.text in ("--max-num-seqs", "6")} == \
        {("base/qwen.yaml", SLOTS_LINE)}
    seqs = [(f.location.path, f.location.line, f.severity) for f in result.findings if f.code == "CFG203"]
    assert seqs == [("base/qwen.yaml", SLOTS_LINE, "note")]  # the base's and the overlay's: one finding


# ---------------------------------------------------------------- a file the run reads and a kustomization renders

INCLUDED = FIXTURES / "formats" / "kustomize-included"
# What `kubectl kustomize` (v1.32) prints for kustomize-included: the image tag changed, all else as written.
INCLUDED_RENDERED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
  namespace: inference
spec:
  selector:
    matchLabels:
      app: chat
  template:
    metadata:
      labels:
        app: chat
    spec:
      containers:
      - args:
        - --model
        - Qwen/Qwen3-8B
        - --tensor-parallel-size
        - "2"
        image: vllm/vllm-openai:v0.28.0
        livenessProbe:
          httpGet:
            path: /health
            port: 8000
          initialDelaySeconds: 30
        name: vllm
        readinessProbe:
          httpGet:
            path: /health
            port: 8000
        resources:
          limits:
            nvidia.com/gpu: 2
"""


def kubectl_always_printing(tmp_path: Path, rendered: str) -> Path:
    """A kubectl that prints ``rendered`` whatever it is asked to render."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "rendered.yaml").write_text(rendered, encoding="utf-8")
    (bin_dir / "kubectl").write_text(f"#!/bin/sh\ncat '{tmp_path}/rendered.yaml'\n", encoding="utf-8")
    (bin_dir / "kubectl").chmod(0o755)
    return bin_dir


@pytest.fixture(params=["fake-kubectl", "real-kubectl"])
def included_kubectl(request, tmp_path: Path, monkeypatch) -> str:
    return real_or_fake(request, monkeypatch, lambda: kubectl_always_printing(tmp_path, INCLUDED_RENDERED))


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_deployment_read_directly_and_rendered_is_reported_once(included_kubectl: str) -> None:
    """The Deployment's own file and the kustomization that renders it with another tag: two served
    models, placed at the same container; the liveness probe both have alike is one finding at its own
    line (not also at the readiness probe's equal ``/health``), whichever file comes first."""
    files = [INCLUDED / "deployment.yaml", INCLUDED / "kustomization.yaml"]
    for paths, jobs in ((files, 1), (files[::-1], 1), (files[::-1], 2)):
        result = lint(paths, Config(INCLUDED), jobs=jobs)
        assert {(m.path, m.location.line) for m in result.models} == {("deployment.yaml", 17)}
        probes = [(f.location.path, f.location.line) for f in result.findings if f.code == "CFG502"]
        assert probes == [("deployment.yaml", 25)]
        shm = [(f.location.path, f.location.line) for f in result.findings if f.code == "CFG501"]
        assert shm == [("deployment.yaml", 19)]


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_deployment_renamed_by_a_prefix_is_its_files_served_model(included_kubectl: str, tmp_path: Path) -> None:
    """``namePrefix: prod-`` renames the object: it is still the one the file defines, so the rendering
    is placed there (its metadata.name line, not the kustomization's first line), and what it shares
    with the file's own served model is one finding."""
    kustomization = (INCLUDED / "kustomization.yaml").read_text(encoding="utf-8")
    repo = make_repo(tmp_path, {"deployment.yaml": (INCLUDED / "deployment.yaml").read_text(encoding="utf-8"),
                                "kustomization.yaml": kustomization.replace("resources:", "namePrefix: prod-\nresources:")})
    (tmp_path / "rendered.yaml").write_text(INCLUDED_RENDERED.replace("  name: chat\n", "  name: prod-chat\n"),
                                            encoding="utf-8")
    result = lint([repo], Config(repo))
    assert {(m.path, m.location.line) for m in result.models} == {("deployment.yaml", 17)}
    assert [(f.location.path, f.location.line) for f in result.findings if f.code == "CFG502"] == \
        [("deployment.yaml", 25)]


@pytest.mark.parametrize("written, remote", [
    ("https://github.com/org/repo//base?ref=v1", True), ("github.com/org/repo/base", True),
    ("git@github.com:org/repo", True), ("9a+b.c-d://host/x", True), ("HTTPS://example.com/x", True),
    ("deployment.yaml", False), ("../base", False), ("12://x", False), ("-://x", False), ("a b/c:/d", False)])
def test_a_reference_kustomize_fetches_is_told_by_its_form(written: str, remote: bool) -> None:
    """A scheme is letters, digits, ``+.-`` from a letter on (the regex matches it from the start of its run)."""
    assert bool(kustomize._REMOTE.search(written)) is remote


REFERENCE_FORMS = ["https://github.com/org/repo//base?ref=v1", "github.com/org/repo/base", "git@github.com:org/repo",
                   "9a+b.c-d://host/x", "HTTPS://example.com/x", "GitLab.com:org/repo", " git::https://h/r",
                   "base?REF=v2", "overlay?ref=main", "g\u0131thub.com/org/repo", "\u212aust://h/x", "dev.azure.com/o/p",
                   "user.name@host-1.example:path", "deployment.yaml", "../base", "12://x", "-://x", "a b/c:/d",
                   "configs/app.env", "\u00e9t\u00e9/deployment.yaml", ""]


@pytest.mark.parametrize("written", REFERENCE_FORMS)
def test_a_reference_the_cheap_test_clears_is_no_remote_form(written: str) -> None:
    """``may_be_remote`` only spares the patterns: a reference either pattern (the index hook's, with
    ``?ref=``, or the renderer's) reads as fetched is never cleared by it."""
    from cfgcheck.adapters.launch import kustomizations

    fetched = bool(kustomizations._REMOTE.search(written)) or bool(kustomize._REMOTE.search(written)) \
        or "?ref=" in written
    assert kustomizations.may_be_remote(written) or not fetched
    if written.isascii() and not any(word in written.lower() for word in ("://", "@", "git", "azure", "?ref=")):
        assert not kustomizations.may_be_remote(written)  # the plain file names of a tree are cleared


@pytest.mark.parametrize("text, may", [
    ("resources:\n  - deployment.yaml\n", False), ("resources:\n  - GitHub.com/org/repo\n", True),
    ("resources:\n  - g\u0131thub.com/org/repo\n", True),  # a dotless i: re.I reads it as i, so does kustomize's test
    ("resources:\n  - \"deploy\\x40ment.yaml\"\n", True), ("", True)])
def test_a_kustomization_that_may_name_a_url_is_walked_for_it(text: str, may: bool) -> None:
    assert kustomize._may_name_url(text) is may


def test_a_kustomization_is_read_once(tmp_path: Path, monkeypatch) -> None:
    """Its renderer tests the text the run read for a serving marker: each file of the run is opened once."""
    from cfgcheck import yamlio

    repo = make_repo(tmp_path, {"app/kustomization.yaml": "resources:\n  - service.yaml\n",
                                "app/service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: app\n"})
    opened: list[str] = []
    read_bytes = yamlio._read_bytes
    monkeypatch.setattr(yamlio, "_read_bytes", lambda file, limit: opened.append(os.fspath(file)) or read_bytes(file, limit))
    lint([repo], Config(repo))
    assert sorted(opened) == sorted(str(repo / "app" / name) for name in ("kustomization.yaml", "service.yaml"))


def test_a_file_read_ahead_without_a_marker_is_not_tested_again(tmp_path: Path, monkeypatch) -> None:
    """The renderer reads a kustomization's files ahead and tests them: one found without a serving marker is
    not tested again at its turn (lint.serving_filter), and is still read once, without a served model."""
    import cfgcheck.lint

    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: app\n"
    repo = make_repo(tmp_path, {"app/kustomization.yaml": "resources:\n  - service.yaml\n", "app/service.yaml": service})
    tested: list[str] = []
    test = cfgcheck.lint.has_serving_marker
    monkeypatch.setattr(cfgcheck.lint, "has_serving_marker", lambda text: tested.append(text) or test(text))
    result = lint([repo], Config(repo))
    assert service not in tested and len(tested) == 1  # the kustomization's own text only
    assert not result.models and [file.path for file in result.files] == ["app/kustomization.yaml", "app/service.yaml"]
