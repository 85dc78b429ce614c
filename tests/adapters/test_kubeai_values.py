"""KubeAI Models and the repository's own KubeAI values (formats/kubeai.py): a Model takes the image and
the profile the values define whatever the order of the files, with one process or workers, from the
content cache, and when pre-commit names only the Model's file; a profile the chart does not define gives
the Model its devices and, assumed, the GPU its name or nodeSelector names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfgcheck import pool
from cfgcheck.adapters.core.contexts import DocContext, Workspace
from cfgcheck.adapters.launch.held_values import values_sources
from cfgcheck.capacity.gpus import resolve_accelerator
from cfgcheck.config import Config
from cfgcheck.lint import collect, lint
from cfgcheck.lint_command import render_lint
from cfgcheck.yamlio import parse_text
from helpers import make_repo
from tests.lint.test_pool_order import _in_process

VALUES = """\
# KubeAI as this cluster installs it: a profile per card, the ROCm build for the Radeon ones
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: kubeai
spec:
  chart:
    spec:
      chart: kubeai
  values:
    resourceProfiles:
      amd-gpu-rx-7900-xtx:
        imageName: radeon
        limits:
          amd.com/gpu: "1"
      instinct-pool:
        nodeSelector:
          amd.com/gpu.product-name: AMD_Instinct_MI300X
        limits:
          amd.com/gpu: 1
      amd-gpu-rx9070xt:
        limits:
          amd.com/gpu: "1"
      amd-gpu-rx9999:
        limits:
          amd.com/gpu: "1"
    modelServers:
      VLLM:
        images:
          radeon: rocm/vllm:{tag}
"""
MODEL = """\
apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: {name}
spec:
  features: [TextGeneration]
  url: hf://Qwen/Qwen2.5-7B-Instruct@a09a35458c702b33eeacc393d103063234e8bc28
  engine: VLLM
  resourceProfile: {profile}
"""
MODELS = "---\n".join(MODEL.format(name=name, profile=profile) for name, profile in (
    ("radeon", "amd-gpu-rx-7900-xtx:2"), ("instinct", "instinct-pool:1"), ("rx9070xt", "amd-gpu-rx9070xt:1"),
    ("unknown-card", "amd-gpu-rx9999:1")))
ROLLING = ("CFG302", "values", 30)  # the Radeon profile's image: rocm/vllm:latest


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _found(folder: Path, *paths: Path, **options) -> set[tuple[str, str, int]]:
    result = lint(list(paths) or [folder], Config(folder), **options)
    return {(f.code, Path(f.location.path).stem.split("-", 1)[-1], f.location.line) for f in result.findings}


@pytest.mark.parametrize("values_name", ["0-values.yaml", "z-values.yaml"])
def test_the_values_count_whether_their_file_comes_before_or_after_the_models(tmp_path: Path, values_name: str) -> None:
    folder = _write(tmp_path, {"a-models.yaml": MODELS, values_name: VALUES.format(tag="latest")})
    assert ROLLING in _found(folder)
    models = {m.name: m for m in collect([folder], Config(folder))[1]}
    assert models["radeon"].image.value == "rocm/vllm:latest"


def test_workers_see_the_values_as_one_process_does(tmp_path: Path, monkeypatch) -> None:
    files = {f"m{n}-models.yaml": MODELS.replace("name: ", f"name: n{n}-") for n in range(3)}
    folder = _write(tmp_path, {**files, "z-values.yaml": VALUES.format(tag="latest")})
    one = render_lint(lint([folder], Config(folder), jobs=1), "json", None, folder, True, False, False)
    monkeypatch.setattr(pool, "MIN_FILES", 2)
    monkeypatch.setattr(pool, "ordered", _in_process(2))
    assert render_lint(lint([folder], Config(folder), jobs=2), "json", None, folder, True, False, False) == one
    assert [f["path"] for f in json.loads(one)["findings"] if f["code"] == "CFG302"] == ["z-values.yaml"]


def test_a_changed_values_file_changes_what_the_cached_models_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = _write(tmp_path / "repo", {"models/a-models.yaml": MODELS, "z-values.yaml": VALUES.format(tag="latest")})
    # a whole run's entry; one of a folder whose Models the values outside it serve; the file's own stage
    for paths in ([folder], [folder / "models"], [folder / "models" / "a-models.yaml"]):
        assert ROLLING in _found(folder, *paths, cache=True) and ROLLING in _found(folder, *paths, cache=True)
        _write(folder, {"z-values.yaml": VALUES.format(tag="v0.9.1")})
        assert ROLLING not in _found(folder, *paths, cache=True)
        _write(folder, {"z-values.yaml": VALUES.format(tag="latest")})


def test_a_model_named_alone_finds_the_values_elsewhere_in_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"models/qwen-models.yaml": MODELS, "infra/kubeai-values.yaml": VALUES.format(tag="latest"),
                                "infra/other.yaml": "resourceProfiles: not-kubeai\n"})
    assert ROLLING in _found(repo, repo / "models" / "qwen-models.yaml")


def test_a_profile_of_the_repository_gives_its_devices_and_the_gpu_it_names_assumed(tmp_path: Path) -> None:
    folder = _write(tmp_path, {"a-models.yaml": MODELS, "z-values.yaml": VALUES.format(tag="latest")})
    models = {m.name: m for m in collect([folder], Config(folder))[1]}
    radeon, instinct, unknown = models["radeon"], models["instinct"], models["unknown-card"]
    assert resolve_accelerator(models["rx9070xt"], {}).accelerator.name == "RX-9070-XT"  # the name run together
    assert (radeon.gpus.value, radeon.gpu_resource) == (2, "amd.com/gpu") and radeon.gpus.location.line == 9
    found = resolve_accelerator(radeon, {})
    assert found.accelerator.name == "RX-7900-XTX" and "z-values.yaml:12" in found.assumed
    found = resolve_accelerator(instinct, {})
    assert found.accelerator.name == "MI300X" and "nodeSelector" in found.assumed
    assert unknown.gpus.value == 1 and resolve_accelerator(unknown, {}).accelerator is None  # a card the table lacks


HELD = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: platform
spec:
  sources:
    - repoURL: https://github.com/example/platform
      ref: values
    - chart: platform
      helm:
        values: |
          logLevel: info
        valuesObject:
          kubeai:
            modelServers:
              VLLM:
                images:
                  radeon: rocm/vllm:latest
---
releases:
  - name: kubeai
    chart: kubeai/kubeai
    values:
      - values/kubeai.yaml
      - resourceProfiles:
          amd-gpu-rx-7900-xtx:
            imageName: radeon
            limits:
              amd.com/gpu: "1"
"""


def test_one_reader_finds_the_values_a_deployment_object_holds() -> None:
    loaded = parse_text("platform.yaml", HELD)
    application, helmfile = (DocContext(loaded, document, Workspace()) for document in loaded.documents)
    found = [(prefix, values.line) for _, values, prefix, _ in values_sources(application, application.document.root)]
    assert found == [("spec.sources[1].helm.valuesObject.", 14), ("spec.sources[1].helm.values.", 12)]
    found = [(prefix, release) for _, _, prefix, release in values_sources(helmfile, helmfile.document.root, True)]
    assert found == [("", None), ("releases[0].values[1].", "kubeai")]  # not the values file it names
    assert len(values_sources(helmfile, helmfile.document.root)) == 1  # the releases only when asked


def test_a_model_takes_the_values_an_application_and_a_helmfile_hold(tmp_path: Path) -> None:
    folder = _write(tmp_path, {"a-models.yaml": MODELS, "z-platform.yaml": HELD})
    radeon = {m.name: m for m in collect([folder], Config(folder))[1]}["radeon"]
    assert radeon.image.value == "rocm/vllm:latest" and radeon.image.location.line == 18
    assert radeon.image.source == "spec.sources[1].helm.valuesObject.kubeai.modelServers.VLLM.images.radeon"
    assert radeon.gpus.value == 2 and "z-platform.yaml:26" in resolve_accelerator(radeon, {}).assumed
