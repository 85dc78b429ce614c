"""A kustomization's ``images:`` transformer applied to the served models of the files it includes: a
placeholder image (``image: vllm-gaudi``) is checked as the reference kustomize makes of it, with kubectl
(the rendering) and without (the file's own served model), never as a local build without a tag."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.adapters.launch import kustomizations
from cfgcheck.config import Config
from cfgcheck.lint import lint
from cfgcheck.model import Location, Setting
from helpers import FIXTURES, make_repo
from tests.adapters.test_kustomize_overlays import real_or_fake

PLACEHOLDER = FIXTURES / "formats" / "kustomize-placeholder-image"
# What `kubectl kustomize` (v1.32, kustomize v5.5.0) prints for kustomize-placeholder-image.
PLACEHOLDER_RENDERED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gaudi-chat
spec:
  selector:
    matchLabels:
      app: gaudi-chat
  template:
    metadata:
      labels:
        app: gaudi-chat
    spec:
      containers:
      - args:
        - --model
        - Qwen/Qwen3-8B
        - --tensor-parallel-size
        - "2"
        image: registry.example.com/inference/vllm-gaudi:1.21.0
        name: vllm
        resources:
          limits:
            nvidia.com/gpu: 2
"""
NEW_TAG_LINE = 8


def _printing(tmp_path: Path, rendered: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "rendered.yaml").write_text(rendered, encoding="utf-8")
    (bin_dir / "kubectl").write_text(f"#!/bin/sh\ncat '{tmp_path}/rendered.yaml'\n", encoding="utf-8")
    (bin_dir / "kubectl").chmod(0o755)
    return bin_dir


@pytest.fixture(params=["fake-kubectl", "real-kubectl", "no-kubectl"])
def kubectl(request, tmp_path: Path, monkeypatch) -> str:
    if request.param == "no-kubectl":
        monkeypatch.setenv("PATH", "/nonexistent")
        return request.param
    return real_or_fake(request, monkeypatch, lambda: _printing(tmp_path, PLACEHOLDER_RENDERED))


def _images(result) -> list[tuple[str, str, int]]:
    return sorted((f.code, f.location.path, f.location.line) for f in result.findings if f.code in ("CFG301", "CFG302"))


@pytest.mark.e2e  # cfgcheck spawns kubectl (or finds none)
def test_a_placeholder_image_is_checked_as_the_kustomization_makes_it(kubectl: str) -> None:
    result = lint([PLACEHOLDER], Config(PLACEHOLDER))
    assert _images(result) == [("CFG301", "kustomization.yaml", NEW_TAG_LINE)]
    assert {m.image.value for m in result.models} == {"registry.example.com/inference/vllm-gaudi:1.21.0"}


def test_the_file_named_alone_is_transformed_by_the_kustomization_that_includes_it(monkeypatch) -> None:
    """As pre-commit names a changed file: the kustomization naming it is read with it (its referrer)."""
    monkeypatch.setenv("PATH", "/nonexistent")
    result = lint([PLACEHOLDER / "deployment.yaml"], Config(PLACEHOLDER))
    assert _images(result) == [("CFG301", "kustomization.yaml", NEW_TAG_LINE)]


@pytest.mark.parametrize(("written", "entry", "made"), [
    # each as kubectl kustomize (kustomize v5.5.0) transforms it
    ("vllm-gaudi", ("vllm-gaudi", "reg/x", "1", "sha256:bbbb"), "reg/x:1@sha256:bbbb"),
    ("other:1@sha256:aaaa", ("other", None, "9", None), "other:9"),
    ("docker.io/library/third:2", ("third", "t3", None, None), "docker.io/library/third:2"),
    ("fourth:3", ("fourth", None, None, "sha256:cccc"), "fourth@sha256:cccc"),
    ("localhost:5000/fifth", ("localhost:5000/fifth", None, "7", None), "localhost:5000/fifth:7"),
])
def test_an_images_entry_transforms_a_reference_as_kustomize_does(written, entry, made) -> None:
    at = Location("kustomization.yaml", 4, 5)
    image = Setting("image", written, Location("deployment.yaml", 9, 18), "image")
    through = [kustomizations.Kustomized((), (kustomizations.ImageEntry(*entry, at),))]
    assert kustomizations._transformed(image, through).value == made


OVERLAID = {
    "base/deployment.yaml": (PLACEHOLDER / "deployment.yaml").read_text(encoding="utf-8"),
    "base/kustomization.yaml": "resources:\n  - deployment.yaml\nimages:\n  - name: vllm-gaudi\n"
                               "    newName: registry.example.com/inference/vllm-gaudi\n",
    "envs/dev/kustomization.yaml": "resources:\n  - ../../base\nimages:\n"
                                   "  - name: registry.example.com/inference/vllm-gaudi\n    newTag: 1.20.0\n",
    "envs/prod/kustomization.yaml": "resources:\n  - ../../base\nimages:\n"
                                    "  - name: registry.example.com/inference/vllm-gaudi\n    newTag: 1.21.0\n",
}


def test_overlays_that_tag_it_differently_leave_the_file_what_they_share(tmp_path: Path, monkeypatch) -> None:
    """The base names the registry, each overlay its own tag: the file's own served model is the base's
    reference (kubectl renders each overlay's)."""
    monkeypatch.setenv("PATH", "/nonexistent")
    repo = make_repo(tmp_path, OVERLAID)
    result = lint([repo], Config(repo))
    assert [m.image.value for m in result.models] == ["registry.example.com/inference/vllm-gaudi"]
    repo = make_repo(tmp_path / "same", {**OVERLAID, "envs/dev/kustomization.yaml": OVERLAID["envs/prod/kustomization.yaml"]})
    result = lint([repo], Config(repo))
    assert [(m.image.value, m.image.location.path) for m in result.models] == \
        [("registry.example.com/inference/vllm-gaudi:1.21.0", "envs/dev/kustomization.yaml")]
