"""Overlays with ``namePrefix`` / ``nameSuffix``: kustomize renames the ServingRuntime but not the
InferenceService's ``runtime:`` field, so each overlay patches it to the renamed runtime. The patched name
resolves to the runtime of the same rendering, each overlay is a served model with its own patched args,
and a reference the rendering leaves dangling is reported at the patch line that writes it, never at a line
of the rendered text (which the kustomization file does not have)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import FIXTURES, git, make_repo
from tests.adapters.test_kustomize_overlays import real_or_fake

PREFIXED = FIXTURES / "formats" / "kustomize-name-prefix"


def fake_kubectl(tmp_path: Path) -> Path:
    """A kubectl that prints what kubectl v1.32 (kustomize v5.5.0) rendered for each overlay."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubectl"
    cases = "".join(f" */overlays/{name}) cat '{PREFIXED}/rendered/{name}.txt';;"
                    for name in ("dev", "staging", "production", "preview"))
    script.write_text("#!/bin/sh\n[ \"$1\" = kustomize ] && [ \"$2\" = -- ] || exit 2\n"
                      f"case \"$3\" in{cases} */base) cat \"$3/servingruntime.yaml\"; echo ---; "
                      "cat \"$3/inferenceservice.yaml\";; *) exit 1;; esac\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.fixture(params=["fake-kubectl", "real-kubectl"])
def kubectl(request, tmp_path: Path, monkeypatch) -> str:
    return real_or_fake(request, monkeypatch, lambda: fake_kubectl(tmp_path))


def _repo(tmp_path: Path) -> Path:
    app = PREFIXED / "app"
    files = {str(path.relative_to(PREFIXED)): path.read_text(encoding="utf-8")
             for path in sorted(app.rglob("*.yaml"))}
    return make_repo(tmp_path, files)


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_prefixed_runtime_resolves_in_each_overlay(kubectl: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = lint([repo], Config(repo))
    services = {m.name: m for m in result.models if m.kind == "InferenceService"}
    assert set(services) == {"granite/model", "dev-granite/model", "staging-granite/model", "prod-granite-v2/model"}
    lengths = {name: model.value("max_model_len") for name, model in services.items()}
    assert lengths == {"granite/model": 8192, "dev-granite/model": 4096, "staging-granite/model": 8192,
                       "prod-granite-v2/model": 16384}
    # the patched --max-model-len value is where the overlay's patch writes it
    dev = services["dev-granite/model"].setting("max_model_len").location
    assert (dev.path, dev.line) == ("app/overlays/dev/kustomization.yaml", 25)


@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_dangling_runtime_of_a_rendering_is_at_the_patch_that_names_it(kubectl: str, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = lint([repo], Config(repo))
    dangling = [f for f in result.findings if f.code == "CFG003"]
    assert [(f.location.path, f.location.line, f.location.column) for f in dangling] == \
        [("app/overlays/preview/kustomization.yaml", 15, 17)]
    assert "'preview-vllm-runtim'" in dangling[0].message and "preview-vllm-runtime" in dangling[0].message.split(":")[1]
    for finding in result.findings:  # no finding past the end of its file
        lines = (repo / finding.location.path).read_text(encoding="utf-8").count("\n") + 1
        assert finding.location.line <= lines, finding



@pytest.mark.e2e  # cfgcheck spawns kubectl
def test_a_base_read_ahead_of_its_turn_records_no_reference(kubectl: str, tmp_path: Path) -> None:
    """The base kustomization is rendered before its ServingRuntime file is read (kustomization.yaml sorts
    before servingruntime.yaml): the base InferenceService, read ahead only to place the rendering, names a
    runtime the run has not indexed yet, which is no CFG003 (its own turn finds the runtime)."""
    repo = _repo(tmp_path)
    # a runtime read before the base: the repository keeps its runtimes, so a name none defines is CFG003
    (repo / "app" / "another-runtime.yaml").write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: ClusterServingRuntime\nmetadata:\n  name: sglang-runtime\n"
        "spec:\n  containers:\n    - name: kserve-container\n      image: lmsysorg/sglang:v0.5.3-cu126\n",
        encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "another runtime")
    result = lint([repo / "app"], Config(repo), jobs=1)
    assert [f.location.path for f in result.findings if f.code == "CFG003"] == ["app/overlays/preview/kustomization.yaml"]
