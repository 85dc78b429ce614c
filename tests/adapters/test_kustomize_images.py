"""A kustomization's ``images:`` transformer applied to the served models of the files it includes: a
placeholder image (``image: vllm-gaudi``) is checked as the reference kustomize makes of it, with kubectl
(the rendering) and without (the file's own served model), never as a local build without a tag."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.adapters.launch import kustomizations
from cfgcheck.config import Config
from cfgcheck.lint import lint
from cfgcheck.model import Location, ServedModel, Setting
from helpers import FIXTURES, make_repo
from tests.adapters.test_kustomize_overlays import kubectl_always_printing, real_or_fake

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


@pytest.fixture(params=["fake-kubectl", "real-kubectl", "no-kubectl"])
def kubectl(request, tmp_path: Path, monkeypatch) -> str:
    if request.param == "no-kubectl":
        monkeypatch.setenv("PATH", "/nonexistent")
        return request.param
    return real_or_fake(request, monkeypatch, lambda: kubectl_always_printing(tmp_path, PLACEHOLDER_RENDERED))


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
                                   "  - name: registry.example.com/inference/vllm-gaudi\n    newTag: 1.20\n",
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
    repo = make_repo(tmp_path / "same", {**OVERLAID, "envs/prod/kustomization.yaml": OVERLAID["envs/dev/kustomization.yaml"]})
    result = lint([repo], Config(repo))
    assert [(m.image.value, m.image.location.path) for m in result.models] == \
        [("registry.example.com/inference/vllm-gaudi:1.20", "envs/dev/kustomization.yaml")]  # as written: a string


NESTED = FIXTURES / "formats" / "kustomize-nested-base"
# What `kubectl kustomize` (v1.32, kustomize v5.5.0) prints for base/llm-serving, base, and (with their
# namespace) overlays/dev and overlays/staging; overlays/prod also sets --max-model-len 32768.
NESTED_RENDERED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
{namespace}spec:
  replicas: 1
  selector:
    matchLabels:
      app: llm
  template:
    metadata:
      labels:
        app: llm
    spec:
      containers:
      - args:
        - Qwen/Qwen3-8B
        - --max-model-len
        - "{length}"
        command:
        - vllm
        - serve
        image: vllm/vllm-openai:v0.10.1
        name: vllm
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def _nested_kubectl(tmp_path: Path) -> Path:
    """A kubectl that prints what the real one does for each folder of kustomize-nested-base."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, namespace, length in (("base", "", 16384), ("dev", "dev", 16384), ("staging", "staging", 16384),
                                    ("prod", "prod", 32768)):
        (tmp_path / f"{name}.yaml").write_text(NESTED_RENDERED.format(
            namespace=f"  namespace: {namespace}\n" if namespace else "", length=length), encoding="utf-8")
    (bin_dir / "kubectl").write_text(
        "#!/bin/sh\ncase \"$3\" in\n"
        + "".join(f"  */overlays/{name}) cat '{tmp_path}/{name}.yaml';;\n" for name in ("dev", "staging", "prod"))
        + f"  *) cat '{tmp_path}/base.yaml';;\nesac\n", encoding="utf-8")
    (bin_dir / "kubectl").chmod(0o755)
    return bin_dir


@pytest.fixture(params=["fake-kubectl", "real-kubectl"])
def nested_kubectl(request, tmp_path: Path, monkeypatch) -> str:
    return real_or_fake(request, monkeypatch, lambda: _nested_kubectl(tmp_path))


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_base_rendered_through_its_parent_and_overlays_is_one_served_model(nested_kubectl: str) -> None:
    """The Deployment of base/llm-serving (its kustomization sets the image and, by a patch, the model),
    included by base/, which three overlays include: the file's own served model (no model: the patch
    gives it) is the rendering of base/llm-serving, and base/, dev and staging render it alike: one served
    model with the model; prod, which sets another --max-model-len, is its own."""
    result = lint([NESTED], Config(NESTED))
    served = sorted((m.identity.split("#")[0], m.model.value if m.model else None, m.value("max_model_len"))
                    for m in result.models)
    assert served == [("base/llm-serving/kustomization.yaml", "Qwen/Qwen3-8B", 16384),
                      ("overlays/prod/kustomization.yaml", "Qwen/Qwen3-8B", 32768)]
    assert {(m.path, m.location.line) for m in result.models} == {("base/llm-serving/deployment.yaml", 18)}
    assert not [f for f in result.findings if f.code == "CFG302"]


def test_without_kubectl_the_nested_base_is_its_files_served_model(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    result = lint([NESTED], Config(NESTED))
    assert [(m.identity.split("#")[0], m.image.value) for m in result.models] == \
        [("base/llm-serving/deployment.yaml", "vllm/vllm-openai:v0.10.1")]


def test_renderings_alike_are_one_and_one_that_places_the_pod_elsewhere_is_its_own() -> None:
    """Two overlays that render the container alike are one served model (the first, as near the file);
    an overlay whose rendering differs only in its nodeSelector (another GPU) stays its own."""
    at = Location("base/deployment.yaml", 16, 11)

    def rendering(overlay: str, selector: dict[str, str]) -> ServedModel:
        model = ServedModel("llm/vllm", "Deployment", at.path, 0, at, engine="vllm", engine_version="0.10.1",
                            identity=f"{overlay}/kustomization.yaml#rendered/Deployment/llm/vllm",
                            node_selector=selector)
        model.add(Setting("max_model_len", 16384, Location(at.path, 18, 40), "--max-model-len"))
        return model

    a100 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    models = [rendering("envs/prod", a100), rendering("envs/dev", a100),
              rendering("envs/h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})]
    chains = {at.path: [("base", "envs/dev"), ("base", "envs/prod"), ("base", "envs/h100")]}
    kustomizations._one_of_alike(chains, models)
    assert [m.identity.split("/kustomization")[0] for m in models] == ["envs/prod", "envs/h100"]
