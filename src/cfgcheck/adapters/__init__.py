"""Adapters: the only format-aware code. Each turns one YAML document into located served models.

Every adapter meets ``protocol.Adapter`` and is registered below, in the order they are tried: the first
adapter that recognises a document owns it. Adding a format is one module and one ``register`` line.
"""

from __future__ import annotations

import os

from ..model import ServedModel
from ..yamlio import LoadedFile
from . import (chart, compose, containerfile, dra, dynamo, engine_config, envlaunch, kaito, kserve, kubeai, kustomize, llmd,
               llmkube, makefile, mapped, ome, production_stack, pyspec, rayserve, scripts, skypilot, vllm_runtime, workflows,
               workloads)
from .base import DocContext, Workspace
from .protocol import REGISTRY, document_adapters, file_format, register

# The user's values mappings come first (they override the built-in formats), the generic pod-spec
# walker last.
register(mapped)
register(kustomize)
register(llmkube)
register(production_stack)
register(vllm_runtime)
register(kserve)
register(ome)
register(kubeai)
register(rayserve)
register(dynamo)
register(kaito)
register(llmd)
register(chart)
register(compose)
register(dra)
register(engine_config)
register(scripts)
register(makefile)
register(containerfile)
register(pyspec)
register(workflows)
register(skypilot)
register(workloads)
register(envlaunch)  # indexes ConfigMaps for env taken from them; reads no document itself


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """First pass over every file: what other documents refer to (LLMKube Models by name, Services)."""
    for adapter in REGISTRY:
        hook = getattr(adapter, "index", None)
        if hook is not None:
            hook(workspace, loaded)


def served_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    reader = file_format(loaded.path)
    if reader is not None:
        return reader.file_models(workspace, loaded)
    found: list[ServedModel] = []
    first_line = 1
    for document in loaded.documents:
        root = document.root
        if root is not None and root.kind == "map":
            ctx = DocContext(loaded, document, workspace, first_line)
            for adapter in document_adapters():
                try:
                    models = adapter.served_models(ctx, root)
                    for model in models:  # an engine --config file, wherever the model's format keeps it
                        engine_config.apply(ctx, root, model)
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
    """True when a document of the file refers to something not indexed yet (an LLMKube modelRef)."""
    hooks = [adapter.refers_forward for adapter in REGISTRY if getattr(adapter, "refers_forward", None)]
    return any(hook(workspace, document.root) for document in loaded.documents
               if document.root is not None and document.root.kind == "map" for hook in hooks)
