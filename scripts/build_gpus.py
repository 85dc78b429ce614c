#!/usr/bin/env python3
"""Generate ``src/cfgcheck/data/gpus.json``: accelerators, their memory, and where the cluster names them.

Nothing in the JSON is typed by hand: this script holds every source and its citation, and extracts
the table from them.

* **Accelerators** (``gpus``): one entry per GPU, TPU chip, Neuron device or Gaudi card, with
  ``memory_bytes`` = the memory one parallel rank sees, as the device reports it to the engine
  (``torch.cuda.mem_get_info`` total / vLLM ``total_gpu_memory`` for CUDA and ROCm cards; the
  documented HBM of a TPU chip, of one NeuronCore's share of a Neuron device, of a Gaudi card). Each
  entry cites the log line or vendor page its figure comes from (``OBSERVED_GPUS``, ``OTHER_ACCELERATORS``).
* **AWS instance types**: extracted from Karpenter's generated instance-type reference
  (``website/content/en/docs/reference/instance-types.md`` of aws/karpenter-provider-aws, generated from
  EC2 DescribeInstanceTypes by ``hack/docs/instancetypes_gen_docs.go``) at the pinned commits in
  ``KARPENTER_DOCS``: GPU name, count and MiB per instance type; Neuron devices and NeuronCores.
  The newest revision wins; older ones add retired types (p3, dl1).
* **GCP, Azure and OCI instance types**: the machine-type tables of the cited provider pages
  (``CLOUD_PAGES``), one row per machine type as the page lists it (GPU model and count).
* **Ray accelerator types**: the constants of ``ray.util.accelerators.accelerators`` (``RAY_ACCELERATORS``)
  mapped to the table by the same alias matching cfgcheck uses at run time.

Usage::

    python scripts/build_gpus.py --sources DIR     # DIR holds the files named in SOURCES (see below)
    python scripts/build_gpus.py --sources DIR --check   # exit 1 when the committed JSON differs

The source files are read from ``--sources`` (default ``/tmp/cfgcheck-gpu-sources``), named
``<name>-<commit>.<ext>``; fetch them from the pinned raw.githubusercontent.com URLs printed by
``--list``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "cfgcheck" / "data" / "gpus.json"
GiB = 1024**3
MiB = 1024**2

KARPENTER_DOCS = (  # newest first
    ("aws/karpenter-provider-aws", "1d927085dd81a9df9301e613f371dac5b4d16bfe",
     "website/content/en/docs/reference/instance-types.md", "karpenter-1d927085dd81a9df9301e613f371dac5b4d16bfe.md"),
    ("aws/karpenter-provider-aws", "9e1d72fdc1eab00fc02f53a2d075c5fb052f58df",
     "website/content/en/docs/reference/instance-types.md", "karpenter-9e1d72fdc1eab00fc02f53a2d075c5fb052f58df.md"),
)
RAY_ACCELERATORS = ("ray-project/ray", "00501e2bd10f17c70dc12cdf54a203cf2db02a09",
                    "python/ray/util/accelerators/accelerators.py",
                    "ray-accelerators-00501e2bd10f17c70dc12cdf54a203cf2db02a09.py")
CUDA_GPUS = "NVIDIA, CUDA GPUs - Compute Capability (https://developer.nvidia.com/cuda-gpus)"

# GPUs as the engine sees them: (name, vendor, compute capability from CUDA_GPUS, nominal GB, GiB the
# device reports, aliases, source of the reported figure, note when the figure is approximate).
OBSERVED_GPUS = (
    ('H100-80GB', 'nvidia', '9.0', 80, 79.22,
     ('h100', 'h100 80gb', 'h100 80gb hbm3', 'h100 sxm', 'h100 sxm5', 'h100 sxm5 80gb', 'h100 pcie', 'h100 80gb pcie', 'nvidia h100 80gb hbm3', 'h100 mega 80gb', 'nvidia h100 mega 80gb'),
     "vLLM startup log 'total_gpu_memory 79.22GiB' (https://github.com/vllm-project/vllm/pull/10511)", None),
    ('H100-NVL', 'nvidia', '9.0', 94, 93.1,
     ('h100 nvl', 'h100 nvl 94gb'),
     None, 'nominal 94 GB; reported value approximate'),
    ('H200', 'nvidia', '9.0', 141, 139.8,
     ('h200', 'h200 141gb', 'nvidia h200 141gb', 'h200 nvl'),
     None, 'approximate: nominal 141 GB (143,771 MiB in nvidia-smi) minus driver reservation'),
    ('H20', 'nvidia', '9.0', 96, 95.0,
     ('h20',),
     None, 'approximate'),
    ('B200', 'nvidia', '10.0', 192, 178.4,
     ('b200', 'nvidia b200', 'hgx b200'),
     "vLLM log 'Free memory on device (177.66/178.36 GiB)' (https://github.com/vllm-project/vllm/pull/21489)", None),
    ('GB200', 'nvidia', '10.0', 192, 184.0,
     ('gb200',),
     None, 'approximate'),
    ('A100-80GB', 'nvidia', '8.0', 80, 79.15,
     ('a100 80gb', 'a100 sxm4 80gb', 'a100 pcie 80gb', 'a100 80gb pcie', 'a100 sxm 80gb', 'nvidia a100 80gb', 'a100 80g'),
     "PyTorch OOM messages 'GPU 0 has a total capacity of 79.15 GiB' on A100 80GB (common in public issues)", None),
    ('A100-40GB', 'nvidia', '8.0', 40, 39.39,
     ('a100 40gb', 'a100 sxm4 40gb', 'a100 pcie 40gb', 'tesla a100', 'a100 40g'),
     "PyTorch 'total capacity of 39.39 GiB' on A100 40GB; GKE nvidia-tesla-a100 is the 40 GB part", None),
    ('A10G', 'nvidia', '8.6', 24, 22.06,
     ('a10g',),
     None, 'AWS g5; reported value approximate (22.0-22.2 GiB in public logs)'),
    ('A10', 'nvidia', '8.6', 24, 22.06,
     ('a10',),
     None, 'approximate'),
    ('L4', 'nvidia', '8.9', 24, 22.03,
     ('l4', 'nvidia l4'),
     None, 'reported value approximate (22.0-22.2 GiB)'),
    ('L40S', 'nvidia', '8.9', 48, 44.39,
     ('l40s',),
     "PyTorch 'total capacity of 44.39 GiB' on L40S", None),
    ('L40', 'nvidia', '8.9', 48, 44.39,
     ('l40',),
     None, 'same memory as L40S'),
    ('A40', 'nvidia', '8.6', 48, 44.35,
     ('a40',),
     None, 'nvidia-smi 46068 MiB'),
    ('RTX-A6000', 'nvidia', '8.6', 48, 47.41,
     ('rtx a6000', 'a6000'),
     None, 'approximate (47.4-47.5 GiB)'),
    ('RTX-6000-Ada', 'nvidia', '8.9', 48, 47.38,
     ('rtx 6000 ada', 'rtx 6000 ada generation', '6000 ada'),
     "vLLM log 'Free memory on device (31.44/47.38 GiB)' on a 48 GB card (https://github.com/vllm-project/vllm/issues/20305)", None),
    ('RTX-PRO-6000', 'nvidia', '12.0', 96, 94.97,
     ('rtx pro 6000', 'rtx pro 6000 blackwell', 'rtx pro 6000 blackwell server edition', 'rtx pro 6000 blackwell workstation edition'),
     None, 'approximate'),
    ('RTX-5090', 'nvidia', '12.0', 32, 31.36,
     ('rtx 5090', 'geforce rtx 5090', '5090'),
     None, 'approximate'),
    ('RTX-4090', 'nvidia', '8.9', 24, 23.65,
     ('rtx 4090', 'geforce rtx 4090', '4090'),
     "PyTorch 'total capacity of 23.65 GiB' on RTX 4090", None),
    ('RTX-3090', 'nvidia', '8.6', 24, 23.58,
     ('rtx 3090', 'geforce rtx 3090', '3090', 'rtx 3090 ti'),
     "vLLM log 'total_gpu_memory=23.58GiB' on RTX 3090 (https://github.com/vllm-project/vllm/issues/10517)", None),
    ('RTX-4080', 'nvidia', '8.9', 16, 15.7,
     ('rtx 4080', 'geforce rtx 4080'),
     None, 'approximate'),
    ('RTX-4000-Ada', 'nvidia', '8.9', 20, 19.62,
     ('rtx 4000 ada', 'rtx 4000 ada generation', 'rtx 4000 sff ada', 'rtx 4000 sff ada generation', 'rtx 4000 sff'),
     None, 'NVIDIA RTX 4000 (SFF) Ada Generation 20 GB GDDR6 (https://www.nvidia.com/en-us/design-visualization/'
           'rtx-4000-sff/); reported value approximate, as RTX-4080 (16 GB: 15.7) for 20 GB'),
    ('RTX-4060-Ti-16GB', 'nvidia', '8.9', 16, 15.7,
     ('rtx 4060 ti 16gb', '4060 ti 16gb'),
     None, 'approximate'),
    # sold with 8 GB and 16 GB: only a name that says 16 GB is this card (a bare ``RTX 5060 Ti`` stays unknown)
    ('RTX-5060-Ti-16GB', 'nvidia', '12.0', 16, 15.7,
     ('rtx 5060 ti 16gb', 'rtx 5060 ti 16 gb', 'geforce rtx 5060 ti 16gb', '5060 ti 16gb'),
     None, 'GeForce RTX 5060 Ti 16 GB GDDR7 (https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5060-family/); '
           'reported value approximate, as RTX-4060-Ti-16GB'),
    ('RTX-3060', 'nvidia', '8.6', 12, 11.76,
     ('rtx 3060', 'geforce rtx 3060'),
     None, 'approximate'),
    ('T4', 'nvidia', '7.5', 16, 14.75,
     ('t4', 'tesla t4', 'nvidia tesla t4'),
     "PyTorch 'total capacity of 14.75 GiB' on Tesla T4 (common in public issues)", None),
    ('V100-16GB', 'nvidia', '7.0', 16, 15.77,
     ('v100', 'tesla v100', 'v100 16gb', 'v100 sxm2 16gb', 'tesla v100 sxm2 16gb', 'tesla v100 pcie 16gb'),
     "vLLM log 'total_gpu_memory (15.77GiB)' (https://github.com/vllm-project/vllm/issues/11251)", None),
    ('V100-32GB', 'nvidia', '7.0', 32, 31.74,
     ('v100 32gb', 'v100 sxm2 32gb', 'tesla v100 sxm2 32gb', 'v100s'),
     None, 'approximate'),
    ('GB10', 'nvidia', '12.1', 128, 119.7,
     ('gb10', 'dgx spark'),
     None, 'unified memory; approximate'),
    ('MI300X', 'amd', None, 192, 191.98,
     ('mi300x', 'instinct mi300x', 'amd instinct mi300x', 'mi300x oam'),
     None, 'ROCm reports 192 GiB minus a small reservation'),
    ('MI325X', 'amd', None, 256, 255.98,
     ('mi325x', 'instinct mi325x'),
     None, 'approximate'),
    ('MI250X', 'amd', None, 64, 63.98,
     ('mi250x', 'mi250', 'instinct mi250x'),
     None, 'per GCD; approximate'),
    ('R9700', 'amd', None, 32, 31.86,
     ('r9700', 'radeon ai pro r9700', 'ai pro r9700', 'radeon r9700'),
     None, 'Radeon AI PRO R9700 32 GB; approximate'),
    ('RX-7900-XTX', 'amd', None, 24, 23.98,
     ('7900 xtx', 'rx 7900 xtx'),
     None, 'approximate'),
    ('RX-9070-XT', 'amd', None, 16, 15.98,
     ('rx 9070 xt', 'radeon rx 9070 xt', 'rx9070xt', '9070 xt', '9070xt'),
     None, 'AMD Radeon RX 9070 XT 16 GB GDDR6 (https://www.amd.com/en/products/graphics/desktops/radeon/9000-series/'
           'amd-radeon-rx-9070xt.html); reported value approximate, as RX-7900-XTX less its 8 GB'),
    ('B300', 'nvidia', '10.3', 288, 268.59,
     ('b300', 'nvidia b300', 'hgx b300'),
     None, 'EC2 p6-b300: 275,040 MiB per GPU (Karpenter instance-gpu-memory); approximate'),
    ('RTX-PRO-4500', 'nvidia', '12.0', 32, 31.36,
     ('rtx pro 4500', 'rtx pro 4500 blackwell', 'rtx pro 4500 blackwell server edition'),
     None, 'EC2 g7: 32,768 MiB per GPU (Karpenter instance-gpu-memory); reported value approximate, as RTX-5090'),
    ('GH200', 'nvidia', '9.0', 96, 95.0,
     ('gh200', 'gh200 480gb', 'gh200 96gb', 'nvidia gh200 480gb'),
     None, 'GH200 Grace Hopper: 96 GB HBM3 on the GPU (https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/); '
           'not an H200; reported value approximate, as H20'),
    ('GH200-144GB', 'nvidia', '9.0', 144, 142.0,
     ('gh200 144g hbm3e', 'gh200 144gb', 'nvidia gh200 144g hbm3e'),
     None, 'GH200 with 144 GB HBM3e (https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/); approximate'),
    ('L20', 'nvidia', '8.9', 48, 44.39,
     ('l20', 'nvidia l20'),
     None, 'NVIDIA L20 48 GB GDDR6 (Ada, as the L40S: same memory and capability); reported value as L40S'),
    ('T4G', 'nvidia', '7.5', 16, 14.75,
     ('t4g',),
     None, 'EC2 g5g (T4G, the Arm-host T4): same memory as T4'),
    ('MI210', 'amd', None, 64, 63.98,
     ('mi210', 'instinct mi210', 'amd instinct mi210'),
     None, 'AMD Instinct MI210 64 GB HBM2e (https://www.amd.com/en/products/accelerators/instinct/mi200/mi210.html); approximate'),
    ('MI300A', 'amd', None, 128, 127.98,
     ('mi300a', 'instinct mi300a'),
     None, 'AMD Instinct MI300A 128 GB unified HBM3 (https://www.amd.com/en/products/accelerators/instinct/mi300/mi300a.html); approximate'),
    ('Radeon-Pro-V520', 'amd', None, 8, 7.98,
     ('radeon pro v520',),
     None, 'EC2 g4ad: 8,192 MiB per GPU (Karpenter instance-gpu-memory); approximate'),
)

# Accelerators other than CUDA/ROCm GPUs: (name, kind, vendor, display, HBM GiB per device, NeuronCores
# per device (parallel ranks per device; 1 for a TPU chip or Gaudi card), aliases, source).
OTHER_ACCELERATORS = (
    ("TPU-v4", "tpu", "google", "TPU v4", 32, 1, ("tpu v4", "tpu v4 podslice", "v4 podslice"),
     "Cloud TPU v4: 32 GiB HBM per chip (https://cloud.google.com/tpu/docs/v4)"),
    ("TPU-v5e", "tpu", "google", "TPU v5e", 16, 1,
     ("tpu v5e", "tpu v5 lite podslice", "tpu v5 lite device", "tpu v5litepod", "v5litepod", "v5 lite podslice", "v5e"),
     "Cloud TPU v5e: 16 GiB HBM per chip (https://cloud.google.com/tpu/docs/v5e)"),
    ("TPU-v5p", "tpu", "google", "TPU v5p", 95, 1, ("tpu v5p", "tpu v5p slice", "v5p slice", "v5p"),
     "Cloud TPU v5p: 95 GiB HBM per chip (https://cloud.google.com/tpu/docs/v5p)"),
    ("TPU-v6e", "tpu", "google", "TPU v6e", 32, 1, ("tpu v6e", "tpu v6e slice", "v6e slice", "trillium", "v6e"),
     "Cloud TPU v6e (Trillium): 32 GiB HBM per chip (https://cloud.google.com/tpu/docs/v6e)"),
    ("TPU-v7", "tpu", "google", "TPU7x", 192, 1, ("tpu7x", "tpu v7", "ironwood"),
     "Cloud TPU Ironwood (TPU7x): 192 GiB HBM per chip (https://cloud.google.com/tpu/docs/tpu7x)"),
    ("Inferentia", "neuron", "aws", "Inferentia", 8, 4, ("inferentia", "inferentia1"),
     "AWS Neuron, Inferentia architecture: 4 NeuronCores-v1 and 8 GiB of memory per chip "
     "(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia.html)"),
    ("Inferentia2", "neuron", "aws", "Inferentia2", 32, 2, ("inferentia2", "inf2"),
     "AWS Neuron, Inferentia2 architecture: 2 NeuronCores-v2 and 32 GiB HBM per chip "
     "(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/inferentia2.html)"),
    ("Trainium", "neuron", "aws", "Trainium", 32, 2, ("trainium", "trainium1", "trn1"),
     "AWS Neuron, Trainium architecture: 2 NeuronCores-v2 and 32 GiB HBM per chip "
     "(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trainium.html)"),
    ("Trainium2", "neuron", "aws", "Trainium2", 96, 4, ("trainium2", "trn2"),
     "AWS Neuron, Trainium2 architecture: 8 physical NeuronCores-v3 and 96 GiB HBM per chip, exposed as 4 "
     "logical NeuronCores at the default logical NeuronCore config LNC=2 "
     "(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trainium2.html)"),
    ("Gaudi", "gaudi", "intel", "Gaudi", 32, 1, ("gaudi hl 205", "gaudi1", "hl 205"),
     "Habana Gaudi (HL-205): 32 GB HBM2 per card; EC2 dl1.24xlarge has 8 "
     "(https://docs.habana.ai/en/latest/Gaudi_Overview/Gaudi_Architecture.html)"),
    ("Gaudi2", "gaudi", "intel", "Gaudi 2", 96, 1, ("gaudi2", "gaudi 2", "hl 225"),
     "Intel Gaudi 2: 96 GB HBM2E per card (https://docs.habana.ai/en/latest/Gaudi_Overview/Gaudi_Architecture.html)"),
    ("Gaudi3", "gaudi", "intel", "Gaudi 3", 128, 1, ("gaudi3", "gaudi 3", "hl 325"),
     "Intel Gaudi 3: 128 GB HBM2e per card (https://docs.habana.ai/en/latest/Gaudi_Overview/Gaudi_Architecture.html)"),
)

# Karpenter's instance-gpu-name / instance-accelerator-name values that are no alias of a table entry
# (None: an accelerator no engine cfgcheck knows serves on).
KARPENTER_NAMES = {"gaudi-hl-205": "Gaudi", "rtx-pro-server-6000": "RTX-PRO-6000", "qualcomm-ai100": None}

GKE_TPU_PAGE = "https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus"
GCE_GPU_PAGE = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
AZURE_PAGE = "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/{}"
OCI_PAGE = "https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm#bm-gpu"

# Provider machine-type tables: (page, accelerator, ((machine type, count), ...)) as each page lists them.
CLOUD_PAGES = (
    (GCE_GPU_PAGE + "#a2-standard-vms", "A100-40GB",
     (("a2-highgpu-1g", 1), ("a2-highgpu-2g", 2), ("a2-highgpu-4g", 4), ("a2-highgpu-8g", 8), ("a2-megagpu-16g", 16))),
    (GCE_GPU_PAGE + "#a2-ultra-vms", "A100-80GB",
     (("a2-ultragpu-1g", 1), ("a2-ultragpu-2g", 2), ("a2-ultragpu-4g", 4), ("a2-ultragpu-8g", 8))),
    (GCE_GPU_PAGE + "#a3-series", "H100-80GB",
     (("a3-highgpu-1g", 1), ("a3-highgpu-2g", 2), ("a3-highgpu-4g", 4), ("a3-highgpu-8g", 8),
      ("a3-megagpu-8g", 8), ("a3-edgegpu-8g", 8))),
    (GCE_GPU_PAGE + "#a3-series", "H200", (("a3-ultragpu-8g", 8),)),
    (GCE_GPU_PAGE + "#a4-vms", "B200", (("a4-highgpu-8g", 8),)),
    (GCE_GPU_PAGE + "#a4x-vms", "GB200", (("a4x-highgpu-4g", 4),)),
    (GCE_GPU_PAGE + "#g2-vms", "L4",
     (("g2-standard-4", 1), ("g2-standard-8", 1), ("g2-standard-12", 1), ("g2-standard-16", 1), ("g2-standard-32", 1),
      ("g2-standard-24", 2), ("g2-standard-48", 4), ("g2-standard-96", 8))),
    (GCE_GPU_PAGE + "#g4-series", "RTX-PRO-6000",
     (("g4-standard-48", 1), ("g4-standard-96", 2), ("g4-standard-192", 4), ("g4-standard-384", 8))),
    (GKE_TPU_PAGE + "#tpu-v4", "TPU-v4", (("ct4p-hightpu-4t", 4),)),
    (GKE_TPU_PAGE + "#tpu-v5e", "TPU-v5e", (("ct5lp-hightpu-1t", 1), ("ct5lp-hightpu-4t", 4), ("ct5lp-hightpu-8t", 8),
                                            ("ct5l-hightpu-1t", 1), ("ct5l-hightpu-4t", 4), ("ct5l-hightpu-8t", 8))),
    (GKE_TPU_PAGE + "#tpu-v5p", "TPU-v5p", (("ct5p-hightpu-4t", 4),)),
    (GKE_TPU_PAGE + "#tpu-v6e", "TPU-v6e", (("ct6e-standard-1t", 1), ("ct6e-standard-4t", 4), ("ct6e-standard-8t", 8))),
    (GKE_TPU_PAGE + "#tpu7x", "TPU-v7", (("tpu7x-standard-4t", 4),)),
    (AZURE_PAGE.format("ncast4v3-series"), "T4",
     (("Standard_NC4as_T4_v3", 1), ("Standard_NC8as_T4_v3", 1), ("Standard_NC16as_T4_v3", 1), ("Standard_NC64as_T4_v3", 4))),
    (AZURE_PAGE.format("nc-a100-v4-series"), "A100-80GB",
     (("Standard_NC24ads_A100_v4", 1), ("Standard_NC48ads_A100_v4", 2), ("Standard_NC96ads_A100_v4", 4))),
    (AZURE_PAGE.format("ncadsh100v5-series"), "H100-NVL",
     (("Standard_NC40ads_H100_v5", 1), ("Standard_NC80adis_H100_v5", 2))),
    (AZURE_PAGE.format("ndasra100v4-series"), "A100-40GB", (("Standard_ND96asr_v4", 8),)),
    (AZURE_PAGE.format("ndma100v4-series"), "A100-80GB", (("Standard_ND96amsr_A100_v4", 8),)),
    (AZURE_PAGE.format("ndh100v5-series"), "H100-80GB", (("Standard_ND96isr_H100_v5", 8),)),
    (AZURE_PAGE.format("nd-h200-v5-series"), "H200", (("Standard_ND96isr_H200_v5", 8),)),
    (AZURE_PAGE.format("nd-mi300x-v5-series"), "MI300X", (("Standard_ND96isr_MI300X_v5", 8),)),
    (AZURE_PAGE.format("nd-gb200-v6-series"), "GB200", (("Standard_ND128isr_NDR_GB200_v6", 4),)),
    (AZURE_PAGE.format("ncv3-series"), "V100-16GB",
     (("Standard_NC6s_v3", 1), ("Standard_NC12s_v3", 2), ("Standard_NC24s_v3", 4), ("Standard_NC24rs_v3", 4))),
    (AZURE_PAGE.format("ndv2-series"), "V100-32GB", (("Standard_ND40rs_v2", 8),)),
    (AZURE_PAGE.format("nvadsa10v5-series"), "A10", (("Standard_NV36ads_A10_v5", 1), ("Standard_NV72ads_A10_v5", 2))),
    (OCI_PAGE, "V100-16GB", (("VM.GPU3.1", 1), ("VM.GPU3.2", 2), ("VM.GPU3.4", 4), ("BM.GPU3.8", 8))),
    (OCI_PAGE, "A100-40GB", (("BM.GPU4.8", 8),)),
    (OCI_PAGE, "A100-80GB", (("BM.GPU.A100-v2.8", 8),)),
    (OCI_PAGE, "H100-80GB", (("BM.GPU.H100.8", 8),)),
    (OCI_PAGE, "H200", (("BM.GPU.H200.8", 8),)),
    (OCI_PAGE, "B200", (("BM.GPU.B200.8", 8),)),
    (OCI_PAGE, "GB200", (("BM.GPU.GB200.4", 4),)),
    (OCI_PAGE, "A10", (("VM.GPU.A10.1", 1), ("VM.GPU.A10.2", 2), ("BM.GPU.A10.4", 4))),
    (OCI_PAGE, "L40S", (("BM.GPU.L40S.4", 4),)),
    (OCI_PAGE, "MI300X", (("BM.GPU.MI300X.8", 8),)),
)

# GKE's node label values (cloud.google.com/gke-tpu-accelerator) per TPU version, from the GKE TPU page.
GKE_TPU_ACCELERATORS = (
    ("tpu-v4-podslice", "TPU-v4"), ("tpu-v5-lite-podslice", "TPU-v5e"), ("tpu-v5-lite-device", "TPU-v5e"),
    ("tpu-v5p-slice", "TPU-v5p"), ("tpu-v6e-slice", "TPU-v6e"), ("tpu7x", "TPU-v7"),
)


def _words(text: str) -> str:
    """Whole-word form for alias matching; the same normalisation as ``capacity.gpus``."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", str(text).lower())) + " "


def build_accelerators() -> list[dict]:
    table = []
    for name, vendor, cc, nominal, reported, aliases, source, note in OBSERVED_GPUS:
        entry = {"name": name, "kind": "gpu", "vendor": vendor}
        if cc is not None:
            entry["compute_capability"] = cc
        entry.update({"nominal_gb": nominal, "memory_bytes": round(reported * GiB), "reported_gib": reported,
                      "aliases": list(aliases)})
        if source:
            entry["source"] = source
        if note:
            entry["note"] = note
        table.append(entry)
    for name, kind, vendor, display, hbm_gib, ranks, aliases, source in OTHER_ACCELERATORS:
        table.append({"name": name, "kind": kind, "vendor": vendor, "display": display, "nominal_gb": hbm_gib,
                      "device_memory_bytes": hbm_gib * GiB, "ranks_per_device": ranks,
                      # one parallel rank's share: a NeuronCore of a Neuron device, a whole TPU chip or Gaudi card
                      "memory_bytes": hbm_gib * GiB // ranks, "aliases": list(aliases), "source": source})
    return table


def _match(name: str, table: list[dict], memory_mib: int | None = None) -> dict | None:
    """The entry whose alias is a whole word of ``name`` (longest alias first); with ``memory_mib``, the
    entry of that name or its sized variants nearest that memory (``a100`` + 81920 MiB is A100-80GB)."""
    words = _words(name)
    found = [e for e in table if any(_words(a) in words for a in (e["name"], *e["aliases"]))]
    if memory_mib:
        sized = [e for e in table if e["name"].lower().startswith(name.lower() + "-")]
        candidates = found + [e for e in sized if e not in found]
        return min(candidates, key=lambda e: abs(e["nominal_gb"] * 1024 - memory_mib)) if candidates else None
    found.sort(key=lambda e: -max(len(a) for a in (e["name"], *e["aliases"]) if _words(a) in words))
    return found[0] if found else None


def parse_karpenter(text: str) -> dict[str, dict]:
    """Instance type -> its GPU or accelerator labels and device resources, from the generated doc."""
    found = {}
    for section in re.split(r"\n### `", text)[1:]:
        name = section.split("`", 1)[0]
        labels = dict(re.findall(r"\|karpenter\.k8s\.aws/instance-((?:gpu|accelerator)-[a-z]+)\|([^|]*)\|", section))
        resources = dict(re.findall(r"\|((?:nvidia\.com|aws\.amazon\.com|amd\.com|habana\.ai)/[a-z]+)\|(\d+)\|", section))
        if labels:
            found[name] = {"labels": labels, "resources": resources}
    return found


def aws_instance_types(table: list[dict], docs: list[tuple[str, str]]) -> tuple[dict, list[str]]:
    types, skipped = {}, set()
    for citation, text in docs:
        for name, facts in parse_karpenter(text).items():
            if name in types:
                continue
            labels, resources = facts["labels"], facts["resources"]
            device = labels.get("gpu-name") or labels.get("accelerator-name")
            count = int(labels.get("gpu-count") or labels.get("accelerator-count") or 0)
            target = KARPENTER_NAMES[device] if device in KARPENTER_NAMES else device
            entry = _match(target, table, int(labels["gpu-memory"]) if labels.get("gpu-memory") else None) if target else None
            if entry is None or count == 0:  # fractional GPUs (g6f) and accelerators no engine here serves
                skipped.add(f"{name} ({device} x{count})")
                continue
            row = {"accelerator": entry["name"], "count": count, "provider": "aws", "source": citation}
            if resources.get("aws.amazon.com/neuroncore"):
                row["neuroncores"] = int(resources["aws.amazon.com/neuroncore"])
            types[name] = row
    return types, skipped


def cloud_instance_types(table: list[dict]) -> dict:
    names = {e["name"] for e in table}
    types = {}
    for page, accelerator, rows in CLOUD_PAGES:
        if accelerator not in names:
            raise SystemExit(f"{page}: {accelerator} is not in the accelerator table")
        provider = "gcp" if "google" in page else "azure" if "microsoft" in page else "oci"
        for name, count in rows:
            types[name] = {"accelerator": accelerator, "count": count, "provider": provider, "source": page}
    return types


def families(types: dict) -> dict:
    """Family (``g5``, ``a2-highgpu``, ``Standard_NC..._A100_v4`` not included) -> accelerator, where
    every listed size of the family holds the same one: a size the tables lack still names its GPU."""
    seen: dict[str, set] = {}
    for name, row in types.items():
        if row["provider"] == "aws":
            family = name.split(".", 1)[0]
        elif row["provider"] == "gcp":
            family = name.rsplit("-", 1)[0]
        else:
            continue
        seen.setdefault(family, set()).add(row["accelerator"])
    return {family: next(iter(acc)) for family, acc in sorted(seen.items()) if len(acc) == 1}


def ray_types(table: list[dict], text: str, citation: str) -> dict:
    """Ray's accelerator_type constants -> table entry (None where Ray's name is ambiguous, e.g. A100)."""
    out = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            value = node.value.value
            entry = _match(value.replace("A100-40G", "A100 40GB").replace("A100-80G", "A100 80GB"), table)
            if value in ("A100", "V100"):  # ambiguous sizes: Ray's docs say to use A100-40G / A100-80G
                entry = None
            if value == "aws-neuron-core":
                entry = None  # a NeuronCore of some Neuron device: the instance type says which
            out[value] = entry["name"] if entry else None
    return {"source": citation, "types": out}


def build(sources: Path) -> dict:
    table = build_accelerators()
    docs = []
    for repo, commit, path, local in KARPENTER_DOCS:
        docs.append((f"https://github.com/{repo}/blob/{commit}/{path}", (sources / local).read_text(encoding="utf-8")))
    aws, skipped = aws_instance_types(table, docs)
    types = {**cloud_instance_types(table), **aws}
    repo, commit, path, local = RAY_ACCELERATORS
    ray = ray_types(table, (sources / local).read_text(encoding="utf-8"), f"https://github.com/{repo}/blob/{commit}/{path}")
    return {
        "version": 2,
        "generated_by": "scripts/build_gpus.py",
        "description": (
            "Accelerators as the engine sees them. memory_bytes is the memory one parallel rank sees: for "
            "CUDA and ROCm GPUs the device total the engine reports (torch.cuda.mem_get_info total / vLLM "
            "total_gpu_memory), a little below the nominal size; for TPUs the HBM of one chip, for Neuron "
            "devices one NeuronCore's share of the device HBM (device_memory_bytes / ranks_per_device), for "
            "Gaudi one card. Aliases are matched as whole words against GPU names and node label values."),
        "compute_capability_source": CUDA_GPUS + ", the major.minor that torch.cuda.get_device_capability() "
                                     "and nvidia-smi --query-gpu=compute_cap report; AMD GPUs have none.",
        "gpus": table,
        "instance_types": dict(sorted(types.items())),
        "instance_families": families(types),
        "instance_types_skipped": sorted(skipped),
        "gke_tpu_accelerators": {"source": GKE_TPU_PAGE, "values": dict(GKE_TPU_ACCELERATORS)},
        "ray_accelerator_types": ray,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=Path("/tmp/cfgcheck-gpu-sources"))
    parser.add_argument("--check", action="store_true", help="compare with the committed JSON instead of writing")
    parser.add_argument("--list", action="store_true", help="print the source URLs to fetch")
    args = parser.parse_args(argv)
    if args.list:
        for repo, commit, path, local in (*KARPENTER_DOCS, RAY_ACCELERATORS):
            print(f"https://raw.githubusercontent.com/{repo}/{commit}/{path} -> {args.sources / local}")
        return 0
    text = json.dumps(build(args.sources), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("gpus.json is current" if same else "gpus.json differs from its sources: run scripts/build_gpus.py")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
