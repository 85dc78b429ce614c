#!/usr/bin/env python3
"""Generate ``src/cfgcheck/data/kubeai.json``: the KubeAI chart's default resource profiles and engine
images, which a KubeAI ``Model`` names (``resourceProfile: nvidia-gpu-l4:1``) instead of writing them.

Read from a checkout of https://github.com/substratusai/kubeai (nothing is run):

- ``charts/kubeai/values.yaml``: ``resourceProfiles`` (each profile's device resource and count per
  unit in ``limits``, its ``imageName``) and ``modelServers.VLLM.images`` (image per ``imageName``);
- ``charts/kubeai/values-gke.yaml``: the GKE accelerator node label each GPU profile is given there.

The GPU class of a profile is the part of its name after ``-gpu-`` (``nvidia-gpu-l4`` -> ``l4``), as the
chart names them; cfgcheck resolves it through its GPU table.

Usage::

    git clone https://github.com/substratusai/kubeai /tmp/kubeai
    python scripts/build_kubeai_profiles.py --repo /tmp/kubeai
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parent.parent / "src" / "cfgcheck" / "data" / "kubeai.json"
DEVICE_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu")


def profile_entry(name: str, profile: dict, gke: dict) -> dict:
    limits = profile.get("limits") or profile.get("requests") or {}
    resource = next((r for r in DEVICE_RESOURCES if r in limits), None)
    entry: dict = {"image_name": profile.get("imageName", "default")}
    if resource is not None:
        entry["resource"], entry["per_unit"] = resource, int(limits[resource])
    if "-gpu-" in name:
        entry["gpu"] = name.split("-gpu-", 1)[1]
    accelerator = ((gke.get(name) or {}).get("nodeSelector") or {}).get("cloud.google.com/gke-accelerator")
    if accelerator:
        entry["gke_accelerator"] = accelerator
    return entry


def build(repo: Path) -> dict:
    chart = repo / "charts" / "kubeai"
    values = yaml.safe_load((chart / "values.yaml").read_text())
    gke_file = chart / "values-gke.yaml"
    gke = (yaml.safe_load(gke_file.read_text()) or {}).get("resourceProfiles", {}) if gke_file.exists() else {}
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    profiles = {name: profile_entry(name, body or {}, gke) for name, body in values["resourceProfiles"].items()}
    return {
        "version": 1,
        "source": f"https://github.com/substratusai/kubeai/blob/{commit}/charts/kubeai/values.yaml "
                  f"(resourceProfiles, modelServers.VLLM.images) and values-gke.yaml (gke_accelerator)",
        "profiles": dict(sorted(profiles.items())),
        "vllm_images": values["modelServers"]["VLLM"]["images"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a checkout of substratusai/kubeai")
    args = parser.parse_args()
    OUT.write_text(json.dumps(build(args.repo), indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
