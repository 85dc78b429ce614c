"""Adapters: the only format-aware code. Each turns one YAML document into located served models."""

from __future__ import annotations

import os

from ..model import ServedModel
from ..yamlio import LoadedFile
from . import chart, compose, kserve, kustomize, llmkube, mapped, ome, pods, production_stack, vllm_runtime, workloads
from .base import DocContext, Workspace

# Tried in order; the first adapter that recognises a document owns it. The user's values mappings
# come first (they override the built-in formats), the generic pod-spec walker last.
ADAPTERS = (mapped.served_models, kustomize.served_models, llmkube.served_models, production_stack.served_models,
            vllm_runtime.served_models, kserve.served_models, ome.served_models, chart.served_models,
            compose.served_models, workloads.served_models)


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """First pass over every file: what other documents refer to (LLMKube Models by name)."""
    for document in loaded.documents:
        if document.root is not None and document.root.kind == "map":
            llmkube.index_models(workspace, loaded, document.root)
    pods.index_services(workspace, loaded)


def served_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    found: list[ServedModel] = []
    first_line = 1
    for document in loaded.documents:
        root = document.root
        if root is not None and root.kind == "map":
            ctx = DocContext(loaded, document, workspace, first_line)
            for adapter in ADAPTERS:
                try:
                    models = adapter(ctx, root)
                except Exception as exc:  # one odd document must not end the run: CFG000 at it
                    if os.environ.get("CFGCHECK_DEBUG"):
                        raise
                    document.problems.append((f"cannot interpret this document: {type(exc).__name__}: "
                                              f"{' '.join(str(exc).split())[:200]}", root.line, root.column))
                    break
                if models:
                    found.extend(models)
                    break
        if root is not None:
            first_line = root.end_line + 1
    return found


def refers_forward(workspace: Workspace, loaded: LoadedFile) -> bool:
    """True when the file has an LLMKube InferenceService whose Model has not been indexed yet."""
    for document in loaded.documents:
        root = document.root
        if root is not None and root.kind == "map" and llmkube.is_llmkube(root, "InferenceService"):
            if root.scalar("spec", "modelRef") not in workspace.llmkube_models:
                return True
    return False
