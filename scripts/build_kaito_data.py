#!/usr/bin/env python3
"""Generate ``src/cfgcheck/data/kaito.json``: what KAITO decides for a workspace that only names a preset
and a VM size, read from a checkout of https://github.com/kaito-project/kaito (nothing is run):

- ``presets/workspace/models/supported_models.yaml``: each preset's Hugging Face repository and commit
  (its ``version`` URL), and the vLLM version of the base image the presets are built on
  (``base.runtimeVersion.vllm``);
- ``pkg/sku/*_sku_handler.go``: the VM sizes KAITO supports, with their GPU count, total GPU memory and
  GPU model (``{SKU: ..., GPUCount: ..., GPUMem: resource.MustParse(...), GPUModel: ...}``), which KAITO
  uses to set vLLM's parallel sizes (``pkg/model/interface.go``, ``configureParallelism``);
- ``pkg/workspace/estimator/nodesestimator/estimator.go``: the constants of the node estimator that decides
  how many nodes of that size a preset gets (``gpuMemoryUtilization``, ``weightExpansionFactor``,
  ``baseOverheadGiB``, ``overheadWeightFactor``).

Usage::

    git clone https://github.com/kaito-project/kaito /tmp/kaito
    python scripts/build_kaito_data.py --repo /tmp/kaito
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parent.parent / "src" / "cfgcheck" / "data" / "kaito.json"
_HF_COMMIT = re.compile(r"^https://huggingface\.co/([^/]+/[^/]+)/commit/([0-9a-f]{40})$")
_SKU = re.compile(r'\{SKU:\s*"([^"]+)",\s*GPUCount:\s*(\d+),\s*GPUMem:\s*resource\.MustParse\("(\d+)Gi"\),'
                  r'\s*GPUModel:\s*"([^"]+)"')
_CONSTANT = re.compile(r"^\s*(gpuMemoryUtilization|weightExpansionFactor|baseOverheadGiB|overheadWeightFactor)\s*=\s*([0-9.]+)",
                       re.MULTILINE)
GiB = 1024**3


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


def build(repo: Path) -> dict:
    supported = yaml.safe_load((repo / "presets" / "workspace" / "models" / "supported_models.yaml").read_text())
    base = next(m for m in supported["models"] if m["name"] == "base")
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {
        "version": 1,
        "source": f"https://github.com/kaito-project/kaito/blob/{commit}/presets/workspace/models/supported_models.yaml "
                  f"(presets, base.runtimeVersion.vllm), pkg/sku/*_sku_handler.go (skus: GPU memory per GPU "
                  f"is GPUMem / GPUCount, nominal) and pkg/workspace/estimator/nodesestimator/estimator.go "
                  f"(node_estimator)",
        "base_image_tag": base.get("tag"),
        "vllm_version": (base.get("runtimeVersion") or {}).get("vllm"),
        "presets": presets(supported["models"]),
        "skus": skus(repo),
        "node_estimator": estimator_constants(repo),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a checkout of kaito-project/kaito")
    args = parser.parse_args()
    OUT.write_text(json.dumps(build(args.repo), indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
