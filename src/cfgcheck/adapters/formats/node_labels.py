"""Nodes a repository names with their labels and taints, as node pools of the run (``capacity.fleet``):
talhelper's ``talconfig.yaml`` (``nodes[].hostname``, ``nodeLabels``, ``nodeTaints``;
https://budimanjojo.github.io/talhelper/latest/reference/configuration/), a Talos machine configuration
or patch (``machine.nodeLabels``, ``machine.nodeTaints``, ``machine.network.hostname``;
https://www.talos.dev/latest/reference/configuration/v1alpha1/config/), a k3s ``config.yaml``
(``node-name``, ``node-label``, ``node-taint``; https://docs.k3s.io/installation/configuration), a
Kubernetes ``Node``, and NFD's ``NodeFeatureRule`` labels (https://kubernetes-sigs.github.io/
node-feature-discovery/). Reads no served model.

A node's GPU is what its labels name (``nvidia.com/gpu.product``, an instance type), else what a comment
on its entry names (assumed).
"""

from __future__ import annotations

import re

from ...capacity.fleet import HOSTNAME
from ...cluster import NodePool
from ...capacity.gpu_table import GPU_LABELS
from ...model import ServedModel
from ...yamlio import LoadedFile, YNode
from ..core.contexts import DocContext, Workspace
from ..core.fleet import add_pool, file_notes, gpu_offer, instance_offer, parse_taint, resources_of
from ..core.recognition import string_map

MARKERS = ("nodelabels", "node-label", "kind: node", "nodefeaturerule")
INDEX_WORDS = MARKERS  # index() returns at once for a file without one of them


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []  # cluster definitions only: index() records them


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    lowered = loaded.text.lower()
    if not any(marker in lowered for marker in MARKERS):
        return
    for document in loaded.documents:
        root = document.root
        if root is None or root.kind != "map":
            continue
        for name, host, labels, taints, at in _nodes(root):
            pool = NodePool(name, _kind(root), at.location(loaded.path), labels, hosts=(host,) if host else ())
            if host:
                pool.labels[HOSTNAME] = host
            pool.taints = [t for t in map(parse_taint, taints) if t is not None]
            pool.offers = [_offer(labels)]
            if pool.offers[0].gpu is None:
                pool.unknown = "its labels name no GPU"
            add_pool(workspace, pool, file_notes(loaded, [at.line] + ([at.key_node("hostname").line]
                                                                       if at.key_node("hostname") is not None else [])))
    for root in resources_of(loaded, "nfd.k8s-sigs.io/", "NodeFeatureRule"):
        _feature_rule(workspace, loaded, root)


def _kind(root: YNode) -> str:
    if root.get("machine") is not None:
        return "Talos machine configuration"
    if root.get("nodes") is not None:
        return "talhelper node"
    if root.scalar("kind") == "Node":
        return "Kubernetes Node"
    return "k3s configuration"


def _nodes(root: YNode):
    """(name, host, labels, taints as key=value:Effect, the node's mapping) of each node the document names."""
    if root.scalar("kind") == "Node" and root.scalar("apiVersion") == "v1":
        host = root.scalar("metadata", "name")
        taints = [f"{t.scalar('key')}={t.scalar('value') or ''}:{t.scalar('effect')}"
                  for t in _seq(root.path("spec", "taints")) if t.kind == "map"]
        yield str(host), str(host) if host else None, string_map(root.path("metadata", "labels")), taints, root
        return
    machine = root.get("machine")
    if machine is not None and machine.kind == "map" and (machine.get("nodeLabels") or machine.get("nodeTaints")):
        host = machine.scalar("network", "hostname")
        yield str(host or "machine"), str(host) if host else None, string_map(machine.get("nodeLabels")), \
            _taint_map(machine.get("nodeTaints")), machine
    for node in _seq(root.get("nodes")):
        if node.kind == "map" and isinstance(node.scalar("hostname"), str):
            host = node.scalar("hostname")
            yield host, host, {**string_map(root.get("nodeLabels")), **string_map(node.get("nodeLabels"))}, \
                _taint_map(node.get("nodeTaints")), node
    labels = root.get("node-label")
    if labels is not None:
        pairs = [str(v.value) for v in _seq(labels) if v.kind == "scalar"] or [str(labels.value)]
        host = root.scalar("node-name")
        yield str(host or "k3s node"), str(host) if host else None, dict(
            p.split("=", 1) for p in pairs if "=" in p), [str(v.value) for v in _seq(root.get("node-taint"))], root


def _seq(node: YNode | None) -> list[YNode]:
    return node.value if node is not None and node.kind == "seq" else []


def _taint_map(node: YNode | None) -> list[str]:
    return [f"{key}={value}" for key, value in string_map(node).items()]


def _offer(labels: dict[str, str]):
    for label in GPU_LABELS:
        value = labels.get(label)
        if value and label.endswith("instance-type"):
            return instance_offer(value)
        if value:
            offer = gpu_offer(value, None)
            if offer.gpu is not None:
                return offer
    count = labels.get("nvidia.com/gpu.count")
    count_value = int(count) if count and count.isdigit() else None
    for label, value in labels.items():  # a team's own label: gpu: rtx-3090, accelerator: nvidia-l4
        if re.search(r"gpu|accelerator", label, re.I) and (offer := gpu_offer(value, count_value)).gpu is not None:
            return offer
    return gpu_offer("", count_value)


def _feature_rule(workspace: Workspace, loaded: LoadedFile, root: YNode) -> None:
    for rule in _seq(root.path("spec", "rules")):
        labels = string_map(rule.get("labels")) if rule.kind == "map" else {}
        if labels:
            pool = NodePool(str(rule.scalar("name", default="rule")), "NFD NodeFeatureRule", rule.location(loaded.path),
                            labels, offers=[_offer(labels)])
            if pool.offers[0].gpu is None:
                pool.unknown = "its labels name no GPU"
            add_pool(workspace, pool, file_notes(loaded, [rule.line, getattr(rule.key_node("labels"), "line", rule.line)]))
