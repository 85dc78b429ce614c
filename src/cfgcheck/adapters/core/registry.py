"""The adapter registry: every built-in adapter, in the order they are tried, and the walks the lint run
makes over them (index every file, the served models of a file, what waits for a file not read yet).

Every adapter meets ``protocol.Adapter`` and is registered below: the first adapter that recognises a
document owns it. Adding a format is one module in ``formats/`` and one ``BUILT_IN`` entry. The registry
names its modules (``LazyAdapter``) and imports one the first time a file may hold its documents, so a run
over files without a serving marker imports no format, launch helper or renderer.
"""

from __future__ import annotations

import os

from ...model import ServedModel
from ...yamlio import LoadedFile
from .contexts import DocContext, Workspace
from .protocol import (REGISTRY, LazyAdapter, defines, document_adapters, file_format, file_suffixes,  # noqa: F401
                       may_own, may_read, register)  # file_format, file_suffixes: for discovery and yamlio, from here
from .resources import file_resources, resources

# Every built-in adapter, by module name with what the prefilter reads of it (its MARKERS, its SUFFIXES,
# the file NAMES it reads whatever their text) and the protocol hooks it defines; each is imported the first time anything else of it is
# asked for, so a run over files without a serving marker imports none of them
# (tests/adapters/test_adapter_protocol.py checks this metadata against each module's own).
YAML_WORDS = ("vllm", "sglang", "tokenspeed", "llama")
ENGINE_CONFIG_WORDS = (
    "max-model-len", "max_model_len", "gpu-memory-utilization", "gpu_memory_utilization", "tensor-parallel-size",
    "tensor_parallel_size", "max-num-seqs", "kv-cache", "mem-fraction", "context-length", "model-path",
    "served-model-name", "max-running-requests")
FILE_HOOKS = ("scan_comments", "file_models")  # a format that is not YAML
# In the order they are tried: the user's values mappings first (they override the built-in formats),
# the generic pod-spec walker last.
BUILT_IN = (
    LazyAdapter("formats.mapped", (), hooks=("served_models", "setting_home")),
    LazyAdapter("renderers.kustomize", (), names=("kustomization.yaml", "kustomization.yml", "Kustomization")),
    LazyAdapter("formats.llmkube", ("llmkube",), hooks=("served_models", "index", "refers_forward", "setting_home")),
    LazyAdapter("formats.production_stack", ("servingenginespec",), hooks=("served_models", "setting_home")),
    LazyAdapter("formats.vllm_runtime", ("vllm",)),
    LazyAdapter("formats.kserve", ("inferenceservice", "servingruntime"), hooks=("served_models", "index", "refers_forward")),
    LazyAdapter("formats.ome", ("ome.io",)),
    LazyAdapter("formats.kubeai", ("kubeai.org", "resourceprofile")),
    LazyAdapter("formats.rayserve", ("serveconfigv2", "llm_configs", "import_path")),
    LazyAdapter("formats.dynamo", ("dynamographdeployment", "dynamocomponentdeployment")),
    LazyAdapter("formats.kaito", ("kaito.sh", "inference_config"), hooks=("served_models", "refers_forward")),
    LazyAdapter("formats.llmd", ("modelartifacts", "disaggregatedset")),
    LazyAdapter("formats.llama_swap", ("cmd:",)),
    LazyAdapter("formats.chart_values", YAML_WORDS + ("servingenginespec",), names=("Chart.yaml",)),
    LazyAdapter("formats.compose", YAML_WORDS, documents="plain"),
    LazyAdapter("launch.device_claims", ("resourceclaim",), hooks=("served_models", "index", "refers_forward")),
    LazyAdapter("launch.config_file", ENGINE_CONFIG_WORDS,
                hooks=("served_models", "index", "refers_forward", "complete_model")),
    LazyAdapter("launch.model_presets", ("models-preset", "llama_arg_models_preset"),
                hooks=("served_models", "complete_model")),
    LazyAdapter("formats.scripts", YAML_WORDS, suffixes=(".sh", ".bash"), hooks=FILE_HOOKS + ("index",)),
    LazyAdapter("formats.supervisord", ("[program:",), suffixes=(".conf",), hooks=FILE_HOOKS + ("heredoc_models",)),
    LazyAdapter("formats.makefile", YAML_WORDS, suffixes=("Makefile", "makefile", "GNUmakefile", ".mk"), hooks=FILE_HOOKS),
    LazyAdapter("formats.containerfile", YAML_WORDS, suffixes=("Dockerfile", "Containerfile", ".dockerfile"),
                hooks=FILE_HOOKS),
    LazyAdapter("formats.pyspec", ("vllm_args", "sglang_args", "tokenspeed_args", "ray.serve.llm", "engineargs"),
                suffixes=(".py",), hooks=FILE_HOOKS),
    LazyAdapter("formats.workflows", YAML_WORDS, documents="plain"),
    LazyAdapter("formats.skypilot", YAML_WORDS, documents="plain"),
    LazyAdapter("formats.workloads", YAML_WORDS, hooks=("served_models", "index")),
    # indexes ConfigMaps for env, scripts and --config files taken from them; reads no document itself
    LazyAdapter("launch.configmaps", (), hooks=("served_models", "index", "refers_forward")),
    # records the files kustomizations name that do not exist; reads no document itself
    LazyAdapter("launch.kustomizations", (), hooks=("served_models", "index")),
)
for adapter in BUILT_IN:
    register(adapter)


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """First pass over every file: what other documents refer to (LLMKube Models by name, Services). A
    format that is not YAML indexes only its own files (nor is it imported for another's)."""
    for adapter in REGISTRY:
        suffixes = getattr(adapter, "SUFFIXES", ())
        if suffixes and not loaded.path.endswith(tuple(suffixes)):
            continue
        hook = getattr(adapter, "index", None)
        if hook is not None:
            hook(workspace, loaded)


def served_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    reader = file_format(loaded.path)
    if reader is not None:
        return reader.file_models(workspace, loaded)
    return document_models(workspace, loaded)


def document_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    """The served models of the YAML documents of ``loaded``, whatever its file name (the Kubernetes
    manifest a shell script writes in a heredoc is read through this too)."""
    found: list[ServedModel] = []
    first_line = 1
    name, lowered = loaded.path.rpartition("/")[2], loaded.text.lower()
    candidates = [adapter for adapter in document_adapters() if may_read(adapter, name, lowered)]
    completers = [adapter for adapter in REGISTRY if defines(adapter, "complete_model")]
    for document in loaded.documents:
        root = document.root
        for resource in resources(root):
            ctx = DocContext(loaded, document, workspace, first_line)
            for adapter in candidates:
                if not may_own(adapter, resource):
                    continue
                try:
                    models = adapter.served_models(ctx, resource)
                    owned = bool(models)  # the document is this adapter's, even if completing leaves no model
                    for completer in completers:  # an engine --config file, wherever the model's format keeps it
                        models = completed(completer, ctx, resource, models)
                except Exception as exc:  # one odd document must not end the run: CFG000 at it
                    if os.environ.get("CFGCHECK_DEBUG"):
                        raise
                    document.problems.append((f"cannot interpret this document: {type(exc).__name__}: "
                                              f"{' '.join(str(exc).split())[:200]}", resource.line, resource.column))
                    break
                if owned:
                    found.extend(models)
                    break
        if root is not None:
            first_line = root.end_line + 1
    return found


def completed(completer, ctx: DocContext, resource, models: list[ServedModel]) -> list[ServedModel]:
    """``models`` as ``completer`` completes them: a hook that returns a list replaces the model it was given
    with those (a llama-server router by the models of its preset file), None keeps it."""
    found: list[ServedModel] = []
    for model in models:
        replaced = completer.complete_model(ctx, resource, model)
        found.extend([model] if replaced is None else replaced)
    return found


def heredoc_models(workspace: Workspace, loaded: LoadedFile, name: str, text: str, offset: int) -> list[ServedModel]:
    """The served models of a file called ``name`` that ``loaded`` writes (a shell heredoc), ``text``
    at ``offset`` of it: read by the format of such files when it defines ``heredoc_models`` and one of
    its MARKERS is in the text (a supervisord configuration a script writes)."""
    reader = file_format(name)
    if reader is None or not defines(reader, "heredoc_models") or not any(marker in text for marker in reader.MARKERS):
        return []
    return reader.heredoc_models(workspace, loaded, text, offset)


def without_held(workspace: Workspace, models: list[ServedModel]) -> list[ServedModel]:
    """``models`` less those of the files whose launch another served model holds (a Dockerfile whose
    image a workload of the run deploys: ``launch/image_builds.py``)."""
    held = workspace.held
    return [m for m in models if m.path not in held] if held else models


def refers_forward(workspace: Workspace, loaded: LoadedFile) -> bool:
    """True when a document of the file refers to something not indexed yet (an LLMKube modelRef)."""
    hooks = [adapter.refers_forward for adapter in REGISTRY if getattr(adapter, "refers_forward", None)]
    return any(hook(workspace, resource) for _, resource in file_resources(loaded) for hook in hooks)
