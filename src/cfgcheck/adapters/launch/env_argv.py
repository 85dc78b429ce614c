"""Engines launched through environment variables, and vendor images that wrap an engine.

* A script or argument that names a variable (``sh -c "vllm serve $MODEL $VLLM_ARGS"``, the kubelet's
  ``$(VLLM_ARGS)``, ``${EXTRA_ARGS}``, a whole ``$VLLM_COMMAND``) gets the variable's value spliced in
  as the shell would: split into words, each located at its own line and column in the env value. The
  value is the container's ``env`` entry, or a ConfigMap key of the repository named by
  ``valueFrom.configMapKeyRef`` or ``envFrom.configMapRef`` (ConfigMaps are indexed by
  ``launch/configmaps.py``). A value that is not literal (a Secret, a ConfigMap not in the repository) stays as
  written: unknown, so nothing is claimed about it.
* A wrapper image (``data/wrappers.json``: RunPod's worker-vllm, DJL Serving LMI, …) starts the engine
  itself and reads the model and engine settings from env: its table, transcribed from the wrapper's
  source, maps each env name onto the settings vocabulary. An image that names an engine but is no
  known image, run without arguments, reads its model from the usual env names (``HF_MODEL_ID``, …).
"""

from __future__ import annotations

import functools
import re
from collections import namedtuple

from ...data import read_json
from ... import lazy
from ...engines.envs import every_name
from ...engines.images import application_image, image_engine, parse_image, pattern_matches
from ...model import ArgToken, Location, ServedModel, Setting
from ...notes import note
from ...settings import BOOL_SETTINGS, BY_NAME, canonical_name, flag, parse
from ...yamlio import YNode
from ..core.contexts import DocContext
from ..core.recognition import operator_tokens
from ..core.registry import launch_helper
from .configmaps import configmaps
from .expansion import MAX_INLINE_CHARS, MAX_SPLICED_WORDS, substitute
from .parameters import Quoted
from .shell import SourceMap, Spliced, shell_tokens

# $VAR, ${VAR}, ${VAR:-default} (the shell's) and $(VAR) (the kubelet's, also inside a shell string)
_REFERENCE = lazy.Pattern(r"\$(?:\{([A-Za-z_]\w*)(?::?[-=+?][^}]*)?\}|\(([A-Za-z_][\w.-]*)\)|([A-Za-z_]\w*))")


class EnvValue(namedtuple("EnvValue", ("ctx", "node"))):
    """A literal env value and the document that holds it (the container's, or a ConfigMap's). Never changed:
    a named tuple costs a fifth of a frozen dataclass to create."""

    __slots__ = ()
    ctx: DocContext  # the fields' types, for type checkers (a value here would hide the field)
    node: YNode

    @property
    def text(self) -> str:
        return "" if self.node.value is None else str(self.node.value)

    def words(self, origin: str) -> list[ArgToken]:
        """The value split into words as an unquoted shell expansion is, each located where written."""
        return shell_tokens(self.ctx, self.node, origin, segment=False)

    def word(self, origin: str) -> ArgToken:
        """The whole value as one word, as a quoted expansion (``"$VAR"``) gives it, located at its
        first character (inside a quote or on the first line of a block scalar)."""
        mapping = SourceMap(self.ctx.loaded.text, self.node)
        line, column = mapping.line_column(mapping.absolute(0))
        location = Location(self.ctx.path, line, column, line, column + len(self.text.split("\n", 1)[0]))
        return ArgToken(self.text, location, self.ctx.comments(line), origin)

    def setting(self, name: str, source: str | None = None, value: object = None) -> Setting:
        setting = self.ctx.setting(name, None, self.node, source or name, origin="env")
        if value is not None:
            setting.value = value
        return setting


def _configmap(ctx: DocContext, name: object) -> tuple[DocContext, YNode] | None:
    found = configmaps(ctx.workspace).get(name) if isinstance(name, str) else None
    if found is None:
        return None
    loaded, document, data = found
    return DocContext(loaded, document, ctx.workspace), data


def container_env(ctx: DocContext, container: YNode, env_key: str = "env") -> dict[str, EnvValue | None]:
    """Every variable the container's env sets: its literal value, or None when it is not literal.

    ``envFrom`` ConfigMaps first, then ``env`` (which overrides them, as in Kubernetes)."""
    found: dict[str, EnvValue | None] = {}
    sources = container.get("envFrom")
    for source in sources.value if sources is not None and sources.kind == "seq" else ():
        ref = source.get("configMapRef") if source.kind == "map" else None
        held = _configmap(ctx, ref.scalar("name")) if ref is not None and ref.kind == "map" else None
        if held is not None:
            prefix = str(source.scalar("prefix", default="") or "")
            for key, value in held[1].items():
                if key.kind == "scalar" and value.kind == "scalar":
                    found[f"{prefix}{key.value}"] = EnvValue(held[0], value)
    env = container.get(env_key)
    if env is None:
        return found
    items = [(item.scalar("name"), item) for item in env.value if item.kind == "map"] if env.kind == "seq" \
        else [(key.value, value) for key, value in env.items() if key.kind == "scalar"] if env.kind == "map" else []
    for name, item in items:
        if isinstance(name, str):
            found[name] = _env_entry(ctx, item, env.kind == "seq")
    return found


def _env_entry(ctx: DocContext, item: YNode, listed: bool) -> EnvValue | None:
    """One ``env`` entry: ``{name, value}`` / ``{name, valueFrom}`` in a list, ``X: v`` / ``X: {value}`` in a map."""
    if item.kind == "scalar":
        return None if listed or item.value is None else EnvValue(ctx, item)
    if item.kind != "map":
        return None
    value = item.get("value")
    if value is not None and value.kind == "scalar" and value.value is not None:
        return EnvValue(ctx, value)
    ref = item.path("valueFrom", "configMapKeyRef")
    held = _configmap(ctx, ref.scalar("name")) if ref is not None and ref.kind == "map" else None
    if held is None:
        return None
    node = held[1].get(str(ref.scalar("key")))
    return EnvValue(held[0], node) if node is not None and node.kind == "scalar" else None


def splice(tokens: list[ArgToken], values: dict[str, EnvValue | None]) -> list[ArgToken]:
    """Shell words that name a variable, replaced by its value's words (located in the env value); a
    word that holds a reference among other text gets the value's text in place. Unknown values stay,
    and so do references past ``MAX_SPLICED_WORDS`` (a hostile script repeating a long value)."""
    out: list[ArgToken] = []
    words: dict[str, list[ArgToken]] = {}  # each value is split once, however often it is named
    budget = MAX_SPLICED_WORDS
    for token in tokens:
        if token.origin != "shell" or "$" not in token.text:
            out.append(token)
            continue
        whole = _REFERENCE.fullmatch(token.text)
        value = values.get(_name(whole)) if whole else None
        if value is not None and isinstance(token.text, Quoted):  # "$VAR": one word whatever it holds
            out.append(value.word(f"env:{_name(whole)}"))
            continue
        if value is not None:
            name = _name(whole)
            if name not in words:
                words[name] = value.words(f"env:{name}")
            fits = len(words[name]) <= budget
            budget -= len(words[name]) if fits else 0
            out.extend(words[name] if fits else [token])
            continue

        def replace(match: re.Match) -> str:
            found = values.get(_name(match))
            return found.text if found is not None and inline(found.text) else match.group(0)

        text = substitute(_REFERENCE, token.text, replace)
        out.append(token if text is None or text == token.text else
                   ArgToken(text, token.location, token.comments, token.origin, token.synthetic))
    return out


# ---------------------------------------------------------------- scripts mounted from a ConfigMap

_SCRIPT_RUNNERS = ("sh", "bash", "dash", "ash", "zsh")
_ALL_ARGUMENTS = ("$@", "${@}", "$*", "${*}")


def mounted_script(ctx: DocContext, container: YNode, pod_spec: YNode | None, tokens: list[ArgToken],
                   values: dict[str, EnvValue | None],
                   exports: dict[str, ArgToken] | None = None) -> list[ArgToken] | None:
    """The engine argv of a container whose command runs a script mounted from a ConfigMap of the
    repository (``command: ["/scripts/start.sh"]`` with a ``configMap`` volume at ``/scripts``): the
    script's engine command, located in the ConfigMap's data, its variables taken from the container's
    env, and ``"$@"`` replaced by the container's arguments after the script; ``exports`` receives what
    the script gives the engine's environment. None when the command runs no such script or the script
    starts no engine."""
    called = script_call(tokens)
    found = _script_node(ctx, container, pod_spec, called[0]) if called is not None and pod_spec is not None else None
    if found is None:
        return None
    script_ctx, node = found
    launched = next(iter(launch_helper("scalar_launches")(script_ctx, node, script_environment(values))), None)
    if launched is None:
        return None
    if exports is not None:
        exports.update(launched.env)
    return script_argv(launched.tokens, values, called[1])


def script_call(tokens: list[ArgToken]) -> tuple[str, list[ArgToken]] | None:
    """``/scripts/start.sh ARGS`` or ``bash /scripts/start.sh ARGS``: the script's absolute path in the
    container, and the arguments it is called with; None when the command runs no script by path."""
    texts = [token.text for token in tokens]
    at = 1 if len(texts) > 1 and texts[0].rsplit("/", 1)[-1] in _SCRIPT_RUNNERS and not texts[1].startswith("-") else 0
    if at >= len(texts) or not texts[at].startswith("/"):
        return None
    return texts[at], tokens[at + 1:]


def script_environment(values: dict[str, EnvValue | None]) -> dict[str, str | None]:
    """The container's variables as a script it runs expands them (see ``shell.Spliced``)."""
    return {name: Spliced(value.text) if value is not None and inline(value.text) else None
            for name, value in values.items()}


def script_argv(launch: list[ArgToken], values: dict[str, EnvValue | None], arguments: list[ArgToken]) -> list[ArgToken]:
    """A script's engine command with the container's variables spliced in (located in their values) and
    ``"$@"`` replaced by the ``arguments`` the script was called with."""
    argv: list[ArgToken] = []
    for token in splice(launch, values):
        argv.extend(arguments if token.text in _ALL_ARGUMENTS else [token])
    return argv


def _script_node(ctx: DocContext, container: YNode, pod_spec: YNode, path: str) -> tuple[DocContext, YNode] | None:
    """The ConfigMap data entry mounted at ``path`` in ``container`` (a ``configMap`` volume of the pod,
    whole, through ``items``, or one key by ``subPath``), with the context of its document."""
    mounts, volumes = container.get("volumeMounts"), pod_spec.get("volumes")
    if mounts is None or mounts.kind != "seq" or volumes is None or volumes.kind != "seq":
        return None
    by_name = {volume.scalar("name"): volume for volume in volumes.value if volume.kind == "map"}
    for mount in mounts.value:
        volume = by_name.get(mount.scalar("name")) if mount.kind == "map" else None
        source = volume.get("configMap") if volume is not None else None
        mount_path, sub_path = mount.scalar("mountPath"), mount.scalar("subPath")
        if source is None or source.kind != "map" or not isinstance(mount_path, str):
            continue
        if isinstance(sub_path, str) and sub_path:
            relative = sub_path if path == mount_path else None
        else:
            prefix = mount_path.rstrip("/") + "/"
            relative = path[len(prefix):] if path.startswith(prefix) else None
        held = _configmap(ctx, source.scalar("name")) if relative else None
        if held is None:
            continue
        key = _item_key(source.get("items"), relative)
        node = held[1].get(key) if key is not None else None
        if node is not None and node.kind == "scalar" and isinstance(node.value, str):
            return held[0], node
    return None


def _item_key(items: YNode | None, relative: str) -> str | None:
    """The ConfigMap key a file of the volume holds: the ``items`` entry whose ``path`` it is, else the
    key of the same name (no ``items``: every key is a file)."""
    if items is None or items.kind != "seq":
        return relative
    return next((str(item.scalar("key")) for item in items.value
                 if item.kind == "map" and item.scalar("path") == relative), None)


def inline(text: str) -> bool:
    """Whether a value is short enough to substitute inside a word (a path, a model id, a number)."""
    return len(text) <= MAX_INLINE_CHARS


def _name(match: re.Match) -> str:
    return next(group for group in match.groups() if group)


# ---------------------------------------------------------------- wrapper images


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    return read_json("wrappers.json")


def wrapper_for(image: str | None, values: dict[str, EnvValue | None]) -> dict | None:
    """The wrapper-table entry of ``image`` when it runs an engine with this env, else None."""
    if not image:
        return None
    ref = parse_image(image)
    if ref.templated:
        return None
    full = ref.full.lower()
    for entry in _table()["wrappers"]:
        if not any(pattern_matches(full, pattern) for pattern in entry["match"]):
            continue
        if entry.get("tag") and not pattern_matches((ref.tag or "").lower(), entry["tag"]):
            continue
        when = entry.get("when")
        if when and not any(_env_matches(values.get(name), patterns) for name, patterns in when.items()):
            continue
        return _at_version(entry, ref.tag, image)
    return None


_TAG_VERSION = lazy.Pattern(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")  # v2.23.0stable-cuda12.1.0, 0.6.2, v0.6.4.post1


def _version(text: str | None) -> tuple[int, ...] | None:
    match = _TAG_VERSION.match(text or "")
    return tuple(int(part or 0) for part in match.groups()) if match else None


def _at_version(entry: dict, tag: str | None, image: str) -> dict:
    """The wrapper's behaviour for the image's tag: an earlier one (``versions``) when the tag's version
    is before its ``before``, else the newest; a tag that names no version gets the newest, with a note."""
    earlier = entry.get("versions")
    if not earlier:
        return entry
    version = _version(tag)
    if version is None:
        newest = max((e["before"] for e in earlier), key=_version)
        note(f"{image}: the tag names no {entry['name']} release; read as the newest ({newest} and later)")
        return entry
    for older in sorted(earlier, key=lambda e: _version(e["before"])):
        if version < _version(older["before"]):
            return {**entry, **older}
    return entry


def _env_matches(value: EnvValue | None, patterns: list[str]) -> bool:
    return value is not None and any(pattern_matches(value.text.strip().lower(), p) for p in patterns)


def apply_wrapper(model: ServedModel, entry: dict | None, values: dict[str, EnvValue | None]) -> None:
    """Record the settings a wrapper image reads from env (``entry``), or, for an image no table knows
    that names the engine and is given no model, the model from the usual env names."""
    if entry is not None:
        model.engine_variant = entry["variant"]
        for name, value in values.items():
            dest = _destination(entry, name)
            if value is not None and dest is not None:
                _record(model, entry, dest, name, value)
        return
    known = model.image is not None and isinstance(model.image.value, str) and \
        image_engine(parse_image(model.image.value)).known
    if known or model.image is None or "model" in model.settings:
        return
    for name in _table()["generic"]["model_env"]:
        if values.get(name) is not None:
            model.add(values[name].setting("model", f"env.{name}"))
            break
    else:
        return
    if model.engine == "vllm" and not model.argv:  # an in-house vLLM wrapper: the names known wrappers agree on
        generic = {"engine": "vllm"}
        for name, dest in _table()["generic"]["env"].items():
            if values.get(name) is not None and dest != "model":
                _record(model, generic, dest, name, values[name])
                model.conventions[canonical_name("vllm", dest)] = \
                    f"{name} read as the vLLM option, as every known vLLM wrapper reads it; this image is not a known one"


_CLIENT_NAMES = frozenset(("VLLM_API_KEY",))


def engine_from_env(values: dict[str, EnvValue | None], image: str | None = None) -> str | None:
    """vLLM, for a container whose env sets variables only vLLM reads (``VLLM_*`` names its env catalog
    lists): the image is a vLLM build whatever its name, unless the name says it is an application
    beside the engine (``vllm-client``). ``VLLM_API_KEY`` is no evidence: a client holds the key it
    sends the server too."""
    if not any(name.startswith("VLLM_") and name not in _CLIENT_NAMES for name in values):
        return None
    if image is not None and application_image(parse_image(image)):
        return None
    read = every_name("vllm")
    return "vllm" if any(name in read and name not in _CLIENT_NAMES for name in values) else None


def _destination(entry: dict, name: str) -> str | None:
    """The engine argument destination env ``name`` sets for this wrapper, or None."""
    rename = entry.get("rename", {})
    if name in rename:
        return rename[name]
    prefix = entry.get("prefix")
    if prefix is None or not name.startswith(prefix) or name == prefix:
        return None
    option = name[len(prefix):].lower()
    return rename.get(option, option)


def _record(model: ServedModel, entry: dict, dest: str, name: str, value: EnvValue) -> None:
    engine = entry["engine"]
    canonical = canonical_name(engine, dest)
    if canonical not in BY_NAME or not BY_NAME[canonical].dests.get(engine):
        return  # not in the settings vocabulary: the wrapper passes it on, nothing here reads it
    text = entry.get("values", {}).get(dest, {}).get(value.text.strip().lower(), value.text.strip())
    if text is None:
        return  # decided by the wrapper at start (DJL's tensor_parallel_degree "max": every GPU)
    # the wrappers read booleans as their text lower-cased: "true" (RunPod), or pydantic's true/1/yes/on (DJL)
    truthy = text.lower() in ("1", "true", "yes", "on")
    parsed = truthy if canonical in BOOL_SETTINGS else parse(canonical, text, engine)
    setting = value.setting(canonical, f"env.{name}", parsed)
    model.add(setting)
    emitted = flag(engine, canonical)
    if emitted and canonical != "model":
        model.argv.extend(operator_tokens(setting, emitted))
