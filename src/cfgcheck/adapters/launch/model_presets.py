"""llama-server in router mode: the served models are the sections of its ``--models-preset`` INI file.

llama-server started without a model (``-m`` / ``-hf``) is a router: it starts one llama-server child per
model it knows, and ``--models-preset FILE`` names them. The file, as llama.cpp reads it
(ggml-org/llama.cpp ``common/preset.cpp`` at 13b56e2a: ``parse_ini_from_file``, ``load_from_ini``):
``[name]`` opens the section of model ``name``; ``key = value`` lines set an option by its spelling without
dashes (``ctx-size``, ``c``) or by its environment name (``LLAMA_ARG_CTX_SIZE``); ``;`` and ``#`` start a
comment at a line's start or after blanks; the key ``version`` is reserved; what ``[*]`` sets applies to every
model. The router starts each child with ``[*]``, then the model's section, then its own command line over
both, less the options it keeps for itself (``tools/server/server-models.cpp`` at 00dd0816: ``load_models``
cascades the global preset and merges the router's arguments; ``unset_reserved_args`` drops ``--models-*``,
``--api-key`` and TLS, and ``update_args`` sets ``--host``, ``--port`` and ``--alias`` per child).

Each section that names a model (``model`` / ``m``, ``hf-repo`` / ``hf`` / ``hfr``, or their environment
names) is one served model of engine llama.cpp, called by its section: the router's pod, image and GPUs, its
settings located on the INI lines (of the repository file, or of the ConfigMap key that holds it). The file
is found where the container sees it: a ConfigMap volume (a ConfigMap of the run, or one a kustomization's
``configMapGenerator`` builds from a repository file), a compose bind mount, else the path beside the file
that starts the router. A router whose file cannot be read serves nothing cfgcheck can see: no served model
(and a dangling reference, ``core/references.py``, when the file should be in the repository).
"""

from __future__ import annotations

import posixpath

from ... import lazy
from ...engines.argv import apply_argv
from ...model import ArgToken, Location, ServedModel
from ...settings import canonical_name
from ...yamlio import YNode
from ..core.contexts import DocContext, Workspace
from ..core.recognition import finish
from ..core.references import record
from . import llama_env, named_files
from .configmaps import Mounted, mentions, mounted, persistence_mount, unindexed
from .shell import SourceMap

MARKERS = ("models-preset", "llama_arg_models_preset")
INDEX_WORDS = MARKERS  # refers_forward asks only of a document that names the flag or its env variable
ENGINE = "llama.cpp"
PRESET_FLAG = "--models-preset"
GLOBAL = "*"
# what the router keeps for itself or sets per child (server-models.cpp unset_reserved_args, update_args)
RESERVED = ("--models-dir", "--models-max", PRESET_FLAG, "--models-autoload", "--no-models-autoload", "--api-key",
            "--api-key-file", "--ssl-key-file", "--ssl-cert-file", "--host", "--port", "--alias", "-a")
# the options that name the model a child loads (common/arg.cpp: -m/--model, -hf/-hfr/--hf-repo, and the
# environment names LLAMA_ARG_MODEL / LLAMA_ARG_HF_REPO they are read from)
MODEL_KEYS = ("model", "m", "hf-repo", "hf", "hfr", "LLAMA_ARG_MODEL", "LLAMA_ARG_HF_REPO")
_LINE = lazy.Pattern(r"[^\r\n]*(?:\r\n|\n|\r|$)")
_HEADER = lazy.Pattern(r"[ \t]*\[[ \t]*([^\]]*?)[ \t]*\][ \t]*(?:[;#].*)?$")
# a value ends at the first ; or # (the grammar's eol-start: optional blanks, then a comment character)
_KEY_VALUE = lazy.Pattern(r"[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*([^;#\r\n]*?)[ \t]*(?:[;#](.*))?$")
_MAX_SECTIONS = 256


class Option:
    """One ``key = value`` of a preset file's section, located."""

    def __init__(self, key: str, value: str, key_at: Location, value_at: Location,
                 comments: tuple[str, ...] = ()) -> None:
        self.key = key
        self.value = value
        self.key_at = key_at
        self.value_at = value_at
        self.comments = comments


class Section:
    """One ``[name]`` section of a preset file and its options."""

    def __init__(self, name: str, at: Location, options: list[Option] | None = None) -> None:
        self.name = name
        self.at = at
        self.options = [] if options is None else options


def served_models(ctx: DocContext, root: YNode) -> list[ServedModel]:
    """A preset file is no served model by itself: the router that names it stands for its models."""
    return []


def refers_forward(workspace: Workspace, root: YNode) -> bool:
    """Protocol hook: a router whose preset file may be in a ConfigMap a file read later defines or
    generates (a HelmRelease is read before the kustomization beside it)."""
    return unindexed(workspace, root) and mentions(root, (PRESET_FLAG, "LLAMA_ARG_MODELS_PRESET"))


def complete_model(ctx: DocContext, root: YNode, model: ServedModel) -> list[ServedModel] | None:
    """Protocol hook: a llama-server router stands for the models of its preset file (None: not a router,
    the model stays as it is)."""
    return expand(ctx.workspace, ctx.path, model, ctx, root)


def expand(workspace: Workspace, path: str, model: ServedModel, ctx: DocContext | None = None,
           root: YNode | None = None) -> list[ServedModel] | None:
    """The models of a router started from the file ``path`` (``ctx`` and ``root``: the document around its
    pod, when a pod's volumes may hold the file); None when ``model`` is no router."""
    argument = preset_argument(model)
    if argument is None:
        return None
    found, looked = _preset_source(workspace, path, model, argument.text, ctx, root)
    sections = parse(*found) if found is not None else None
    if sections is None:
        if found is None and looked is not None and named_files.absent(workspace, looked):
            record(workspace, argument.location, f"llama-server models preset '{argument.text}'",
                   f"looked for {looked} in the repository", "add the preset file, or correct the path --models-preset names")
        return []
    defaults = next((s.options for s in sections if s.name == GLOBAL), [])
    return [_section_model(model, section, defaults) for section in sections
            if section.name != GLOBAL and any(option.key in MODEL_KEYS for option in defaults + section.options)]


def preset_argument(model: ServedModel) -> ArgToken | None:
    """The path token after ``--models-preset`` of a llama-server that names no model of its own."""
    if model.engine != ENGINE or model.model is not None or "model" in model.settings:
        return None
    for index, token in enumerate(model.argv):
        if token.text == PRESET_FLAG and index + 1 < len(model.argv):
            return model.argv[index + 1]
        if token.text.startswith(PRESET_FLAG + "="):
            text = token.text.partition("=")[2]
            at = token.location
            return ArgToken(text, Location(at.path, at.line, at.column + len(PRESET_FLAG) + 1, at.line,
                                           at.column + len(token.text)), token.comments, token.origin)
    env = model.env.get("LLAMA_ARG_MODELS_PRESET")
    if env is not None and isinstance(env.value, str):
        return ArgToken(env.value, env.location, env.comments, "env:LLAMA_ARG_MODELS_PRESET")
    return None


# ---------------------------------------------------------------- where the file is


def _preset_source(workspace: Workspace, path: str, model: ServedModel, written: str, ctx: DocContext | None,
                   root: YNode | None):
    """((path of the file holding the text, the INI text, the map from its offsets into that file's or None
    when the text is the whole file) or None, the repository path the file should be at or None when the
    repository need not hold it: a path inside the image, or on a volume cfgcheck does not see)."""
    pod, held = model.pod, None
    if pod is not None and pod.format == "compose":
        mount = pod.mount_at(written)
        volume = pod.volumes.get(mount.volume) if mount is not None else None
        if mount is not None and volume is not None and volume.type == "bind":
            below = written[len(mount.path.rstrip("/")):].lstrip("/")
            held = Mounted("a bind mount", rel=named_files.repo_path(path, posixpath.join(mount.volume, below)))
    elif pod is not None and ctx is not None and root is not None:
        held = mounted(ctx, root, pod, written)
    if held is None and ctx is not None and root is not None:
        held = persistence_mount(ctx, root, written)
    if held is not None and held.node is not None:
        if held.node.kind != "scalar" or not isinstance(held.node.value, str):
            return None, None
        mapping = SourceMap(held.loaded.text, held.node)
        return (held.loaded.path, mapping.value, mapping), None
    # a script's relative path is beside it when it runs the router on the host from its own folder; a
    # container's (a docker run's too) is in its image
    relative = pod is None and model.image is None and not written.startswith("/") and "$" not in written and \
        named_files.beside_script(named_files.read_text(workspace, path) or "", written)
    candidates = [held.rel] if held is not None else \
        [named_files.repo_path(path, written), named_files.repo_path(path, posixpath.basename(written))]
    for rel in candidates:
        text = named_files.read_text(workspace, rel) if rel else None
        if text is not None:
            return (rel, text, None), None
    return None, held.rel if held is not None else candidates[0] if relative else None


# ---------------------------------------------------------------- the INI file


def parse(path: str, text: str, mapping: SourceMap | None) -> list[Section] | None:
    """The sections of a preset file, each option located (in ``path``, through ``mapping`` when the text
    is a ConfigMap value); None when a line is none of llama.cpp's (header, key = value, comment, blank):
    llama-server refuses such a file at start-up."""
    sections: list[Section] = []
    current: Section | None = None
    comments: list[str] = []
    offset = 0
    for match in _LINE.finditer(text):
        raw = match.group(0)
        if not raw:
            break
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        header, pair = _HEADER.fullmatch(line), _KEY_VALUE.fullmatch(line)
        if not stripped or stripped[0] in ";#":
            comments += [stripped[1:].strip()] if stripped else []
        elif header is not None:
            current = Section(header.group(1), _at(path, mapping, text, offset + line.index("["), len(line.strip())))
            sections.append(current)
            comments = []
            if len(sections) > _MAX_SECTIONS:
                return None
        elif pair is not None:
            if current is None:  # options before any header belong to the preset named "default"
                current = Section("default", _at(path, mapping, text, offset, 1))
                sections.append(current)
            key, value = pair.group(1), pair.group(2)
            if key != "version":
                start = offset + pair.start(2)
                trailing = [pair.group(3).strip()] if pair.group(3) and pair.group(3).strip() else []
                current.options.append(Option(key, value, _at(path, mapping, text, offset + pair.start(1), len(key)),
                                              _at(path, mapping, text, start, len(value)), tuple(comments + trailing)))
            comments = []
        else:
            return None
        offset = match.end()
    return sections


def _at(path: str, mapping: SourceMap | None, text: str, offset: int, width: int) -> Location:
    if mapping is not None:
        line, column, end = mapping.span(offset, offset + width, text[offset:offset + width])
        return Location(path, line, column, line, end)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Location(path, line, column, line, column + width)


# ---------------------------------------------------------------- one served model per section


def _section_model(router: ServedModel, section: Section, defaults: list[Option]) -> ServedModel:
    """The router's child for ``section``: the router's pod and image, ``[*]`` then the section then the
    router's own command line."""
    model = router.replaced()
    model.name, model.identity = f"{router.name}/{section.name}", f"{router.identity}#preset/{section.name}"
    model.location, model.path = section.at, section.at.path
    model.settings, model.occurrences, model.argv, model.inert, model.cache = {}, {}, [], [], {}
    model.model = model.model_revision = model.model_named = None
    model.downloads, model.conventions = list(router.downloads), dict(router.conventions)
    origin = f"preset:{section.at.path}[{section.name}]"
    own = {_identity(option.key) for option in section.options}  # what the section sets replaces [*]'s
    options = [option for option in defaults if _identity(option.key) not in own] + section.options
    tokens = [token for option in options for token in _option_tokens(option, origin)]
    tokens += _router_tokens(router.argv)
    model.argv = tokens
    apply_argv(model, tokens)
    return finish(model)


def _flag_name(key: str) -> str:
    """The option a key names, without dashes: its environment name read as the flag (LLAMA_ARG_CTX_SIZE is
    ctx-size), else as written."""
    if not key.startswith(llama_env.PREFIX):
        return key
    return (llama_env.option(key) or key[len(llama_env.PREFIX):].lower().replace("_", "-")).lstrip("-")


def _identity(key: str) -> str:
    """One name for the spellings of an option the settings vocabulary knows (c and ctx-size)."""
    return canonical_name(ENGINE, _flag_name(key).replace("-", "_"))


def _option_tokens(option: Option, origin: str) -> list[ArgToken]:
    """``--key value`` as the router renders an option for its child (common_preset::to_args); a switch
    (``true`` / ``false``) is the bare flag, or nothing."""
    key = _flag_name(option.key)
    flag = ArgToken(("-" if len(key) <= 2 else "--") + key, option.key_at, option.comments, origin)
    value = option.value.strip()
    if value.lower() in ("true", "false"):
        return [flag] if value.lower() == "true" else []
    return [flag, ArgToken(value, option.value_at, option.comments, origin)]


def _router_tokens(argv: list[ArgToken]) -> list[ArgToken]:
    """The router's command line less what it keeps for itself (and their values)."""
    kept: list[ArgToken] = []
    skip = False
    for token in argv:
        if skip:
            skip = False
            continue
        name = token.text.partition("=")[0]
        if name in RESERVED:
            skip = "=" not in token.text and name not in ("--models-autoload", "--no-models-autoload")
            continue
        kept.append(token)
    return kept
