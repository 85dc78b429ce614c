"""A kustomization's rendered values placed at their own object's lines: an equal text in another object's
file (another Deployment's ``replicas: 1``, a ``nvidia.com/gpu: 1``) is never taken for a value its own
file writes, so a Deployment the kustomization changes nothing in is its file's one served model; a value
a patch sets is still placed at the patch."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from cfgcheck.cli import app
from cfgcheck.config import Config
from cfgcheck.lint import lint
from cfgcheck.adapters.core.workspace import Workspace
from cfgcheck.render.source_map import SourceMap
from helpers import FIXTURES, REPO, make_repo
from tests.adapters.test_kustomize_overlays import real_or_fake

EQUAL_REPLICAS = FIXTURES / "formats" / "kustomize-equal-replicas"
EQUAL_GPU_LINE = FIXTURES / "formats" / "kustomize-equal-gpu-line"
PATCHED_ARGS = FIXTURES / "formats" / "kustomize-patched-args"

# What `kubectl kustomize` (v1.32, kustomize v5.5.0) prints for each fixture, by the fixture's name
RENDERED = REPO / "tests" / "data" / "kustomize-rendered"


def fixture_files(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.iterdir())}


def kubectl_rendering(tmp_path: Path, folder: Path) -> Path:
    """A kubectl that prints what the real one renders for the fixture ``folder``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubectl"
    script.write_text(f"#!/bin/sh\n[ \"$1\" = kustomize ] || exit 2\ncat '{RENDERED / folder.name}.yaml'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.fixture(params=["fake-kubectl", "real-kubectl"])
def kubectl(request, tmp_path: Path, monkeypatch) -> Callable[[Path], Path]:
    """Readies a kubectl for a fixture folder and gives the folder back."""

    def ready(folder: Path) -> Path:
        real_or_fake(request, monkeypatch, lambda: kubectl_rendering(tmp_path, folder))
        return folder

    return ready


def placed(setting) -> tuple[str, int]:
    return setting.location.path, setting.location.line


@pytest.mark.e2e  # cfgcheck spawns kubectl
@pytest.mark.parametrize("folder", [EQUAL_REPLICAS, EQUAL_GPU_LINE], ids=lambda folder: folder.name)
def test_a_deployment_the_kustomization_does_not_change_is_one_served_model(kubectl, folder: Path) -> None:
    """The rendered ``replicas: 1`` is the Deployment's own line 8, not the gateway's ``replicas: 1``
    nor the reranker's ``nvidia.com/gpu: 1`` of another file: nothing in it comes from elsewhere, so the
    rendering is left to the file's own served model, and every finding is at that file's lines, once."""
    result = lint([kubectl(folder)], Config(folder))
    assert [(m.identity, m.location.line) for m in result.models] == \
        [("vllm.yaml#Deployment/chat/spec/template/spec/vllm", 18)]
    (model,) = result.models
    assert (placed(model.replicas), placed(model.gpus)) == (("vllm.yaml", 8), ("vllm.yaml", 23))
    where = [(f.code, f.location.path, f.location.line) for f in result.findings]
    assert where and {path for _, path, _ in where} == {"vllm.yaml"}, where
    assert len(where) == len(set(where)), where


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_values_a_patch_sets_are_still_placed_at_the_patch(kubectl) -> None:
    """The patch rewrites the arguments (adding a misspelt flag) and a JSON patch sets ``replicas: 2``,
    the gateway's text: the rendering is a served model of its own, its arguments at the patch's line,
    its replicas at the JSON patch's ``value`` (not at the gateway's ``replicas: 2``), the GPUs it does
    not change at the Deployment's own ``nvidia.com/gpu: 2`` (not at the patch's ``"2"`` argument)."""
    result = lint([kubectl(PATCHED_ARGS)], Config(PATCHED_ARGS))
    (rendered,) = [m for m in result.models if m.identity.startswith("kustomization.yaml#rendered/")]
    assert placed(rendered.replicas) == ("replicas-patch.yaml", 3)
    assert placed(rendered.gpus) == ("vllm.yaml", 23)
    assert {(t.location.path, t.location.line) for t in rendered.argv} == {("args-patch.yaml", 10)}
    typo = [(f.location.path, f.location.line, f.location.column) for f in result.findings if f.code == "CFG103"]
    assert typo == [("args-patch.yaml", 10, 78)]


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_capacity_lists_an_unchanged_kustomized_deployment_once(kubectl, tmp_path: Path) -> None:
    repo = make_repo(tmp_path, fixture_files(kubectl(EQUAL_REPLICAS)))
    out = CliRunner().invoke(app, ["capacity", "--format", "json", str(repo)])
    rows = [(row["path"], row["line"], row["name"]) for row in json.loads(out.stdout)["models"]]
    assert rows == [("vllm.yaml", 18, "chat/vllm")], rows


def test_a_value_is_looked_up_by_its_key_in_its_own_objects_documents(tmp_path: Path) -> None:
    """The source map alone: ``replicas: 1`` of the Deployment ``chat`` is its own line, whatever other
    object writes a ``1`` later; a JSON patch's ``value`` is found by the field its ``path`` ends in (an
    escaped ``nvidia.com~1gpu`` too), and it is no one object's, so it is taken for the patched object."""
    files = {**fixture_files(EQUAL_GPU_LINE), "gpus-patch.yaml": (
        "- op: add\n  path: /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu\n  value: 1\n")}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    sources = SourceMap(tmp_path, [tmp_path / name for name in ("vllm.yaml", "reranker.yaml", "gpus-patch.yaml")],
                        Workspace(config={"root": str(tmp_path)}))
    chat = ("Deployment", "chat")

    def at(text: str, key: str | None, own: tuple[str, str] | None) -> tuple[str, int]:
        found = sources.find(text, key, None, own)
        return found.path, found.line

    assert at("1", "replicas", chat) == ("vllm.yaml", 8)
    assert at("1", None, chat) == ("gpus-patch.yaml", 3)  # the last applied of the object's or no one's
    assert at("1", "nvidia.com/gpu", chat) == ("gpus-patch.yaml", 3)
    assert at("1", "nvidia.com/gpu", None) == ("gpus-patch.yaml", 3)
    assert at("2", "replicas", chat) == ("reranker.yaml", 6)  # only another object's: taken, not lost


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_rendering_keeps_what_its_definition_says_of_the_gpu(kubectl, tmp_path: Path) -> None:
    """kubectl prints no comment: a rendered served model placed at its source definition keeps the
    comments written on and above it there, so a GPU a comment names still counts for it (round 11: a
    kustomized Deployment lost the Gaudi its container's comment named)."""
    folder = tmp_path / PATCHED_ARGS.name
    folder.mkdir()
    for name, text in fixture_files(PATCHED_ARGS).items():
        (folder / name).write_text(text.replace("        - name: vllm\n", "        # one L40S card per pod\n"
                                                "        - name: vllm\n"), encoding="utf-8")
    result = lint([kubectl(folder)], Config(folder))
    (rendered,) = [m for m in result.models if m.identity.startswith("kustomization.yaml#rendered/")]
    assert (18, "one L40S card per pod") in rendered.definition_comments
    from cfgcheck.capacity.evidence import written_gpu

    assert written_gpu(rendered).gpu.name == "L40S"
