"""A repository that is a fork of the engine: it holds the engine's own server-arguments source (vLLM's
``vllm/engine/arg_utils.py`` and ``vllm/entrypoints/openai/cli_args.py``, SGLang's
``python/sglang/srt/server_args.py``) at the paths upstream keeps them, below the folder of the file that
starts the engine or a folder above it (the repository root, or the fork's folder in a larger repository),
and its launch scripts start the engine built from it. The option strings its ``add_argument(`` calls name are flags that engine has
(a fork adds its own, as ``--enable-kvstore``): ``unknown-flag`` does not report them.

The source is read as text through ``named_files`` (what Git holds, within the size limit) and never
run. Registered for its settle hook only: it owns no document.
"""

from __future__ import annotations

import posixpath

from ... import lazy
from ...model import EngineSource, ServedModel
from ...yamlio import YNode
from ..core.contexts import DocContext, Workspace
from . import named_files

MARKERS: tuple[str, ...] = ()  # reads no document as its own
# where upstream keeps each engine's server arguments (vllm-project/vllm, sgl-project/sglang), repository root
SOURCES = {
    "vllm": ("vllm/engine/arg_utils.py", "vllm/entrypoints/openai/cli_args.py"),
    "sglang": ("python/sglang/srt/server_args.py",),
}
# the leading option strings of an ``add_argument(`` call: ``add_argument("--tp-size", "--tensor-parallel-size",``
_CALL = lazy.Pattern(r"add_argument\(\s*((?:[\"']-{1,2}[\w.-]+[\"']\s*,\s*)*[\"']-{1,2}[\w.-]+[\"'])")
_OPTION = lazy.Pattern(r"[\"'](-{1,2}[\w.-]+)[\"']")


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    return []


def settle(workspace: Workspace, models: list[ServedModel]) -> None:
    """Protocol hook, once every served model is known: the engine's own arguments source, for each served
    model of an engine whose source the repository holds in the folder of the model's file or above it
    (the nearest)."""
    found: dict[tuple[str, str], EngineSource | None] = {}
    for model in models:
        # a file outside the repository (/dev/stdin, a process substitution, ../x) has no folder of it
        if model.engine not in SOURCES or model.path.startswith(("/", "../")) or model.path == "..":
            continue
        folder = posixpath.dirname(model.path)
        while True:
            if (model.engine, folder) not in found:
                found[model.engine, folder] = _source(workspace, [posixpath.join(folder, path)
                                                                  for path in SOURCES[model.engine]])
            if found[model.engine, folder] is not None or not folder:
                break
            folder = posixpath.dirname(folder)
        model.engine_source = found[model.engine, folder]


def _source(workspace: Workspace, paths: list[str]) -> EngineSource | None:
    read: list[str] = []
    options: set[str] = set()
    for path in paths:
        text = named_files.read_text(workspace, path)
        if text is None:
            continue
        read.append(path)
        for call in _CALL.finditer(text):
            options.update(_OPTION.findall(call.group(1)))
    return EngineSource(tuple(read), frozenset(options)) if options else None
