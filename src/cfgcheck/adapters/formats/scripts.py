"""Shell scripts (``*.sh``, ``*.bash``) that start an engine: one served model per engine start
(``launch/scripts.py`` reads the commands), and the files the script writes in heredocs: the Kubernetes
manifests it applies (read by every YAML format) and a configuration of another format it writes (a
supervisord program: the format that reads such files, through the registry).
"""

from __future__ import annotations

from ...model import ServedModel
from ...yamlio import LoadedFile
from ..core.contexts import Workspace
from ..core.recognition import ENGINE_MARKERS
from ..core import registry  # its heredoc_models: a module-level name would declare the hook
from ..launch.scripts import (evaluated_heredocs, file_heredocs, manifest_heredocs, manifest_models, parsed_manifests,
                               text_models, without)
from ..launch.scripts import scan_comments  # noqa: F401 - the protocol hook: a shell script's comments
from ..launch.script_calls import SCRIPT_SUFFIXES, called_models

MARKERS = ENGINE_MARKERS
SUFFIXES = SCRIPT_SUFFIXES


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """Protocol hook: what the manifests a script applies hold for other documents (a KAITO inference
    ConfigMap written in a heredoc), indexed as if they were files of their own."""
    if "<<" in loaded.text:
        for inner in parsed_manifests(loaded, manifest_heredocs(loaded.text)):
            registry.index(workspace, inner)


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    if not any(marker in loaded.text for marker in MARKERS):
        return []
    heredocs = file_heredocs(loaded.text)
    manifests = manifest_heredocs(loaded.text)
    written = {doc.start for doc in heredocs}
    data = heredocs + [doc for doc in manifests if doc.start not in written]
    commands = evaluated_heredocs(without(loaded.text, data))
    # a script other scripts run with positional arguments: one served model per call, with the caller's values
    found = called_models(workspace, loaded, commands,
                          text_models(workspace, loaded, commands, "shell script", "script", heredocs=heredocs))
    for doc in heredocs:  # a configuration of another format the script writes (supervisord): its models
        found.extend(registry.heredoc_models(workspace, loaded, doc.name, doc.body, doc.start))
    return found + manifest_models(workspace, loaded, manifests)
