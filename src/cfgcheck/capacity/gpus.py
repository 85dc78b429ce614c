"""GPUs: the bundled table (``data/gpus.json``) and what a served model says about the card it runs on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from .tables import GiB, MiB, bundled_table



@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: int
    vendor: str = "nvidia"
    nominal_gb: float | None = None
    source: str | None = None
    # "major.minor" from NVIDIA's CUDA GPUs page (gpus.json cites it); None for AMD and unlisted GPUs
    compute_capability: str | None = None

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / GiB


def _norm_words(text: str) -> str:
    text = str(text).lower()
    return " " + " ".join(re.findall(r"[a-z0-9]+", text)) + " "


@lru_cache(maxsize=None)
def _gpu_aliases() -> list[tuple[str, dict]]:
    out = []
    for entry in bundled_table("gpus.json")["gpus"]:
        names = set(entry["aliases"]) | {entry["name"]}
        for alias in names:
            out.append((_norm_words(alias), entry))
    out.sort(key=lambda a: -len(a[0]))
    return out


def _gpu_from_entry(entry: dict) -> Gpu:
    return Gpu(entry["name"], int(entry["memory_bytes"]), entry.get("vendor", "nvidia"), entry.get("nominal_gb"), entry.get("source"),
               entry.get("compute_capability"))


def lookup_gpu(text: str | None) -> Gpu | None:
    """A GPU from a name or a node label value: ``H100-80GB``, ``NVIDIA-A100-SXM4-80GB``, ``nvidia-l4``,
    ``Tesla-T4``, ``AMD_Instinct_MI300X``, ``g6e.xlarge``; None when unknown or ambiguous (bare ``A100``)."""
    if not text:
        return None
    raw = str(text).strip()
    words = _norm_words(raw)
    # MIG slices report the slice, not the card
    if re.search(r"mig \d+g \d+gb", words):
        m = re.search(r"mig \d+g (\d+)gb", words)
        return Gpu(raw, int(int(m.group(1)) * 1e9 * 0.97), "nvidia", float(m.group(1)), "MIG slice: nominal size less 3%")
    for alias, entry in _gpu_aliases():
        if alias in words:
            return _gpu_from_entry(entry)
    inst = re.match(r"^([a-z0-9]+(?:-[a-z]+gpu|-standard)?)[.-]", raw.lower())
    if inst:
        target = bundled_table("gpus.json")["instance_types"].get(inst.group(1))
        if target:
            return gpu_by_name(target)
    return None


def gpu_by_name(name: str) -> Gpu | None:
    for entry in bundled_table("gpus.json")["gpus"]:
        if entry["name"] == name:
            return _gpu_from_entry(entry)
    return None


GPU_LABELS = (  # node labels that name the GPU, best first (adapters record them as model.gpu_labels)
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "amd.com/gpu.product-name",
    "amd.com/gpu.product",
    "beta.amd.com/gpu.product-name",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-gpu-name",
    "gpu.nvidia.com/class",
    "nvidia.com/gpu.family",
)


_NOT_STATED = "GPU not stated (add a nodeSelector nvidia.com/gpu.product, `# cfgcheck: gpu=NAME`, or `gpu:` in .cfgcheck.yaml)"


def resolve_gpu(model: Any, config: dict | None = None) -> tuple[Gpu | None, str | None]:
    """The GPU a served model runs on and where that was read from (or why it is unknown): a
    ``# cfgcheck: gpu=`` directive, the GPU product, node labels, ``gpu:`` in the configuration, then
    a stated memory size."""
    config = config or {}
    labels = getattr(model, "node_selector", None) or {}
    directive = model.directive("gpu") if hasattr(model, "directive") else None
    candidates: list[tuple[str, str]] = []
    if directive is not None:
        candidates.append((directive.value, "directive"))
    if getattr(model, "gpu_product", None):
        candidates.append((model.gpu_product, "gpu product"))
    candidates.extend((value, label) for label, value in getattr(model, "gpu_labels", ()))
    cfg_gpu = config.get("gpu")
    if isinstance(cfg_gpu, dict):
        cfg_gpu = cfg_gpu.get("name") or cfg_gpu.get("product")
    if cfg_gpu:
        candidates.append((str(cfg_gpu), "config"))
    return _first_known(candidates, labels, getattr(model, "gpu_memory_bytes", None))


def resolve_gpu_from_labels(labels: Mapping[str, str], resources: Mapping[str, Any] | None = None) -> tuple[Gpu | None, str | None]:
    """The GPU node labels identify (``nvidia.com/gpu.product``, ``cloud.google.com/gke-accelerator``,
    instance types, ``nvidia.com/gpu.memory`` ...) or a container's MIG resource names
    (``nvidia.com/mig-1g.10gb``), with what it was read from; ``(None, why)`` when none does."""
    candidates = _label_candidates(labels)
    candidates.extend((name, "resource") for name in (resources or {}) if "mig-" in str(name).lower())
    return _first_known(candidates, labels, None)


def _label_candidates(labels: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(labels[label], label) for label in GPU_LABELS if labels.get(label)]


def _first_known(candidates: list[tuple[str, str]], labels: Mapping[str, str],
                 memory_bytes: int | None) -> tuple[Gpu | None, str | None]:
    """The first candidate the table knows, else a GPU of the stated memory, else why none is known."""
    tried: list[str] = []
    for text, origin in candidates:
        gpu = lookup_gpu(text)
        if gpu is not None:
            return gpu, origin
        tried.append(f"{text!r} ({origin})")
    label_mem = labels.get("nvidia.com/gpu.memory")
    if memory_bytes:
        return Gpu(f"{memory_bytes / GiB:.0f}GiB", int(memory_bytes), "unknown", None, "stated memory"), "stated memory"
    if label_mem and str(label_mem).isdigit():
        # the label is the card's total MiB; CUDA reserves ~450 MiB of it (cfgcheck's calibration)
        b = int(label_mem) * MiB - 450 * MiB
        return Gpu(f"{int(label_mem)}MiB", b, "nvidia", None, "nvidia.com/gpu.memory label"), "nvidia.com/gpu.memory"
    if tried:
        return None, "unknown GPU " + ", ".join(tried)
    return None, _NOT_STATED
