"""Engine ``--config FILE`` files (vLLM and SGLang): the YAML file the engine reads its flags from.

Where the file comes from, as the container sees it:

- a compose bind mount (``./vllm.yaml:/config/vllm.yaml``): the repository file beside the compose file;
- a Kubernetes volume from a ConfigMap (``volumeMounts`` -> ``volumes[].configMap`` -> ``data[key]``,
  ``items`` renaming keys): the YAML string in the ConfigMap, in any file of the run, each key located
  on its line in the ConfigMap's file;
- otherwise a path beside the manifest or script (``--config vllm.yaml``, or its file name there).

Semantics, as the engines apply them (vLLM ``FlexibleArgumentParser._pull_args_from_config`` /
``load_config_file`` in ``vllm/utils/argparse_utils.py``, ``vllm/utils/__init__.py`` before 0.11;
SGLang ``ConfigArgumentMerger`` in ``sglang/srt/utils/server_args_config_parser.py``): each key becomes the token ``--key`` before the parser runs, so abbreviated keys
are accepted and checked like abbreviated flags, vLLM turns ``_`` into ``-`` and SGLang does not.
``true`` adds the bare flag; vLLM drops ``false`` silently (the default applies, recorded as inert);
SGLang skips ``false`` for switches and passes ``--key false`` otherwise; a list becomes
``--key a b``, a mapping JSON. The file's flags are inserted right after ``serve [MODEL]``, so flags
on the command line win. Only the exact token ``--config`` is read (``if '--config' in args``):
``--config=FILE`` skips the whole file, which the ``config-file-ignored`` rule reports.
"""

from __future__ import annotations

import json
import posixpath

from ...engines.argv import apply_argv
from ...engines.catalog import catalog_for
from ...model import ArgToken, Location, ServedModel, Setting
from ...yamlio import LoadedFile, YNode, parse_text, scalar_text_location
from . import named_files
from ..core.contexts import DocContext, Workspace
from ..core.recognition import finish
from ..core.references import record
from .configmaps import mentions, mounted, unindexed
from .shell import SourceMap
from ..core.resources import file_resources

# A ConfigMap may hold the config file without naming an engine: the flag words such a file is made of
# (not "configmap": every kustomization with a ConfigMap would then be rendered for nothing).
MARKERS = ("max-model-len", "max_model_len", "gpu-memory-utilization", "gpu_memory_utilization",
           "tensor-parallel-size", "tensor_parallel_size", "max-num-seqs", "kv-cache", "mem-fraction",
           "context-length", "model-path", "served-model-name", "max-running-requests")
CONFIG_FLAG = "--config"
INDEX_WORDS = (CONFIG_FLAG,)  # only a file that names the flag records documents that may read one
ENGINES = ("vllm", "sglang")
_MAX_DEPTH = 12


# ---------------------------------------------------------------- ConfigMaps


def _readers(workspace: Workspace) -> set[int]:
    """This module's index space: the ids of the documents that may read --config from a ConfigMap."""
    return workspace.space(__name__, set)


def index(workspace: Workspace, loaded: LoadedFile) -> None:
    """The documents that may read a config file from a ConfigMap (``configmaps`` indexes the ConfigMaps):
    only those are walked for volumes, the words being in their file."""
    if CONFIG_FLAG in loaded.text and "configMap" in loaded.text:
        _readers(workspace).update(id(resource) for _, resource in file_resources(loaded))


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """True when a container of the document reads ``--config`` from a ConfigMap not indexed yet."""
    if id(root) not in _readers(workspace):
        return False
    return unindexed(workspace, root) and mentions(root, (CONFIG_FLAG,))


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    """A config file is no served model by itself: the model that names it reads it (``apply``)."""
    return []


# ---------------------------------------------------------------- finding the file


def config_argument(model: ServedModel) -> ArgToken | None:
    """The path token after an exact ``--config`` in the model's argv (the form the engine reads)."""
    for index, token in enumerate(model.argv[:-1]):
        if token.text == CONFIG_FLAG:
            return model.argv[index + 1]
    return None


def complete_model(ctx: DocContext, root: YNode, model: ServedModel) -> None:
    """Protocol hook, for a model any adapter built from ``root``: read the ``--config`` file its argv
    names (from a mount, a ConfigMap or beside the file)."""
    if model.engine not in ENGINES:
        return
    argument = config_argument(model)
    if argument is None:
        return
    found = _mounted(ctx, root, model, argument.text) or beside(ctx.workspace, ctx.path, argument.text)
    if found is not None:
        apply_file(model, *found)
        return
    source = _bind_source(ctx.path, model, argument.text)
    if source is not None:
        missing(ctx.workspace, argument, source)


def missing(workspace: Workspace, argument: ArgToken, rel: str, what: str = "engine config file",
            flag: str = CONFIG_FLAG) -> None:
    """A file the engine reads (its ``--config`` file, a ``--chat-template``) that the repository should
    hold at ``rel`` (beside the script, or a bind mount's source): a reference that leads nowhere when the
    repository has no such file at all."""
    if named_files.absent(workspace, rel):
        record(workspace, argument.location, f"{what} '{argument.text}'",
               f"looked for {rel} in the repository", f"add the {what}, or correct the path {flag} names")


def _bind_source(base_file: str, model: ServedModel, path: str) -> str | None:
    """The repository file a compose bind mount puts at ``path``, when one does."""
    mount = model.pod.mount_at(path) if model.pod is not None and model.pod.format == "compose" else None
    volume = model.pod.volumes.get(mount.volume) if mount is not None else None
    if volume is None or volume.type != "bind":
        return None
    below = path[len(mount.path.rstrip("/")):].lstrip("/")
    return named_files.repo_path(base_file, posixpath.join(mount.volume, below) if below else mount.volume)


def beside(workspace: Workspace, base_file: str, written: str) -> tuple[LoadedFile, YNode, SourceMap | None] | None:
    """The config file at ``written`` relative to ``base_file``'s folder, else its file name there."""
    for candidate in (written, posixpath.basename(written)):
        rel = named_files.repo_path(base_file, candidate)
        loaded = named_files.read_yaml(workspace, rel) if rel else None
        if loaded is not None and loaded.documents and loaded.documents[0].root is not None:
            return loaded, loaded.documents[0].root, None
    return None


def _mounted(ctx: DocContext, root: YNode, model: ServedModel, path: str):
    mount = model.pod.mount_at(path) if model.pod is not None else None
    if mount is None:
        return None
    if model.pod.format == "compose":
        source = _bind_source(ctx.path, model, path)
        loaded = named_files.read_yaml(ctx.workspace, source) if source is not None else None
        return (loaded, loaded.documents[0].root, None) if loaded is not None and loaded.documents and \
            loaded.documents[0].root is not None else None
    found = mounted(ctx, root, model.pod, path)
    if found is None:
        return None
    if found.rel is not None:  # a ConfigMap a kustomization generates from a repository file
        loaded = named_files.read_yaml(ctx.workspace, found.rel)
        return (loaded, loaded.documents[0].root, None) if loaded is not None and loaded.documents and \
            loaded.documents[0].root is not None else None
    if found.node.kind != "scalar" or not isinstance(found.node.value, str):
        return None
    return _inner(found.loaded, found.node)


def _inner(loaded: LoadedFile, node: YNode):
    """The YAML string of a ConfigMap key, parsed, with a map from its offsets to the ConfigMap file."""
    mapping = SourceMap(loaded.text, node)
    inner = parse_text(loaded.path, mapping.value)
    if inner.error is not None or not inner.documents or inner.documents[0].root is None:
        return None
    return inner, inner.documents[0].root, mapping


# ---------------------------------------------------------------- applying it


def apply_file(model: ServedModel, loaded: LoadedFile, root: YNode, mapping: SourceMap | None) -> None:
    """The file's keys as the argv the engine builds from them, inserted before the command line's."""
    if root.kind != "map":
        return
    tokens: list[ArgToken] = []
    for key, value in root.items():
        if key.kind != "scalar" or key.value is None:
            continue
        tokens.extend(_key_tokens(model, loaded, mapping, key, value))
    if not tokens:
        return
    command_line = dict(model.settings)
    model.argv[:0] = tokens
    apply_argv(model, tokens)
    for name, setting in command_line.items():  # the command line wins over the file
        if model.settings.get(name) is not setting:
            model.occurrences[name].remove(setting)
            model.occurrences[name].append(setting)
            model.settings[name] = setting
    finish(model)


def _key_tokens(model: ServedModel, loaded: LoadedFile, mapping: SourceMap | None, key: YNode,
                value: YNode) -> list[ArgToken]:
    origin = f"config:{loaded.path}"
    flag = ArgToken(f"--{key.value}", _locate(loaded, mapping, key), _comments(loaded, key), origin)
    if value.kind == "scalar" and isinstance(value.value, bool):
        if value.value:
            return [flag]
        if model.engine == "vllm":
            model.inert.append((Setting(str(key.value), False, flag.location, f"{key.value}: false", flag.comments,
                                        flag.location, None, origin),
                                "vLLM drops false values of a --config file, so the default applies"))
            return []
        return [] if _switch(model, flag.text) else [flag, _value_token(loaded, mapping, value, "false", origin)]
    if value.kind == "seq":
        items = [child for child in value.value if child.kind == "scalar"]
        return [flag, *(_value_token(loaded, mapping, child, str(child.value), origin) for child in items)] if items else []
    if value.kind == "map":
        return [flag, _value_token(loaded, mapping, value, json.dumps(value.to_python()), origin)]
    if value.value is None:
        return []
    return [flag, _value_token(loaded, mapping, value, str(value.value), origin)]


def _switch(model: ServedModel, flag: str) -> bool:
    """True when SGLang's ``flag`` takes no value (``store_true``): its ``false`` is skipped."""
    catalog = catalog_for(model.engine, model.engine_version)
    spec = catalog.resolve(flag).spec if catalog is not None else None
    return spec is None or not spec.takes_value


def _value_token(loaded: LoadedFile, mapping: SourceMap | None, node: YNode, text: str, origin: str) -> ArgToken:
    return ArgToken(text, _locate(loaded, mapping, node), _comments(loaded, node), origin)


def _locate(loaded: LoadedFile, mapping: SourceMap | None, node: YNode) -> Location:
    inner = scalar_text_location(loaded.path, node) if node.kind == "scalar" else node.location(loaded.path)
    if mapping is None:
        return inner
    line, column = mapping.line_column(mapping.absolute(node.start_index))
    width = (inner.end_column - inner.column) if inner.end_line == inner.line and inner.end_column else 0
    return Location(loaded.path, line, column, line, column + width)


def _comments(loaded: LoadedFile, node: YNode) -> tuple[str, ...]:
    return loaded.comments_for(node.line)
