#!/usr/bin/env python3
"""Generate the data the operator adapters read for what an operator decides itself, from checkouts
of the operators' repositories (nothing is run):

``src/cfgcheck/data/kubeai.json`` (``--kubeai``, a checkout of https://github.com/substratusai/kubeai):
the KubeAI chart's default resource profiles and engine images, which a KubeAI ``Model`` names
(``resourceProfile: nvidia-gpu-l4:1``) instead of writing them:

- ``charts/kubeai/values.yaml``: ``resourceProfiles`` (each profile's device resource and count per
  unit in ``limits``, its ``imageName``) and ``modelServers.VLLM.images`` (image per ``imageName``);
- ``charts/kubeai/values-gke.yaml``: the GKE accelerator (and TPU) node labels each profile selects
  there, and the profiles only GKE defines (its TPU slices).

The GPU class of a profile is the part of its name after ``-gpu-`` (``nvidia-gpu-l4`` -> ``l4``), as the
chart names them; cfgcheck resolves it through its GPU table.

``src/cfgcheck/data/kaito.json`` (``--kaito``, a checkout of https://github.com/kaito-project/kaito): what
KAITO decides for a workspace that only names a preset and a VM size:

- ``presets/workspace/models/supported_models.yaml``: each preset's Hugging Face repository and commit
  (its ``version`` URL), and the vLLM version of the base image the presets are built on
  (``base.runtimeVersion.vllm``);
- ``pkg/sku/*_sku_handler.go``: the VM sizes KAITO supports, with their GPU count, total GPU memory and
  GPU model (``{SKU: ..., GPUCount: ..., GPUMem: resource.MustParse(...), GPUModel: ...}``), which KAITO
  uses to set vLLM's parallel sizes (``pkg/model/interface.go``, ``configureParallelism``);
- ``pkg/workspace/estimator/nodesestimator/estimator.go``: the constants of the node estimator that decides
  how many nodes of that size a preset gets (``gpuMemoryUtilization``, ``weightExpansionFactor``,
  ``baseOverheadGiB``, ``overheadWeightFactor``);
- ``pkg/model/interface.go``: the ``--gpu-memory-utilization`` KAITO passes to vLLM
  (``defaultGPUMemoryUtilization``, and ``gpuMemoryUtilizationByGPUModel`` for the SKUs' GPU models that
  get another), the default of KAITO's runtime a workspace's ConfigMap may override; with the release
  the checkout is at (``git describe --tags``), which the findings name.

``src/cfgcheck/data/kserve.json`` (``--kserve``, a clone of https://github.com/kserve/kserve with its tags):
the ``ClusterServingRuntime``s KServe installs with itself, which an ``InferenceService`` may name without the
repository defining them: the ``metadata.name`` of every runtime ``config/runtimes/kustomization.yaml`` lists,
at each release from v0.11.0 (read from the release tags with ``git show``; nothing is checked out), and the
first release that installs it.

Usage::

    git clone https://github.com/substratusai/kubeai /tmp/kubeai
    git clone https://github.com/kaito-project/kaito /tmp/kaito
    git clone https://github.com/kserve/kserve /tmp/kserve
    python scripts/build_operator_data.py --kubeai /tmp/kubeai --kaito /tmp/kaito --kserve /tmp/kserve
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent.parent / "src" / "cfgcheck" / "data"
DEVICE_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu")
_HF_COMMIT = re.compile(r"^https://huggingface\.co/([^/]+/[^/]+)/commit/([0-9a-f]{40})$")
_SKU = re.compile(r'\{SKU:\s*"([^"]+)",\s*GPUCount:\s*(\d+),\s*GPUMem:\s*resource\.MustParse\("(\d+)Gi"\),'
                  r'\s*GPUModel:\s*"([^"]+)"')
_CONSTANT = re.compile(r"^\s*(gpuMemoryUtilization|weightExpansionFactor|baseOverheadGiB|overheadWeightFactor)\s*=\s*([0-9.]+)",
                       re.MULTILINE)
_GMU_DEFAULT = re.compile(r'^const defaultGPUMemoryUtilization = "([0-9.]+)"', re.MULTILINE)
_GMU_BY_MODEL = re.compile(r"gpuMemoryUtilizationByGPUModel = map\[string\]string\{(.*?)\n\}", re.DOTALL)
_GMU_ENTRY = re.compile(r'^\s*"([^"]+)":\s*"([0-9.]+)"', re.MULTILINE)
GiB = 1024**3




def commit_of(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def release_of(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "describe", "--tags"], capture_output=True, text=True).stdout.strip()


def profile_entry(name: str, profile: dict, gke: dict) -> dict:
    """A profile of the default values, or one only the GKE values define (the TPU profiles): its device
    resource and count per unit, image, GPU class and the GKE node labels it selects."""
    limits = profile.get("limits") or profile.get("requests") or {}
    resource = next((r for r in DEVICE_RESOURCES if r in limits), None)
    entry: dict = {"image_name": profile.get("imageName", "default")}
    if resource is not None:
        entry["resource"], entry["per_unit"] = resource, int(limits[resource])
    if "-gpu-" in name:
        entry["gpu"] = name.split("-gpu-", 1)[1]
    selector = {k: str(v) for k, v in ((gke.get(name) or {}).get("nodeSelector") or {}).items()
                if k.startswith(("cloud.google.com/gke-accelerator", "cloud.google.com/gke-tpu"))}
    if selector:
        entry["gke_node_selector"] = selector
    return entry


def build_kubeai(repo: Path) -> dict:
    chart = repo / "charts" / "kubeai"
    values = yaml.safe_load((chart / "values.yaml").read_text())
    gke_file = chart / "values-gke.yaml"
    gke = (yaml.safe_load(gke_file.read_text()) or {}).get("resourceProfiles", {}) if gke_file.exists() else {}
    commit = commit_of(repo)
    profiles = {name: profile_entry(name, {**(gke.get(name) or {}), **(body or {})}, gke)
                for name, body in {**gke, **values["resourceProfiles"]}.items()}
    return {
        "version": 1,
        "source": f"https://github.com/substratusai/kubeai/blob/{commit}/charts/kubeai/values.yaml "
                  f"(resourceProfiles, modelServers.VLLM.images) and values-gke.yaml (gke_node_selector, and the "
                  f"profiles only GKE defines)",
        "profiles": dict(sorted(profiles.items())),
        "vllm_images": values["modelServers"]["VLLM"]["images"],
    }


def presets(models: list[dict]) -> dict[str, dict]:
    found = {}
    for entry in models:
        match = _HF_COMMIT.match(str(entry.get("version", "")))
        if match:
            found[entry["name"]] = {"model": match.group(1), "revision": match.group(2)}
    return dict(sorted(found.items()))


def skus(repo: Path) -> dict[str, dict]:
    found = {}
    for source in sorted((repo / "pkg" / "sku").glob("*_sku_handler.go")):
        for name, count, memory, model in _SKU.findall(source.read_text()):
            found[name] = {"gpus": int(count), "gpu_memory_bytes": int(memory) * GiB // int(count), "gpu_model": model}
    return dict(sorted(found.items()))


def estimator_constants(repo: Path) -> dict[str, float]:
    source = repo / "pkg" / "workspace" / "estimator" / "nodesestimator" / "estimator.go"
    found = {name: float(value) for name, value in _CONSTANT.findall(source.read_text())}
    if len(found) != 4:
        raise SystemExit(f"{source}: expected the four node-estimator constants, found {sorted(found)}")
    return found


def vllm_memory_utilization(repo: Path) -> dict:
    """The --gpu-memory-utilization KAITO passes to vLLM: its default and the GPU models that get another."""
    source = repo / "pkg" / "model" / "interface.go"
    text = source.read_text()
    default, table = _GMU_DEFAULT.search(text), _GMU_BY_MODEL.search(text)
    if default is None or table is None:
        raise SystemExit(f"{source}: defaultGPUMemoryUtilization or gpuMemoryUtilizationByGPUModel not found")
    return {"default": float(default.group(1)),
            "by_gpu_model": {name: float(value) for name, value in _GMU_ENTRY.findall(table.group(1))}}


def build_kaito(repo: Path) -> dict:
    supported = yaml.safe_load((repo / "presets" / "workspace" / "models" / "supported_models.yaml").read_text())
    base = next(m for m in supported["models"] if m["name"] == "base")
    commit = commit_of(repo)
    return {
        "version": 1,
        "source": f"https://github.com/kaito-project/kaito/blob/{commit}/presets/workspace/models/supported_models.yaml "
                  f"(presets, base.runtimeVersion.vllm), pkg/sku/*_sku_handler.go (skus: GPU memory per GPU "
                  f"is GPUMem / GPUCount, nominal) and pkg/workspace/estimator/nodesestimator/estimator.go "
                  f"(node_estimator), pkg/model/interface.go (gpu_memory_utilization)",
        "release": release_of(repo),
        "base_image_tag": base.get("tag"),
        "vllm_version": (base.get("runtimeVersion") or {}).get("vllm"),
        "presets": presets(supported["models"]),
        "skus": skus(repo),
        "node_estimator": estimator_constants(repo),
        "gpu_memory_utilization": vllm_memory_utilization(repo),
    }


KSERVE_FIRST_RELEASE = (0, 11, 0)  # the releases whose runtimes are read: v0.11.0 and later
_RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def git_show(repo: Path, ref: str, path: str) -> str | None:
    found = subprocess.run(["git", "-C", str(repo), "show", f"{ref}:{path}"], capture_output=True, text=True)
    return found.stdout if found.returncode == 0 else None


def kserve_runtimes(repo: Path, ref: str) -> list[str]:
    """The ClusterServingRuntime names ``config/runtimes/kustomization.yaml`` installs at ``ref``."""
    listing = yaml.safe_load(git_show(repo, ref, "config/runtimes/kustomization.yaml") or "{}") or {}
    names = []
    for resource in listing.get("resources") or []:
        for document in yaml.safe_load_all(git_show(repo, ref, f"config/runtimes/{resource}") or ""):
            if isinstance(document, dict) and document.get("kind") == "ClusterServingRuntime":
                names.append(document["metadata"]["name"])
    return names


def build_kserve(repo: Path) -> dict:
    tags = subprocess.run(["git", "-C", str(repo), "tag"], capture_output=True, text=True).stdout.split()
    releases = sorted((tuple(int(part) for part in match.groups()), tag) for tag in tags
                      if (match := _RELEASE.match(tag)) and tuple(int(part) for part in match.groups()) >= KSERVE_FIRST_RELEASE)
    commit = commit_of(repo)
    first: dict[str, str] = {}
    for _, tag in releases + [((), commit)]:
        for name in kserve_runtimes(repo, tag):
            first.setdefault(name, tag)
    return {
        "version": 1,
        "source": f"https://github.com/kserve/kserve/blob/{commit}/config/runtimes/kustomization.yaml and the runtimes "
                  f"it lists, at the releases {releases[0][1]} to {releases[-1][1]} and at {commit[:12]}",
        "cluster_serving_runtimes": dict(sorted(first.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeai", type=Path, help="a checkout of substratusai/kubeai")
    parser.add_argument("--kaito", type=Path, help="a checkout of kaito-project/kaito")
    parser.add_argument("--kserve", type=Path, help="a clone of kserve/kserve with its tags")
    args = parser.parse_args()
    if not args.kubeai and not args.kaito and not args.kserve:
        parser.error("give --kubeai, --kaito and/or --kserve")
    for repo, name, build in ((args.kubeai, "kubeai.json", build_kubeai), (args.kaito, "kaito.json", build_kaito),
                              (args.kserve, "kserve.json", build_kserve)):
        if repo:
            (DATA / name).write_text(json.dumps(build(repo), indent=1) + "\n")
            print(f"wrote {DATA / name}")


if __name__ == "__main__":
    main()
