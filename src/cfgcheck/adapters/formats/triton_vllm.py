"""Triton Inference Server's vLLM backend: ``model_repository/<name>/<version>/model.json`` beside
``model_repository/<name>/config.pbtxt`` with ``backend: "vllm"``.

The backend reads ``model.json`` as vLLM's engine arguments (triton-inference-server/vllm_backend
``src/model.py``: ``AsyncEngineArgs(**vllm_engine_config)``, the keys the arguments' field names, so
``"model"`` is the model served). Each key is read as the flag of that name (vLLM's parser takes
``--gpu_memory_utilization`` as ``--gpu-memory-utilization``), located at the key; ``true`` is the
switch, ``false`` the field's default and so no flag. The served model is named after its model folder.
The engine version is the one the Triton image ships, which the repository does not state here: unknown.
"""

from __future__ import annotations

import json
import posixpath
import re

from ...engines.argv import apply_argv
from ...model import ArgToken, ServedModel
from ...yamlio import Comment, LoadedFile, YNode, parse_text, scalar_text_location
from ..core.contexts import Workspace
from ..core.recognition import finish
from ..launch import named_files
from ..launch.config_file import MARKERS as ENGINE_ARGUMENT_WORDS

MARKERS = ENGINE_ARGUMENT_WORDS  # the engine-argument words a model.json is made of
SUFFIXES = ("model.json",)
_VLLM_BACKEND = re.compile(r"^[ \t]*backend[ \t]*:[ \t]*\"vllm\"", re.M)


def scan_comments(text: str) -> dict[int, Comment]:
    """JSON has no comments."""
    return {}


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    version_folder = posixpath.dirname(loaded.path)
    model_folder = posixpath.dirname(version_folder)
    if posixpath.basename(loaded.path) != "model.json" or not posixpath.basename(version_folder).isdigit():
        return []
    config = named_files.read_text(workspace, posixpath.join(model_folder, "config.pbtxt"))
    if config is None or _VLLM_BACKEND.search(config) is None:
        return []
    parsed = parse_text(loaded.path, loaded.text)  # JSON is YAML: every key located
    root = parsed.documents[0].root if parsed.error is None and parsed.documents else None
    if root is None or root.kind != "map":
        return []
    model = ServedModel(name=posixpath.basename(model_folder) or "model", kind="triton model", path=loaded.path,
                        document=0, location=root.location(loaded.path), engine="vllm",
                        identity=f"{loaded.path}#triton")
    model.engine_version_confidence = "unknown"
    model.engine_version_why = "the Triton image's vLLM (model.json names no version)"
    model.launched_by = "Triton's vLLM backend"
    tokens = [token for key, value in root.items() for token in _tokens(loaded.path, key, value)]
    model.argv.extend(tokens)
    apply_argv(model, tokens)
    return [finish(model)]


def _tokens(path: str, key: YNode, value: YNode) -> list[ArgToken]:
    if key.kind != "scalar" or not isinstance(key.value, str) or value.value is None:
        return []
    origin = f"config:{path}"
    flag = ArgToken(f"--{key.value}", scalar_text_location(path, key), (), origin)
    if value.kind == "scalar" and isinstance(value.value, bool):
        return [flag] if value.value else []
    text = str(value.value) if value.kind == "scalar" else json.dumps(value.to_python())
    return [flag, ArgToken(text, scalar_text_location(path, value) if value.kind == "scalar"
                           else value.location(path), (), origin)]
