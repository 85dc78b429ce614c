"""Accelerators from every place the cluster names them, and the generated table behind them."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from cfgcheck.capacity.gpus import (Claim, accelerator_by_instance_type, accelerator_by_name,
                                    accelerator_from_labels, parallel_units, resolve_accelerator)
from cfgcheck.capacity.report import render_capacity
from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import FIXTURES

ROOT = Path(__file__).resolve().parents[2]
SOURCES = Path("/tmp/cfgcheck-gpu-sources")


def _models(tmp_path: Path, text: str):
    target = tmp_path / "deploy.yaml"
    target.write_text(text, encoding="utf-8")
    return lint([target], Config(tmp_path, {})).models


def _pod(spec: str, image: str = "vllm/vllm-openai:v0.26.0", resources: str = "nvidia.com/gpu: 1") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
{spec}
      containers:
        - name: vllm
          image: {image}
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          resources:
            limits:
              {resources}
"""


def test_names_from_every_vendor_and_scheduler() -> None:
    cases = {
        "NVIDIA-A100-SXM4-80GB": "A100-80GB", "nvidia-l4": "L4", "nvidia-gpu-l4": "L4",  # GFD, GKE, KubeAI profile
        "A10G": "A10G", "TPU-V6E": "TPU-v6e", "A100-80G": "A100-80GB", "Intel-GAUDI": "Gaudi",  # Ray constants
        "tpu-v5-lite-podslice": "TPU-v5e", "tpu-v5p-slice": "TPU-v5p", "inferentia2": "Inferentia2",
        "AMD_Instinct_MI300X_OAM": "MI300X", "AMD-Instinct-MI210": "MI210", "gaudi3": "Gaudi3",
    }
    for text, name in cases.items():
        assert accelerator_by_name(text).name == name, text
    assert accelerator_by_name("A100") is None  # 40 or 80 GB: not guessed
    assert accelerator_by_name("nvidia.com/mig-3g.40gb").nominal_gb == 40.0  # the slice, not the card


def test_instance_types_of_four_clouds_with_counts() -> None:
    cases = {
        "g5.12xlarge": ("A10G", 4), "p4de.24xlarge": ("A100-80GB", 8), "p4d.24xlarge": ("A100-40GB", 8),
        "p5e.48xlarge": ("H200", 8), "g6e.xlarge": ("L40S", 1), "inf2.48xlarge": ("Inferentia2", 12),
        "trn1.32xlarge": ("Trainium", 16), "a3-highgpu-8g": ("H100-80GB", 8), "g2-standard-24": ("L4", 2),
        "ct5lp-hightpu-4t": ("TPU-v5e", 4), "Standard_NC24ads_A100_v4": ("A100-80GB", 1),
        "Standard_ND96isr_MI300X_v5": ("MI300X", 8), "BM.GPU.A100-v2.8": ("A100-80GB", 8), "VM.GPU.A10.1": ("A10", 1),
    }
    for text, (name, count) in cases.items():
        gpu, n = accelerator_by_instance_type(text)
        assert (gpu.name, n) == (name, count), text
    assert accelerator_by_instance_type("g6.64xlarge")[0].name == "L4"  # a size the table lacks: its family
    assert accelerator_by_instance_type("m5.large") is None


def test_label_forms_and_confidence() -> None:
    karpenter = {"karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-memory": "81920"}
    assert accelerator_from_labels(karpenter).accelerator.name == "A100-80GB"
    assert accelerator_from_labels({"amd.com/gpu.product-name": "AMD_Instinct_MI300X"}).accelerator.name == "MI300X"
    several = Claim("node.kubernetes.io/instance-type", ("g6.xlarge", "g6.2xlarge"), "required nodeAffinity")
    assert accelerator_from_labels({}, claims=[several]).accelerator.name == "L4"
    hint = accelerator_from_labels({"eks.amazonaws.com/nodegroup": "gpu-g6e-spot"})
    assert (hint.accelerator.name, hint.confidence) == ("L40S", "hint")
    mixed = Claim("node.kubernetes.io/instance-type", ("g5.xlarge", "g6.xlarge"), "required nodeAffinity")
    found = accelerator_from_labels({}, claims=[mixed])
    assert found.accelerator is None and "A10G, L4" in found.origin


def test_disagreeing_labels_are_reported_not_guessed(tmp_path: Path) -> None:
    spec = """\
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
        node.kubernetes.io/instance-type: g5.2xlarge"""
    model = _models(tmp_path, _pod(spec))[0]
    found = resolve_accelerator(model)
    assert found.accelerator is None
    assert "says L4" in found.origin and "says A10G" in found.origin
    text = render_capacity([model])
    assert "labels disagree" in text


def test_node_affinity_required_and_preferred(tmp_path: Path) -> None:
    required = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - key: nvidia.com/gpu.product
                    operator: In
                    values: [NVIDIA-H100-80GB-HBM3]"""
    model = _models(tmp_path, _pod(required))[0]
    assert resolve_accelerator(model).accelerator.name == "H100-80GB"
    preferred = """\
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 50
              preference:
                matchExpressions:
                  - key: cloud.google.com/gke-accelerator
                    operator: In
                    values: [nvidia-l4]"""
    found = resolve_accelerator(_models(tmp_path, _pod(preferred))[0])
    assert (found.accelerator.name, found.confidence) == ("L4", "hint")


def test_tpu_pod_capacity_speaks_of_the_tpu(tmp_path: Path) -> None:
    spec = """\
      nodeSelector:
        cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice
        cloud.google.com/gke-tpu-topology: 2x2"""
    model = _models(tmp_path, _pod(spec, "vllm/vllm-tpu:v0.11.1", "google.com/tpu: 4"))[0]
    gpu = resolve_accelerator(model).accelerator
    assert gpu.label == "TPU v5e (16 GiB HBM)"
    assert parallel_units(model, gpu) == (4, "TPU chip")
    assert "4x TPU-v5e" in render_capacity([model])
    bare = _models(tmp_path, _pod("      hostNetwork: true", "vllm/vllm-tpu:v0.11.1", "google.com/tpu: 4"))[0]
    why = resolve_accelerator(bare).origin
    assert why.startswith("TPU not stated") and "gke-tpu-accelerator" in why  # never "GPU not stated" on a TPU pod


def test_neuron_devices_count_neuron_cores(tmp_path: Path) -> None:
    spec = """\
      nodeSelector:
        node.kubernetes.io/instance-type: trn2.48xlarge"""
    model = _models(tmp_path, _pod(spec, "public.ecr.aws/neuron/vllm-neuron:1", "aws.amazon.com/neuron: 16"))[0]
    gpu = resolve_accelerator(model).accelerator
    assert parallel_units(model, gpu) == (64, "NeuronCore")  # 4 logical cores per Trainium2 at LNC=2
    unknown = _models(tmp_path, _pod("      hostNetwork: true", "public.ecr.aws/neuron/vllm-neuron:1", "aws.amazon.com/neuron: 2"))[0]
    assert parallel_units(unknown, None) == (None, "NeuronCore")  # cores per device unknown: not counted


def test_mig_resource_gives_the_slice(tmp_path: Path) -> None:
    spec = """\
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB"""
    model = _models(tmp_path, _pod(spec, resources="nvidia.com/mig-3g.40gb: 1"))[0]
    gpu = resolve_accelerator(model).accelerator
    assert gpu.nominal_gb == 40.0 and model.gpus.value == 1


def test_table_is_generated_and_cited() -> None:
    table = json.loads(resources.files("cfgcheck").joinpath("data", "gpus.json").read_text(encoding="utf-8"))
    assert table["generated_by"] == "scripts/build_gpus.py"
    names = {e["name"] for e in table["gpus"]}
    for entry in table["gpus"]:
        assert entry.get("source") or entry.get("note"), entry["name"]
        assert entry["memory_bytes"] > 0
    for name, row in table["instance_types"].items():
        assert row["accelerator"] in names and row["count"] > 0 and row["source"].startswith("https://"), name
    assert "ray-project/ray" in table["ray_accelerator_types"]["source"]


@pytest.mark.skipif(not (SOURCES / "ray-accelerators-00501e2bd10f17c70dc12cdf54a203cf2db02a09.py").exists(),
                    reason="the cited source files are not in /tmp/cfgcheck-gpu-sources (see scripts/build_gpus.py --list)")
def test_committed_table_matches_its_sources() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_gpus.py"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_rule_fixtures_exist_for_each_accelerator() -> None:
    names = {p.name for p in (FIXTURES / "rules").glob("CFG*/*.yaml")}
    assert {"fail-tpu-chips-below-tp.yaml", "fail-neuron-devices-below-cores.yaml", "pass-neuron-compiled-batch.yaml",
            "pass-tpu-batch-bucket.yaml", "fail-tpu-image-without-tpu.yaml", "pass-accelerator-requests.yaml"} <= names


DRA = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: two-h100
spec:
  spec:
    devices:
      requests:
        - name: gpus
          exactly:
            deviceClassName: gpu.nvidia.com
            count: 2
            selectors:
              - cel:
                  expression: device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      resourceClaims:
        - name: gpus
          resourceClaimTemplateName: two-h100
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "4"]
          resources:
            claims:
              - name: gpus
"""


def test_dra_claim_template_names_the_gpu_and_count(tmp_path: Path) -> None:
    model = _models(tmp_path, DRA)[0]
    assert resolve_accelerator(model).accelerator.name == "H100-80GB"
    assert model.gpus.value == 2 and model.gpus.location.line == 12  # the count, in the template
    target = tmp_path / "deploy.yaml"
    findings = [f for f in lint([target], Config(tmp_path, {})).findings if f.code == "CFG208"]
    assert len(findings) == 1 and "4 (tensor 4) but 2 GPUs" in findings[0].message


def test_dra_template_in_a_later_file_and_device_class_kind(tmp_path: Path) -> None:
    deploy, template = DRA.split("---\n")[1], DRA.split("---\n")[0]
    template = template.replace("gpu.nvidia.com", "gaudi.intel.com").replace(
        'device.attributes["gaudi.intel.com"].productName == "NVIDIA H100 80GB HBM3"', "true")
    (tmp_path / "a-deploy.yaml").write_text(deploy.replace("vllm/vllm-openai:v0.26.0", "vllm/vllm-openai:v0.26.0"))
    (tmp_path / "z-claims.yaml").write_text(template)
    model = lint([tmp_path], Config(tmp_path, {})).models[0]
    found = resolve_accelerator(model)
    assert found.accelerator is None and found.origin.startswith("Gaudi (generation not stated): add a nodeSelector")
    assert model.gpus.value == 2


def test_ray_head_takes_the_worker_groups_accelerator(tmp_path: Path) -> None:
    text = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: vllm-tpu
spec:
  headGroupSpec:
    template:
      spec:
        containers:
          - name: ray-head
            image: vllm/vllm-tpu:v0.11.1
            command: ["vllm", "serve", "google/gemma-3-4b-it"]
  workerGroupSpecs:
    - groupName: tpu-group
      replicas: 1
      template:
        spec:
          nodeSelector:
            cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice
            cloud.google.com/gke-tpu-topology: 2x4
          containers:
            - name: ray-worker
              image: vllm/vllm-tpu:v0.11.1
              resources:
                limits:
                  google.com/tpu: 8
"""
    model = _models(tmp_path, text)[0]
    assert resolve_accelerator(model).accelerator.name == "TPU-v6e"


def test_team_node_group_labels_are_hints() -> None:
    found = accelerator_from_labels({"NodeGroupType": "g5-gpu-karpenter"})
    assert (found.accelerator.name, found.confidence) == ("A10G", "hint")
    assert accelerator_from_labels({"instanceType": "inferentia-inf2"}).accelerator.name == "Inferentia2"
    assert accelerator_from_labels({"NodeGroupType": "x86-cpu-karpenter"}).accelerator is None


def test_estimated_pool_on_a_tpu_is_a_warning_that_says_why(tmp_path: Path) -> None:
    spec = """\
      nodeSelector:
        cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice"""
    text = _pod(spec, "vllm/vllm-tpu:v0.11.1", "google.com/tpu: 1").replace(
        '"Qwen/Qwen3-8B"]', '"Qwen/Qwen3-8B", "--max-model-len", "40960"]')
    target = tmp_path / "deploy.yaml"
    target.write_text(text, encoding="utf-8")
    found = [f for f in lint([target], Config(tmp_path, {})).findings if f.code == "CFG202"]
    assert len(found) == 1 and found[0].severity == "warning" and "a TPU does not share" in found[0].message


def test_gaudi_is_named_with_its_memory_and_gets_no_cuda_pool(tmp_path: Path) -> None:
    """OPEA GenAIInfra-style renders request habana.ai/gaudi; vLLM then runs through the vllm-gaudi plugin,
    whose memory reserve cfgcheck does not model: the card is named, its pool is not pretended."""
    from cfgcheck.capacity import estimate

    image = "opea/vllm-gaudi:1.2"
    unstated = _models(tmp_path, _pod("", image=image, resources="habana.ai/gaudi: 1"))[0]
    est = estimate(unstated, {})
    assert est.gpu is None and est.kv_pool_tokens is None
    assert any(r.startswith("Gaudi (generation not stated): add a nodeSelector") for r in est.reasons)
    for spec, config, name, gib in (("      nodeSelector: {node.kubernetes.io/instance-type: dl1.24xlarge}", {}, "Gaudi", 32),
                                    ("", {"gpu": "gaudi3"}, "Gaudi3", 128)):
        model = _models(tmp_path, _pod(spec, image=image, resources="habana.ai/gaudi: 4"))[0]
        est = estimate(model, config)
        assert (est.gpu, est.gpu_memory_bytes, est.kv_pool_tokens) == (name, gib * 2**30, None), est.reasons
        assert any("Gaudi overheads not modelled" in r and r.endswith(": pool unknown") for r in est.reasons)
        assert not any("CUDA graphs" in r or "non-torch" in r for r in est.reasons)
